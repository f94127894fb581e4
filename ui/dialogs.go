package ui

import (
	"fmt"

	tea "charm.land/bubbletea/v2"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/state"
	"github.com/mcphost/mcphost/ui/dialog"
)

// dialogStyles are the dialog package's styles for the palette.
func dialogStyles(dark, noColor bool) dialog.Styles {
	return dialog.NewStyles(dark, noColor)
}

func (m *Model) dialogOptions(pos, of int) dialog.Options {
	w, h := m.dialogSize()
	return dialog.Options{
		Now: m.now, Grace: m.cfg.Grace, Dark: m.st.dark, NoColor: m.cfg.NoColor,
		Width: w, Height: h, Position: pos, Of: of,
	}
}

// dialogSize leaves the status line visible and, on a large screen, some
// of the transcript around the dialog.
func (m *Model) dialogSize() (int, int) {
	w, h := m.width, m.height-1
	if m.width >= 100 {
		w = min(m.width-8, 120)
	}
	if m.height >= 30 {
		h = min(m.height-4, 40)
	}
	return w, h
}

// onAsk queues a question from the gate; the first one in the queue is on
// screen.
func (m *Model) onAsk(a askMsg) tea.Cmd {
	m.asks = append(m.asks, &pendingAsk{id: a.id, q: a.q, reply: a.reply})
	if c := m.cardFor(a.q); c != nil {
		c.asking = true
		d := a.q.Decision
		c.preview = &d
		m.invalidateCard(c)
	}
	// A new question changes what the dialog says ("1 of 2"), so it opens
	// again, with a fresh grace period.
	return m.openConfirm()
}

func (m *Model) openConfirm() tea.Cmd {
	if len(m.asks) > 0 && m.elicitD != nil && m.elicitID == m.asks[0].id {
		return nil // a form being filled in keeps what was typed
	}
	m.confirm, m.elicitD, m.sampleD = nil, nil, nil
	if len(m.asks) == 0 {
		return nil
	}
	if a := m.asks[0]; a.el != nil {
		m.elicitD, m.elicitID = dialog.NewElicit(*a.el, m.dialogOptions(1, len(m.asks))), a.id
		return nil
	}
	if a := m.asks[0]; a.smp != nil {
		m.sampleD = dialog.NewSample(*a.smp, m.dialogOptions(1, len(m.asks)))
		return nil
	}
	m.confirm = dialog.NewConfirm(m.asks[0].q, m.dialogOptions(1, len(m.asks)))
	if q := m.asks[0].q; q != nil && q.Tool != nil && len(q.Tool.InputSchema) > 0 {
		v := newValidator(q.Tool.InputSchema)
		m.confirm.SetArgsCheck(func(b []byte) error {
			if _, err := v.check(string(b)); err != nil {
				return fmt.Errorf("The edit %w; fix it, or esc to go back", err)
			}
			return nil
		})
	}
	return nil
}

// onWithdrawn drops a question whose call was cancelled.
func (m *Model) onWithdrawn(id int64) tea.Cmd {
	for i, a := range m.asks {
		if a.id != id {
			continue
		}
		m.asks = append(m.asks[:i], m.asks[i+1:]...)
		if c := m.cardFor(a.q); c != nil {
			c.asking = false
			m.invalidateCard(c)
		}
		return m.openConfirm()
	}
	return nil
}

// afterConfirm answers the question on screen once the dialog has a result.
func (m *Model) afterConfirm() tea.Cmd {
	if m.confirm == nil {
		return nil
	}
	ans, ok := m.confirm.Result()
	if !ok {
		return nil
	}
	return m.answer(ans)
}

func (m *Model) answer(ans host.Answer) tea.Cmd {
	a := m.asks[0]
	a.reply <- ans // buffered, read at most once
	m.asks = m.asks[1:]
	m.grantedArgs.note(a.q, ans) // grants.go
	if c := m.cardFor(a.q); c != nil {
		c.asking = false
		m.invalidateCard(c)
	}
	return m.openConfirm()
}

// cardFor finds the running card a question is about: the newest one for
// that tool.
func (m *Model) cardFor(q *host.Question) *card {
	if q == nil {
		return nil
	}
	for i := len(m.tr.entries) - 1; i >= 0; i-- {
		e := m.tr.entries[i]
		if e.kind == entryCard && !e.card.done && e.card.server == q.Server && q.Tool != nil && e.card.tool == q.Tool.Name {
			return e.card
		}
	}
	return nil
}

func (m *Model) invalidateCard(c *card) {
	for _, e := range m.tr.entries {
		if e.card == c {
			e.invalidate()
		}
	}
}

// openConsent shows the consent dialog for the next project server.
func (m *Model) openConsent() {
	if len(m.consents) == 0 {
		m.consent = nil
		return
	}
	ps := m.consents[0]
	m.consentAt++
	req := ps.ConsentRequest()
	if m.cfg.StatePath != "" {
		if s, err := state.Load(m.cfg.StatePath); err == nil {
			c, ok := s.Consent(ps.ConsentKey, ps.ConsentHash)
			req.Changed = !ok && c.Hash != ""
		}
	}
	m.consent = dialog.NewConsent(req, m.dialogOptions(m.consentAt, m.consentN))
}

// afterConsent records the person's choice about the server on screen and
// moves on: to the next server, or to starting them.
func (m *Model) afterConsent() tea.Cmd {
	if m.consent == nil {
		return nil
	}
	choice, ok := m.consent.Result()
	if !ok {
		return nil
	}
	return m.consentChosen(choice)
}

func (m *Model) consentChosen(choice dialog.ConsentChoice) tea.Cmd {
	ps := m.consents[0]
	m.consents = m.consents[1:]
	var st state.Choice
	switch choice {
	case dialog.ConsentTrusted:
		st = state.ChoiceTrusted
	case dialog.ConsentUntrusted:
		st = state.ChoiceUntrusted
	default:
		st = state.ChoiceSkipped
	}
	name := cleanLine(ps.Name)
	if m.cfg.StatePath != "" {
		if err := state.Update(m.cfg.StatePath, m.now, func(s *state.State) error {
			s.SetConsent(ps.ConsentKey, ps.ConsentHash, st)
			return nil
		}); err != nil {
			m.notice(levelError, fmt.Sprintf("could not record your choice about %s: %s; it holds for this session only", name, cleanLine(err.Error())))
		}
	}
	switch st {
	case state.ChoiceSkipped:
		m.skipped = append(m.skipped, client.Status{Name: ps.Name, Transport: ps.Spec.Transport, State: "skipped",
			LastError: "you chose not to start it (defined in the project file " + ps.File + ")"})
		m.notice(levelInfo, fmt.Sprintf("project server %s not started", name))
	case state.ChoiceTrusted:
		m.consented = append(m.consented, ps.Spec)
		m.trust.set(ps.Name)
		m.notice(levelInfo, fmt.Sprintf("project server %s starts, and its annotations are trusted", name))
	default:
		m.consented = append(m.consented, ps.Spec)
		m.notice(levelInfo, fmt.Sprintf("project server %s starts; its annotations are not trusted, so its calls ask", name))
	}
	if len(m.consents) > 0 {
		m.openConsent()
		return nil
	}
	m.consent = nil
	return m.startServers()
}

// onElicit queues a server's elicitation with the gate's questions.
func (m *Model) onElicit(e elicitMsg) tea.Cmd {
	r := e.r
	m.asks = append(m.asks, &pendingAsk{id: e.id, el: &r, elReply: e.reply})
	return m.openConfirm()
}
