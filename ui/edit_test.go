package ui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/llm"
)

// replaceEditor clears the dialog's argument editor and types text.
func replaceEditor(h *harness, text string) {
	h.send(tea.KeyPressMsg{Code: tea.KeyEnd, Mod: tea.ModCtrl})
	for i := 0; i < 200; i++ {
		h.key("backspace")
	}
	h.typeText(text)
}

// TestEditedArgumentsAreCheckedAndShown: an edit that breaks the tool's
// input schema is refused in the dialog; a valid one is decided again,
// runs, is marked on the card, and the model is told what ran.
func TestEditedArgumentsAreCheckedAndShown(t *testing.T) {
	tasks, _ := fixtureSpec(t, "tasks", fixtures.Options{})
	model := llm.NewScript([]llm.ScriptTurn{
		{Text: "Renaming.", ToolCalls: []llm.ScriptCall{{Name: "tasks__update_task", Args: json.RawMessage(`{"id":"T-2","title":"A"}`)}}},
		{ExpectResult: &llm.ResultExpectation{Contains: `the person edited the arguments of this call; it was decided, and ran if it ran, with {"id":"T-2","title":"B"}`}, Text: "Renamed to B."},
	})
	clk := newClock()
	h := newHarness(t, Config{
		Servers: []client.Spec{tasks}, Model: model,
		Gate: host.GateOptions{Policy: policy(t), Trusted: trusted("tasks"), Audit: &memAudit{}},
		Now:  clk.Now, Dark: dark(true),
	})
	h.ready()
	h.typeText("rename T-2")
	h.key("enter")
	h.until("the dialog opens", func() bool { return shown[*confirmDialog](h.m) != nil })
	clk.Add(time.Second)
	h.key("e")
	replaceEditor(h, `{"id": 7, "title": "B"}`)
	h.key("ctrl+s")
	if shown[*confirmDialog](h.m) == nil || !strings.Contains(h.screen(), "does not match the input schema") {
		t.Fatalf("an edit against the schema was not refused in the dialog:\n%s", h.screen())
	}
	replaceEditor(h, `{"id": "T-2", "title": "B"}`)
	h.key("ctrl+s")
	h.until("the edited call asks again", func() bool { return shown[*confirmDialog](h.m) != nil && strings.Contains(h.screen(), `"B"`) })
	clk.Add(time.Second)
	h.key("y")
	h.until("the run ends", func() bool { return h.m.run == nil })
	s := h.screen()
	if !strings.Contains(s, `args edited by you {"id":"T-2","title":"B"}`) || !strings.Contains(s, "Renamed to B.") {
		t.Fatalf("the card does not show the edited arguments, or the model was not told:\n%s", s)
	}
	if !strings.Contains(s, "✓ tasks/update_task") {
		t.Fatalf("the edited call did not run:\n%s", s)
	}
}
