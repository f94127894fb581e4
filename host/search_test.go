package host

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/llm"
)

// turnRecorder is a model that passes each turn to a scripted one and keeps the
// requests it was sent.
type turnRecorder struct {
	llm.Model
	mu   sync.Mutex
	reqs []llm.Request
}

func (r *turnRecorder) Stream(ctx context.Context, req *llm.Request, emit func(llm.Event)) error {
	r.mu.Lock()
	cp := *req
	cp.Messages = slices.Clone(req.Messages)
	cp.Tools = slices.Clone(req.Tools)
	r.reqs = append(r.reqs, cp)
	r.mu.Unlock()
	return r.Model.Stream(ctx, req, emit)
}

func toolNames(tools []llm.Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}

func recordedLoop(w *world, turns []llm.ScriptTurn, o LoopOptions) (*Loop, *turnRecorder) {
	rec := &turnRecorder{Model: llm.NewScript(turns)}
	o.Model, o.Gate, o.Tools = rec, w.gate, w.m.Tools()
	return NewLoop(o), rec
}

// Below the budget every tool is offered as without search; past it, only
// the search tool is, with a note of the servers.
func TestSearchOfferedPastTheBudget(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "tasks", trusted: true, headless: true})
	all := len(w.m.Tools())

	l, rec := recordedLoop(w, []llm.ScriptTurn{{Text: "hi"}}, LoopOptions{})
	if _, err := l.Run(context.Background(), "hello"); err != nil {
		t.Fatal(err)
	}
	if got := toolNames(rec.reqs[0].Tools); len(got) != all || slices.Contains(got, SearchToolName) {
		t.Errorf("below the budget the model was offered %v, want all %d tools and no search", got, all)
	}

	l, rec = recordedLoop(w, []llm.ScriptTurn{{Text: "hi"}}, LoopOptions{ContextWindow: 8000})
	if _, err := l.Run(context.Background(), "hello"); err != nil {
		t.Fatal(err)
	}
	got := rec.reqs[0].Tools
	if len(got) != 1 || got[0].Name != SearchToolName {
		t.Fatalf("past the budget the model was offered %v, want only %s", toolNames(got), SearchToolName)
	}
	if !strings.Contains(got[0].Description, "f (") {
		t.Errorf("the search tool does not name the servers: %q", got[0].Description)
	}

	l, rec = recordedLoop(w, []llm.ScriptTurn{{Text: "hi"}}, LoopOptions{ContextWindow: 8000, ToolSearch: SearchNever,
		AlwaysLoad: func(t *client.Tool) bool { return t.Name == "get_task" }})
	if _, err := l.Run(context.Background(), "hello"); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.reqs[0].Tools); n != all {
		t.Errorf("with search off the model was offered %d tools, want %d", n, all)
	}

	l, rec = recordedLoop(w, []llm.ScriptTurn{{Text: "hi"}}, LoopOptions{ToolSearch: SearchAlways,
		AlwaysLoad: func(t *client.Tool) bool { return t.Name == "get_task" }})
	if _, err := l.Run(context.Background(), "hello"); err != nil {
		t.Fatal(err)
	}
	if got := toolNames(rec.reqs[0].Tools); !slices.Equal(got, []string{SearchToolName, "f__get_task"}) {
		t.Errorf("with alwaysLoad the model was offered %v, want the search tool and f__get_task", got)
	}
}

// A tool found by search is offered from the next turn, and calling it goes
// through the gate like any call: a destructive call headless is blocked.
// The search itself is the host's: not gated, shown as a builtin call.
func TestSearchFoundToolCallableNextTurnAndGated(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "tasks", trusted: true, headless: true})
	var events []LoopEvent
	l, rec := recordedLoop(w, []llm.ScriptTurn{
		{ToolCalls: []llm.ScriptCall{call(SearchToolName, `{"query":"delete task"}`)}},
		{ExpectResult: &llm.ResultExpectation{Contains: "f__delete_task"}, ToolCalls: []llm.ScriptCall{call("f__delete_task", `{"id":"T-1"}`)}},
		{ExpectError: bptr(true), ExpectResult: &llm.ResultExpectation{Contains: "needs approval"}, Text: "I could not."},
	}, LoopOptions{ToolSearch: SearchAlways, OnEvent: func(e LoopEvent) { events = append(events, e) }})
	out, err := l.Run(context.Background(), "Delete T-1")
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(toolNames(rec.reqs[0].Tools), "f__delete_task") {
		t.Errorf("the first turn offered f__delete_task before any search")
	}
	if !slices.Contains(toolNames(rec.reqs[1].Tools), "f__delete_task") {
		t.Errorf("the turn after the search does not offer f__delete_task: %v", toolNames(rec.reqs[1].Tools))
	}
	if len(out.Calls) != 2 {
		t.Fatalf("calls %+v", out.Calls)
	}
	if s := out.Calls[0]; !s.Builtin || s.Status != StatusSuccess || s.Verdict != "" {
		t.Errorf("the search call %+v, want a builtin success with no verdict", s)
	}
	if c := out.Calls[1]; c.Status != StatusBlocked || c.Tool != "delete_task" {
		t.Errorf("the found tool's call %+v, want blocked by the gate", c)
	}
	for _, e := range events {
		if e.Kind == EvDecision && e.Call.Builtin {
			t.Errorf("the search was decided on like a server tool: %+v", e.Call)
		}
	}
}

// Found tools are appended: each turn's tools begin with the previous
// turn's, in the same order, so a cached prefix stays valid.
func TestSearchToolOrderStableAcrossTurns(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "tasks", trusted: true, headless: true})
	l, rec := recordedLoop(w, []llm.ScriptTurn{
		{ToolCalls: []llm.ScriptCall{call(SearchToolName, `{"query":"comment"}`)}},
		{ToolCalls: []llm.ScriptCall{call(SearchToolName, `{"query":"task digest","limit":2}`)}},
		{ToolCalls: []llm.ScriptCall{call("f__get_digest", `{}`)}},
		{Text: "done"},
	}, LoopOptions{ToolSearch: SearchAlways, AlwaysLoad: func(t *client.Tool) bool { return t.Name == "comment_on_task" }})
	if _, err := l.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(rec.reqs); i++ {
		prev, cur := rec.reqs[i-1].Tools, rec.reqs[i].Tools
		if len(cur) < len(prev) {
			t.Fatalf("turn %d offers fewer tools than turn %d", i+1, i)
		}
		for j := range prev {
			if cur[j].Name != prev[j].Name || cur[j].Description != prev[j].Description || string(cur[j].InputSchema) != string(prev[j].InputSchema) {
				t.Errorf("turn %d tool %d is %s, turn %d's was %s", i+1, j, cur[j].Name, i, prev[j].Name)
			}
		}
	}
	if n := len(rec.reqs[2].Tools); n <= len(rec.reqs[1].Tools) {
		t.Errorf("the second search added nothing: %v", toolNames(rec.reqs[2].Tools))
	}
}

// An untrusted server's descriptions come back marked as its words.
func TestSearchMarksUntrustedDescriptions(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "tasks", trusted: false, headless: true})
	l := NewLoop(LoopOptions{Gate: w.gate, Tools: w.m.Tools(), ToolSearch: SearchAlways})
	got := l.searchText(searchArgs{Query: "get_task"})
	if !strings.Contains(got, "- f__get_task (server f, untrusted): "+OpenMark+"name: get_task · title: Get a task · description: ") {
		t.Errorf("an untrusted server's tool is described as %q", got)
	}
}

// With search off, a provider's refusal of too many tools says that search
// is the other way out.
func TestTooManyToolsSuggestsSearch(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "tasks", trusted: true, headless: true})
	m := &recorder{Model: llm.NewScript(nil), fail: &llm.TooManyToolsError{Provider: "openai", Max: 128, Got: 130}}
	_, err := NewLoop(LoopOptions{Model: m, Gate: w.gate, Tools: w.m.Tools(), ToolSearch: SearchNever}).Run(context.Background(), "hi")
	if err == nil || !strings.Contains(err.Error(), `"toolSearch": "auto"`) {
		t.Errorf("err = %v, want the advice to turn tool search on", err)
	}
}
