package serve

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrStopping is the error of a request that arrives while serve stops.
var ErrStopping = errors.New("mcphost serve is stopping")

// drain is what Shutdown needs: every request that runs and every parked
// call, so each can be cancelled and waited for before the audit log
// closes. Its zero value is not usable; New makes it.
type drain struct {
	halt context.Context // ends when serve stops: every tracked call is cancelled
	stop context.CancelFunc

	mu      sync.Mutex
	closing bool
	runs    sync.WaitGroup // tracked requests and parked calls
	// draining: Drain was called, so readiness says no (health.go) while
	// calls go on; active counts runs, and quiet, if set, is closed when
	// active comes back to zero (Idle waits on it).
	draining bool
	active   int
	quiet    chan struct{}
}

func newDrain() *drain {
	d := &drain{}
	d.halt, d.stop = context.WithCancel(context.Background())
	return d
}

// enter counts one more run, unless serve is stopping.
func (d *drain) enter() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closing {
		return false
	}
	d.runs.Add(1)
	d.active++
	return true
}

// leave ends one run that enter or outlive counted.
func (d *drain) leave() {
	d.mu.Lock()
	d.active--
	if d.active == 0 && d.quiet != nil {
		close(d.quiet)
		d.quiet = nil
	}
	d.mu.Unlock()
	d.runs.Done()
}

// tracked makes every request of a client one Shutdown waits for, with a
// context Shutdown cancels: a call's gate then ends it and records its
// outcome (unknown, if it was sent) before the audit log is closed.
func (s *Server) tracked(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if !s.drain.enter() {
			return nil, ErrStopping
		}
		defer s.drain.leave()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(s.drain.halt, cancel)
		defer stop()
		return next(ctx, method, req)
	}
}

// outlive runs f, a call that goes on after the request that started it
// (a parked call), as one more run Shutdown waits for, with ctx cancelled
// when serve stops. It is only called from within a tracked request, so
// the count it adds to is not zero.
func (s *Server) outlive(ctx context.Context, cancel context.CancelFunc, f func(context.Context)) {
	s.drain.mu.Lock()
	s.drain.runs.Add(1)
	s.drain.active++
	s.drain.mu.Unlock()
	stop := context.AfterFunc(s.drain.halt, cancel)
	go func() {
		defer s.drain.leave()
		defer stop()
		f(ctx)
	}()
}

// haltAnswerWait bounds how long a request whose call was cancelled by
// Halt waits for that call's outcome, to answer with it.
const haltAnswerWait = 5 * time.Second

// halted reports whether Halt was called.
func (s *Server) halted() bool { return s.drain.halt.Err() != nil }

// Halt refuses every request from now on and cancels every call that runs,
// without waiting for them (Shutdown waits). It may be called more than
// once.
func (s *Server) Halt() {
	s.drain.mu.Lock()
	s.drain.closing = true
	s.drain.mu.Unlock()
	s.drain.stop()
}

// Shutdown halts serve (Halt) and waits until every call that ran has
// returned, its outcome recorded by its gate, or ctx ends. The caller
// closes the audit log only after it: a log closed under a running call
// would keep that call's intent without its outcome. An error says that
// some calls did not end in time.
func (s *Server) Shutdown(ctx context.Context) error {
	s.Halt()
	done := make(chan struct{})
	go func() {
		s.drain.runs.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("calls still running after they were cancelled (%w): their outcomes may be missing from the audit log", ctx.Err())
	}
}
