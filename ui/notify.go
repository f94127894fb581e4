package ui

import (
	tea "charm.land/bubbletea/v2"
)

// waiting reports whether a dialog waits for the person.
func (m *Model) waiting() bool {
	return m.dialogs.top() != nil
}

// waitSubject names what the dialog on screen asks about, for the window
// title and the notification: "SERVER/TOOL" for a call, the server and the
// kind of question otherwise; "" when nothing waits. The server's words
// pass through notify.Subject, which escapes them.
func (m *Model) waitSubject() string {
	if d := m.dialogs.top(); d != nil {
		return d.subject()
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
