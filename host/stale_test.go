package host

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The stale signal as a tool error: the tasks fixture in stale mode answers
// every write with {"error":"SERVER_STALE",...} as its text. The call is not
// retried, its result says so, and the advice names the TUI's /servers and
// what to do from the command line; reads on the same server keep working
// and carry no advice.
func TestStaleToolErrorIsRecognised(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "tasks", trusted: true, fopts: fixtures.Options{Stale: true}})
	r := w.call("set_step_status", `{"id":"T-1","step":"T-1.1","status":"done"}`)
	if r.Status != StatusToolError || !r.Stale || len(r.Attempts) != 1 {
		t.Fatalf("stale write: %s stale=%v after %d attempts, want tool-error, stale, one attempt", r.Status, r.Stale, len(r.Attempts))
	}
	for _, want := range []string{"f/set_step_status did not run and was not retried", "the server f is stale", "/servers", "run the command again", "reads keep working"} {
		if !strings.Contains(r.Message(), want) {
			t.Errorf("message %q lacks %q", r.Message(), want)
		}
	}
	read := w.call("list_tasks", `{}`)
	if read.Status != StatusSuccess || read.Stale {
		t.Fatalf("read on the stale server: %s stale=%v, want success and no stale advice", read.Status, read.Stale)
	}
}

// The word alone is not the signal: a read whose error merely mentions it
// (here, the id it could not find) gets no restart advice.
func TestStaleWordInAnErrorIsNotTheSignal(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "tasks", trusted: true})
	r := w.call("get_task", `{"id":"SERVER_STALE"}`)
	if r.Status != StatusToolError || !strings.Contains(ResultText(r.Result), "SERVER_STALE") {
		t.Fatalf("get_task of a missing id: %s %q; want a tool error that mentions the id", r.Status, ResultText(r.Result))
	}
	if r.Stale || strings.Contains(r.Message(), "stale") {
		t.Errorf("a read's error that mentions the word was taken for the signal: %q", r.Message())
	}
}

// staleServer is a raw go-sdk server whose one tool, an idempotent write
// (retried once after an unknown outcome), answers every call with what
// answer returns, counting the calls that reached its handler.
type staleServer struct {
	mu     sync.Mutex
	calls  int
	answer func() (*mcp.CallToolResult, error)
}

func (s *staleServer) spec() client.Spec {
	return client.Spec{Name: "mnema", Dial: func(ctx context.Context) (mcp.Transport, error) {
		srv := mcp.NewServer(&mcp.Implementation{Name: "stale", Version: "1"}, nil)
		srv.AddTool(&mcp.Tool{Name: "task_start", InputSchema: map[string]any{"type": "object"},
			Annotations: &mcp.ToolAnnotations{DestructiveHint: bptr(false), IdempotentHint: true, OpenWorldHint: bptr(false)}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				s.mu.Lock()
				s.calls++
				s.mu.Unlock()
				return s.answer()
			})
		ct, st := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}}
}

func (s *staleServer) gate(t *testing.T) *Gate {
	t.Helper()
	m := client.New([]client.Spec{s.spec()}, client.Options{Backoff: func(int) time.Duration { return time.Millisecond }})
	t.Cleanup(func() { m.Close() })
	m.Start(context.Background())
	if st := m.Servers()[0]; st.State != client.StateReady {
		t.Fatalf("server did not start: %+v", st)
	}
	p, err := decide.Compile(nil, decide.Options{AutoApprove: decide.ApproveAdditive})
	if err != nil {
		t.Fatal(err)
	}
	return NewGate(GateOptions{Catalog: m, Policy: p, Trusted: func(string) bool { return true }, Mode: decide.Headless,
		Audit: openTestAudit(t), Backoff: func(int) time.Duration { return time.Millisecond }})
}

func (s *staleServer) call(t *testing.T) *Result {
	t.Helper()
	r := s.gate(t).Call(context.Background(), Call{Server: "mnema", Tool: "task_start", Args: json.RawMessage(`{}`)})
	if !r.Decision.Retry || r.Decision.Verdict != decide.Allow {
		t.Fatalf("task_start decided %s retry=%v; the test needs an allowed, retry-eligible write", r.Decision.Verdict, r.Decision.Retry)
	}
	return r
}

// The stale signal as a JSON-RPC error, in its data or its message: the
// server refused the write, so the call is rejected (nothing ran), never
// retried although the write is idempotent, and the advice is given. A
// JSON-RPC error without the signal is still an unknown outcome, retried
// once, and a tool error that carries the signal as structured content is
// recognised too.
func TestStaleJSONRPCErrorIsARefusal(t *testing.T) {
	staleData := json.RawMessage(`{"error":"SERVER_STALE","changed":["the mnema build (dist/) was rebuilt"],"hint":"Restart mnema mcp serve."}`)
	cases := []struct {
		name     string
		answer   func() (*mcp.CallToolResult, error)
		status   Status
		stale    bool
		attempts int
	}{
		{"data", func() (*mcp.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "server is stale", Data: staleData}
		}, StatusRejected, true, 1},
		{"message", func() (*mcp.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: -32000, Message: "SERVER_STALE: restart mnema mcp serve"}
		}, StatusRejected, true, 1},
		{"message as JSON", func() (*mcp.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: string(staleData)}
		}, StatusRejected, true, 1},
		{"no signal", func() (*mcp.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the word SERVER_STALE in passing"}
		}, StatusUnknown, false, 2},
		{"structured content", func() (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "Restart the server."}},
				StructuredContent: staleData}, nil
		}, StatusToolError, true, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &staleServer{answer: c.answer}
			r := s.call(t)
			if r.Status != c.status || r.Stale != c.stale || len(r.Attempts) != c.attempts || s.calls != c.attempts {
				t.Fatalf("%s stale=%v after %d attempts (%d reached the server); want %s stale=%v after %d",
					r.Status, r.Stale, len(r.Attempts), s.calls, c.status, c.stale, c.attempts)
			}
			if c.stale != strings.Contains(r.Message(), "/servers") {
				t.Errorf("message %q: restart advice %v, want %v", r.Message(), !c.stale, c.stale)
			}
		})
	}
}
