package host

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/llm"
)

// A turn cut off at the output limit never runs its tool calls, even when
// they look complete and the gate would allow them (a read of a trusted
// server runs without asking). The text is kept, the person is told, and
// the model hears of it on the next turn.
func TestLoopNeverRunsCallsOfATruncatedTurn(t *testing.T) {
	for _, stop := range []string{llm.StopMaxTokens, llm.StopContextFull} {
		t.Run(stop, func(t *testing.T) {
			w := newWorld(t, worldOpts{fixture: "tasks", trusted: true, headless: true})
			rec := &recorder{Model: llm.NewScript([]llm.ScriptTurn{
				{Text: "Reading.", ToolCalls: []llm.ScriptCall{call("f__get_task", `{"id":"T-1"}`)}, Stop: stop},
				{Text: "Understood."},
			})}
			l := NewLoop(LoopOptions{Model: rec, Gate: w.gate, Tools: w.m.Tools()})
			out, err := l.Run(context.Background(), "What is T-1?")
			var se *StopError
			if !errors.As(err, &se) || se.Reason != stop || se.Calls != 1 {
				t.Fatalf("err = %v, want a StopError for %s with one call not run", err, stop)
			}
			if string(out.Status) != stop || out.Text != "Reading." || len(out.Calls) != 0 {
				t.Errorf("outcome %+v: want the text kept and no call run", out)
			}
			if !strings.Contains(err.Error(), "not run") {
				t.Errorf("error %q does not say the call was not run", err)
			}
			// The next turn carries the kept text and the note, and no call.
			if _, err := l.Run(context.Background(), "go on"); err != nil {
				t.Fatal(err)
			}
			msgs := rec.requests[1].Messages
			if a := msgs[1]; a.Role != llm.RoleAssistant || a.Text != "Reading." || len(a.ToolCalls) != 0 || a.Raw != nil {
				t.Errorf("history keeps %+v, want the text without calls or raw content", a)
			}
			if n := msgs[2]; n.Role != llm.RoleUser || !strings.Contains(n.Text, "were not run") {
				t.Errorf("message after the cut turn = %+v, want a note to the model", n)
			}
		})
	}
}

// A refused answer is not kept as an answer: neither in the outcome nor in
// what the model is sent next.
func TestLoopRefusalIsNoAnswer(t *testing.T) {
	rec := &recorder{Model: llm.NewScript([]llm.ScriptTurn{
		{Text: "Step one is to", Stop: llm.StopRefusal},
		{Text: "Hello."},
	})}
	l := NewLoop(LoopOptions{Model: rec})
	out, err := l.Run(context.Background(), "bad request")
	var se *StopError
	if !errors.As(err, &se) || se.Reason != llm.StopRefusal || out.Status != "refused" || out.Text != "" {
		t.Fatalf("got %+v, %v; want a refusal without text", out, err)
	}
	if _, err := l.Run(context.Background(), "hi"); err != nil {
		t.Fatal(err)
	}
	for _, m := range rec.requests[1].Messages {
		if strings.Contains(m.Text, "Step one") {
			t.Errorf("the refused text went back to the model: %+v", m)
		}
	}
}

// pause_turn continues the turn: the paused assistant message goes back as
// it is, raw content included, with nothing after it.
func TestLoopContinuesAPausedTurn(t *testing.T) {
	raw := json.RawMessage(`[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"x"}}]`)
	rec := &recorder{Model: llm.NewScript([]llm.ScriptTurn{{Text: "Searching.", Stop: llm.StopPauseTurn}, {Text: "Found it."}}),
		raw: map[int]json.RawMessage{0: raw}}
	out, err := NewLoop(LoopOptions{Model: rec}).Run(context.Background(), "search")
	if err != nil || out.Status != "done" || out.Steps != 2 || out.Text != "Found it." {
		t.Fatalf("got %+v, %v; want the paused turn continued", out, err)
	}
	msgs := rec.requests[1].Messages
	last := msgs[len(msgs)-1]
	if last.Role != llm.RoleAssistant || string(last.Raw) != string(raw) || last.RawFrom != "test" {
		t.Errorf("last message sent = %+v, want the paused assistant message with its raw content", last)
	}
}

// The raw content a model reports with its answer is kept in the history
// for it to echo.
func TestLoopKeepsRawAssistantContent(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "tasks", trusted: true, headless: true})
	raw := json.RawMessage(`[{"type":"thinking","thinking":"t","signature":"s"},{"type":"tool_use","id":"call_1_1","name":"f__get_task","input":{"id":"T-1"}}]`)
	rec := &recorder{Model: llm.NewScript([]llm.ScriptTurn{
		{ToolCalls: []llm.ScriptCall{call("f__get_task", `{"id":"T-1"}`)}},
		{Text: "Done."},
	}), raw: map[int]json.RawMessage{0: raw}}
	l := NewLoop(LoopOptions{Model: rec, Gate: w.gate, Tools: w.m.Tools()})
	if _, err := l.Run(context.Background(), "T-1?"); err != nil {
		t.Fatal(err)
	}
	if a := rec.requests[1].Messages[1]; string(a.Raw) != string(raw) || a.RawFrom != "test" {
		t.Errorf("assistant message in history = %+v, want its raw content", a)
	}
}

// More tools than the provider takes: the error names the servers and how
// many tools each offers.
func TestLoopTooManyToolsNamesTheServers(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "tasks", trusted: true, headless: true})
	m := &recorder{Model: llm.NewScript(nil), fail: &llm.TooManyToolsError{Provider: "openai", Max: 128, Got: 130}}
	_, err := NewLoop(LoopOptions{Model: m, Gate: w.gate, Tools: w.m.Tools()}).Run(context.Background(), "hi")
	if !errors.Is(err, llm.ErrConfig) || !strings.Contains(err.Error(), "the tools come from f (") || !strings.Contains(err.Error(), "disabled") {
		t.Errorf("err = %v, want a configuration error naming server f", err)
	}
}

// recorder wraps a model: it keeps a copy of every request, adds raw
// content to the Done event of the turns in raw, and fails every turn with
// fail when set.
type recorder struct {
	llm.Model
	raw      map[int]json.RawMessage
	fail     error
	requests []llm.Request
}

func (r *recorder) Stream(ctx context.Context, req *llm.Request, emit func(llm.Event)) error {
	turn := len(r.requests)
	cp := *req
	cp.Messages = append([]llm.Message(nil), req.Messages...)
	r.requests = append(r.requests, cp)
	if r.fail != nil {
		return r.fail
	}
	return r.Model.Stream(ctx, req, func(e llm.Event) {
		if e.Kind == llm.EventDone && r.raw[turn] != nil {
			e.Raw, e.RawFrom = r.raw[turn], "test"
		}
		emit(e)
	})
}
