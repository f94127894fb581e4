package ui

import (
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
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
func (m *Model) callPerson() tea.Cmd { return m.callPersonAbout(m.waitSubject()) }

// callPersonAbout rings the bell and sends the desktop notification about
// subject (notify.Subject, perhaps with words of mcphost's own after it).
func (m *Model) callPersonAbout(subject string) tea.Cmd {
	m.called++
	s := m.cfg.Notify.Waiting(subject)
	if s == "" {
		return nil
	}
	return tea.Raw(s)
}

// heldMsg says that a call was held for a person's approval elsewhere
// (the chat's dialog may not approve it): no dialog opens, so the person
// is called for it all the same.
type heldMsg struct{ subject string }

// windowTitle is "mcphost — waiting: SUBJECT" while a dialog waits,
// "mcphost" otherwise.
func (m *Model) windowTitle() string {
	if s := m.waitSubject(); s != "" {
		return m.cfg.Notify.Title(s)
	}
	return m.cfg.Notify.IdleTitle()
}

// heldWords says, for the card of a call held under approval id for a
// person's approval elsewhere, where they may approve it (as askVia lets
// them at tier), for how long, and what happens then: short lines, so that
// a folded card shows them whole.
func (m *Model) heldWords(id string, tier decide.Tier) string {
	ways := host.HeldWays(m.cfg.Gate.MayApprove, tier)
	lines := []string{"held for your approval elsewhere, id " + cleanLine(id), "approve or deny it " + ways[0]}
	for _, w := range ways[1:] {
		lines = append(lines, "or "+w)
	}
	last := "then the same call made again runs once"
	if l, ok := m.cfg.Gate.Later.(interface{ Lifetime() time.Duration }); ok {
		last = "within " + fmtDuration(l.Lifetime()) + ": " + last
	}
	return strings.Join(append(lines, last), "\n")
}
