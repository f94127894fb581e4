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
	for _, want := range []string{"? flaky/hang", "outcome unknown", "cancelled"} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "cancelling") {
		t.Errorf("the status still says cancelling after the run ended:\n%s", s)
	}

	// The cancelling Ctrl-C does not count towards quitting: two more do.
	h.key("ctrl+c")
	if h.quit {
		t.Fatal("the ctrl+c after the cancellation quit")
	}
	h.key("ctrl+c")
	h.until("the program quits", func() bool { return h.quit })
}

// quits reports whether cmd quits the program.
func quits(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	_, ok := cmd().(tea.QuitMsg)
	return ok
}

// TestCtrlCTwiceQuitsOnlyInARow: another key between two Ctrl-C disarms
// the second; so does waiting longer than the quit window.
func TestCtrlCTwiceQuitsOnlyInARow(t *testing.T) {
	clk := newClock()
	h := newHarness(t, Config{Now: clk.Now, Dark: dark(true)})
	h.ready()
	h.key("ctrl+c")
	if !strings.Contains(h.screen(), "press ctrl+c again to quit") {
		t.Fatalf("no warning after the first ctrl+c:\n%s", h.screen())
	}
	h.key("up") // a key between them
	if _, cmd := h.m.Update(keyMsg("ctrl+c")); quits(cmd) {
		t.Fatal("ctrl+c, a key, ctrl+c quit")
	}
	clk.Add(2 * time.Second)
	if _, cmd := h.m.Update(keyMsg("ctrl+c")); quits(cmd) {
		t.Fatal("a second ctrl+c two seconds later quit")
	}
	clk.Add(500 * time.Millisecond)
	if _, cmd := h.m.Update(keyMsg("ctrl+c")); !quits(cmd) {
		t.Fatal("ctrl+c twice within the window did not quit")
	}
}

// TestCtrlCClearsADraftIntoHistory: Ctrl-C on a draft clears it and keeps
// it in the history, and does not arm quitting; Ctrl-D quits only on an
// empty input.
func TestCtrlCClearsADraftIntoHistory(t *testing.T) {
	h := newHarness(t, Config{Now: newClock().Now, Dark: dark(true)})
	h.ready()
	h.typeText("a long draft")
	if _, cmd := h.m.Update(keyMsg("ctrl+c")); quits(cmd) {
		t.Fatal("ctrl+c on a draft quit")
	}
	if v := h.m.input.Value(); v != "" {
		t.Fatalf("the input still holds %q", v)
	}
	if _, cmd := h.m.Update(keyMsg("ctrl+c")); quits(cmd) {
		t.Fatal("ctrl+c after clearing a draft quit: clearing must not arm it")
	}
	h.key("esc")
	h.key("up")
	if v := h.m.input.Value(); v != "a long draft" {
		t.Fatalf("↑ after ctrl+c brought back %q", v)
	}
	if _, cmd := h.m.Update(keyMsg("ctrl+d")); quits(cmd) {
		t.Fatal("ctrl+d on a non-empty input quit")
	}
	h.m.input.Reset()
	if _, cmd := h.m.Update(keyMsg("ctrl+d")); quits(cmd) {
		t.Fatal("one ctrl+d on an empty input quit: it must only say how to quit")
	}
	if !strings.Contains(h.screen(), "press ctrl+d again to quit") {
		t.Fatalf("the first ctrl+d gave no hint:\n%s", h.screen())
	}
	if _, cmd := h.m.Update(keyMsg("ctrl+d")); !quits(cmd) {
		t.Fatal("a second ctrl+d on an empty input did not quit")
	}
}
