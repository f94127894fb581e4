package host

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/mcphost/mcphost/llm"
)

// TestStreamDecisionComesBeforeTheCallRuns: a slow call that reports
// progress streams tool_call → decision → progress… → result. The decision
// event is emitted when the gate decides, before the call is sent, and
// carries only the decision; tool_call and progress carry no tier or
// verdict, since nothing was decided when they describe the call; the
// outcome arrives in result.
func TestStreamDecisionComesBeforeTheCallRuns(t *testing.T) {
	release := make(chan struct{})
	g, m := progressGate(t, release)
	var (
		mu       sync.Mutex
		lines    []string
		progress int
	)
	l := NewLoop(LoopOptions{
		Model: llm.NewScript([]llm.ScriptTurn{
			{ToolCalls: []llm.ScriptCall{call("p__steps", `{"n": 1}`)}},
			{ExpectResult: &llm.ResultExpectation{Contains: "done"}, Text: "ok"},
		}),
		Gate: g, Tools: m.Tools(),
		OnEvent: func(ev LoopEvent) {
			b, err := json.Marshal(ev)
			if err != nil {
				t.Errorf("marshal %+v: %v", ev, err)
			}
			mu.Lock()
			defer mu.Unlock()
			if ev.Kind == EvTurnStart || ev.Kind == EvTextDelta || ev.Kind == EvDone {
				return
			}
			lines = append(lines, string(b))
			if ev.Kind == EvProgress {
				if progress++; progress == 2 {
					close(release) // the tool returns only now
				}
			}
		},
	})
	if _, err := l.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	kinds := make([]string, len(lines))
	for i, line := range lines {
		var ev struct{ Type string }
		_ = json.Unmarshal([]byte(line), &ev)
		kinds[i] = ev.Type
	}
	if got, want := strings.Join(kinds, " "), "tool_call decision progress progress result"; got != want {
		t.Fatalf("events %q, want %q:\n%s", got, want, strings.Join(lines, "\n"))
	}
	has := func(i int, field string) bool { return strings.Contains(lines[i], `"`+field+`":`) }
	for _, i := range []int{0, 2, 3} { // tool_call and progress: nothing decided yet
		for _, f := range []string{"tier", "verdict", "class", "decidedBy", "status"} {
			if has(i, f) {
				t.Errorf("%s carries %q before anything was decided: %s", kinds[i], f, lines[i])
			}
		}
	}
	for _, f := range []string{"verdict", "tier", "class", "decidedBy", "reasons"} {
		if !has(1, f) {
			t.Errorf("decision lacks %q: %s", f, lines[1])
		}
	}
	for _, f := range []string{"status", "attempts", "durationNs", "message", "args"} {
		if has(1, f) {
			t.Errorf("decision carries %q, which is not the decision: %s", f, lines[1])
		}
	}
	for _, f := range []string{`"status":"success"`, `"tier":0`, `"verdict":"allow"`, `"attempts":[`, `"durationNs":`} {
		if !strings.Contains(lines[4], f) {
			t.Errorf("result lacks %s: %s", f, lines[4])
		}
	}
}

// TestStreamUnknownToolCarriesItsOutcomeInResult: a call of a tool that
// does not exist streams tool_call (what was asked, no outcome) and result
// (the error); nothing was decided, so no decision event and no tier.
func TestStreamUnknownToolCarriesItsOutcomeInResult(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "tasks", trusted: true, headless: true})
	var lines []string
	l := newLoop(w, []llm.ScriptTurn{
		{ToolCalls: []llm.ScriptCall{call("f__nosuch", `{}`)}},
		{ExpectError: bptr(true), Text: "ok"},
	}, LoopOptions{OnEvent: func(ev LoopEvent) {
		if ev.Kind == EvToolCall || ev.Kind == EvDecision || ev.Kind == EvResult {
			b, _ := json.Marshal(ev)
			lines = append(lines, string(b))
		}
	}})
	if _, err := l.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `{"type":"tool_call"`) || !strings.HasPrefix(lines[1], `{"type":"result"`) {
		t.Fatalf("events:\n%s", strings.Join(lines, "\n"))
	}
	for _, f := range []string{`"status"`, `"tier"`, `"isError"`, `"message"`} {
		if strings.Contains(lines[0], f) {
			t.Errorf("tool_call carries %s: %s", f, lines[0])
		}
	}
	if !strings.Contains(lines[1], `"status":"error"`) || strings.Contains(lines[1], `"tier"`) {
		t.Errorf("result: %s", lines[1])
	}
}
