package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/llm"
)

// harness drives a Model the way a Bubble Tea program does, without a
// terminal: it calls Update with each message, runs the returned commands in
// goroutines, and feeds their messages back, one at a time. Tests wait for
// conditions on the model, never for time to pass.
type harness struct {
	t    testing.TB
	m    *Model
	msgs chan tea.Msg
	done chan struct{}
	quit bool
	// raw is what the model wrote to the terminal itself (tea.Raw), in order.
	raw []string
}

func newHarness(t testing.TB, cfg Config) *harness {
	t.Helper()
	h := &harness{t: t, m: NewModel(cfg), msgs: make(chan tea.Msg, 64), done: make(chan struct{})}
	var once sync.Once
	t.Cleanup(func() {
		h.m.Close()
		once.Do(func() { close(h.done) })
	})
	h.run(h.m.Init())
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	return h
}

func (h *harness) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() {
		msg := cmd()
		select {
		case h.msgs <- msg:
		case <-h.done:
		}
	}()
}

// send gives the model one message and schedules what it returns.
func (h *harness) send(msg tea.Msg) {
	h.t.Helper()
	switch msg := msg.(type) {
	case nil:
		return
	case tea.BatchMsg:
		for _, c := range msg {
			h.run(c)
		}
		return
	case tea.QuitMsg:
		h.quit = true
		return
	case spinMsg:
		return // the spinner stays on its first frame in tests
	case tea.RawMsg:
		h.raw = append(h.raw, fmt.Sprint(msg.Msg)) // the program writes it, the model never sees it
		return
	}
	_, cmd := h.m.Update(msg)
	h.run(cmd)
}

// until delivers messages until cond holds.
func (h *harness) until(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	for !cond() {
		select {
		case msg := <-h.msgs:
			h.send(msg)
		case <-deadline.C:
			h.t.Fatalf("timed out waiting until %s; screen:\n%s", what, h.screen())
		}
	}
}

func (h *harness) ready() {
	h.t.Helper()
	h.until("the servers are ready", func() bool { return h.m.phase == phaseReady })
}

// typeText types s key by key.
func (h *harness) typeText(s string) {
	for _, r := range s {
		h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func (h *harness) key(s string) {
	h.t.Helper()
	h.send(keyMsg(s))
}

func keyMsg(s string) tea.KeyPressMsg {
	switch s {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "pgup":
		return tea.KeyPressMsg{Code: tea.KeyPgUp}
	case "f1":
		return tea.KeyPressMsg{Code: tea.KeyF1}
	case "f2":
		return tea.KeyPressMsg{Code: tea.KeyF2}
	case "f3":
		return tea.KeyPressMsg{Code: tea.KeyF3}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "alt+enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter, Mod: tea.ModAlt}
	}
	if c, ok := strings.CutPrefix(s, "ctrl+"); ok {
		return tea.KeyPressMsg{Code: rune(c[0]), Mod: tea.ModCtrl}
	}
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}

// screen is the view without styling.
func (h *harness) screen() string { return ansi.Strip(h.m.View().Content) }

// clock is a settable time source.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// fixtureSpec is an in-process fixture server.
func fixtureSpec(t testing.TB, name string, opts fixtures.Options) (client.Spec, *fixtures.Fixture) {
	t.Helper()
	f, err := fixtures.New(name, opts)
	if err != nil {
		t.Fatal(err)
	}
	return client.Spec{Name: name, Dial: f.InMemory}, f
}

func policy(t testing.TB, allow ...string) *decide.Policy {
	t.Helper()
	var specs []decide.RuleSpec
	for i, a := range allow {
		raw, _ := json.Marshal(a)
		specs = append(specs, decide.RuleSpec{Effect: decide.Allow, Source: "test", Index: i, Raw: raw})
	}
	p, err := decide.Compile(specs, decide.Options{AutoApprove: decide.ApproveAdditive})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func trusted(names ...string) func(string) bool {
	return func(s string) bool {
		for _, n := range names {
			if n == s {
				return true
			}
		}
		return false
	}
}

func dark(b bool) *bool { return &b }

// memAudit keeps audit records in memory so that writes may run.
type memAudit struct {
	mu   sync.Mutex
	recs []*audit.Record
}

func (a *memAudit) Append(r *audit.Record) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.recs = append(a.recs, r)
	return nil
}

// fakeModel is a model that is never asked anything.
type fakeModel struct{}

func (fakeModel) Name() string { return "script:demo.jsonl" }
func (fakeModel) Stream(ctx context.Context, _ *llm.Request, _ func(llm.Event)) error {
	return errors.New("not scripted")
}

func cellWidth(s string) int { return ansi.StringWidth(s) }

func teaSize(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }

// shown is the dialog of type T on the chat's stack, nil when there is
// none.
func shown[T modal](m *Model) T {
	for _, e := range m.dialogs.entries {
		if d, ok := e.d.(T); ok {
			return d
		}
	}
	var none T
	return none
}
