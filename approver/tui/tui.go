// Package tui is the terminal side of `mcphost approve`: it shows each call
// a running serve asks about in ui/dialog's confirmation, one at a time in
// the order they were asked, and sends the person's answers back over the
// approver connection.
package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/mcphost/mcphost/approver"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/mcphost/mcphost/ui/dialog"
)

// ErrDisconnected is returned by Run when the serve ends the connection.
var ErrDisconnected = errors.New("mcphost serve ended the connection")

// Config is what the approver's screen needs.
type Config struct {
	// Serve is the serve's hello, for the status line.
	Serve *approver.Hello
	// Serves, if set, returns the serves connected now (an approver.Mux):
	// the status line counts them, and names the one that asked the
	// call shown.
	Serves func() []*approver.Hello
	// Answer sends the person's answer to a question.
	Answer func(q *approver.Question, a host.Answer) error
	// NoColor drops colour; Dark, when set, skips asking the terminal.
	NoColor bool
	Dark    *bool
	// Now and Grace are the dialogs' clock and grace period (tests).
	Now   func() time.Time
	Grace time.Duration
}

// EventMsg carries one message of the serve (from approver.Conn.Next) to
// the model.
type EventMsg struct{ Event any }

// EndMsg says the connection ended, and why.
type EndMsg struct{ Err error }

type sentMsg struct{ err error }

// Model is the approver's Bubble Tea model.
type Model struct {
	cfg    Config
	dark   bool
	queue  []*approver.Question // the head is shown
	dlg    *dialog.Confirm
	width  int
	height int
	note   string
	err    error
	quit   bool
}

// NewModel returns the model for one connection.
func NewModel(cfg Config) *Model {
	m := &Model{cfg: cfg, dark: true, width: 80, height: 24}
	if cfg.Dark != nil {
		m.dark = *cfg.Dark
	}
	return m
}

// Init asks the terminal for its background unless Config.Dark says it.
func (m *Model) Init() tea.Cmd {
	if m.cfg.Dark == nil {
		return tea.RequestBackgroundColor
	}
	return nil
}

// Err returns why the connection ended, once it has.
func (m *Model) Err() error { return m.err }

// Waiting returns how many questions are queued, the one shown included.
func (m *Model) Waiting() int { return len(m.queue) }

// Update handles a message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 24), max(msg.Height, 10)
		if m.dlg != nil {
			m.dlg.SetSize(m.dialogSize())
		}
		return m, nil
	case tea.BackgroundColorMsg:
		if m.cfg.Dark == nil {
			m.dark = msg.IsDark() // for the dialogs opened from now on
		}
		return m, nil
	case EventMsg:
		m.event(msg.Event)
		return m, nil
	case EndMsg:
		m.err = msg.Err
		return m, tea.Quit
	case sentMsg:
		if msg.err != nil {
			m.err = fmt.Errorf("sending the answer: %w", msg.err)
			return m, tea.Quit
		}
		return m, nil
	case tea.KeyPressMsg:
		switch msg.String() {
		case "ctrl+c":
			m.quit = true
			return m, tea.Quit
		case "q":
			if m.dlg == nil {
				m.quit = true
				return m, tea.Quit
			}
		}
	}
	if m.dlg == nil {
		return m, nil
	}
	var cmd tea.Cmd
	m.dlg, cmd = m.dlg.Update(msg)
	a, done := m.dlg.Result()
	if !done {
		return m, cmd
	}
	q := m.queue[0]
	m.note = outcome(q, a)
	m.pop()
	send := func() tea.Msg { return sentMsg{m.cfg.Answer(q, a)} }
	return m, tea.Batch(cmd, send)
}

// event applies one message of the serve.
func (m *Model) event(ev any) {
	switch ev := ev.(type) {
	case *approver.Question:
		m.queue = append(m.queue, ev)
		if m.dlg == nil {
			m.open()
		}
	case *approver.Withdrawn:
		i := slices.IndexFunc(m.queue, func(q *approver.Question) bool { return q.ID == ev.ID })
		if i < 0 {
			return
		}
		m.note = "The call to " + ref(m.queue[i]) + " no longer waits: " + sanitize.Line(ev.Why) + "."
		if i == 0 {
			m.pop()
			return
		}
		m.queue = slices.Delete(m.queue, i, i+1)
	case *approver.Rejected:
		m.note = "mcphost serve took no answer: " + sanitize.Line(ev.Message)
	case *approver.ServesChanged:
		// The status line reads the serves anew when it is drawn.
	}
}

// pop drops the shown question and opens the next.
func (m *Model) pop() {
	m.queue = m.queue[1:]
	m.dlg = nil
	if len(m.queue) > 0 {
		m.open()
	}
}

// open shows the head of the queue. The dialog's grace period starts now,
// when the person first sees it, not when the serve asked.
func (m *Model) open() {
	w, h := m.dialogSize()
	m.dlg = dialog.NewConfirm(m.queue[0].HostQuestion(), dialog.Options{
		Now: m.cfg.Now, Grace: m.cfg.Grace, Dark: m.dark, NoColor: m.cfg.NoColor, Width: w, Height: h,
	})
}

// dialogSize leaves two lines for the status and the note, and one for
// the client that asks when the call shown names it.
func (m *Model) dialogSize() (int, int) {
	if m.asker() != "" {
		return m.width, m.height - 3
	}
	return m.width, m.height - 2
}

// asker is the line that names the client whose call is shown (as it named
// itself to serve) and, for a call held for later approval, that it runs
// once when the model calls it again; "" when there is neither.
func (m *Model) asker() string {
	if len(m.queue) == 0 {
		return ""
	}
	q := m.queue[0]
	var parts []string
	if q.Client != "" {
		parts = append(parts, "Asked by "+sanitize.Line(q.Client)+" through mcphost serve")
	}
	if q.Later {
		held := "Held for later approval: approved, it runs once when the model calls it again"
		if t, err := time.Parse(time.RFC3339, q.Expires); err == nil {
			held += ", until " + t.Local().Format("15:04")
		}
		parts = append(parts, held)
	}
	return strings.Join(parts, " · ")
}

// View draws the status line, the last note, and the dialog.
func (m *Model) View() tea.View {
	muted := lipgloss.NewStyle()
	if !m.cfg.NoColor {
		muted = muted.Faint(true)
	}
	lines := []string{m.status()}
	if a := m.asker(); a != "" && m.dlg != nil {
		lines = append(lines, clip(a, m.width))
	}
	lines = append(lines, muted.Render(clip(m.note, m.width)))
	switch {
	case m.dlg != nil:
		lines = append(lines, m.dlg.View())
	case m.noServe():
		wrap := lipgloss.NewStyle().Width(m.width)
		lines = append(lines, "", wrap.Render("No mcphost serve runs now: a host such as Claude Code starts one from its MCP configuration."),
			wrap.Render("This screen connects to each serve as it starts, and again when one restarts."),
			"", muted.Render("q or ctrl+c quits."))
	default:
		lines = append(lines, "", "No call is waiting for approval. Calls that need a person appear here as serve asks.",
			"", muted.Render("q or ctrl+c quits (calls asked after that are refused unless another approver runs)."))
	}
	v := tea.NewView(strings.Join(lines, "\n"))
	v.AltScreen = true
	return v
}

// noServe reports whether the screen waits for a serve to start: it has
// the serves to count (a Mux) and none is connected.
func (m *Model) noServe() bool {
	return m.cfg.Serve == nil && m.cfg.Serves != nil && len(m.cfg.Serves()) == 0
}

// status is the top line: which client asks the call shown, where the
// answers go and how many calls wait.
func (m *Model) status() string {
	if m.noServe() {
		return clip("mcphost approve · waiting for mcphost serve to start", m.width)
	}
	who, from := approver.ServeName(m.cfg.Serve), ""
	if m.cfg.Serves != nil {
		switch hs := m.cfg.Serves(); {
		case len(hs) == 1:
			who = approver.ServeName(hs[0])
		case len(hs) > 1:
			who = strconv.Itoa(len(hs)) + " serves"
			if m.dlg != nil && m.queue[0].From != nil {
				// Before the count: on a narrow terminal, which host asks
				// matters more.
				from = " · this call from " + strings.TrimPrefix(approver.ServeName(m.queue[0].From), "mcphost ")
			}
		}
	}
	n := len(m.queue)
	waiting := strconv.Itoa(n) + " waiting"
	if n == 0 {
		waiting = "nothing waiting"
	}
	return clip("mcphost approve · connected to "+who+from+" · "+waiting, m.width)
}

// outcome is the note left after the person answered q.
func outcome(q *approver.Question, a host.Answer) string {
	switch {
	case a.Args != nil:
		return "Sent edited arguments for " + ref(q) + "; the edited call is decided again."
	case a.Approve:
		return "Allowed " + ref(q) + " (" + a.Scope.String() + ")."
	}
	return "Denied " + ref(q) + "."
}

func ref(q *approver.Question) string { return sanitize.Name(q.Server) + "/" + sanitize.Name(q.Tool) }

// clip cuts s to width cells.
func clip(s string, width int) string {
	if lipgloss.Width(s) <= width {
		return s
	}
	r := []rune(s)
	for len(r) > 0 && lipgloss.Width(string(r))+1 > width {
		r = r[:len(r)-1]
	}
	return string(r) + "…"
}

// Streams are the terminal the screen runs on.
type Streams struct {
	In  io.Reader
	Out io.Writer
}

// Source is where the questions come from and the answers go: one serve
// (*approver.Conn) or every serve of the person (*approver.Mux).
type Source interface {
	Next() (any, error)
	Answer(q *approver.Question, a host.Answer) error
}

// Run shows the screen until the person quits (nil), ctx ends (nil), or
// the serve ends the connection (an error wrapping ErrDisconnected, or the
// serve's own error; with a Mux, the last serve, and never with a Mux that
// stays open). It reads conn's messages
// and sends answers on it; the caller closes conn.
func Run(ctx context.Context, s Streams, conn Source, cfg Config) error {
	if cfg.Answer == nil {
		cfg.Answer = conn.Answer
	}
	m := NewModel(cfg)
	opts := []tea.ProgramOption{tea.WithInput(s.In), tea.WithOutput(s.Out), tea.WithoutSignalHandler()}
	if cfg.NoColor {
		opts = append(opts, tea.WithColorProfile(colorprofile.Ascii))
	}
	p := tea.NewProgram(m, opts...)
	stop := context.AfterFunc(ctx, p.Quit)
	defer stop()
	go func() {
		for {
			ev, err := conn.Next()
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = ErrDisconnected
				}
				p.Send(EndMsg{Err: err})
				return
			}
			p.Send(EventMsg{Event: ev})
		}
	}()
	if _, err := p.Run(); err != nil && !errors.Is(err, tea.ErrProgramKilled) {
		return err
	}
	if m.quit || ctx.Err() != nil {
		return nil
	}
	return m.err
}
