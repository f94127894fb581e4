package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/host"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var sizes = []struct{ w, h int }{{80, 24}, {140, 40}}

// checkFrame fails unless the screen is h lines of at most w cells.
func checkFrame(t *testing.T, screen string, w, h int) {
	t.Helper()
	lines := strings.Split(screen, "\n")
	if len(lines) != h {
		t.Errorf("got %d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if n := cellWidth(l); n > w {
			t.Errorf("line %d is %d cells wide, more than %d: %q", i+1, n, w, l)
		}
	}
}

func textResult(s string, isErr bool) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}, IsError: isErr}
}

// cardStates are calls in every state a card can show.
func cardStates() []*host.CallEntry {
	return []*host.CallEntry{
		{ID: "1", Server: "tasks", Tool: "list_tasks", Args: json.RawMessage(`{}`), Verdict: "allow", Class: "read", DecidedBy: "auto",
			Status: host.StatusSuccess, Attempts: []host.Attempt{{N: 1, Outcome: "success", Duration: 4 * time.Millisecond}},
			Result: textResult(`[{"id":"T-1","title":"Draft launch announcement","status":"todo"}]`, false)},
		{ID: "2", Server: "tasks", Tool: "update_task", Args: json.RawMessage(`{"id":"T-9","title":"Ship it"}`), Verdict: "ask", Tier: 2, Class: "destructive", DecidedBy: "user:once",
			Status: host.StatusToolError, Attempts: []host.Attempt{{N: 1, Outcome: "tool-error", Duration: 12 * time.Millisecond}},
			Result: textResult(`task "T-9" not found`, true)},
		{ID: "3", Server: "tasks", Tool: "delete_task", Args: json.RawMessage(`{"id":"T-1"}`), Verdict: "ask", Tier: 2, Class: "destructive", DecidedBy: "user",
			Status: host.StatusDenied, Message: "tasks/delete_task was denied"},
		{ID: "4", Server: "tasks", Tool: "delete_project", Args: json.RawMessage(`{"id":"P-1"}`), Verdict: "deny", Tier: 2, Class: "destructive", DecidedBy: "headless",
			Status: host.StatusBlocked, Message: "tasks/delete_project needs approval and no one could be asked (headless)"},
		{ID: "5", Server: "tasks", Tool: "save_context", Args: json.RawMessage(`{"app":"drive","title":"Notes"}`), Verdict: "ask", Tier: 1, Class: "additive", DecidedBy: "user:session",
			Status: host.StatusUnknown, Attempts: []host.Attempt{{N: 1, Outcome: "unknown", Detail: "connection lost", Duration: 2300 * time.Millisecond}},
			Message: "the outcome of tasks/save_context is unknown: it may or may not have taken effect"},
		{ID: "6", Server: "tasks", Tool: "fleet_status", Args: json.RawMessage(`{}`)}, // still running
	}
}

// playCards feeds the loop events of cardStates to the model.
func playCards(h *harness) {
	ev := func(k host.LoopEventKind, c *host.CallEntry, text string) {
		h.send(inboxMsg{loopEventMsg{run: 1, ev: host.LoopEvent{Kind: k, Call: c, Text: text}}})
	}
	h.m.tr.add(&entry{kind: entryUser, text: "Tidy up: list the tasks, fix T-9, delete T-1 and P-1, save notes, check the fleet."})
	ev(host.EvTurnStart, nil, "")
	ev(host.EvTextDelta, nil, "Here is the plan:\n\n- **list** the tasks\n- ")
	ev(host.EvTextDelta, nil, "then change what you asked for")
	for _, c := range cardStates() {
		ev(host.EvToolCall, &host.CallEntry{ID: c.ID, Server: c.Server, Tool: c.Tool, Args: c.Args}, "")
		if c.Status != "" {
			ev(host.EvDecision, c, "")
			ev(host.EvResult, c, "")
		}
	}
}

func TestTranscriptGolden(t *testing.T) {
	for _, sz := range sizes {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			tasks, _ := fixtureSpec(t, "tasks", fixtures.Options{})
			clk := newClock()
			h := newHarness(t, Config{Servers: []client.Spec{tasks}, Model: fakeModel{}, Gate: host.GateOptions{Policy: policy(t), Trusted: trusted("tasks")}, Now: clk.Now, Dark: dark(true)})
			h.ready()
			h.send(tea.WindowSizeMsg{Width: sz.w, Height: sz.h})
			playCards(h)
			clk.Add(1500 * time.Millisecond)
			s := h.screen()
			checkFrame(t, s, sz.w, sz.h)
			golden.RequireEqual(t, []byte(s))
		})
	}
}

func TestToolsPanelGolden(t *testing.T) {
	for _, sz := range sizes {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			tasks, _ := fixtureSpec(t, "tasks", fixtures.Options{})
			bare, _ := fixtureSpec(t, "bare", fixtures.Options{})
			h := newHarness(t, Config{Servers: []client.Spec{tasks, bare}, Gate: host.GateOptions{Policy: policy(t), Trusted: trusted("tasks")}, Now: newClock().Now, Dark: dark(false)})
			h.ready()
			h.send(tea.WindowSizeMsg{Width: sz.w, Height: sz.h})
			h.key("ctrl+t")
			h.typeText("task")
			h.key("down")
			s := h.screen()
			checkFrame(t, s, sz.w, sz.h)
			golden.RequireEqual(t, []byte(s))
		})
	}
}

func TestStatusLineTaintGolden(t *testing.T) {
	for _, sz := range sizes {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			tasks, _ := fixtureSpec(t, "tasks", fixtures.Options{})
			h := newHarness(t, Config{Servers: []client.Spec{tasks}, Model: fakeModel{},
				Gate: host.GateOptions{Policy: policy(t, "tasks/search_context"), Trusted: trusted("tasks")}, Now: newClock().Now, Dark: dark(true)})
			h.ready()
			h.send(tea.WindowSizeMsg{Width: sz.w, Height: sz.h})
			if strings.Contains(h.screen(), "TAINTED") {
				t.Fatal("tainted before any call")
			}
			// A closed-world read brings private data in, an open-world read
			// untrusted content.
			for _, c := range []host.Call{
				{Server: "tasks", Tool: "list_tasks", Args: json.RawMessage(`{}`)},
				{Server: "tasks", Tool: "search_context", Args: json.RawMessage(`{"query":"launch"}`)},
			} {
				r := h.m.gate.Call(context.Background(), c)
				if r.Status != host.StatusSuccess {
					t.Fatalf("%s: %s %v", c.Tool, r.Message(), host.ResultText(r.Result))
				}
			}
			lines := strings.Split(h.screen(), "\n")
			status := lines[len(lines)-1]
			if !strings.Contains(status, "TAINTED") {
				t.Fatalf("no taint marker: %q", status)
			}
			golden.RequireEqual(t, []byte(status+"\n"))
		})
	}
}
