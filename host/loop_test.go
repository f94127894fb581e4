package host

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/llm"
)

func bptr(b bool) *bool { return &b }

// newLoop runs a scripted model against the world's fixture.
func newLoop(w *world, turns []llm.ScriptTurn, o LoopOptions) *Loop {
	o.Model = llm.NewScript(turns)
	o.Gate = w.gate
	o.Tools = w.m.Tools()
	return NewLoop(o)
}

func call(name, args string) llm.ScriptCall {
	return llm.ScriptCall{Name: name, Args: json.RawMessage(args)}
}

func TestLoopReadAutoAllowedAndFedBack(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "tasks", trusted: true, headless: true})
	l := newLoop(w, []llm.ScriptTurn{
		{Text: "Looking.", ToolCalls: []llm.ScriptCall{call("f__get_task", `{"id":"T-1"}`)}},
		{ExpectResult: &llm.ResultExpectation{Contains: "Draft launch announcement"}, Text: "T-1 is the launch announcement."},
	}, LoopOptions{})
	out, err := l.Run(context.Background(), "What is T-1?")
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != "done" || out.Text != "T-1 is the launch announcement." || len(out.Calls) != 1 {
		t.Fatalf("outcome %+v", out)
	}
	if c := out.Calls[0]; c.Status != StatusSuccess || c.DecidedBy != "auto" || c.Server != "f" || c.Tool != "get_task" {
		t.Errorf("call %+v", c)
	}
}

func TestLoopDestructiveRefusedHeadlessAndToldToTheModel(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "tasks", trusted: true, headless: true})
	l := newLoop(w, []llm.ScriptTurn{
		{ToolCalls: []llm.ScriptCall{call("f__delete_task", `{"id":"T-1"}`)}},
		{ExpectError: bptr(true), ExpectResult: &llm.ResultExpectation{Contains: "needs approval"}, Text: "I could not delete it."},
	}, LoopOptions{})
	out, err := l.Run(context.Background(), "Delete T-1")
	if err != nil {
		t.Fatal(err)
	}
	if c := out.Calls[0]; c.Status != StatusBlocked || !c.IsError {
		t.Errorf("call %+v, want blocked", c)
	}
	// And nothing was deleted.
	r := w.gate.Call(context.Background(), Call{Server: "f", Tool: "get_task", Args: json.RawMessage(`{"id":"T-1"}`)})
	if r.Status != StatusSuccess {
		t.Errorf("T-1 is gone: %s", r.Status)
	}
}

func TestLoopStepLimit(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "tasks", trusted: true, headless: true})
	var turns []llm.ScriptTurn
	for range 5 {
		turns = append(turns, llm.ScriptTurn{ToolCalls: []llm.ScriptCall{call("f__list_tasks", `{}`)}})
	}
	l := newLoop(w, turns, LoopOptions{MaxSteps: 3})
	out, err := l.Run(context.Background(), "loop")
	if !errors.Is(err, ErrStepLimit) || out.Status != "step-limit" || len(out.Calls) != 3 {
		t.Errorf("got %v, %+v; want the step limit after 3 calls", err, out)
	}
}

func TestLoopTruncatesHugeResults(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "hostile", trusted: true, headless: true, fopts: fixtures.Options{OversizeBytes: 200000}})
	l := newLoop(w, []llm.ScriptTurn{
		{ToolCalls: []llm.ScriptCall{call("f__dump_logs", `{}`)}},
		{ExpectResult: &llm.ResultExpectation{Contains: "[mcphost cut "}, Text: "ok"},
	}, LoopOptions{MaxResultTokens: 1000})
	out, err := l.Run(context.Background(), "dump")
	if err != nil {
		t.Fatal(err)
	}
	c := out.Calls[0]
	if !c.Truncated || c.ResultBytes < 200000 {
		t.Errorf("call %+v, want a truncated result of ≥200000 bytes", c)
	}
	msgs := l.messages
	res := msgs[len(msgs)-2].ToolResults[0].Content
	if len(res) > 1000*4+200 {
		t.Errorf("the model got %d bytes, want about 4000", len(res))
	}
}

func TestLoopUnknownToolAndBadArgs(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "tasks", trusted: true, headless: true})
	l := newLoop(w, []llm.ScriptTurn{
		{ToolCalls: []llm.ScriptCall{call("f__drop_database", `{}`)}},
		{ExpectError: bptr(true), ExpectResult: &llm.ResultExpectation{Contains: "no tool named"}, Text: "sorry"},
	}, LoopOptions{})
	if _, err := l.Run(context.Background(), "x"); err != nil {
		t.Fatal(err)
	}
}

func TestLoopCancelDuringHungCall(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "flaky", trusted: true, headless: true, timeout: time.Minute})
	l := newLoop(w, []llm.ScriptTurn{
		{ToolCalls: []llm.ScriptCall{call("f__hang", `{}`)}},
		{Text: "never"},
	}, LoopOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := l.Run(ctx, "hang")
		done <- err
	}()
	// Cancel once the fixture is running the call (Ctrl-C).
	w.waitLog(fixtures.EventExec, "hang")
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run returned %v, want context.Canceled", err)
	}
	w.waitLog(fixtures.EventCancelled, "hang") // the server saw the cancellation
	if c := l.Transcript[len(l.Transcript)-1].Call; c == nil || c.Status != StatusUnknown {
		t.Errorf("last entry %+v, want the hung call with an unknown outcome", l.Transcript[len(l.Transcript)-1])
	}
}

// waitLog waits until the fixture logged event for tool.
func (w *world) waitLog(event, tool string) { w.t.Helper(); w.waitCount(event, tool, 1) }

// waitCount waits until the fixture logged event for tool n times.
func (w *world) waitCount(event, tool string, n int) {
	w.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for w.count(event, tool) < n {
		if time.Now().After(deadline) {
			w.t.Fatalf("the fixture never logged %s for %s", event, tool)
		}
		time.Sleep(5 * time.Millisecond) // polling the fixture's log file
	}
}

func TestLoopSetToolsOffersTheNewTools(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "tasks", trusted: true, headless: true})
	l := newLoop(w, []llm.ScriptTurn{
		{ToolCalls: []llm.ScriptCall{call("f__get_task", `{"id":"T-1"}`)}},
		{ExpectError: bptr(true), ExpectResult: &llm.ResultExpectation{Contains: "no tool named"}, Text: "gone"},
		{ToolCalls: []llm.ScriptCall{call("f__get_task", `{"id":"T-1"}`)}},
		{ExpectResult: &llm.ResultExpectation{Contains: "Draft launch announcement"}, Text: "back"},
	}, LoopOptions{})
	l.SetTools(nil)
	if out, err := l.Run(context.Background(), "first"); err != nil || out.Text != "gone" {
		t.Fatalf("with no tools: %+v %v", out, err)
	}
	l.SetTools(w.m.Tools())
	if out, err := l.Run(context.Background(), "second"); err != nil || out.Text != "back" || len(out.Calls) != 1 || out.Calls[0].Status != StatusSuccess {
		t.Fatalf("with the tools back: %+v %v", out, err)
	}
	if got := len(l.offered()); got != len(w.m.Tools()) {
		t.Errorf("offered %d tools, want %d", got, len(w.m.Tools()))
	}
}

func TestLoopEmitsProgressForTheRunningCall(t *testing.T) {
	release := make(chan struct{})
	g, m := progressGate(t, release)
	var progress []LoopEvent
	seenResult := false
	l := NewLoop(LoopOptions{
		Model: llm.NewScript([]llm.ScriptTurn{
			{ToolCalls: []llm.ScriptCall{call("p__steps", `{}`)}},
			{ExpectResult: &llm.ResultExpectation{Contains: "done"}, Text: "ok"},
		}),
		Gate: g, Tools: m.Tools(),
		OnEvent: func(ev LoopEvent) {
			switch ev.Kind {
			case EvProgress:
				if seenResult {
					t.Errorf("progress after the result: %+v", ev)
				}
				progress = append(progress, ev)
				if len(progress) == 2 {
					close(release)
				}
			case EvResult:
				seenResult = true
			}
		},
	})
	if _, err := l.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	if len(progress) != 2 {
		t.Fatalf("%d progress events", len(progress))
	}
	ev := progress[1]
	if ev.Call == nil || ev.Call.Server != "p" || ev.Call.Tool != "steps" || ev.Call.ID == "" || ev.Progress == nil || ev.Progress.Progress != 2 || ev.Progress.Total != 2 {
		t.Fatalf("event %+v call %+v", ev, ev.Call)
	}
	b, err := json.Marshal(ev)
	if err != nil || !strings.Contains(string(b), `"type":"progress"`) || !strings.Contains(string(b), `"progress":{`) {
		t.Fatalf("json %s %v", b, err)
	}
}
