package ui

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/later"
	"github.com/mcphost/mcphost/llm"
	"github.com/mcphost/mcphost/oauth"
	"github.com/mcphost/mcphost/ui/notify"
)

// Model is the TUI's Bubble Tea model. Build it with NewModel; a Model that
// was started must be closed with Close.
type Model struct {
	cfg  Config
	now  func() time.Time
	keys keyMaps
	st   styles
	rc   renderCtx

	width, height int

	// ctx is the model's lifetime, not one request's: a Bubble Tea model
	// has no call to pass a context through, and every goroutine it starts
	// (the model loop, calls, server starts) must end when the person
	// quits.
	ctx   context.Context
	stop  context.CancelFunc
	inbox chan tea.Msg
	jobs  jobs
	once  sync.Once

	trust *trustSet
	// habits is the state of @path, esc esc and the instructions
	// (habits.go).
	habits habitState
	// switchTo is the saved chat /resume chose to continue after this one
	// (habits.go).
	switchTo string

	mgr   *client.Manager
	gate  *host.Gate
	asker *asker
	phase phase
	// servers is the last state of the manager's servers.
	servers []client.Status

	consents  []ProjectServer // waiting for the person, the first one shown
	consentN  int             // how many there were, for "2 of 3"
	consentAt int             // which one is shown
	consented []client.Spec
	skipped   []client.Status

	loop *host.Loop
	// loopTools says the catalog changed since the loop's tools were set:
	// they are replaced before the next run (never during one).
	loopTools bool
	run       *activeRun
	runSeq    int
	loopRun   atomic.Int64 // the run the loop's events belong to
	pending   string       // a message written while the servers were starting
	current   *entry       // the assistant message being streamed
	cards     map[string]*card
	ctxView   contextView // tokens and cache, for the status line

	tr    transcript
	input textarea.Model
	focus focusArea

	// asks are the questions waiting for the person, the first one on
	// screen (dialogs.go).
	asks []*pendingAsk
	// dialogs are the dialogs on screen, the top one taking the keys.
	dialogs dialogStack
	// openURL opens an address a server asked the person to visit, once
	// they agreed (oauth.OpenBrowser: no shell).
	openURL func(string) error

	panel panel
	// attach is the resource the next message carries, if any.
	attach  *attachment
	calls   map[int]*manualCall
	callSeq int

	// quitAt is when Ctrl-C on an empty input asked for a second one.
	quitAt time.Time
	flash  string
	// cancelling says Ctrl-C cancelled what runs; the status says so while
	// it still runs.
	cancelling bool
	spinning   bool

	hist       *history
	histWarned bool
	search     *histSearch
	// queue holds messages written while the model works, oldest first.
	queue []string
	// menu is the menu above the input (slashmenu.go), nil when closed;
	// menuShut is the word it was closed on with esc.
	menu     *slashMenu
	menuShut string
	// mentions are the servers' resources and templates offered for
	// @server:uri (resources.go); pendingMentions go with pending.
	mentions        *mentionList
	pendingMentions []mention
	// pastes are the long pastes the input shows as one line each
	// (input.go).
	pastes []pasteBlock
	// getenv and execProcess reach the environment and run the editor
	// (tea.ExecProcess); tests replace them.
	getenv      func(string) string
	execProcess func(*exec.Cmd, tea.ExecCallback) tea.Cmd
	pager       *pager
	// mouseOff gives the mouse back to the terminal (selection) instead of
	// scrolling the transcript with the wheel.
	mouseOff bool
	// usage is what the model reported: tokens this session, and the input
	// of the latest turn (how full the context is).
	usage usageMeter
	// sampling holds servers to their sampling budgets (Config.Sampling).
	sampling *host.SampleMeter
	// sampleModel is cfg.Model (setModel writes both) for the goroutines
	// of servers' sampling requests, which must not read cfg while /model
	// writes it.
	sampleModel atomic.Pointer[llm.Model]

	// rec saves the chat (session.go); nil when it is not saved.
	rec *recorder
	// grantedArgs are the arguments of "these arguments" grants (grants.go).
	grantedArgs grantedArgs
	// called counts the times a dialog started to wait and the person was
	// called (notify.go).
	called int
}

type phase uint8

const (
	phaseConsent phase = iota // asking about project servers
	phaseStarting
	phaseReady
)

type focusArea uint8

const (
	focusInput focusArea = iota
	focusTranscript
)

type activeRun struct {
	id     int
	cancel context.CancelFunc
}

type manualCall struct {
	id      int
	cancel  context.CancelFunc
	card    *card
	started time.Time
}

// Messages.
type (
	inboxMsg     struct{ msg tea.Msg }
	loopEventMsg struct {
		run int
		ev  host.LoopEvent
	}
	runDoneMsg struct {
		run int
		out *host.RunOutcome
		err error
	}
	startedMsg  struct{}
	serversMsg  struct{ ev client.Event }
	callDoneMsg struct {
		id int
		r  *host.Result
	}
	restartedMsg struct {
		name string
		err  error
	}
	spinMsg struct{}
)

// NewModel returns the TUI's model for cfg without touching a terminal.
// Nothing starts until Init's commands run.
func NewModel(cfg Config) *Model {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	ctx, stop := context.WithCancel(context.Background())
	m := &Model{
		cfg: cfg, now: cfg.Now, keys: newKeyMaps(),
		ctx: ctx, stop: stop, inbox: make(chan tea.Msg, 256),
		trust: &trustSet{base: cfg.Gate.Trusted, may: cfg.MayTrust, on: map[string]bool{}},
		cards: map[string]*card{}, calls: map[int]*manualCall{},
		tr:    newTranscript(),
		width: 80, height: 24,
	}
	m.jobs.init()
	var herr error
	m.hist, herr = loadHistory(cfg.historyPath())
	if herr != nil {
		m.histWarned = true
		m.notice(levelWarn, cleanLine(herr.Error())+"; the history lasts for this session only")
	}
	m.openURL = oauth.OpenBrowser
	m.getenv, m.execProcess = os.Getenv, tea.ExecProcess
	m.setModel(cfg.Model)
	m.sampling = cfg.Sampling
	if m.sampling == nil {
		m.sampling = host.NewSampleMeter(config.DefaultSamplingBudget)
	}
	m.asker = &asker{inbox: m.inbox, done: ctx.Done()}
	dark := true
	if cfg.Dark != nil {
		dark = *cfg.Dark
	}
	m.setStyles(dark)
	m.input = newInput(m.st, cfg.Model != nil)
	m.consents = append([]ProjectServer(nil), cfg.Project...)
	m.consentN = len(m.consents)
	if m.consentN == 0 {
		m.phase = phaseStarting
	}
	m.layout()
	m.rec = newRecorder(cfg.Session, cfg.Resumed, func(n noticeMsg) { m.post(n) }) // session.go
	m.openSession()
	m.startHabits() // habits.go
	return m
}

func newInput(st styles, haveModel bool) textarea.Model {
	ta := textarea.New()
	ta.Prompt = "› "
	ta.ShowLineNumbers = false
	ta.Placeholder = "Write to the model; /help lists commands"
	if !haveModel {
		ta.Placeholder = "No model configured: /help, ctrl+t tools, /servers"
	}
	ta.DynamicHeight = true
	ta.MinHeight = 1
	ta.MaxHeight = 6
	ta.CharLimit = 0
	ta.SetVirtualCursor(false)
	km := textarea.DefaultKeyMap()
	km.InsertNewline = key.NewBinding(key.WithKeys("alt+enter", "shift+enter", "ctrl+j"))
	km.TransposeCharacterBackward.SetEnabled(false) // ctrl+t opens the tools
	km.SelectAll.SetEnabled(false)
	ta.KeyMap = km
	s := textarea.DefaultStyles(st.dark)
	if st.noColor {
		s = textarea.Styles{}
	}
	ta.SetStyles(s)
	ta.Focus()
	return ta
}

func (m *Model) setStyles(dark bool) {
	m.st = newStyles(dark, m.cfg.NoColor)
	m.rc = renderCtx{st: m.st, dst: dialogStyles(dark, m.cfg.NoColor), now: m.now, frame: m.rc.frame, md: &answerMarkdown{}}
	for _, e := range m.tr.entries {
		e.invalidate()
	}
}

// Init starts the servers, or first asks about project servers.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{m.listen()}
	if m.cfg.Dark == nil {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	if m.phase == phaseConsent {
		m.openConsent()
		cmds = append(cmds, m.callPerson())
	} else {
		cmds = append(cmds, m.startServers())
	}
	return tea.Batch(cmds...)
}

// Close stops everything the model started: it cancels what runs, waits
// for its goroutines, and stops the servers. It may be called more than
// once.
func (m *Model) Close() {
	m.once.Do(func() {
		m.stop()
		m.jobs.closeWait()
		m.rec.close()
		if m.mgr != nil {
			m.mgr.Close()
		}
	})
}

// listen waits for the next message from the model's goroutines.
func (m *Model) listen() tea.Cmd {
	return func() tea.Msg {
		select {
		case msg := <-m.inbox:
			return inboxMsg{msg}
		case <-m.ctx.Done():
			return nil
		}
	}
}

// post hands a message from a goroutine to the program.
func (m *Model) post(msg tea.Msg) {
	select {
	case m.inbox <- msg:
	case <-m.ctx.Done():
	}
}

// job runs f as a command whose end Close waits for.
func (m *Model) job(f func()) tea.Cmd {
	return func() tea.Msg {
		if !m.jobs.start() {
			return nil
		}
		defer m.jobs.done()
		f()
		return nil
	}
}

// startServers builds the manager and the gate and starts the servers.
func (m *Model) startServers() tea.Cmd {
	m.phase = phaseStarting
	specs := append(append([]client.Spec(nil), m.cfg.Servers...), m.consented...)
	copts := m.cfg.Client
	copts.Elicitation = m.elicit
	copts.Sampling = m.sample
	o := m.cfg.Gate
	if o.Pins == nil {
		o.Pins = host.NewPins(o.Store)
	}
	copts.OnListing = o.Pins.Hook(m.trust.trusted) // every listing is pinned before the model sees it
	m.mgr = client.New(specs, copts)
	o.Catalog, o.Asker, o.Mode, o.Trusted, o.MayTrust = m.mgr, m.asker, decide.Interactive, m.trust.trusted, m.mayTrust
	if o.Now == nil {
		o.Now = m.now
	}
	var g *host.Gate
	onHold := o.OnHold
	o.OnHold = func(a later.Approval, q *host.Question) error {
		if onHold != nil {
			if err := onHold(a, q); err != nil {
				return err
			}
		}
		if m.cfg.PostHeld != nil {
			if err := m.cfg.PostHeld(g, a, q); err != nil {
				return err // the gate withdraws it: nothing waits to ring about
			}
		}
		m.post(heldMsg{subject: notify.Subject(q.Server, q.Tool.Name)})
		return nil
	}
	g = host.NewGate(o)
	m.gate = g
	m.servers = nil
	events, unsub := m.mgr.Subscribe()
	mgr := m.mgr
	watch := m.job(func() {
		defer unsub()
		for {
			select {
			case ev, ok := <-events:
				if !ok {
					return
				}
				m.post(serversMsg{ev: ev})
			case <-m.ctx.Done():
				return
			}
		}
	})
	start := m.job(func() {
		mgr.Start(m.ctx)
		m.post(startedMsg{})
	})
	return tea.Batch(watch, start, m.spin())
}

// Update handles one message. When it leaves a dialog waiting where none
// waited, the person is called (notify.go).
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	was := m.waiting()
	_, cmd := m.update(msg)
	switch msg.(type) {
	case tea.KeyPressMsg, tea.PasteMsg, editorDoneMsg:
		// The input may have changed: the menu follows it.
		cmd = tea.Batch(cmd, m.syncMenu())
	}
	if !was && m.waiting() {
		cmd = tea.Batch(cmd, m.callPerson())
	}
	return m, cmd
}

func (m *Model) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case inboxMsg:
		cmd := m.handle(msg.msg)
		if m.run == nil && len(m.calls) == 0 {
			m.cancelling = false // what was cancelled has ended
		}
		return m, tea.Batch(cmd, m.listen())
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 20), max(msg.Height, 6)
		m.layout()
		return m, nil
	case tea.BackgroundColorMsg:
		if m.cfg.Dark == nil {
			m.setStyles(msg.IsDark())
			m.input.SetStyles(newInput(m.st, m.cfg.Model != nil).Styles())
			if m.panel != nil {
				m.panel.restyle(m)
			}
		}
		return m, nil
	case spinMsg:
		if !m.busy() {
			m.spinning = false
			return m, nil
		}
		m.rc.frame++
		return m, tea.Tick(120*time.Millisecond, func(time.Time) tea.Msg { return spinMsg{} })
	case tea.KeyPressMsg:
		return m, m.onKey(msg)
	case tea.PasteMsg:
		if m.search != nil {
			return m, nil // a search query is typed
		}
		return m, m.onPaste(msg)
	case tea.MouseWheelMsg:
		m.onWheel(msg)
		return m, nil
	case editorDoneMsg:
		return m, m.editorDone(msg) // input.go
	case tea.ResumeMsg:
		m.flash = "resumed"
		return m, nil
	}
	// Anything else (a dialog's timers, the textarea's) goes to whatever
	// has the focus.
	switch d := m.dialogs.top(); {
	case d != nil:
		return m, d.update(m, msg)
	case m.panel != nil:
		var cmd tea.Cmd
		m.panel, cmd = m.panel.update(m, msg)
		return m, cmd
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return m, cmd
}

// handle deals with what the model's goroutines report.
func (m *Model) handle(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case askMsg:
		return m.onAsk(msg)
	case askWithdrawnMsg:
		return m.onWithdrawn(msg.id)
	case heldMsg:
		return m.callPersonAbout(msg.subject + ", held for your approval elsewhere")
	case elicitMsg:
		return m.onElicit(msg)
	case sampleMsg:
		return m.onSample(msg)
	case noticeMsg:
		m.notice(msg.l, msg.text)
	case usageMsg:
		m.usage.add(msg.u, msg.sampled)
	case loopEventMsg:
		return m.onLoopEvent(msg)
	case runDoneMsg:
		return m.onRunDone(msg)
	case callDoneMsg:
		return m.onCallDone(msg)
	case resourcesMsg, resourceReadMsg, promptsMsg, promptGotMsg, completeMsg:
		return m.onPanelData(msg)
	case mentionsMsg:
		m.onMentions(msg) // resources.go
	case startedMsg:
		m.phase = phaseReady
		m.servers = m.mgr.Servers()
		m.reportServers()
		if m.panel != nil {
			m.panel.refresh(m)
		}
		if m.pending != "" {
			text, mentions := m.pending, m.pendingMentions
			m.pending, m.pendingMentions = "", nil
			return m.startRun(text, mentions)
		}
	case serversMsg:
		if m.mgr != nil {
			m.servers = m.mgr.Servers()
		}
		m.onServerState(msg.ev) // servers.go
		if m.mentions != nil {
			m.mentions.stale = true // what the servers offer may have changed
		}
		if msg.ev.Kind == client.EventTools || (msg.ev.Kind == client.EventState && msg.ev.State == client.StateReady) {
			m.toolsChanged()
		}
		if m.panel != nil {
			m.panel.refresh(m)
		}
	case restartedMsg:
		m.flash = ""
		if msg.err != nil {
			m.notice(levelError, fmt.Sprintf("restart %s: %s", cleanLine(msg.name), serverError(msg.err.Error())))
		} else {
			m.notice(levelInfo, fmt.Sprintf("server %s restarted", cleanLine(msg.name)))
		}
		m.toolsChanged()
		if m.mgr != nil {
			m.servers = m.mgr.Servers()
		}
		if m.panel != nil {
			m.panel.refresh(m)
		}
	}
	return nil
}

// reportServers says how the start went, and what did not start.
func (m *Model) reportServers() {
	ready, tools := 0, len(m.mgr.Tools())
	for _, s := range m.servers {
		if s.State == client.StateReady {
			ready++
		}
	}
	m.notice(levelInfo, fmt.Sprintf("%d of %d server%s ready, %d tool%s · ctrl+t lists and calls them · f1 help", ready, len(m.servers), plural(len(m.servers)), tools, plural(tools)))
	for _, s := range m.servers {
		if s.State != client.StateReady {
			m.notice(levelWarn, fmt.Sprintf("server %s is %s (/servers shows its stderr): %s", cleanLine(s.Name), s.State, serverError(s.LastError)))
		}
	}
	if m.cfg.Model == nil {
		m.notice(levelInfo, m.noModelText())
	}
}

func (m *Model) noModelText() string {
	works := "everything else works: ctrl+t (or /tools) lists the tools and calls them through the gate, /servers, /explain, /grants, /help."
	if m.cfg.NoModel != "" { // a model was named but cannot be used: say why, not that there is none
		return "The model cannot be used: " + strings.TrimSuffix(cleanLine(m.cfg.NoModel), ".") + ".\n" +
			"Until that is fixed there is no chat; " + works
	}
	return "No model is configured, so there is no chat; " + works + "\n" +
		"To chat, start mcphost with --model PROVIDER:MODEL (anthropic:…, openai:…, ollama:…, openai-compatible:… with --base-url, script:FILE), set \"model\" in your config, or set MCPHOST_MODEL."
}

// noModelShort answers a message written without a model: the full help
// was shown when the TUI started.
const noModelShort = "not sent: there is no model (the note at the start says why)"

// notice adds a line of mcphost's own to the transcript. text must be built
// from cleaned parts.
func (m *Model) notice(l level, text string) {
	m.tr.add(&entry{kind: entryNotice, level: l, text: text})
}

// busy reports whether anything runs that Ctrl-C would cancel, or a
// spinner should turn.
func (m *Model) busy() bool {
	return m.run != nil || len(m.calls) > 0 || m.phase == phaseStarting
}

// spin starts the spinner unless it turns already.
func (m *Model) spin() tea.Cmd {
	if m.spinning {
		return nil
	}
	m.spinning = true
	return tea.Tick(120*time.Millisecond, func(time.Time) tea.Msg { return spinMsg{} })
}

// layout sizes the parts to the window.
func (m *Model) layout() {
	m.input.SetWidth(m.width)
	dw, dh := m.dialogSize()
	for _, e := range m.dialogs.entries {
		e.d.setSize(dw, dh)
	}
	if m.panel != nil {
		m.panel.resize(m)
	}
}

// transcriptHeight is the number of rows the transcript gets.
func (m *Model) transcriptHeight() int {
	return max(m.height-m.input.Height()-2-len(m.queueLines(m.width))-m.menuHeight(), 1)
}

// onWheel scrolls the transcript, or the pager, by three lines a notch.
func (m *Model) onWheel(w tea.MouseWheelMsg) {
	if m.mouseOff || m.panel != nil || m.topView() != "" {
		return
	}
	n := 0
	switch w.Button {
	case tea.MouseWheelUp:
		n = -3
	case tea.MouseWheelDown:
		n = 3
	default:
		return
	}
	if m.pager != nil {
		m.pager.scroll(n)
		return
	}
	m.tr.scroll(&m.rc, n, m.width, m.transcriptHeight())
}

// rule is the line above the input: what has the focus, and what the
// input carries.
func (m *Model) rule(w int) string {
	switch {
	case m.search != nil:
		return m.searchRule(w)
	case m.focus == focusTranscript && m.pager == nil:
		label := " TRANSCRIPT · ↑/↓ cards · enter expands · o opens the result · esc/f2 back to the input "
		line := trunc(m.st.Rule.Render("━━")+m.st.Selected.Render(label), w)
		return line + m.st.Rule.Render(strings.Repeat("━", max(w-lipgloss.Width(line), 0)))
	}
	return m.inputRule(w)
}

// View draws the screen: transcript, input and status line, with a panel
// and the top dialog drawn over them as layers.
func (m *Model) View() tea.View {
	w, h := m.width, m.height
	th := m.transcriptHeight()
	var rows []string
	if m.pager != nil {
		rows = m.pager.view(m, w, th)
	} else {
		rows = m.tr.view(&m.rc, w, th)
	}
	rows = append(rows, m.queueLines(w)...)
	rows = append(rows, m.menuLines(w)...)
	rows = append(rows, m.rule(w))
	for _, l := range strings.Split(m.input.View(), "\n") {
		rows = append(rows, fit(l, w))
	}
	rows = append(rows, m.statusLine(w))
	if len(rows) > h {
		rows = rows[len(rows)-h:]
	}
	layers := []*lipgloss.Layer{lipgloss.NewLayer(strings.Join(rows, "\n"))}

	var cursor *tea.Cursor
	if m.panel == nil && m.pager == nil && m.focus == focusInput && m.topView() == "" {
		if c := m.input.Cursor(); c != nil {
			c.Position.Y += th + 1 + len(m.queueLines(w)) + m.menuHeight()
			cursor = c
		}
	}
	if m.panel != nil {
		box, c := m.panelView(w, h-1)
		layers = append(layers, lipgloss.NewLayer(box).X(0).Y(0).Z(1))
		if m.topView() == "" {
			cursor = c
		}
	}
	if d := m.topView(); d != "" {
		// The screen behind the dialog is cleared, all but the status
		// line: no fragment of the transcript or a panel stands around
		// the box to be mistaken for part of the question.
		blank := strings.TrimSuffix(strings.Repeat(strings.Repeat(" ", w)+"\n", max(h-1, 1)), "\n")
		layers = append(layers, lipgloss.NewLayer(blank).X(0).Y(0).Z(2))
		dw, dh := lipgloss.Width(d), lipgloss.Height(d)
		layers = append(layers, lipgloss.NewLayer(d).X(max((w-dw)/2, 0)).Y(max((h-dh)/2, 0)).Z(3))
	}
	var content string
	if len(layers) == 1 {
		// Nothing to compose: the rows are already cut to the width. This
		// halves the cost of a frame while the model streams.
		for i, r := range rows {
			rows[i] = strings.TrimRight(r, " ")
		}
		content = strings.Join(rows, "\n")
	} else {
		content = lipgloss.NewCompositor(layers...).Render()
	}
	v := tea.NewView(content)
	v.AltScreen = true
	if !m.mouseOff {
		v.MouseMode = tea.MouseModeCellMotion
	}
	v.Cursor = cursor
	v.WindowTitle = m.windowTitle() // notify.go
	return v
}

// statusLine says what is going on: model, servers, grants, taint, and
// the keys that matter now.
func (m *Model) statusLine(w int) string {
	st := m.st
	var parts []string
	switch {
	case m.cfg.Model != nil:
		parts = append(parts, "model "+cleanLine(m.cfg.Model.Name()))
	default:
		parts = append(parts, "no model")
	}
	ready, total := 0, len(m.cfg.Held)+len(m.skipped)
	for _, s := range m.servers {
		total++
		if s.State == client.StateReady {
			ready++
		}
	}
	switch m.phase {
	case phaseConsent:
		parts = append(parts, fmt.Sprintf("servers wait for consent (%d)", len(m.consents)))
	case phaseStarting:
		if len(m.servers) == 0 {
			total = len(m.cfg.Servers) + len(m.consented) + len(m.cfg.Held) + len(m.skipped)
		}
		parts = append(parts, fmt.Sprintf("servers %d/%d starting", ready, total))
	default:
		parts = append(parts, m.serversReady(ready, total)) // servers.go
	}
	if m.gate != nil {
		session, always := 0, 0
		for _, g := range m.gate.Grants() {
			if g.Scope == decide.ScopeAlways {
				always++
			} else {
				session++
			}
		}
		g := fmt.Sprintf("grants %d", session)
		if always > 0 {
			g += fmt.Sprintf("+%d always", always)
		}
		parts = append(parts, g)
	}
	if u := m.usage.status(m.contextWindow()); u != "" {
		if c := m.ctxView.usage.CacheReadTokens; c > 0 {
			u += " (" + humanCount(c) + " cached)"
		}
		parts = append(parts, u)
	}
	if bot, total, following := m.tr.position(); !following && total > 0 {
		parts = append(parts, fmt.Sprintf("scrolled up, at %d of %d (pgdown)", bot, total))
	}
	sep := st.Status.Render(" · ")
	info := st.Status.Render(strings.Join(parts, " · "))
	var right string
	important := true
	switch {
	case m.flash != "":
		right = st.Warn.Render(m.flash)
	case len(m.asks) == 1:
		right = st.Warn.Render("waiting for your answer")
	case len(m.asks) > 1:
		right = st.Warn.Render(fmt.Sprintf("question 1 of %d", len(m.asks)))
	case m.cancelling && (m.run != nil || len(m.calls) > 0):
		right = st.Warn.Render(m.rc.spin() + " cancelling")
	case m.run != nil || len(m.calls) > 0:
		right = st.Info.Render(m.rc.spin()+" running") + st.Status.Render(" · ctrl+c cancels")
		if len(m.queue) > 0 {
			right += st.Status.Render(fmt.Sprintf(" · %d queued", len(m.queue)))
		}
	case m.pending != "":
		right = st.Info.Render("waiting for the servers")
	default:
		right, important = st.Status.Render("f1 help · ctrl+t tools"), false
	}
	// The taint marker comes first and is never cut; the rest gives way.
	taints := []string{""}
	if m.tainted() {
		taints = []string{
			st.Taint.Render("⚠ TAINTED: private data + untrusted content") + sep,
			st.Taint.Render("⚠ TAINTED") + sep,
		}
	}
	rights := []string{right}
	if !important {
		rights = append(rights, st.Status.Render("f1 help"), "")
	}
	var left string
	for _, r := range rights {
		for _, tm := range taints {
			left, right = tm+info, r
			if lipgloss.Width(left)+lipgloss.Width(right)+1 <= w {
				return fit(left+strings.Repeat(" ", w-lipgloss.Width(left)-lipgloss.Width(right))+right, w)
			}
		}
	}
	tm := taints[len(taints)-1]
	rw := lipgloss.Width(right)
	left = tm + trunc(info, max(w-rw-1-lipgloss.Width(tm), 0))
	return fit(left+strings.Repeat(" ", max(w-lipgloss.Width(left)-rw, 0))+right, w)
}

// tainted reports whether the session holds private data and untrusted
// content at once.
func (m *Model) tainted() bool {
	if m.gate == nil {
		return false
	}
	open, priv := m.gate.Taint()
	return open && priv
}

// jobs counts the model's goroutines so that Close can wait for them.
type jobs struct {
	mu     sync.Mutex
	cond   *sync.Cond
	n      int
	closed bool
}

func (j *jobs) init() { j.cond = sync.NewCond(&j.mu) }

func (j *jobs) start() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return false
	}
	j.n++
	return true
}

func (j *jobs) done() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.n--
	if j.n == 0 {
		j.cond.Broadcast()
	}
}

func (j *jobs) closeWait() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.closed = true
	for j.n > 0 {
		j.cond.Wait()
	}
}

// trustSet is the servers trusted, or no longer trusted, during the
// session, in front of the configuration's own trust.
type trustSet struct {
	mu   sync.Mutex
	on   map[string]bool // true: /trust; false: /untrust, which beats base
	base func(string) bool
	may  func(string) bool // nil: any server may be trusted
}

func (t *trustSet) trusted(name string) bool {
	if !t.allowed(name) {
		return false
	}
	t.mu.Lock()
	on, set := t.on[name]
	t.mu.Unlock()
	if set {
		return on
	}
	return t.base != nil && t.base(name)
}

// unset takes back the server's trust for the rest of the session,
// whatever the configuration said at the start.
func (t *trustSet) unset(name string) {
	t.mu.Lock()
	t.on[name] = false
	t.mu.Unlock()
}

// bySession reports whether this session's /trust trusted the server.
func (t *trustSet) bySession(name string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.on[name]
}

// allowed reports whether the server may be trusted at all.
func (t *trustSet) allowed(name string) bool { return t.may == nil || t.may(name) }

func (t *trustSet) set(name string) {
	t.mu.Lock()
	t.on[name] = true
	t.mu.Unlock()
}

// toolsChanged notes that the catalog changed, so the model is offered the
// current tools from its next turn on. A run in progress keeps the tools it
// started with; the loop is not safe to change under it.
func (m *Model) toolsChanged() {
	m.loopTools = true
	m.syncLoopTools()
}

func (m *Model) syncLoopTools() {
	if !m.loopTools || m.loop == nil || m.run != nil || m.mgr == nil {
		return
	}
	m.loop.SetTools(m.mgr.Tools())
	m.loopTools = false
}
