package host

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/llm"
)

// Observer sees what the gate and the loop do, to export it (package
// telemetry), so that host never imports an exporter. It only observes: its
// methods are called on the call's goroutine and must return at once
// (export is asynchronous and may drop); nothing they do can change, delay
// or fail a call. The arguments it receives are the call's own: an observer
// must never export them raw.
type Observer interface {
	// CallStarted is called when a call enters the gate. The context it
	// returns is the one the call continues with: it may carry a span,
	// which client sends to the server as W3C trace context.
	CallStarted(ctx context.Context, callID, server, tool string, args json.RawMessage) context.Context
	// Asked is called when the person (or the front asking for one) has
	// answered a question about the call, after wait.
	Asked(ctx context.Context, q *Question, a Answer, err error, wait time.Duration)
	// AttemptStarted is called before execution n is sent; the context it
	// returns is the one that execution is sent with.
	AttemptStarted(ctx context.Context, n int) context.Context
	// AttemptDone is called when execution n has ended, with the context
	// AttemptStarted returned.
	AttemptDone(ctx context.Context, a Attempt, cr *client.CallResult)
	// CallDone is called once for every call, however it ended, with the
	// context CallStarted returned and the hash of the definition decided
	// on ("" when the tool was not found).
	CallDone(ctx context.Context, r *Result, definitionHash string)
	// Tainted is called when the session's taint grows.
	Tainted(t Taint)
	// TurnDone is called when a model turn has ended, well or not.
	TurnDone(ctx context.Context, t Turn)
}

// Turn is one model turn of a loop, as an Observer sees it.
type Turn struct {
	Step       int
	Model      string // "provider:model"
	Start, End time.Time
	Usage      llm.Usage // this turn's only
	StopReason string
	ToolCalls  int
	Err        error
}

// NopObserver observes nothing: the gate's default.
type NopObserver struct{}

func (NopObserver) CallStarted(ctx context.Context, _, _, _ string, _ json.RawMessage) context.Context {
	return ctx
}
func (NopObserver) Asked(context.Context, *Question, Answer, error, time.Duration) {}
func (NopObserver) AttemptStarted(ctx context.Context, _ int) context.Context      { return ctx }
func (NopObserver) AttemptDone(context.Context, Attempt, *client.CallResult)       {}
func (NopObserver) CallDone(context.Context, *Result, string)                      {}
func (NopObserver) Tainted(Taint)                                                  {}
func (NopObserver) TurnDone(context.Context, Turn)                                 {}

// observer returns the gate's observer, never nil.
func (g *Gate) observer() Observer {
	if g == nil || g.o.Observer == nil {
		return NopObserver{}
	}
	return g.o.Observer
}
