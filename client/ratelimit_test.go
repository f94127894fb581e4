package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// floodServer is an MCP server whose flood tool sends the host n requests
// of one kind, one after another, and reports how many were answered and
// how many refused over the rate limit (with the refusal's message).
func floodServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "flood", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "flood", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args struct {
			Kind string `json:"kind"`
			N    int    `json:"n"`
		}
		if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
			return nil, err
		}
		ok, limited, other, msg := 0, 0, 0, ""
		for range args.N {
			var err error
			switch args.Kind {
			case "elicitation":
				_, err = req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "again?", RequestedSchema: map[string]any{"type": "object"}})
			case "sampling":
				_, err = req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}})
			case "roots":
				_, err = req.Session.ListRoots(ctx, nil)
			}
			var je *jsonrpc.Error
			switch {
			case err == nil:
				ok++
			case errors.As(err, &je) && je.Code == CodeRateLimited:
				limited++
				msg = je.Message
			default:
				other++
				msg = err.Error()
			}
		}
		text := fmt.Sprintf("ok=%d limited=%d other=%d", ok, limited, other)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}, &mcp.TextContent{Text: msg}}}, nil
	})
	return s
}

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestServerRequestFloodIsRateLimitedPerServer: a server that floods the
// host with elicitation, sampling and roots requests gets its burst
// answered and the rest refused with a JSON-RPC error, without reaching the
// handlers; another server's allowance is untouched; the allowance refills
// with time.
func TestServerRequestFloodIsRateLimitedPerServer(t *testing.T) {
	dial := func(ctx context.Context) (mcp.Transport, error) {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := floodServer().Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}
	clk := &testClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	var mu sync.Mutex
	handled := map[string]int{} // server/kind → requests that reached a handler
	refused := map[string]int{} // server/kind → RateLimited reports
	m := startManager(t, []Spec{{Name: "flood", Dial: dial}, {Name: "calm", Dial: dial}}, Options{
		Now:   clk.Now,
		Roots: []*mcp.Root{{URI: "file:///tmp", Name: "tmp"}},
		Elicitation: func(_ context.Context, server string, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			handled[server+"/elicitation"]++
			mu.Unlock()
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
		Sampling: func(_ context.Context, server string, _ *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			mu.Lock()
			handled[server+"/sampling"]++
			mu.Unlock()
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "ok"}}, nil
		},
		RateLimited: func(server, kind string) {
			mu.Lock()
			refused[server+"/"+kind]++
			mu.Unlock()
		},
	})
	flood := func(server, kind string, n int) (string, string) {
		t.Helper()
		r := m.Call(context.Background(), server, "flood", json.RawMessage(fmt.Sprintf(`{"kind":%q,"n":%d}`, kind, n)), CallOptions{})
		if r.Outcome != OutcomeSuccess {
			t.Fatalf("%s flood %s: %s %v", server, kind, r.Outcome, r.Err)
		}
		return r.Result.Content[0].(*mcp.TextContent).Text, r.Result.Content[1].(*mcp.TextContent).Text
	}

	got, msg := flood("flood", "elicitation", 3*ServerRequestBurst)
	if want := fmt.Sprintf("ok=%d limited=%d other=0", ServerRequestBurst, 2*ServerRequestBurst); got != want {
		t.Errorf("elicitation flood: %s, want %s", got, want)
	}
	if !strings.Contains(msg, "elicitation/create refused: too many requests from this server") {
		t.Errorf("the refusal the server got: %q", msg)
	}
	// The allowance is shared by the three kinds.
	if got, _ := flood("flood", "sampling", 3); got != "ok=0 limited=3 other=0" {
		t.Errorf("sampling after the flood: %s", got)
	}
	if got, _ := flood("flood", "roots", 3); got != "ok=0 limited=3 other=0" {
		t.Errorf("roots after the flood: %s", got)
	}
	// Another server is not affected.
	if got, _ := flood("calm", "elicitation", 2); got != "ok=2 limited=0 other=0" {
		t.Errorf("calm server: %s", got)
	}
	// Time refills the allowance at the documented rate.
	clk.Add(time.Second)
	if got, _ := flood("flood", "elicitation", ServerRequestRate+1); got != fmt.Sprintf("ok=%d limited=1 other=0", ServerRequestRate) {
		t.Errorf("a second later: %s", got)
	}

	mu.Lock()
	defer mu.Unlock()
	wantHandled := map[string]int{"flood/elicitation": ServerRequestBurst + ServerRequestRate, "calm/elicitation": 2}
	wantRefused := map[string]int{"flood/elicitation": 2*ServerRequestBurst + 1, "flood/sampling": 3, "flood/roots": 3}
	if fmt.Sprint(handled) != fmt.Sprint(wantHandled) {
		t.Errorf("handled %v, want %v", handled, wantHandled)
	}
	if fmt.Sprint(refused) != fmt.Sprint(wantRefused) {
		t.Errorf("refusals reported %v, want %v", refused, wantRefused)
	}
}

// TestInputRequestsOfAResultSpendTheAllowance: a 2026-07-28 server can ask
// in its result instead of in requests of its own (an input-required
// result, answered by go-sdk's client calling the handlers directly); 30
// questions in one result reach the person no more often than 30 requests
// would: the burst, the rest refused and reported.
func TestInputRequestsOfAResultSpendTheAllowance(t *testing.T) {
	const asked = 3 * ServerRequestBurst
	dial := func(ctx context.Context) (mcp.Transport, error) {
		s := mcp.NewServer(&mcp.Implementation{Name: "many", Version: "1"}, nil)
		s.AddTool(&mcp.Tool{Name: "ask_many", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if req.Params.InputResponses != nil {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "answered"}}}, nil
			}
			irs := mcp.InputRequestMap{}
			for i := range asked {
				irs[fmt.Sprint("q", i)] = &mcp.ElicitParams{Message: "again?", RequestedSchema: map[string]any{"type": "object"}}
			}
			return &mcp.CallToolResult{InputRequests: irs}, nil
		})
		ct, st := mcp.NewInMemoryTransports()
		if _, err := s.Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}
	clk := &testClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	var mu sync.Mutex
	handled, refused := 0, 0
	m := startManager(t, []Spec{{Name: "many", Dial: dial, ProtocolVersion: "2026-07-28"}}, Options{
		Now: clk.Now,
		Elicitation: func(context.Context, string, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			handled++
			mu.Unlock()
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
		RateLimited: func(string, string) {
			mu.Lock()
			refused++
			mu.Unlock()
		},
	})
	r := m.Call(context.Background(), "many", "ask_many", json.RawMessage(`{}`), CallOptions{})
	mu.Lock()
	defer mu.Unlock()
	if handled > ServerRequestBurst || handled+refused != asked || refused == 0 {
		t.Errorf("%d of %d questions in one result reached the person and %d were refused (call %s); want at most %d reached, the rest refused",
			handled, asked, refused, r.Outcome, ServerRequestBurst)
	}
}
