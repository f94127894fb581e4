package ui

import (
	"context"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/state"
)

func newCallContext(m *Model) (context.Context, context.CancelFunc) {
	return context.WithCancel(m.ctx)
}

// serversPanel shows every server: state, tools, errors, the tail of its
// stderr; the selected one can be restarted.
type serversPanel struct {
	base
	rows []client.Status
	sel  int
	sc   scroller
	h    int
}

func newServersPanel(m *Model) *serversPanel {
	p := &serversPanel{}
	p.refresh(m)
	return p
}

func (p *serversPanel) refresh(m *Model) {
	p.rows = append(append(append([]client.Status(nil), m.servers...), m.cfg.Held...), m.skipped...)
	if m.phase == phaseConsent {
		for _, ps := range m.consents {
			p.rows = append(p.rows, client.Status{Name: ps.Name, Transport: ps.Spec.Transport, State: "needs-consent"})
		}
	}
	p.sel = min(max(p.sel, 0), max(len(p.rows)-1, 0))
}

func (p *serversPanel) update(m *Model, msg tea.Msg) (panel, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return p, nil
	}
	lk := m.keys.list
	switch {
	case key.Matches(k, lk.Back):
		return nil, nil
	case key.Matches(k, lk.Up):
		p.sel = max(p.sel-1, 0)
		p.sc.off = 0
	case key.Matches(k, lk.Down):
		p.sel = min(p.sel+1, max(len(p.rows)-1, 0))
		p.sc.off = 0
	case key.Matches(k, lk.Restart) || k.String() == "r":
		if p.sel >= len(p.rows) || m.mgr == nil {
			return p, nil
		}
		name := p.rows[p.sel].Name
		if _, ok := m.mgr.Spec(name); !ok {
			m.flash = cleanLine(name) + " is not started by mcphost in this session"
			return p, nil
		}
		mgr := m.mgr
		m.flash = "restarting " + cleanLine(name)
		return p, m.job(func() {
			err := mgr.Restart(m.ctx, name)
			m.post(restartedMsg{name: name, err: err})
		})
	default:
		p.sc.scrollKey(k, p.h)
	}
	return p, nil
}

func stateMark(s client.State) string {
	switch s {
	case client.StateReady:
		return "●"
	case client.StateStarting, client.StateRestarting:
		return "◌"
	case client.StateFailed:
		return "✗"
	default:
		return "○"
	}
}

// maxServerLog is how many of a server's log messages the panel shows.
const maxServerLog = 10

func (p *serversPanel) view(m *Model, w, h int) ([]string, *tea.Cursor) {
	st := m.st
	out := []string{st.Title.Render("Servers") + st.Muted.Render(fmt.Sprintf(" — %d", len(p.rows)))}
	for i, s := range p.rows {
		mark := "  "
		if i == p.sel {
			mark = st.Selected.Render("›") + " "
		}
		style := st.Muted
		switch s.State {
		case client.StateReady:
			style = st.OK
		case client.StateFailed:
			style = st.Bad
		}
		trust := ""
		if m.trust.trusted(s.Name) {
			trust = " · trusted"
		}
		line := mark + style.Render(stateMark(s.State)+" "+string(s.State)) + "  " + st.Bold.Render(cleanLine(s.Name)) +
			st.Muted.Render(fmt.Sprintf("  %s · %d tool%s%s", s.Transport, s.Tools, plural(s.Tools), trust))
		out = append(out, trunc(line, w))
	}
	out = append(out, "")
	if p.sel < len(p.rows) {
		s := p.rows[p.sel]
		var detail []string
		if s.ServerName != "" {
			detail = append(detail, st.Muted.Render("server    ")+cleanLine(s.ServerName+" "+s.ServerVersion))
		}
		if s.ProtocolVersion != "" {
			detail = append(detail, st.Muted.Render("protocol  ")+cleanLine(s.ProtocolVersion))
		}
		if s.Restarts > 0 {
			detail = append(detail, st.Muted.Render("restarts  ")+fmt.Sprint(s.Restarts))
		}
		if s.LastError != "" {
			for i, el := range strings.Split(serverError(s.LastError), "\n") {
				label := "          "
				if i == 0 {
					label = "error     "
				}
				detail = append(detail, hang(st.Muted.Render(label)+el, w, "          ")...)
			}
		}
		if len(s.Log) > 0 {
			logs := s.Log[max(len(s.Log)-maxServerLog, 0):]
			detail = append(detail, st.Muted.Render(fmt.Sprintf("log (the last %d message%s):", len(logs), plural(len(logs)))))
			for _, l := range logs {
				for _, x := range hang(cleanLine(l), max(w-2, 1), "  ") {
					detail = append(detail, "  "+x)
				}
			}
		}
		if len(s.Recent) > 0 {
			detail = append(detail, st.Muted.Render(fmt.Sprintf("messages (the last %d; → sent, ← received):", len(s.Recent))))
			for _, r := range s.Recent {
				detail = append(detail, trunc("  "+messageLine(r), w))
			}
		}
		if s.StderrTail != "" {
			detail = append(detail, st.Muted.Render("stderr (the last lines):"))
			tail := strings.Split(strings.TrimRight(clean(s.StderrTail), "\n"), "\n")
			for _, l := range tail[max(len(tail)-200, 0):] {
				for _, x := range wrap(l, max(w-2, 1)) {
					detail = append(detail, "  "+x)
				}
			}
		}
		room := h - 1 - len(out)
		p.h = room
		if room > 0 {
			if p.sc.off == 0 && len(detail) > room {
				p.sc.off = len(detail) - room // the newest stderr lines first
			}
			out = append(out, p.sc.window(detail, room)...)
		}
	}
	if len(out) > h-1 {
		out = out[:h-1]
	}
	for len(out) < h-1 {
		out = append(out, "")
	}
	return append(out, m.hints(m.keys.list.Up, m.keys.list.Down, hint("r", "restart"), m.keys.list.Back)), nil
}

// grantsPanel lists the approvals in force; the selected one can be
// revoked.
type grantsPanel struct {
	base
	rows []decide.Grant
	sel  int
}

func newGrantsPanel(m *Model) *grantsPanel {
	p := &grantsPanel{}
	p.refresh(m)
	return p
}

func (p *grantsPanel) refresh(m *Model) {
	p.rows = nil
	if m.gate != nil {
		p.rows = m.gate.Grants()
	}
	p.sel = min(max(p.sel, 0), max(len(p.rows)-1, 0))
}

func (p *grantsPanel) update(m *Model, msg tea.Msg) (panel, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return p, nil
	}
	lk := m.keys.list
	switch {
	case key.Matches(k, lk.Back):
		return nil, nil
	case key.Matches(k, lk.Up):
		p.sel = max(p.sel-1, 0)
	case key.Matches(k, lk.Down):
		p.sel = min(p.sel+1, max(len(p.rows)-1, 0))
	case key.Matches(k, lk.Revoke) || k.String() == "x":
		if p.sel < len(p.rows) {
			m.revoke(p.rows[p.sel])
			p.refresh(m)
		}
	}
	return p, nil
}

// serverName finds the configuration name of a server identity.
func (m *Model) serverName(identity string) string {
	if m.mgr != nil {
		for _, s := range m.servers {
			if s.Identity == identity {
				return s.Name
			}
		}
	}
	return identity[:min(len(identity), 12)]
}

func (m *Model) revoke(g decide.Grant) {
	n := m.gate.Revoke(g)
	name := cleanLine(m.serverName(g.Server))
	if g.Scope == decide.ScopeAlways && m.cfg.StatePath != "" {
		if err := state.Update(m.cfg.StatePath, m.now, func(s *state.State) error {
			s.RevokeGrants(g.Server, g.Tool)
			return nil
		}); err != nil {
			m.notice(levelError, fmt.Sprintf("revoked %s/%s for this session, but not in the state file: %s", name, cleanLine(g.Tool), cleanLine(err.Error())))
			return
		}
	}
	if n > 0 {
		m.notice(levelInfo, fmt.Sprintf("revoked the %s grant for %s/%s", g.Scope, name, cleanLine(g.Tool)))
	}
}

func (p *grantsPanel) view(m *Model, w, h int) ([]string, *tea.Cursor) {
	st := m.st
	out := []string{st.Title.Render("Grants") + st.Muted.Render(fmt.Sprintf(" — %d in force; each is bound to the tool's definition and voided if it changes", len(p.rows)))}
	if len(p.rows) == 0 {
		out = append(out, st.Muted.Render("no grants: approve a call \"for the session\" or \"always\" in a dialog to add one"))
	}
	for i, g := range p.rows {
		mark := "  "
		if i == p.sel {
			mark = st.Selected.Render("›") + " "
		}
		what := "every call"
		if g.Scope == decide.ScopeArgs {
			what = "only " + m.grantedArgs.describe(g.ArgsHash)
		}
		line := mark + fmt.Sprintf("%-8s", g.Scope) + st.Bold.Render(cleanLine(m.serverName(g.Server)+"/"+g.Tool)) +
			st.Muted.Render("  "+what+" · definition "+g.DefinitionHash[:min(8, len(g.DefinitionHash))])
		out = append(out, trunc(line, w))
	}
	out = append(out, m.trustedRows(w)...) // trust.go
	if len(out) > h-1 {
		out = out[:h-1]
	}
	for len(out) < h-1 {
		out = append(out, "")
	}
	return append(out, m.hints(m.keys.list.Up, m.keys.list.Down, hint("x", "revoke"), m.keys.list.Back)), nil
}

// trustCommand is /trust NAME: the server's annotations count from now on,
// and the choice is remembered for its identity.
func (m *Model) trustCommand(name string) {
	name = strings.TrimSpace(name)
	if name == "" {
		m.notice(levelInfo, m.trustListing())
		return
	}
	if m.mgr == nil {
		m.notice(levelWarn, "/trust: the servers have not started yet")
		return
	}
	spec, ok := m.mgr.Spec(name)
	if !ok {
		m.notice(levelWarn, fmt.Sprintf("/trust: no running server named %q", cleanLine(name)))
		return
	}
	if !m.trust.allowed(name) {
		m.notice(levelWarn, fmt.Sprintf("/trust: the managed policy of this machine does not let you trust %s; its calls keep asking", cleanLine(name)))
		return
	}
	if m.trust.trusted(name) {
		m.notice(levelInfo, fmt.Sprintf("%s is already trusted", cleanLine(name)))
		return
	}
	if file := m.trustInfo(name).Distrusted; file != "" {
		m.notice(levelWarn, fmt.Sprintf(`/trust: your config (%s) says "trust": false for %s, and that wins over /trust: change it there to trust the server`, cleanLine(file), cleanLine(name)))
		return
	}
	m.trust.set(name)
	msg := fmt.Sprintf("%s is trusted from now on: its annotations count, so its closed-world reads and additive writes may run without asking", cleanLine(name))
	if m.cfg.StatePath != "" {
		if err := state.Update(m.cfg.StatePath, m.now, func(s *state.State) error {
			s.SetTrust(spec.Identity(), name, true)
			return nil
		}); err != nil {
			msg += fmt.Sprintf(" (for this session only: %s)", cleanLine(err.Error()))
		} else {
			msg += "; remembered for this exact command or URL"
		}
	}
	m.notice(levelInfo, msg)
	if m.panel != nil {
		m.panel.refresh(m)
	}
}

// serverError is a server's error text for the screen: cleaned, with its
// line breaks kept (a stderr tail is several lines), and at most
// maxErrorLines lines.
func serverError(s string) string {
	lines := strings.Split(strings.TrimRight(clean(s), "\n"), "\n")
	if len(lines) > maxErrorLines {
		lines = append(lines[:maxErrorLines], fmt.Sprintf("… %d more lines (/servers)", len(lines)-maxErrorLines))
	}
	return strings.Join(lines, "\n")
}

const maxErrorLines = 12

// onServerState says at once when a server that was running stops: the
// state line counts it, and the transcript says why.
func (m *Model) onServerState(ev client.Event) {
	if ev.Kind != client.EventState || m.phase != phaseReady {
		return
	}
	name := cleanLine(ev.Server)
	switch ev.State {
	case client.StateRestarting:
		m.notice(levelError, "server "+name+" stopped; restarting it: "+serverError(ev.Err))
	case client.StateFailed:
		m.notice(levelError, "server "+name+" failed: "+serverError(ev.Err)+"\n/servers restarts it")
	}
}

// serversReady is the state line's account of the servers: how many are
// ready, and how many failed or are restarting.
func (m *Model) serversReady(ready, total int) string {
	out := fmt.Sprintf("servers %d/%d ready", ready, total)
	failed, restarting := 0, 0
	for _, s := range m.servers {
		switch s.State {
		case client.StateFailed:
			failed++
		case client.StateRestarting:
			restarting++
		}
	}
	if failed > 0 {
		out += fmt.Sprintf(", %d failed", failed)
	}
	if restarting > 0 {
		out += fmt.Sprintf(", %d restarting", restarting)
	}
	return out
}

// messageLine is one recent message in the servers panel: time, direction,
// method, id and size. The method and id are the server's words.
func messageLine(r client.MessageSummary) string {
	arrow := "→"
	if r.Dir == client.Received {
		arrow = "←"
	}
	what := cleanLine(r.Method)
	if what == "" {
		what = "answer"
	}
	if r.ID != "" {
		what += " #" + cleanLine(r.ID)
	}
	if r.Error {
		what += " (error)"
	}
	return fmt.Sprintf("%s %s %s  %s", r.Time.Local().Format("15:04:05.000"), arrow, what, humanBytes(r.Size))
}
