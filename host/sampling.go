package host

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/mcphost/mcphost/llm"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrSamplingBudget is matched by the error a SampleMeter answers a server
// with once the server has spent its sampling budget.
var ErrSamplingBudget = errors.New("sampling budget spent")

// maxSampleTokens is the most output one sampling request may ask for,
// whatever its maxTokens says.
const maxSampleTokens = 8192

// SampleMeter answers servers' sampling requests with the person's model,
// counts what each server spends, and holds each to a budget of tokens
// (input and output together) for the meter's lifetime: a run or a chat.
// A request is refused before the model is asked when what the server has
// spent, what its requests in flight may still spend and the request's own
// prompt leave no room; otherwise the answer is capped to what is left, so
// a server's spend ends at most one prompt estimate past its budget. Its
// methods may be called concurrently.
type SampleMeter struct {
	budget int

	mu       sync.Mutex
	spent    map[string]llm.Usage
	reserved map[string]int // tokens requests in flight may still spend
}

// NewSampleMeter returns a meter that lets each server spend budget tokens;
// 0 refuses every request.
func NewSampleMeter(budget int) *SampleMeter {
	return &SampleMeter{budget: max(budget, 0), spent: map[string]llm.Usage{}, reserved: map[string]int{}}
}

// Budget returns the tokens each server may spend.
func (m *SampleMeter) Budget() int { return m.budget }

// SpendTokens is what u counts against a budget: every token the model
// read or wrote, cached ones included.
func SpendTokens(u llm.Usage) int {
	return u.InputTokens + u.OutputTokens + u.CacheReadTokens + u.CacheWriteTokens
}

// Sample answers p from server with model (see Sample) within the server's
// budget. A refusal matches ErrSamplingBudget and says what was spent and
// how the person can raise the budget; it is what the server is told.
func (m *SampleMeter) Sample(ctx context.Context, model llm.Model, server string, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, llm.Usage, error) {
	if p == nil {
		return nil, llm.Usage{}, errors.New("the sampling request has no parameters")
	}
	prompt := promptTokens(p)
	m.mu.Lock()
	left, err := m.room(server, prompt)
	if err != nil {
		m.mu.Unlock()
		return nil, llm.Usage{}, err
	}
	out := min(left-prompt, maxSampleTokens)
	if p.MaxTokens > 0 {
		out = min(out, int(min(p.MaxTokens, maxSampleTokens)))
	}
	m.reserved[server] += prompt + out
	m.mu.Unlock()

	q := *p
	q.MaxTokens = int64(out)
	res, usage, err := Sample(ctx, model, &q)

	m.mu.Lock()
	m.reserved[server] -= prompt + out
	u := m.spent[server]
	u.Add(usage)
	m.spent[server] = u
	m.mu.Unlock()
	return res, usage, err
}

// Refuses returns the error Sample would answer p from server with now
// because of the budget, or nil; a front that asks the person first uses
// it so as not to ask about a request that cannot be answered.
func (m *SampleMeter) Refuses(server string, p *mcp.CreateMessageParams) error {
	if p == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	_, err := m.room(server, promptTokens(p))
	return err
}

// room returns the tokens server may still spend, or the refusal when a
// request whose prompt takes about prompt tokens does not fit. m.mu is held.
func (m *SampleMeter) room(server string, prompt int) (int, error) {
	spent := SpendTokens(m.spent[server])
	left := m.budget - spent - m.reserved[server]
	if left <= prompt {
		return 0, fmt.Errorf("%w: mcphost refused this sampling request: server %q has spent %d of the %d tokens of the person's model it may use in one run or chat, and the request needs about %d more; the person can raise \"samplingBudget\" in their own mcphost config",
			ErrSamplingBudget, server, spent, m.budget, prompt)
	}
	return left, nil
}

// ServerSpend is what one server spent through sampling.
type ServerSpend struct {
	Server string
	Usage  llm.Usage
}

// Spent returns what each server that sampled has spent, by server name.
func (m *SampleMeter) Spent() []ServerSpend {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]ServerSpend, 0, len(m.spent))
	for s, u := range m.spent {
		out = append(out, ServerSpend{Server: s, Usage: u})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Server < out[j].Server })
	return out
}

// Total returns what every server together has spent.
func (m *SampleMeter) Total() llm.Usage {
	var t llm.Usage
	for _, s := range m.Spent() {
		t.Add(s.Usage)
	}
	return t
}

// promptTokens estimates the tokens p's prompt takes, from its text.
func promptTokens(p *mcp.CreateMessageParams) int {
	n := len(p.SystemPrompt)
	for _, msg := range p.Messages {
		if msg == nil {
			continue
		}
		if tc, ok := msg.Content.(*mcp.TextContent); ok {
			n += len(tc.Text)
		}
	}
	return n/bytesPerToken + 1
}
