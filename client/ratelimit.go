package client

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Limits on the requests one server sends the host (elicitation/create,
// sampling/createMessage, roots/list), shared by the three: a server may
// send ServerRequestBurst at once, then ServerRequestRate a second. Each
// elicitation asks a person and each sampling request spends the person's
// model, so an honest server sends a handful; a server that sends more is
// refused, and only that server is: every server has its own allowance,
// kept across its restarts.
const (
	ServerRequestBurst = 10
	ServerRequestRate  = 2 // per second
)

// CodeRateLimited is the JSON-RPC error code a server receives for a
// request over its limit. It lies in the range JSON-RPC leaves to
// implementations.
const CodeRateLimited = -32029

// limitedMethods are the server-to-host requests that are rate limited.
var limitedMethods = map[string]string{
	"elicitation/create":     "elicitation",
	"sampling/createMessage": "sampling",
	"roots/list":             "roots",
}

// requestBucket is a token bucket; its zero value is full.
type requestBucket struct {
	mu     sync.Mutex
	tokens float64
	last   time.Time
}

// take spends a token if one is left at now.
func (b *requestBucket) take(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.last.IsZero() {
		b.tokens = ServerRequestBurst
	} else if d := now.Sub(b.last); d > 0 {
		b.tokens = min(ServerRequestBurst, b.tokens+d.Seconds()*ServerRequestRate)
	}
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// limitRequests is the client's receiving middleware: it refuses the
// server's elicitation, sampling and roots requests over its allowance with
// a JSON-RPC error, before any handler sees them, and reports each refusal
// to Options.RateLimited. A roots request within the allowance goes to
// Options.ListRoots first.
func (s *server) limitRequests(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if _, limited := limitedMethods[method]; !limited {
			return next(ctx, method, req)
		}
		if err := s.admit(method); err != nil {
			return nil, err
		}
		if f := s.m.opts.ListRoots; f != nil && method == "roots/list" {
			if res, ok := f(ctx, s.spec.Name); ok && res != nil {
				return res, nil
			}
		}
		return next(context.WithValue(ctx, admittedKey{}, true), method, req)
	}
}

// admittedKey marks, in a handler's context, a request limitRequests has
// already counted.
type admittedKey struct{}

// admit spends one of the server's allowance on a request of method, or
// returns the JSON-RPC error the server gets for one over it (reporting
// the refusal to Options.RateLimited).
func (s *server) admit(method string) error {
	if s.requests.take(s.m.opts.Now()) {
		return nil
	}
	if f := s.m.opts.RateLimited; f != nil {
		f(s.spec.Name, limitedMethods[method])
	}
	return &jsonrpc.Error{Code: CodeRateLimited, Message: fmt.Sprintf(
		"%s refused: too many requests from this server (mcphost answers at most %d at once and %d a second of elicitation, sampling and roots requests)",
		method, ServerRequestBurst, ServerRequestRate)}
}

// admitted counts a request that reached a handler without passing
// limitRequests: go-sdk's client answers the input requests of a
// 2026-07-28 server's input-required result by calling the handlers
// directly, and each of those spends the allowance too.
func (s *server) admitted(ctx context.Context, method string) error {
	if ok, _ := ctx.Value(admittedKey{}).(bool); ok {
		return nil
	}
	return s.admit(method)
}
