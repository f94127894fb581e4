package tui

import (
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/mcphost/mcphost/approver"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/termtest"
)

// screen is a model with a settable clock that records the answers it
// sends.
type screen struct {
	t    *testing.T
	m    *Model
	now  time.Time
	sent []sent
}

type sent struct {
	id string
	a  host.Answer
}

func newScreen(t *testing.T, hello *approver.Hello) *screen {
	s := &screen{t: t, now: time.Unix(1000, 0)}
	dark := true
	s.m = NewModel(Config{Serve: hello, NoColor: true, Dark: &dark, Now: func() time.Time { return s.now },
		Answer: func(q *approver.Question, a host.Answer) error {
			s.sent = append(s.sent, sent{q.ID, a})
			return nil
		}})
	s.update(tea.WindowSizeMsg{Width: 100, Height: 40})
	return s
}

// update feeds msg and runs the commands it returns, as the program
// would, except quitting.
func (s *screen) update(msg tea.Msg) {
	_, cmd := s.m.Update(msg)
	s.run(cmd)
}

func (s *screen) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			s.run(c)
		}
	case nil, tea.QuitMsg:
	default:
		s.update(msg)
	}
}

func (s *screen) key(k string) {
	msg := tea.KeyPressMsg{Code: []rune(k)[0], Text: k}
	switch k {
	case "enter":
		msg = tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		msg = tea.KeyPressMsg{Code: tea.KeyEscape}
	}
	s.update(msg)
}

func (s *screen) typeText(text string) {
	for _, r := range text {
		s.key(string(r))
	}
}

// pause lets the dialog's grace period pass.
func (s *screen) pause() { s.now = s.now.Add(time.Second) }

func (s *screen) view() string { return ansi.Strip(s.m.View().Content) }

func (s *screen) mustShow(want ...string) {
	s.t.Helper()
	v := s.view()
	for _, w := range want {
		if !strings.Contains(v, w) {
			s.t.Fatalf("the screen lacks %q:\n%s", w, v)
		}
	}
}

func question(id, tool string, tier decide.Tier, scopes ...decide.Scope) *approver.Question {
	return &approver.Question{Type: approver.TypeQuestion, ID: id, Server: "tasks", Tool: tool, Trusted: tier < decide.T3,
		Tier: tier, Class: decide.Destructive, Arguments: `{"id":"T-1"}`, Scopes: scopes,
		Reasons: []approver.Reason{{Code: "destructive", Text: "it may delete or overwrite data"}}}
}

var allScopes = []decide.Scope{decide.ScopeOnce, decide.ScopeArgs, decide.ScopeSession, decide.ScopeAlways}

func TestQueueInOrderWithGrace(t *testing.T) {
	s := newScreen(t, &approver.Hello{Version: 1, Label: "claude-code", PID: 42})
	s.mustShow("connected to mcphost serve (claude-code), pid 42", "nothing waiting", "No call is waiting")
	s.update(EventMsg{question("a", "delete_task", decide.T2, allScopes...)})
	s.update(EventMsg{question("b", "update_task", decide.T2, allScopes...)})
	s.mustShow("2 waiting", "tasks/delete_task", `"id": "T-1"`)

	// Keys that arrive while the person was typing elsewhere answer nothing.
	s.key("y")
	if len(s.sent) != 0 {
		t.Fatalf("a key inside the grace period answered: %+v", s.sent)
	}
	s.pause()
	s.key("y")
	if len(s.sent) != 1 || s.sent[0].id != "a" || !s.sent[0].a.Approve || s.sent[0].a.Scope != decide.ScopeOnce {
		t.Fatalf("sent %+v, want a approved once", s.sent)
	}
	// The next call opens with its own grace period.
	s.mustShow("1 waiting", "tasks/update_task", "Allowed tasks/delete_task (once).")
	s.key("n")
	if len(s.sent) != 1 {
		t.Fatalf("the next dialog answered inside its grace period: %+v", s.sent)
	}
	s.pause()
	s.key("n")
	if len(s.sent) != 2 || s.sent[1].id != "b" || s.sent[1].a.Approve {
		t.Fatalf("sent %+v, want b denied", s.sent)
	}
	s.mustShow("nothing waiting", "Denied tasks/update_task.")
}

func TestTier3NeedsTypedName(t *testing.T) {
	s := newScreen(t, nil)
	s.update(EventMsg{question("c", "delete_project", decide.T3, decide.ScopeOnce, decide.ScopeArgs, decide.ScopeSession)})
	s.pause()
	s.key("enter")
	if len(s.sent) != 0 {
		t.Fatalf("a tier-3 call was approved without the typed name: %+v", s.sent)
	}
	s.typeText("delete_projec")
	s.key("enter")
	if len(s.sent) != 0 {
		t.Fatalf("a wrong typed name approved: %+v", s.sent)
	}
	s.typeText("t")
	s.key("enter")
	if len(s.sent) != 1 || !s.sent[0].a.Approve || s.sent[0].a.Scope != decide.ScopeOnce {
		t.Fatalf("sent %+v, want c approved once", s.sent)
	}
	if strings.Contains(s.view(), "Always") {
		t.Fatal("tier 3 offered always")
	}
}

func TestWithdrawnQuestion(t *testing.T) {
	s := newScreen(t, nil)
	s.update(EventMsg{question("a", "delete_task", decide.T2, allScopes...)})
	s.update(EventMsg{question("b", "update_task", decide.T2, allScopes...)})
	s.update(EventMsg{question("c", "block_task", decide.T2, allScopes...)})
	s.update(EventMsg{&approver.Withdrawn{ID: "b", Why: "answered in another approver"}})
	s.mustShow("2 waiting", "tasks/delete_task", "tasks/update_task no longer waits")
	s.update(EventMsg{&approver.Withdrawn{ID: "a", Why: "the call was cancelled"}})
	s.mustShow("1 waiting", "tasks/block_task")
	s.pause()
	s.key("y")
	if len(s.sent) != 1 || s.sent[0].id != "c" {
		t.Fatalf("sent %+v, want only c", s.sent)
	}
}

func TestServerTextIsSanitized(t *testing.T) {
	s := newScreen(t, &approver.Hello{Label: "evil\x1b]0;pwned\x07"})
	q := question("a", "delete\x1b[2Jtask", decide.T3, decide.ScopeOnce)
	q.Server, q.Title, q.Description = "ta\u202esks", "\x1b[31mred", "desc\x9b1m"
	q.Arguments = `{"x":"\u001b[H"}`
	s.update(EventMsg{q})
	s.update(EventMsg{&approver.Rejected{ID: "a", Message: "no\x1b[5m"}})
	out := s.m.View().Content
	if u := termtest.Unsafe(out); u != "" {
		t.Fatalf("the screen passes server text to the terminal: %s", u)
	}
	s.update(EventMsg{&approver.Withdrawn{ID: "a", Why: "gone\x1b[K"}})
	if u := termtest.Unsafe(s.m.View().Content); u != "" {
		t.Fatalf("the screen passes server text to the terminal: %s", u)
	}
}

func TestConnectionEnd(t *testing.T) {
	s := newScreen(t, nil)
	s.update(EventMsg{question("a", "delete_task", decide.T2, allScopes...)})
	_, cmd := s.m.Update(EndMsg{Err: ErrDisconnected})
	if cmd == nil {
		t.Fatal("the end of the connection does not quit")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok || !errors.Is(s.m.Err(), ErrDisconnected) {
		t.Fatalf("after the end: %v", s.m.Err())
	}
}

// With several serves connected, the status line counts them and names the
// serve that asked the call shown, so the person knows which host's call
// they answer.
func TestStatusNamesTheServeThatAsked(t *testing.T) {
	one := &approver.Hello{Version: 1, Label: "stdio", PID: 41}
	two := &approver.Hello{Version: 1, Label: "http 127.0.0.1:8765", PID: 42}
	serves := []*approver.Hello{one, two}
	s := newScreen(t, nil)
	s.m.cfg.Serves = func() []*approver.Hello { return serves }
	s.update(tea.WindowSizeMsg{Width: 120, Height: 40})
	s.mustShow("connected to 2 serves · nothing waiting")
	q := question("a", "delete_task", decide.T2, allScopes...)
	q.From = two
	s.update(EventMsg{q})
	s.mustShow("connected to 2 serves · this call from serve (http 127.0.0.1:8765), pid 42 · 1 waiting")
	serves = serves[1:]
	s.mustShow("connected to mcphost serve (http 127.0.0.1:8765), pid 42")
}

// With no serve running the screen says it waits for one; when one
// connects, it says so; the call shown names the client that asks (its
// words sanitized), first on the status line.
func TestWaitsForAServeAndNamesTheClientThatAsks(t *testing.T) {
	var serves []*approver.Hello
	s := newScreen(t, nil)
	s.m.cfg.Serves = func() []*approver.Hello { return serves }
	s.update(tea.WindowSizeMsg{Width: 120, Height: 40})
	s.mustShow("mcphost approve · waiting for mcphost serve to start", "No mcphost serve runs now", "again when one restarts")
	serves = []*approver.Hello{{Version: 1, Label: "stdio in ~/src/app", PID: 7}}
	s.update(EventMsg{&approver.ServesChanged{}})
	s.mustShow("connected to mcphost serve (stdio in ~/src/app), pid 7 · nothing waiting")
	q := question("a", "delete_task", decide.T2, allScopes...)
	q.Client = "Codex\x1b[2J 0.9"
	s.update(EventMsg{q})
	s.mustShow("Asked by Codex\\x1b[2J 0.9 through mcphost serve")
	held := question("b", "purge", decide.T3)
	held.Later, held.Expires = true, "not a time"
	s.update(EventMsg{held})
	s.update(EventMsg{&approver.Withdrawn{Type: approver.TypeWithdrawn, ID: q.ID}})
	s.mustShow("Held for later approval: approved, it runs once when the model calls it again")
	if u := termtest.Unsafe(s.m.View().Content); u != "" {
		t.Fatalf("the client's name reaches the terminal unsanitized: %s", u)
	}
}
