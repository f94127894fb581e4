package ui

import (
	"context"
	"fmt"

	"github.com/mcphost/mcphost/llm"
)

// usageMeter adds up the tokens the model reported in this session and
// keeps the latest turn's input, which is how much of the context window
// the conversation fills.
type usageMeter struct {
	in, out  int
	last     int // input tokens of the latest turn
	sampling int // of in and out, the tokens servers spent through sampling
}

// usageMsg is one turn's usage, reported by meteredModel, or one sampling
// request's (sampled), reported by the sampling handler.
type usageMsg struct {
	u       llm.Usage
	sampled bool
}

func (u *usageMeter) add(x llm.Usage, sampled bool) {
	u.in += max(x.InputTokens, 0)
	u.out += max(x.OutputTokens, 0)
	if sampled {
		// A server's request is not the conversation: it fills no context.
		u.sampling += max(x.InputTokens, 0) + max(x.OutputTokens, 0)
		return
	}
	if x.InputTokens > 0 {
		u.last = x.InputTokens + max(x.OutputTokens, 0)
	}
}

// status is "tokens 12.3k", "sampling 1.2k" when servers used the model,
// and, with a known window, "context 41%".
func (u *usageMeter) status(window int) string {
	if u.in+u.out == 0 {
		return ""
	}
	s := "tokens " + humanCount(u.in+u.out)
	if u.sampling > 0 {
		s += " · sampling " + humanCount(u.sampling)
	}
	if window > 0 && u.last > 0 {
		s += fmt.Sprintf(" · context %d%%", min(u.last*100/window, 999))
	}
	return s
}

// humanCount writes a count briefly: 950, 12.3k, 1.2M.
func humanCount(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	default:
		return fmt.Sprintf("%.1fM", float64(n)/1_000_000)
	}
}

// windower is a model that knows its context window.
type windower interface{ ContextWindow() int }

// contextWindow is the configured window, else the model's own.
func (m *Model) contextWindow() int {
	if m.cfg.ContextWindow > 0 {
		return m.cfg.ContextWindow
	}
	if m.cfg.Context.ContextWindow > 0 {
		return m.cfg.Context.ContextWindow
	}
	if w, ok := m.cfg.Model.(windower); ok {
		return w.ContextWindow()
	}
	return 0
}

// metered wraps model so that its usage reaches the status line.
func (m *Model) metered(model llm.Model) llm.Model {
	return meteredModel{Model: model, report: func(u llm.Usage) { m.post(usageMsg{u: u}) }}
}

// meteredModel passes every call to the model and reports each turn's
// usage to the program as it arrives.
type meteredModel struct {
	llm.Model
	report func(llm.Usage)
}

func (mm meteredModel) Stream(ctx context.Context, req *llm.Request, emit func(llm.Event)) error {
	return mm.Model.Stream(ctx, req, func(e llm.Event) {
		if e.Kind == llm.EventUsage {
			mm.report(e.Usage)
		}
		emit(e)
	})
}
