package ui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/llm"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type sampled struct {
	res *mcp.CreateMessageResult
	err error
}

func (h *harness) sample(ctx context.Context, server string, p *mcp.CreateMessageParams) chan sampled {
	ch := make(chan sampled, 1)
	go func() {
		res, err := h.m.sample(ctx, server, &mcp.CreateMessageRequest{Params: p})
		ch <- sampled{res, err}
	}()
	return ch
}

func waitSampled(t *testing.T, ch chan sampled) sampled {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("the sampling request was never answered")
	}
	return sampled{}
}

func sampleParams(text string) *mcp.CreateMessageParams {
	return &mcp.CreateMessageParams{MaxTokens: 300, SystemPrompt: "Be brief.",
		Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}
}

func resultText(r *mcp.CreateMessageResult) string {
	if r == nil {
		return ""
	}
	if tc, ok := r.Content.(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

// TestSamplingApproveInTUI: the request is shown (server, model, limit,
// the server's escaped words); keys in the grace period and pastes do not
// answer; y runs the person's model once and the server gets its text.
func TestSamplingApproveInTUI(t *testing.T) {
	clk := newClock()
	h := newHarness(t, Config{Gate: host.GateOptions{Policy: policy(t)}, Now: clk.Now, Dark: dark(true),
		Model: llm.NewScript([]llm.ScriptTurn{{Text: "four"}})})
	h.ready()
	ch := h.sample(context.Background(), "tasks", sampleParams("2+2?\x1b[31m"))
	h.until("the dialog is shown", func() bool { return shown[*sampleDialog](h.m) != nil })
	s := h.screen()
	for _, want := range []string{"tasks", "asks to use your model", "script:inline", "Max tokens: 300", "Be brief.", `2+2?\x1b[31m`, "the server's words"} {
		if !strings.Contains(s, want) {
			t.Errorf("the dialog does not show %q:\n%s", want, s)
		}
	}
	h.key("y") // typed before it could be read
	clk.Add(time.Second)
	h.send(tea.PasteMsg{Content: "y"})
	if shown[*sampleDialog](h.m) == nil {
		t.Fatal("a key in the grace period or a paste answered")
	}
	h.key("y")
	got := waitSampled(t, ch)
	if got.err != nil || resultText(got.res) != "four" || got.res.Model != "script:inline" {
		t.Fatalf("result %+v, %v; want the model's text", got.res, got.err)
	}
	h.until("the tokens are noted", func() bool { return strings.Contains(h.screen(), "tasks used the model:") })
	if shown[*sampleDialog](h.m) != nil || len(h.m.asks) != 0 {
		t.Error("the dialog stayed open")
	}
}

// TestSamplingDenyAndEsc: n and Esc refuse, the server gets an error and
// the model is never asked; a withdrawn request leaves the queue.
func TestSamplingDenyAndEsc(t *testing.T) {
	clk := newClock()
	h := newHarness(t, Config{Gate: host.GateOptions{Policy: policy(t)}, Now: clk.Now, Dark: dark(true),
		Model: llm.NewScript([]llm.ScriptTurn{{Text: "only for the last request"}})})
	h.ready()
	for _, k := range []string{"n", "esc"} {
		ch := h.sample(context.Background(), "tasks", sampleParams("hi"))
		h.until("the dialog is shown", func() bool { return shown[*sampleDialog](h.m) != nil })
		clk.Add(time.Second)
		h.key(k)
		if got := waitSampled(t, ch); !errors.Is(got.err, errSampleDeclined) || got.res != nil {
			t.Errorf("%s: %+v, %v; want the refusal", k, got.res, got.err)
		}
		if shown[*sampleDialog](h.m) != nil {
			t.Errorf("%s: the dialog stayed open", k)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	ch := h.sample(ctx, "tasks", sampleParams("hi"))
	h.until("the dialog is shown", func() bool { return shown[*sampleDialog](h.m) != nil })
	cancel()
	h.until("the withdrawn request leaves", func() bool { return shown[*sampleDialog](h.m) == nil && len(h.m.asks) == 0 })
	if got := waitSampled(t, ch); !errors.Is(got.err, context.Canceled) {
		t.Errorf("withdrawn: %+v %v", got.res, got.err)
	}
	// The script's one turn is still there: nothing above used the model.
	ch = h.sample(context.Background(), "tasks", sampleParams("hi"))
	h.until("the dialog is shown", func() bool { return shown[*sampleDialog](h.m) != nil })
	clk.Add(time.Second)
	h.key("y")
	if got := waitSampled(t, ch); got.err != nil || resultText(got.res) != "only for the last request" {
		t.Errorf("approved after refusals: %+v %v", got.res, got.err)
	}
}

// TestSamplingWithoutModel: with no model the request is refused at once,
// with a notice, and no dialog.
func TestSamplingWithoutModel(t *testing.T) {
	h := newHarness(t, Config{Gate: host.GateOptions{Policy: policy(t)}, Now: newClock().Now, Dark: dark(true)})
	h.ready()
	got := waitSampled(t, h.sample(context.Background(), "tasks", sampleParams("hi")))
	if got.err == nil || got.res != nil {
		t.Fatalf("%+v, %v; want a refusal", got.res, got.err)
	}
	h.until("the refusal is noted", func() bool { return strings.Contains(h.screen(), "there is none") })
	if shown[*sampleDialog](h.m) != nil || len(h.m.asks) != 0 {
		t.Error("a dialog opened")
	}
}

// TestSamplingFromServer: a server's tool that asks to sample reaches the
// dialog through the manager the UI builds, even when the configuration
// gave it no handler, and gets the model's text once approved.
func TestSamplingFromServer(t *testing.T) {
	obj := map[string]any{"type": "object"}
	dial := func(ctx context.Context) (mcp.Transport, error) {
		s := mcp.NewServer(&mcp.Implementation{Name: "writer", Version: "1"}, nil)
		s.AddTool(&mcp.Tool{Name: "draft", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.CreateMessage(ctx, sampleParams("Write a haiku."))
			if err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "got: " + resultText(res)}}}, nil
		})
		ct, st := mcp.NewInMemoryTransports()
		if _, err := s.Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}
	clk := newClock()
	h := newHarness(t, Config{Servers: []client.Spec{{Name: "writer", Dial: dial}}, Client: client.Options{},
		Gate: host.GateOptions{Policy: policy(t)}, Now: clk.Now, Dark: dark(true),
		Model: llm.NewScript([]llm.ScriptTurn{{Text: "an old pond"}})})
	h.ready()
	done := make(chan *client.CallResult, 1)
	go func() { done <- h.m.mgr.Call(context.Background(), "writer", "draft", nil, client.CallOptions{}) }()
	h.until("the dialog is shown", func() bool { return shown[*sampleDialog](h.m) != nil })
	if s := h.screen(); !strings.Contains(s, "writer") || !strings.Contains(s, "Write a haiku.") {
		t.Errorf("the dialog does not show the server's request:\n%s", s)
	}
	clk.Add(time.Second)
	h.key("y")
	var r *client.CallResult
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the tool call never returned")
	}
	if r.Outcome != client.OutcomeSuccess || len(r.Result.Content) == 0 {
		t.Fatalf("call: %s %+v", r.Outcome, r.Result)
	}
	if text := r.Result.Content[0].(*mcp.TextContent).Text; text != "got: an old pond" {
		t.Errorf("the server got %q", text)
	}
	h.until("the tokens are noted", func() bool { return strings.Contains(h.screen(), "writer used the model:") })
}

// TestSamplingSpendShownAndBounded: what a server spends through sampling
// is counted in the status line as its own figure, and a request past the
// server's budget is refused at once, without a dialog, with the budget
// error; another server still has its own budget.
func TestSamplingSpendShownAndBounded(t *testing.T) {
	clk := newClock()
	h := newHarness(t, Config{Gate: host.GateOptions{Policy: policy(t)}, Now: clk.Now, Dark: dark(true),
		Sampling: host.NewSampleMeter(1000),
		Model: llm.NewScript([]llm.ScriptTurn{
			{Text: "long", Usage: &llm.Usage{InputTokens: 700, OutputTokens: 300}},
			{Text: "other", Usage: &llm.Usage{InputTokens: 10, OutputTokens: 5}},
		})})
	h.ready()
	h.send(tea.WindowSizeMsg{Width: 140, Height: 30})
	ch := h.sample(context.Background(), "tasks", sampleParams("hi"))
	h.until("the dialog is shown", func() bool { return shown[*sampleDialog](h.m) != nil })
	clk.Add(time.Second)
	h.key("y")
	if got := waitSampled(t, ch); got.err != nil {
		t.Fatalf("the first request: %v", got.err)
	}
	h.until("the spend is in the status line", func() bool { return strings.Contains(h.screen(), "sampling 1.0k") })

	got := waitSampled(t, h.sample(context.Background(), "tasks", sampleParams("hi")))
	if !errors.Is(got.err, host.ErrSamplingBudget) || !strings.Contains(got.err.Error(), "samplingBudget") {
		t.Fatalf("past the budget: %+v, %v; want the budget refusal naming the setting", got.res, got.err)
	}
	if shown[*sampleDialog](h.m) != nil || len(h.m.asks) != 0 {
		t.Error("a request past the budget opened a dialog")
	}
	ch = h.sample(context.Background(), "writer", sampleParams("hi"))
	h.until("the other server's dialog is shown", func() bool { return shown[*sampleDialog](h.m) != nil })
	clk.Add(time.Second)
	h.key("y")
	if got := waitSampled(t, ch); got.err != nil || resultText(got.res) != "other" {
		t.Errorf("another server's request: %+v, %v; want it answered from its own budget", got.res, got.err)
	}
}
