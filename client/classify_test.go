package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestClassify(t *testing.T) {
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	wire := func(code int64) error {
		return fmt.Errorf("calling tool: %w", &jsonrpc.Error{Code: code, Message: "x"})
	}
	probe := func(sent bool, status int, ra time.Duration) *httpProbe {
		return &httpProbe{sent: sent, status: status, retryAfter: ra}
	}
	cases := []struct {
		name   string
		result *mcp.CallToolResult
		err    error
		cause  error
		probe  *httpProbe
		want   Outcome
		detail string
	}{
		{"success", &mcp.CallToolResult{}, nil, nil, probe(true, 200, 0), OutcomeSuccess, ""},
		{"tool error", &mcp.CallToolResult{IsError: true}, nil, nil, probe(false, 0, 0), OutcomeToolError, "tool error"},
		{"timeout", nil, context.Canceled, errCallTimeout, probe(false, 0, 0), OutcomeUnknown, "timeout"},
		{"cancelled by caller", nil, context.Canceled, context.Canceled, probe(false, 0, 0), OutcomeUnknown, "cancelled"},
		{"crash mid-call", nil, fmt.Errorf("calling: %w", io.EOF), nil, probe(false, 0, 0), OutcomeUnknown, "connection lost"},
		{"connection already closed", nil, fmt.Errorf("x: %w", mcp.ErrConnectionClosed), nil, probe(false, 0, 0), OutcomeNotSent, "connection closed"},
		{"dial refused", nil, fmt.Errorf("sending: %w", dial), nil, probe(false, 0, 0), OutcomeNotSent, "could not connect"},
		{"parse error", nil, wire(-32700), nil, probe(false, 0, 0), OutcomeRejected, "JSON-RPC -32700"},
		{"invalid request", nil, wire(-32600), nil, probe(false, 0, 0), OutcomeRejected, "JSON-RPC -32600"},
		{"method not found", nil, wire(-32601), nil, probe(false, 0, 0), OutcomeRejected, "JSON-RPC -32601"},
		{"invalid params", nil, wire(-32602), nil, probe(false, 0, 0), OutcomeRejected, "JSON-RPC -32602"},
		{"internal error", nil, wire(-32603), nil, probe(false, 0, 0), OutcomeUnknown, "JSON-RPC -32603"},
		{"server-defined code", nil, wire(-32001), nil, probe(false, 0, 0), OutcomeUnknown, "JSON-RPC -32001"},
		{"HTTP 429", nil, errors.New("Too Many Requests"), nil, probe(true, 429, 3*time.Second), OutcomeThrottled, "HTTP 429"},
		{"HTTP 503", nil, errors.New("Service Unavailable"), nil, probe(true, 503, 0), OutcomeThrottled, "HTTP 503"},
		{"HTTP 400", nil, errors.New("Bad Request"), nil, probe(true, 400, 0), OutcomeRejected, "HTTP 400"},
		{"HTTP 404", nil, errors.New("Not Found"), nil, probe(true, 404, 0), OutcomeRejected, "HTTP 404"},
		{"HTTP 500", nil, errors.New("Internal Server Error"), nil, probe(true, 500, 0), OutcomeUnknown, "HTTP 500"},
		{"unexplained transport error", nil, errors.New("boom"), nil, probe(false, 0, 0), OutcomeUnknown, "transport error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := classify(c.result, c.err, c.cause, c.probe)
			if got.Outcome != c.want || got.Detail != c.detail {
				t.Errorf("got %s (%q), want %s (%q)", got.Outcome, got.Detail, c.want, c.detail)
			}
			if c.name == "HTTP 429" && got.RetryAfter != 3*time.Second {
				t.Errorf("RetryAfter = %v, want 3s", got.RetryAfter)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"":                              0,
		"7":                             7 * time.Second,
		"-1":                            0,
		"soon":                          0,
		"Fri, 02 Jan 2026 03:04:15 GMT": 10 * time.Second,
		"Fri, 02 Jan 2026 03:04:00 GMT": 0,
	} {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}
