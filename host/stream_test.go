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
