package client

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server asking for elicitation or roots reaches the host's handlers only
// when the host offers them.
func TestServerRequestsReachHandlers(t *testing.T) {
	build := func() *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "asks", Version: "1"}, nil)
		obj := map[string]any{"type": "object"}
		s.AddTool(&mcp.Tool{Name: "ask", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "name?", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
			if err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Action}}}, nil
		})
		s.AddTool(&mcp.Tool{Name: "roots", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
			}
			text := ""
			for _, r := range res.Roots {
				text += r.URI
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		})
		return s
	}
	dial := func(ctx context.Context) (mcp.Transport, error) {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := build().Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}
	text := func(r *CallResult) string { return r.Result.Content[0].(*mcp.TextContent).Text }

	plain := startManager(t, []Spec{{Name: "s", Dial: dial}}, Options{})
	if r := plain.Call(context.Background(), "s", "ask", nil, CallOptions{}); r.Outcome != OutcomeToolError {
		t.Errorf("elicitation without a handler: %s %q, want the server to get an error", r.Outcome, text(r))
	}
	if r := plain.Call(context.Background(), "s", "roots", nil, CallOptions{}); r.Outcome == OutcomeSuccess && text(r) != "" {
		t.Errorf("roots without configuration: %q, want none", text(r))
	}

	var asked string
	full := startManager(t, []Spec{{Name: "s", Dial: dial}}, Options{
		Elicitation: func(_ context.Context, server string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = server + ": " + req.Params.Message
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
		Roots: []*mcp.Root{{URI: "file:///srv/project", Name: "project"}},
	})
	if r := full.Call(context.Background(), "s", "ask", nil, CallOptions{}); r.Outcome != OutcomeSuccess || text(r) != "decline" || asked != "s: name?" {
		t.Errorf("elicitation: %s %q (asked %q), want the handler's decline", r.Outcome, text(r), asked)
	}
	if r := full.Call(context.Background(), "s", "roots", nil, CallOptions{}); r.Outcome != OutcomeSuccess || text(r) != "file:///srv/project" {
		t.Errorf("roots: %s %q", r.Outcome, text(r))
	}
}

func TestServerLogIsKeptBounded(t *testing.T) {
	m := New([]Spec{{Name: "s"}}, Options{})
	defer m.Close()
	s := m.byName["s"]
	for i := range 80 {
		s.onLog(context.Background(), &mcp.LoggingMessageRequest{Params: &mcp.LoggingMessageParams{
			Level: "info", Logger: "l", Data: fmt.Sprintf("line %d %s", i, strings.Repeat("x", 2000))}})
	}
	s.onLog(context.Background(), &mcp.LoggingMessageRequest{Params: &mcp.LoggingMessageParams{Level: "error", Data: map[string]any{"k": 1}}})
	s.mu.Lock()
	n, last := len(s.log), s.log[len(s.log)-1]
	s.mu.Unlock()
	if n != maxLogLines {
		t.Errorf("kept %d log lines, want %d", n, maxLogLines)
	}
	if last != `error: {"k":1}` {
		t.Errorf("last line %q", last)
	}
	st := m.Servers()[0]
	if len(st.Log) != 10 || len(st.Log[0]) > maxLogLine+len("…") {
		t.Errorf("status carries %d lines (first %d bytes), want the last 10, each bounded", len(st.Log), len(st.Log[0]))
	}
}

// Options.ListRoots answers a server's roots/list when it says ok, the
// configured roots answer when it does not, and a request over the rate
// limit never reaches it. Setting it offers the roots capability without
// configured roots.
func TestListRootsHook(t *testing.T) {
	dial := func(ctx context.Context) (mcp.Transport, error) {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := floodServer().Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}
	var mu sync.Mutex
	asked := map[string]int{}
	hook := func(_ context.Context, server string) (*mcp.ListRootsResult, bool) {
		mu.Lock()
		asked[server]++
		mu.Unlock()
		if server == "hooked" {
			return &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: "file:///from/hook", Name: "hook"}}}, true
		}
		return nil, false
	}
	rootsDial := func(ctx context.Context) (mcp.Transport, error) {
		s := mcp.NewServer(&mcp.Implementation{Name: "lists", Version: "1"}, nil)
		s.AddTool(&mcp.Tool{Name: "roots", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if p := req.Session.InitializeParams(); p == nil || p.Capabilities == nil || p.Capabilities.RootsV2 == nil {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "no roots capability"}}}, nil
			}
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return nil, err
			}
			text := "roots:"
			for _, r := range res.Roots {
				text += " " + r.URI
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		})
		ct, st := mcp.NewInMemoryTransports()
		if _, err := s.Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}
	roots := func(m *Manager, server string) string {
		t.Helper()
		r := m.Call(context.Background(), server, "roots", nil, CallOptions{})
		if r.Outcome != OutcomeSuccess {
			t.Fatalf("%s roots: %s %v", server, r.Outcome, r.Err)
		}
		return r.Result.Content[0].(*mcp.TextContent).Text
	}

	bare := startManager(t, []Spec{{Name: "hooked", Dial: rootsDial}, {Name: "other", Dial: rootsDial}}, Options{ListRoots: hook})
	if got := roots(bare, "hooked"); got != "roots: file:///from/hook" {
		t.Errorf("hooked server without configured roots: %q, want the hook's root", got)
	}
	if got := roots(bare, "other"); got != "roots:" {
		t.Errorf("server the hook declines, no configured roots: %q, want the capability and no roots", got)
	}

	configured := startManager(t, []Spec{{Name: "hooked", Dial: rootsDial}, {Name: "other", Dial: rootsDial}}, Options{
		ListRoots: hook, Roots: []*mcp.Root{{URI: "file:///configured"}}})
	if got := roots(configured, "hooked"); got != "roots: file:///from/hook" {
		t.Errorf("hooked server: %q, want the hook's root", got)
	}
	if got := roots(configured, "other"); got != "roots: file:///configured" {
		t.Errorf("server the hook declines: %q, want the configured root", got)
	}

	mu.Lock()
	clear(asked)
	mu.Unlock()
	clk := &testClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} // no refill during the flood
	flooded := startManager(t, []Spec{{Name: "flood", Dial: dial}}, Options{ListRoots: hook, Now: clk.Now})
	r := flooded.Call(context.Background(), "flood", "flood", json.RawMessage(fmt.Sprintf(`{"kind":"roots","n":%d}`, 3*ServerRequestBurst)), CallOptions{})
	if r.Outcome != OutcomeSuccess {
		t.Fatalf("flood: %s %v", r.Outcome, r.Err)
	}
	if got, want := r.Result.Content[0].(*mcp.TextContent).Text, fmt.Sprintf("ok=%d limited=%d other=0", ServerRequestBurst, 2*ServerRequestBurst); got != want {
		t.Errorf("roots flood: %s, want %s", got, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if asked["flood"] != ServerRequestBurst {
		t.Errorf("the hook was asked %d times, want %d: requests over the limit must not reach it", asked["flood"], ServerRequestBurst)
	}
}
