package ui

import (
	"fmt"
	"slices"

	tea "charm.land/bubbletea/v2"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/state"
	"github.com/mcphost/mcphost/ui/dialog"
	"github.com/mcphost/mcphost/ui/notify"
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

// modal is what a dialog on the chat's stack does (crush's pattern). The
// one on top takes the keys, pastes and timers and is drawn over the
// screen; the model asks the stack, never which kind of dialog it holds. A
// new kind of question is one more type that implements modal.
type modal interface {
	// update handles a message while the dialog is on top. Once the person
	// has answered, it hands the answer on through m, which takes the
	// dialog off the stack and opens whatever waits next.
	update(m *Model, msg tea.Msg) tea.Cmd
	// view draws the dialog; setSize fits it into the space dialogSize
	// leaves.
	view() string
	setSize(w, h int)
	// subject names what the dialog asks about, for the window title and
	// the notification; a server's words pass through notify.Subject.
	subject() string
	// cancel is Ctrl-C on the dialog: it answers with a refusal through m
	// and the dialog leaves. ok is false for a dialog Ctrl-C passes by.
	cancel(m *Model) (cmd tea.Cmd, ok bool)
	// keep reports whether the dialog stays as it is when the queue of
	// questions changes behind it, rather than opening again ("1 of 3",
	// a fresh grace period): a form keeps what was typed.
	keep() bool
}

// dialogEntry is one dialog on the stack.
type dialogEntry struct {
	d modal
	// ask is the queue entry (Model.asks) the dialog shows; nil for one
	// that stands outside the queue (a project server's consent).
	ask *pendingAsk
}

// dialogStack holds the chat's dialogs, the last one on top. The queue of
// questions shows one entry, its first, and the consents one server at a
// time; the two never wait together, since no server runs (so nothing
// asks) until the person has answered every consent.
type dialogStack struct{ entries []dialogEntry }

// top is the dialog that takes the keys, nil when there is none.
func (s *dialogStack) top() modal {
	if len(s.entries) == 0 {
		return nil
	}
	return s.entries[len(s.entries)-1].d
}

// find returns the index of the first entry for which is holds, or -1.
func (s *dialogStack) find(is func(dialogEntry) bool) int {
	for i, e := range s.entries {
		if is(e) {
			return i
		}
	}
	return -1
}

// put sets the entry at index i to e, or pushes e on top when i is -1; a
// nil e.d takes the entry at i off the stack.
func (s *dialogStack) put(i int, e dialogEntry) {
	switch {
	case e.d == nil && i >= 0:
		s.entries = slices.Delete(s.entries, i, i+1)
	case e.d == nil:
	case i >= 0:
		s.entries[i] = e
	default:
		s.entries = append(s.entries, e)
	}
}

// queued finds the entry that shows the queue of questions.
func queued(e dialogEntry) bool { return e.ask != nil }

// topView draws the top dialog, "" when there is none.
func (m *Model) topView() string {
	if d := m.dialogs.top(); d != nil {
		return d.view()
	}
	return ""
}

// onAsk queues a question from the gate; the first one in the queue is on
// screen.
func (m *Model) onAsk(a askMsg) tea.Cmd {
	q, reply := a.q, a.reply
	m.asks = append(m.asks, &pendingAsk{id: a.id, q: a.q, open: func(o dialog.Options) modal {
		return m.newConfirm(q, reply, o)
	}})
	if c := m.cardFor(a.q); c != nil {
		c.asking = true
		d := a.q.Decision
		c.preview = &d
		m.invalidateCard(c)
	}
	// A new question changes what the dialog says ("1 of 2"), so it opens
	// again, with a fresh grace period.
	return m.openQueued()
}

// openQueued shows the first question of the queue, or no question when
// the queue is empty.
func (m *Model) openQueued() tea.Cmd {
	i := m.dialogs.find(queued)
	if len(m.asks) > 0 && i >= 0 && m.dialogs.entries[i].ask == m.asks[0] && m.dialogs.entries[i].d.keep() {
		return nil // a form being filled in keeps what was typed
	}
	if len(m.asks) == 0 {
		m.dialogs.put(i, dialogEntry{})
		return nil
	}
	a := m.asks[0]
	m.dialogs.put(i, dialogEntry{d: a.open(m.dialogOptions(1, len(m.asks))), ask: a})
	return nil
}

// confirmDialog asks the person about a call the gate holds.
type confirmDialog struct {
	d     *dialog.Confirm
	reply chan<- host.Answer // buffered, written at most once
}

func (m *Model) newConfirm(q *host.Question, reply chan<- host.Answer, o dialog.Options) *confirmDialog {
	c := &confirmDialog{d: dialog.NewConfirm(q, o), reply: reply}
	if q != nil && q.Tool != nil && len(q.Tool.InputSchema) > 0 {
		v := newValidator(q.Tool.InputSchema)
		c.d.SetArgsCheck(func(b []byte) error {
			if _, err := v.check(string(b)); err != nil {
				return fmt.Errorf("The edit %w; fix it, or esc to go back", err)
			}
			return nil
		})
	}
	return c
}

func (c *confirmDialog) update(m *Model, msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	c.d, cmd = c.d.Update(msg)
	ans, ok := c.d.Result()
	if !ok {
		return cmd
	}
	if c.d.TrustsServer() {
		m.trustCommand(c.d.Question().Server) // before the answer: the gate sees the trust
	}
	return tea.Batch(cmd, c.answer(m, ans))
}

func (c *confirmDialog) answer(m *Model, ans host.Answer) tea.Cmd {
	a := m.asks[0]
	c.reply <- ans
	m.asks = m.asks[1:]
	m.grantedArgs.note(a.q, ans) // grants.go
	if c := m.cardFor(a.q); c != nil {
		c.asking = false
		m.invalidateCard(c)
	}
	return m.openQueued()
}

func (c *confirmDialog) cancel(m *Model) (tea.Cmd, bool) {
	if cd := m.cardFor(m.asks[0].q); cd != nil {
		cd.cancelled = true
	}
	return c.answer(m, host.Answer{Reason: "the person cancelled the question (ctrl+c)"}), true
}

func (c *confirmDialog) view() string     { return c.d.View() }
func (c *confirmDialog) setSize(w, h int) { c.d.SetSize(w, h) }
func (c *confirmDialog) keep() bool       { return false }

// subject is "SERVER/TOOL".
func (c *confirmDialog) subject() string {
	q, tool := c.d.Question(), ""
	if q.Tool != nil {
		tool = q.Tool.Name
	}
	return notify.Subject(q.Server, tool)
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
		return m.openQueued()
	}
	return nil
}

// dequeue takes the question on screen out of the queue once its answer
// has gone, and shows the next one.
func (m *Model) dequeue() tea.Cmd {
	m.asks = m.asks[1:]
	return m.openQueued()
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

// consentDialog asks whether a project server may start.
type consentDialog struct{ d *dialog.Consent }

func isConsent(e dialogEntry) bool {
	_, ok := e.d.(*consentDialog)
	return ok
}

// openConsent shows the consent dialog for the next project server.
func (m *Model) openConsent() {
	i := m.dialogs.find(isConsent)
	if len(m.consents) == 0 {
		m.dialogs.put(i, dialogEntry{})
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
	m.dialogs.put(i, dialogEntry{d: &consentDialog{d: dialog.NewConsent(req, m.dialogOptions(m.consentAt, m.consentN))}})
}

// update records the person's choice about the server on screen once the
// dialog has one.
func (c *consentDialog) update(m *Model, msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	c.d, cmd = c.d.Update(msg)
	choice, ok := c.d.Result()
	if !ok {
		return cmd
	}
	return tea.Batch(cmd, m.consentChosen(choice))
}

// cancel passes a consent by: nothing waits on it, and Ctrl-C there is on
// its way to quitting.
func (c *consentDialog) cancel(*Model) (tea.Cmd, bool) { return nil, false }

func (c *consentDialog) view() string     { return c.d.View() }
func (c *consentDialog) setSize(w, h int) { c.d.SetSize(w, h) }
func (c *consentDialog) keep() bool       { return false }
func (c *consentDialog) subject() string {
	return notify.Subject(c.d.Request().Server, "") + " (consent to start it)"
}

// consentChosen records the person's choice about the server on screen and
// moves on: to the next server, or to starting them.
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
	m.dialogs.put(m.dialogs.find(isConsent), dialogEntry{})
	return m.startServers()
}

// onElicit queues a server's elicitation with the gate's questions.
func (m *Model) onElicit(e elicitMsg) tea.Cmd {
	r := e.r
	reply := e.reply
	m.asks = append(m.asks, &pendingAsk{id: e.id, open: func(o dialog.Options) modal {
		return &elicitDialog{d: dialog.NewElicit(r, o), reply: reply}
	}})
	return m.openQueued()
}
