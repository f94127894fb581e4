package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/llm"
)

// TestCtrlCCancelsRunningCall: the first Ctrl-C cancels the call in flight
// (the server sees the cancellation), the second quits.
func TestCtrlCCancelsRunningCall(t *testing.T) {
	flaky, f := fixtureSpec(t, "flaky", fixtures.Options{})
	model := llm.NewScript([]llm.ScriptTurn{
		{Text: "Waiting for it.", ToolCalls: []llm.ScriptCall{{Name: "flaky__hang"}}},
	})
	h := newHarness(t, Config{
		Servers: []client.Spec{flaky}, Model: model,
		Gate: host.GateOptions{Policy: policy(t), Trusted: trusted("flaky")},
		Now:  newClock().Now, Dark: dark(true),
	})
	h.ready()
	h.typeText("hang")
	h.key("enter")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h.until("the card runs", func() bool { return strings.Contains(h.screen(), "flaky/hang") })
	if _, err := f.WaitLog(ctx, func(e fixtures.LogEntry) bool { return e.Event == fixtures.EventExec && e.Tool == "hang" }); err != nil {
		t.Fatalf("the hang tool never started: %v", err)
	}
	if s := h.screen(); !strings.Contains(s, "running") {
		t.Fatalf("the card does not say it runs:\n%s", s)
	}

	h.key("ctrl+c")
	if h.quit {
		t.Fatal("the first ctrl+c quit")
	}
	if _, err := f.WaitLog(ctx, func(e fixtures.LogEntry) bool { return e.Event == fixtures.EventCancelled && e.Tool == "hang" }); err != nil {
		t.Fatalf("the server never saw the cancellation: %v", err)
	}
	h.until("the run ends", func() bool { return h.m.run == nil })
	s := h.screen()
	for _, want := range []string{"? flaky/hang", "outcome unknown", "cancelled", "ctrl+c again quits"} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q:\n%s", want, s)
		}
	}

	h.key("ctrl+c")
	h.until("the program quits", func() bool { return h.quit })
}

// TestCtrlCTwiceQuitsOnlyInARow: another key between two Ctrl-C disarms
// the second.
func TestCtrlCTwiceQuitsOnlyInARow(t *testing.T) {
	h := newHarness(t, Config{Now: newClock().Now, Dark: dark(true)})
	h.ready()
	h.key("ctrl+c")
	if !strings.Contains(h.screen(), "press ctrl+c again to quit") {
		t.Fatalf("no warning after the first ctrl+c:\n%s", h.screen())
	}
	h.typeText("a")
	_, cmd := h.m.Update(keyMsg("ctrl+c"))
	if cmd != nil {
		if _, ok := cmd().(tea.QuitMsg); ok {
			t.Fatal("ctrl+c, a key, ctrl+c quit")
		}
	}
	_, cmd = h.m.Update(keyMsg("ctrl+c"))
	if cmd == nil {
		t.Fatal("ctrl+c twice in a row did not quit")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("ctrl+c twice in a row did not quit")
	}
}
