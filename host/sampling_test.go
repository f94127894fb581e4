package host

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/mcphost/mcphost/llm"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxTokensModel answers every request with its usage and records the
// output limit it was given.
type maxTokensModel struct {
	mu    sync.Mutex
	limit []int
	usage llm.Usage
}

func (m *maxTokensModel) Name() string { return "limits" }

func (m *maxTokensModel) Stream(_ context.Context, req *llm.Request, emit func(llm.Event)) error {
	m.mu.Lock()
	m.limit = append(m.limit, req.MaxTokens)
	m.mu.Unlock()
	emit(llm.Event{Kind: llm.EventTextDelta, Text: "ok"})
	emit(llm.Event{Kind: llm.EventUsage, Usage: m.usage})
	emit(llm.Event{Kind: llm.EventDone, StopReason: llm.StopEndTurn})
	return nil
}

func sampleReq(text string, maxTokens int64) *mcp.CreateMessageParams {
	return &mcp.CreateMessageParams{MaxTokens: maxTokens, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}
}

// A server's requests are answered while its budget lasts, each capped to
// what is left; past it they are refused before the model is asked; the
// budget is per server, and the spend is reported by server.
func TestSampleMeterBudget(t *testing.T) {
	model := &maxTokensModel{usage: llm.Usage{InputTokens: 400, OutputTokens: 200}}
	m := NewSampleMeter(1000)
	ctx := context.Background()
	if _, _, err := m.Sample(ctx, model, "a", sampleReq("hi", 5000)); err != nil {
		t.Fatal(err)
	}
	// 600 spent: this one may write at most 400 less its prompt.
	if _, _, err := m.Sample(ctx, model, "a", sampleReq("hi", 5000)); err != nil {
		t.Fatal(err)
	}
	if got := model.limit; len(got) != 2 || got[0] != 1000-1 || got[1] != 400-1 {
		t.Errorf("output limits %v, want [999 399]: capped to what is left of the budget", got)
	}
	small := NewSampleMeter(1000)
	if _, _, err := small.Sample(ctx, model, "a", sampleReq("hi", 50)); err != nil || model.limit[2] != 50 {
		t.Errorf("a request for 50 tokens within the budget was given %d (%v), want its own 50", model.limit[2], err)
	}
	model.limit = model.limit[:2]
	_, _, err := m.Sample(ctx, model, "a", sampleReq("hi", 10))
	if !errors.Is(err, ErrSamplingBudget) || !strings.Contains(err.Error(), `server "a" has spent 1200 of the 1000 tokens`) {
		t.Fatalf("past the budget: %v", err)
	}
	if err := m.Refuses("a", sampleReq("hi", 10)); !errors.Is(err, ErrSamplingBudget) {
		t.Errorf("Refuses past the budget: %v", err)
	}
	if len(model.limit) != 2 {
		t.Errorf("the model was asked %d times, want 2: a refused request never reaches it", len(model.limit))
	}
	if _, _, err := m.Sample(ctx, model, "b", sampleReq("hi", 10)); err != nil {
		t.Errorf("another server: %v; its budget is its own", err)
	}
	spent := m.Spent()
	if len(spent) != 2 || spent[0].Server != "a" || SpendTokens(spent[0].Usage) != 1200 || spent[1].Server != "b" || SpendTokens(spent[1].Usage) != 600 {
		t.Errorf("spent %+v, want a 1200 and b 600", spent)
	}
	if got := m.Total(); SpendTokens(got) != 1800 {
		t.Errorf("total %+v, want 1800 tokens", got)
	}
	// A prompt bigger than what is left is refused whole.
	m = NewSampleMeter(100)
	if _, _, err := m.Sample(ctx, model, "a", sampleReq(strings.Repeat("x", 800), 10)); !errors.Is(err, ErrSamplingBudget) {
		t.Errorf("a prompt over the budget: %v, want a refusal", err)
	}
	if _, _, err := NewSampleMeter(0).Sample(ctx, model, "a", sampleReq("hi", 10)); !errors.Is(err, ErrSamplingBudget) {
		t.Errorf("budget 0: %v, want every request refused", err)
	}
}

// blockingModel records each request's output limit, tells entered, and
// answers once release is closed.
type blockingModel struct {
	entered chan int
	release chan struct{}
}

func (m *blockingModel) Name() string { return "blocking" }

func (m *blockingModel) Stream(_ context.Context, req *llm.Request, emit func(llm.Event)) error {
	m.entered <- req.MaxTokens
	<-m.release
	emit(llm.Event{Kind: llm.EventDone, StopReason: llm.StopEndTurn})
	return nil
}

// Requests in flight hold what they may spend: concurrent requests of one
// server cannot together pass its budget.
func TestSampleMeterConcurrent(t *testing.T) {
	model := &blockingModel{entered: make(chan int, 8), release: make(chan struct{})}
	m := NewSampleMeter(1000)
	refused := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, _, err := m.Sample(context.Background(), model, "a", sampleReq("hi", 300)); err != nil {
				refused <- err
			}
		})
	}
	total, in, out := 0, 0, 0
	for in+out < 8 {
		select {
		case l := <-model.entered:
			total += l + 1 // and its prompt
			in++
		case err := <-refused:
			if !errors.Is(err, ErrSamplingBudget) {
				t.Errorf("refusal %v, want the budget's", err)
			}
			out++
		}
	}
	close(model.release)
	wg.Wait()
	if total > 1000 || in == 0 || out == 0 {
		t.Errorf("%d requests in flight held %d tokens, %d refused; want the budget of 1000 to hold them and refuse the rest", in, total, out)
	}
}
