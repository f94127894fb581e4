package ui

import (
	"encoding/json"
	"github.com/mcphost/mcphost/internal/termtest"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/decide"
)

// TestGrantsShowTheArguments: a "these arguments" grant is listed with the
// arguments it covers, cleaned, not with their hash.
func TestGrantsShowTheArguments(t *testing.T) {
	cfg, clk := tasksConfig(t, "tasks")
	h := newHarness(t, cfg)
	h.send(teaSize(140, 40))
	h.ready()
	args := json.RawMessage(`{"id": "T-2", "title": "new\u001b[2J title"}`)
	_, _, cmd := h.m.sendCall("tasks", "update_task", args)
	h.run(cmd)
	h.until("the dialog opens", func() bool { return shown[*confirmDialog](h.m) != nil })
	clk.Add(time.Second)
	h.key("a")
	h.until("the call ends", func() bool { return len(h.m.calls) == 0 })
	gs := h.m.gate.Grants()
	if len(gs) != 1 || gs[0].Scope != decide.ScopeArgs {
		t.Fatalf("grants %+v, want one for these arguments", gs)
	}
	h.command("/grants")
	s := h.screen()
	if !strings.Contains(s, `only these arguments: {"id":"T-2","title":"new\u001b[2J title"}`) {
		t.Errorf("the grant's arguments are not shown:\n%s", s)
	}
	if strings.Contains(s, gs[0].ArgsHash[:8]) {
		t.Errorf("the hash is shown:\n%s", s)
	}
	if u := termtest.Unsafe(h.m.View().Content); u != "" {
		t.Fatalf("unsafe output: %s", u)
	}
}
