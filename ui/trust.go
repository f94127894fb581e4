package ui

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/mcphost/mcphost/state"
)

// TrustInfo is what stands about a configured server's trust outside the
// session (see Config.TrustInfo).
type TrustInfo struct {
	// From says where the server's trust at the start comes from, for a
	// person to read: `"trust": true in FILE`, "--trust", "your consent to
	// FILE", "remembered by mcphost"; "" when it was not trusted.
	From string
	// Distrusted is the file of the person's own config that says
	// "trust": false for the server; "" when none does.
	Distrusted string
	// Written: the trust is written in the person's own config or given
	// with --trust, so /untrust ends it only for this session.
	Written bool
	// ConsentKey is the key of a project server's consent in the state
	// file; "" for other servers.
	ConsentKey string
}

func (m *Model) trustInfo(name string) TrustInfo {
	if m.cfg.TrustInfo == nil {
		return TrustInfo{}
	}
	return m.cfg.TrustInfo(name)
}

// mayTrust reports whether the person may trust the server from here:
// the managed policy lets them, and their config does not say "trust":
// false for it. The gate names trusting as a fix only then.
func (m *Model) mayTrust(name string) bool {
	return m.trust.allowed(name) && m.trustInfo(name).Distrusted == ""
}

// trustLine says of one server whether it is trusted now, and why.
func (m *Model) trustLine(name string) string {
	info := m.trustInfo(name)
	switch {
	case !m.trust.allowed(name):
		return "not trusted (the managed policy does not let you trust it)"
	case m.trust.bySession(name):
		return "trusted (/trust in this session, remembered)"
	case m.trust.trusted(name):
		return "trusted (" + cleanLine(cmp.Or(info.From, "at the start")) + ")"
	case info.Distrusted != "":
		return `not trusted ("trust": false in your config ` + cleanLine(info.Distrusted) + ")"
	}
	return "not trusted"
}

// trustListing is /trust without a name: every server's trust and its
// source, and how to change it.
func (m *Model) trustListing() string {
	if len(m.servers) == 0 {
		return "no servers: nothing to trust"
	}
	lines := []string{"trust of the servers:"}
	for _, s := range m.servers {
		lines = append(lines, fmt.Sprintf("  %s: %s", cleanLine(s.Name), m.trustLine(s.Name)))
	}
	lines = append(lines, "/trust NAME trusts a server; /untrust NAME takes it back (also: mcphost mcp trust, mcphost mcp untrust NAME)")
	return strings.Join(lines, "\n")
}

// untrustCommand is /untrust NAME (and /trust revoke NAME): the server's
// annotations no longer count, from now on, and mcphost forgets the trust
// it remembers for it; a project server's trusting consent becomes one
// without trust.
func (m *Model) untrustCommand(cmd, name string) {
	name = strings.TrimSpace(name)
	if name == "" {
		m.notice(levelWarn, "usage: "+cmd+" NAME (one of the servers; /trust lists them)")
		return
	}
	if m.mgr == nil {
		m.notice(levelWarn, cmd+": the servers have not started yet")
		return
	}
	spec, ok := m.mgr.Spec(name)
	if !ok {
		m.notice(levelWarn, fmt.Sprintf("%s: no running server named %q", cmd, cleanLine(name)))
		return
	}
	was := m.trust.trusted(name)
	m.trust.unset(name)
	info := m.trustInfo(name)
	forgot, consent := 0, false
	msg := fmt.Sprintf("%s is not trusted from now on: its annotations count as the worst case, so its calls ask", cleanLine(name))
	if !was {
		msg = fmt.Sprintf("%s was not trusted", cleanLine(name))
	}
	if m.cfg.StatePath != "" {
		if err := state.Update(m.cfg.StatePath, m.now, func(s *state.State) error {
			forgot, consent = s.Untrust(spec.Identity(), name, info.ConsentKey)
			return nil
		}); err != nil {
			msg += fmt.Sprintf(" (for this session only: %s)", cleanLine(err.Error()))
		}
	}
	switch {
	case forgot > 0:
		msg += "; mcphost no longer remembers trusting it"
	case consent:
		msg += "; your consent to it now starts it without trust"
	}
	if was && info.Written {
		msg += fmt.Sprintf("; it is trusted again at the next start by %s: remove it there", cleanLine(info.From))
	}
	m.notice(levelInfo, msg)
	if m.panel != nil {
		m.panel.refresh(m)
	}
}

// trustedRows are the grants panel's account of trust: trust is the
// broadest approval there is (every closed-world read and additive write
// of the server runs without asking), so it is listed with the grants.
func (m *Model) trustedRows(w int) []string {
	st := m.st
	var rows []string
	for _, s := range m.servers {
		if m.trust.trusted(s.Name) {
			rows = append(rows, trunc("  "+st.Bold.Render(cleanLine(s.Name))+st.Muted.Render("  "+m.trustLine(s.Name)), w))
		}
	}
	head := st.Title.Render("Trusted servers") + st.Muted.Render(" — their annotations count; /untrust NAME takes it back")
	if len(rows) == 0 {
		return []string{"", head, st.Muted.Render("none")}
	}
	return append([]string{"", head}, rows...)
}
