package ui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/llm"
)

func yes() *bool { b := true; return &b }

// TestDialogFlow follows a chat in which a read runs silently, a
// destructive call is denied in the dialog (the model is told), and a
// session grant lets the next call of the tool through without asking.
func TestDialogFlow(t *testing.T) {
	tasks, _ := fixtureSpec(t, "tasks", fixtures.Options{})
	no := false
	model := llm.NewScript([]llm.ScriptTurn{
		{Text: "Reading the tasks.", ToolCalls: []llm.ScriptCall{{Name: "tasks__list_tasks"}}},
		{ExpectResult: &llm.ResultExpectation{Contains: "T-1"}, Text: "Deleting T-1.", ToolCalls: []llm.ScriptCall{{Name: "tasks__delete_task", Args: json.RawMessage(`{"id":"T-1"}`)}}},
		{ExpectError: yes(), Text: "The delete was refused, so T-1 stays."},
		{Text: "Renaming T-2.", ToolCalls: []llm.ScriptCall{{Name: "tasks__update_task", Args: json.RawMessage(`{"id":"T-2","title":"A"}`)}}},
		{ExpectError: &no, ToolCalls: []llm.ScriptCall{{Name: "tasks__update_task", Args: json.RawMessage(`{"id":"T-2","title":"B"}`)}}},
		{ExpectError: &no, Text: "Renamed twice."},
	})
	clk := newClock()
	log := &memAudit{}
	h := newHarness(t, Config{
		Servers: []client.Spec{tasks}, Model: model,
		Gate: host.GateOptions{Policy: policy(t), Trusted: trusted("tasks"), Audit: log},
		Now:  clk.Now, Dark: dark(true),
	})
	h.ready()

	h.typeText("tidy up")
	h.key("enter")
	h.until("the dialog opens", func() bool { return shown[*confirmDialog](h.m) != nil })
	if s := h.screen(); !strings.Contains(s, "tasks/delete_task") || !strings.Contains(s, "DESTRUCTIVE · T2") {
		t.Fatalf("the dialog does not show the call:\n%s", s)
	}
	h.key("n") // within the grace period: ignored
	if shown[*confirmDialog](h.m) == nil {
		t.Fatal("a key in the grace period answered the dialog")
	}
	clk.Add(time.Second)
	h.key("n")
	h.until("the run ends", func() bool { return h.m.run == nil })
	s := h.screen()
	for _, want := range []string{"✓ tasks/list_tasks", "⊘ tasks/delete_task", "denied by you", "The delete was refused"} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q:\n%s", want, s)
		}
	}

	h.typeText("rename T-2 twice")
	h.key("enter")
	h.until("the dialog opens", func() bool { return shown[*confirmDialog](h.m) != nil })
	clk.Add(time.Second)
	h.key("s")
	asked := 0
	h.until("the run ends", func() bool {
		if shown[*confirmDialog](h.m) != nil {
			asked++
			h.key("n")
		}
		return h.m.run == nil
	})
	if asked > 0 {
		t.Errorf("the session grant did not cover the second call: asked %d more times", asked)
	}
	s = h.screen()
	if n := strings.Count(s, "allowed: you, session"); n != 2 {
		t.Errorf("got %d calls approved for the session, want 2:\n%s", n, s)
	}
	// The card says the way: the first in the dialog, the second by the
	// grant the dialog gave (headers wrap: compare the words).
	words := strings.Join(strings.Fields(s), " ")
	for _, want := range []string{"allowed: you, session, in the dialog", "allowed: you, session (grant given in the dialog)"} {
		if n := strings.Count(words, want); n != 1 {
			t.Errorf("got %d cards saying %q, want 1:\n%s", n, want, s)
		}
	}
	if !strings.Contains(s, "grants 1") {
		t.Errorf("the status line does not count the session grant:\n%s", s)
	}
	var denied, session, byGrant int
	log.mu.Lock()
	for _, r := range log.recs {
		if r.Kind != audit.Outcome {
			continue
		}
		switch {
		case r.Tool == "delete_task" && r.DecidedBy == "user" && r.Status == "denied" && r.Via == audit.ChannelDialog:
			denied++
		case r.Tool == "update_task" && r.DecidedBy == "user:session" && r.Status == "success" && r.Grant == nil && r.Via == audit.ChannelDialog:
			session++
		case r.Tool == "update_task" && r.DecidedBy == "user:session" && r.Status == "success" && r.Via == audit.ChannelGrant &&
			r.Grant != nil && r.Grant.Via == audit.ChannelDialog && r.Grant.Scope == "session" && r.Grant.CallID != "":
			byGrant++
		}
	}
	log.mu.Unlock()
	if denied != 1 || session != 1 || byGrant != 1 {
		t.Errorf("audit: %d denials in the dialog, %d updates approved for the session in the dialog, %d by the grant it gave; want 1, 1 and 1", denied, session, byGrant)
	}
}
