package client

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	maybeServeFixture() // the test binary doubles as a fixture server for subprocess tests
	// The thread that starts stdio servers lives as long as the process
	// (see client/proc_linux.go).
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/mcphost/mcphost/client.starterLoop"))
}

// testServer is a small real MCP server whose tools exercise the client.
type testServer struct {
	cancelled chan string // names of calls whose context the server saw cancelled
	execs     atomic.Int64
}

func newTestServer() *testServer { return &testServer{cancelled: make(chan string, 16)} }

func (ts *testServer) build() *mcp.Server { return ts.buildWith(nil) }

// buildWith builds the server; conn, when set, holds the server's end of the
// connection, which the crash tool cuts as a dying process would.
func (ts *testServer) buildWith(conn *atomic.Pointer[cutTransport]) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	obj := map[string]any{"type": "object"}
	f := false
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: obj, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &f}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ts.execs.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "fail", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ts.execs.Add(1)
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "nope"}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "hang", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ts.execs.Add(1)
		<-ctx.Done()
		ts.cancelled <- "hang"
		return nil, ctx.Err()
	})
	s.AddTool(&mcp.Tool{Name: "progress", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ts.execs.Add(1)
		for i := range 3 {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i + 1), Total: 3, Message: "step"})
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "crash", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ts.execs.Add(1)
		if conn != nil {
			conn.Load().cut() // the server goes away with the call in flight
		}
		<-ctx.Done()
		return nil, ctx.Err()
	})
	return s
}

// dial returns a Dial function that starts a fresh server per connection,
// as a restarted process would be, and keeps the latest for the test.
func (ts *testServer) dial(latest *atomic.Pointer[mcp.Server]) func(context.Context) (mcp.Transport, error) {
	return func(ctx context.Context) (mcp.Transport, error) {
		var cut atomic.Pointer[cutTransport]
		srv := ts.buildWith(&cut)
		if latest != nil {
			latest.Store(srv)
		}
		ct, st := mcp.NewInMemoryTransports()
		cst := &cutTransport{Transport: st}
		cut.Store(cst)
		if _, err := srv.Connect(ctx, cst, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}
}

// cutTransport lets a test close the server's end of a connection at once,
// without the orderly shutdown of a session.
type cutTransport struct {
	mcp.Transport
	conn mcp.Connection
}

func (c *cutTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := c.Transport.Connect(ctx)
	c.conn = conn
	return conn, err
}

func (c *cutTransport) cut() { _ = c.conn.Close() }

func startManager(t *testing.T, specs []Spec, opts Options) *Manager {
	t.Helper()
	m := New(specs, opts)
	t.Cleanup(func() { m.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m.Start(ctx)
	return m
}

// waitFor reads events until one satisfies ok, failing the test if the
// Manager goes quiet for too long.
func waitFor(t *testing.T, events <-chan Event, ok func(Event) bool) Event {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case e := <-events:
			if ok(e) {
				return e
			}
		case <-timeout:
			t.Fatal("timed out waiting for an event")
		}
	}
}

func TestStartIsolatesFailures(t *testing.T) {
	ts := newTestServer()
	hang := func(ctx context.Context) (mcp.Transport, error) { <-ctx.Done(); return nil, ctx.Err() }
	broken := func(context.Context) (mcp.Transport, error) { return nil, errors.New("no such program") }
	m := startManager(t, []Spec{
		{Name: "good", Dial: ts.dial(nil)},
		{Name: "hangs", Dial: hang, StartTimeout: 100 * time.Millisecond},
		{Name: "broken", Dial: broken},
		{Name: "missing", Command: "mcphost-no-such-command-anywhere"},
	}, Options{})
	got := map[string]Status{}
	for _, s := range m.Servers() {
		got[s.Name] = s
	}
	if s := got["good"]; s.State != StateReady || s.Tools != 5 || s.ProtocolVersion != DefaultProtocolVersion {
		t.Errorf("good: %+v, want ready with 5 tools on %s", s, DefaultProtocolVersion)
	}
	if s := got["hangs"]; s.State != StateFailed || !strings.Contains(s.LastError, "start timeout") {
		t.Errorf("hangs: %+v, want failed on the start timeout", s)
	}
	if s := got["broken"]; s.State != StateFailed || !strings.Contains(s.LastError, "no such program") {
		t.Errorf("broken: %+v, want failed with the dial error", s)
	}
	if s := got["missing"]; s.State != StateFailed || !strings.Contains(s.LastError, "executable file not found") {
		t.Errorf("missing: %+v, want failed: executable not found", s)
	}
	if n := len(m.Tools()); n != 5 {
		t.Errorf("catalog has %d tools, want only the 5 of the ready server", n)
	}
}

func TestAnnotationsAsSentBySDKServer(t *testing.T) {
	m := startManager(t, []Spec{{Name: "s", Dial: newTestServer().dial(nil)}}, Options{})
	echo, ok := m.Tool("s", "echo")
	if !ok {
		t.Fatal("echo not listed")
	}
	a := echo.Annotations
	// go-sdk servers always send readOnlyHint and idempotentHint; the other
	// two only when set.
	if !a.Present || a.ReadOnly == nil || !*a.ReadOnly || a.Idempotent == nil || *a.Idempotent || a.Destructive != nil || a.OpenWorld == nil || *a.OpenWorld {
		t.Errorf("echo annotations = %s", a)
	}
	fail, _ := m.Tool("s", "fail")
	if fail.Annotations.Present {
		t.Errorf("fail has no annotations object, got %s", fail.Annotations)
	}
}

func TestCallOutcomes(t *testing.T) {
	ts := newTestServer()
	m := startManager(t, []Spec{{Name: "s", Dial: ts.dial(nil)}}, Options{})
	ctx := context.Background()

	r := m.Call(ctx, "s", "echo", json.RawMessage(`{"b":2, "a":1}`), CallOptions{})
	if r.Outcome != OutcomeSuccess || r.Result.Content[0].(*mcp.TextContent).Text != `{"b":2,"a":1}` {
		t.Errorf("echo: %s %v, want success echoing the arguments in their order", r.Outcome, r.Err)
	}
	if r := m.Call(ctx, "s", "fail", nil, CallOptions{}); r.Outcome != OutcomeToolError {
		t.Errorf("fail: %s, want %s", r.Outcome, OutcomeToolError)
	}
	if r := m.Call(ctx, "s", "no_such_tool", nil, CallOptions{}); r.Outcome != OutcomeRejected {
		t.Errorf("unknown tool: %s (%v), want %s", r.Outcome, r.Err, OutcomeRejected)
	}
	if r := m.Call(ctx, "nobody", "echo", nil, CallOptions{}); r.Outcome != OutcomeNotSent {
		t.Errorf("unknown server: %s, want %s", r.Outcome, OutcomeNotSent)
	}
	r = m.Call(ctx, "s", "hang", nil, CallOptions{Timeout: 50 * time.Millisecond})
	if r.Outcome != OutcomeUnknown || r.Detail != "timeout" || !r.CancelSent {
		t.Errorf("hang: %s (%s), want unknown after a timeout with a cancellation sent", r.Outcome, r.Detail)
	}
	select {
	case <-ts.cancelled:
	case <-time.After(20 * time.Second):
		t.Error("the server never saw the cancellation")
	}

	var mu sync.Mutex
	var steps []float64
	r = m.Call(ctx, "s", "progress", nil, CallOptions{Progress: func(p Progress) {
		mu.Lock()
		steps = append(steps, p.Progress)
		mu.Unlock()
	}})
	if r.Outcome != OutcomeSuccess {
		t.Errorf("progress: %s %v", r.Outcome, r.Err)
	}
	mu.Lock()
	defer mu.Unlock()
	// Notifications race the response; those that lose arrive after the call
	// ended and are dropped. At least the first precedes the response's
	// handling often enough to be seen; none may be invented.
	if len(steps) > 3 {
		t.Errorf("got progress %v, want at most the 3 steps sent", steps)
	}
	for i, p := range steps {
		if p != float64(i+1) {
			t.Errorf("progress %v out of order", steps)
		}
	}
}

func TestCancelByCaller(t *testing.T) {
	ts := newTestServer()
	m := startManager(t, []Spec{{Name: "s", Dial: ts.dial(nil)}}, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *CallResult)
	go func() { done <- m.Call(ctx, "s", "hang", nil, CallOptions{}) }()
	// Cancel once the server is running the call.
	for ts.execs.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	r := <-done
	if r.Outcome != OutcomeUnknown || r.Detail != "cancelled" {
		t.Errorf("got %s (%s), want unknown (cancelled)", r.Outcome, r.Detail)
	}
	<-ts.cancelled
}

func TestCrashRestartsAndRelists(t *testing.T) {
	ts := newTestServer()
	m := New([]Spec{{Name: "s", Dial: ts.dial(nil)}}, Options{Backoff: func(int) time.Duration { return time.Millisecond }})
	defer m.Close()
	events, unsub := m.Subscribe()
	defer unsub()
	m.Start(context.Background())

	r := m.Call(context.Background(), "s", "crash", nil, CallOptions{})
	if r.Outcome != OutcomeUnknown {
		t.Errorf("crash mid-call: %s (%s: %v), want unknown", r.Outcome, r.Detail, r.Err)
	}
	waitFor(t, events, func(e Event) bool { return e.Kind == EventState && e.State == StateRestarting })
	waitFor(t, events, func(e Event) bool { return e.Kind == EventState && e.State == StateReady })
	st := m.Servers()[0]
	if st.Restarts != 1 || st.Tools != 5 {
		t.Errorf("after restart: %+v, want 1 restart and 5 tools", st)
	}
	if r := m.Call(context.Background(), "s", "echo", json.RawMessage(`{}`), CallOptions{}); r.Outcome != OutcomeSuccess {
		t.Errorf("call after restart: %s %v", r.Outcome, r.Err)
	}
	if n := ts.execs.Load(); n != 2 {
		t.Errorf("server executed %d calls, want 2 (the crash ran once, never again)", n)
	}
}

func TestCrashLoopStaysFailedUntilRestart(t *testing.T) {
	ts := newTestServer()
	m := New([]Spec{{Name: "s", Dial: ts.dial(nil)}}, Options{MaxCrashes: 2, Backoff: func(int) time.Duration { return time.Millisecond }})
	defer m.Close()
	m.Start(context.Background())
	events, unsub := m.Subscribe()
	defer unsub()

	m.Call(context.Background(), "s", "crash", nil, CallOptions{})
	waitFor(t, events, func(e Event) bool { return e.State == StateReady })
	m.Call(context.Background(), "s", "crash", nil, CallOptions{})
	e := waitFor(t, events, func(e Event) bool { return e.State == StateFailed })
	if !strings.Contains(e.Err, "crashed 2 times") {
		t.Errorf("failed with %q, want it to say it crashed 2 times", e.Err)
	}
	if r := m.Call(context.Background(), "s", "echo", nil, CallOptions{}); r.Outcome != OutcomeNotSent {
		t.Errorf("call to a failed server: %s, want not-sent", r.Outcome)
	}
	if err := m.Restart(context.Background(), "s"); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	if st := m.Servers()[0]; st.State != StateReady {
		t.Errorf("after Restart: %s, want ready", st.State)
	}
}

func TestListChangedPublishesDiff(t *testing.T) {
	var latest atomic.Pointer[mcp.Server]
	m := New([]Spec{{Name: "s", Dial: newTestServer().dial(&latest)}}, Options{RelistInterval: time.Millisecond})
	defer m.Close()
	events, unsub := m.Subscribe()
	defer unsub()
	m.Start(context.Background())

	srv := latest.Load()
	srv.AddTool(&mcp.Tool{Name: "added", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	e := waitFor(t, events, func(e Event) bool { return e.Kind == EventTools })
	if len(e.Diff.Added) != 1 || e.Diff.Added[0] != "added" {
		t.Errorf("diff = %+v, want one added tool", e.Diff)
	}
	srv.RemoveTools("echo", "fail")
	e = waitFor(t, events, func(e Event) bool { return e.Kind == EventTools && len(e.Diff.Removed) > 0 })
	// The two removals may arrive as one coalesced listing or two.
	removed := strings.Join(e.Diff.Removed, ",")
	if removed != "echo,fail" {
		e2 := waitFor(t, events, func(e Event) bool { return e.Kind == EventTools && len(e.Diff.Removed) > 0 })
		removed += "," + strings.Join(e2.Diff.Removed, ",")
	}
	if removed != "echo,fail" && removed != "echo,fail," {
		t.Errorf("removed %q, want echo,fail", removed)
	}
	if n := len(m.Tools()); n != 4 {
		t.Errorf("catalog has %d tools, want 4", n)
	}
}

func TestManyServersCloseWithoutLeaks(t *testing.T) {
	var specs []Spec
	for i := range 20 {
		specs = append(specs, Spec{Name: string(rune('a'+i)) + "srv", Dial: newTestServer().dial(nil)})
	}
	m := New(specs, Options{})
	m.Start(context.Background())
	for _, s := range m.Servers() {
		if s.State != StateReady {
			t.Errorf("%s: %s", s.Name, s.State)
		}
	}
	m.Close()
	m.Close() // idempotent
	// goleak in TestMain checks that nothing was left running.
}
