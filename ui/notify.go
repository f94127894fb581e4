package ui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/mcphost/mcphost/ui/notify"
)

// waiting reports whether a dialog waits for the person.
func (m *Model) waiting() bool {
	return m.consent != nil || m.confirm != nil || m.elicitD != nil || m.sampleD != nil
}

// waitSubject names what the dialog on screen asks about, for the window
// title and the notification: "SERVER/TOOL" for a call, the server and the
// kind of question otherwise; "" when nothing waits. The server's words
// pass through notify.Subject, which escapes them.
func (m *Model) waitSubject() string {
	switch {
	case m.consent != nil:
		return notify.Subject(m.consent.Request().Server, "") + " (consent to start it)"
	case m.confirm != nil:
		q, tool := m.confirm.Question(), ""
		if q.Tool != nil {
			tool = q.Tool.Name
		}
		return notify.Subject(q.Server, tool)
	case m.elicitD != nil && len(m.asks) > 0 && m.asks[0].el != nil:
		return notify.Subject(m.asks[0].el.Server, "") + " (a question)"
	case m.sampleD != nil && len(m.asks) > 0 && m.asks[0].smp != nil:
		return notify.Subject(m.asks[0].smp.Server, "") + " (use of the model)"
	}
	return ""
}

// callPerson rings the bell and sends the desktop notification, as the
// person's setting and the terminal allow, for the dialog that just
// started to wait.
func (m *Model) callPerson() tea.Cmd {
	m.called++
	s := m.cfg.Notify.Waiting(m.waitSubject())
	if s == "" {
		return nil
	}
	return tea.Raw(s)
}

// windowTitle is "mcphost — waiting: SUBJECT" while a dialog waits,
// "mcphost" otherwise.
func (m *Model) windowTitle() string {
	if s := m.waitSubject(); s != "" {
		return m.cfg.Notify.Title(s)
	}
	return m.cfg.Notify.IdleTitle()
}
