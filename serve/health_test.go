package serve

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// waitServer is a real MCP server, in process, whose one read, "wait",
// says it started on entered and answers only once release is closed.
func waitServer(entered, release chan struct{}) func(context.Context) (mcp.Transport, error) {
	return func(context.Context) (mcp.Transport, error) {
		srv := mcp.NewServer(&mcp.Implementation{Name: "waiter", Version: "1"}, nil)
		f := false
		srv.AddTool(&mcp.Tool{Name: "wait", InputSchema: json.RawMessage(`{"type":"object"}`),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &f}},
			func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				close(entered)
				select {
				case <-release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "waited"}}}, nil
			})
		st, ct := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(context.Background(), st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}
}

// probe GETs path of url and returns the status code and the body.
func probe(t *testing.T, url, path string) (int, health) {
	t.Helper()
	resp, err := http.Get(url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h health
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatalf("GET %s: the body is not JSON: %v", path, err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("GET %s: Content-Type %q, want application/json", path, ct)
	}
	return resp.StatusCode, h
}

// healthServer serves w's MCP endpoint at /mcp behind the token "tok" and
// its health endpoints beside it, as serve --http mounts them.
func healthServer(t *testing.T, w *world) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/mcp", w.srv.Handler("tok"))
	w.srv.MountHealth(mux)
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts
}

// waitReady waits (bounded) for the first start of every server to end.
func waitReady(t *testing.T, s *Server) {
	t.Helper()
	select {
	case <-s.ready:
	case <-time.After(20 * time.Second):
		t.Fatal("the servers' first start did not end")
	}
}

// Readiness waits for the servers' first start, needs no token and names
// no server; liveness answers all along.
func TestReadinessWaitsForTheServersFirstStart(t *testing.T) {
	hold := make(chan struct{})
	w := newWorld(t, worldOpts{slow: hold})
	ts := healthServer(t, w)
	if code, h := probe(t, ts.URL, ReadyPath); code != http.StatusServiceUnavailable || h.Status != "not ready" || h.Reason != ErrStarting.Error() {
		t.Fatalf("ready while the slow server starts: %d %+v; want 503, %q", code, h, ErrStarting)
	}
	if code, h := probe(t, ts.URL, LivePath); code != http.StatusOK || h.Status != "ok" {
		t.Fatalf("live while starting: %d %+v; want 200 ok", code, h)
	}
	close(hold)
	waitReady(t, w.srv)
	code, h := probe(t, ts.URL, ReadyPath)
	if code != http.StatusOK || h.Status != "ready" || h.Reason != "" {
		t.Fatalf("ready after the first start: %d %+v; want 200 ready", code, h)
	}
	// The MCP endpoint still wants the token.
	resp, err := http.Post(ts.URL+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("/mcp without the token: %d, want 401", resp.StatusCode)
	}
	if resp, err := http.Post(ts.URL+ReadyPath, "text/plain", nil); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST %s: %v %v; want 405", ReadyPath, resp, err)
	} else {
		resp.Body.Close()
	}
}

// A serve whose audit log is not open, or was closed or refuses records,
// is not ready: it could not record a call.
func TestReadinessNeedsAWritableAuditLog(t *testing.T) {
	w := newWorld(t, worldOpts{tweak: func(o *Options) { o.Audit = nil }})
	waitReady(t, w.srv)
	if err := w.srv.Ready(); err != ErrNoAudit {
		t.Fatalf("Ready without an audit log = %v, want %v", err, ErrNoAudit)
	}

	log, err := audit.Open(filepath.Join(t.TempDir(), "audit.jsonl"), audit.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	w = newWorld(t, worldOpts{tweak: func(o *Options) { o.Audit = log }})
	waitReady(t, w.srv)
	if err := w.srv.Ready(); err != nil {
		t.Fatalf("Ready with an open log = %v, want nil", err)
	}
	log.Close()
	ts := healthServer(t, w)
	if code, h := probe(t, ts.URL, ReadyPath); code != http.StatusServiceUnavailable || h.Reason != ErrAuditUnwritten.Error() {
		t.Fatalf("ready with a closed log: %d %+v; want 503, %q", code, h, ErrAuditUnwritten)
	}
}

// Drain: readiness says no at once (a load balancer stops sending), the
// call in flight still runs to its end, its answer reaches the client and
// its outcome is audited; Idle returns only after it, and a Shutdown then
// has nothing left to cancel.
func TestDrainTurnsNotReadyAndLetsTheCallInFlightFinish(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	w := newWorld(t, worldOpts{specs: []client.Spec{{Name: "slow", Dial: waitServer(entered, release)}}})
	ts := healthServer(t, w)
	waitReady(t, w.srv)
	if code, _ := probe(t, ts.URL, ReadyPath); code != http.StatusOK {
		t.Fatalf("ready before the drain: %d, want 200", code)
	}
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	cl := mcp.NewClient(&mcp.Implementation{Name: "lb-client", Version: "1"}, nil)
	cs, err := cl.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{"tok", tr}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow__wait", Arguments: map[string]any{}})
		done <- answer{res, err}
	}()
	select {
	case <-entered:
	case <-time.After(20 * time.Second):
		t.Fatal("the call did not reach the server")
	}

	w.srv.Drain()
	if code, h := probe(t, ts.URL, ReadyPath); code != http.StatusServiceUnavailable || h.Reason != ErrDraining.Error() {
		t.Fatalf("ready while draining: %d %+v; want 503, %q", code, h, ErrDraining)
	}
	if code, _ := probe(t, ts.URL, LivePath); code != http.StatusOK {
		t.Fatalf("live while draining: %d, want 200 (a restart would cut the call)", code)
	}
	short, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	err = w.srv.Idle(short)
	cancel()
	if err == nil {
		t.Fatal("Idle returned nil while the call still ran")
	}
	select {
	case a := <-done:
		t.Fatalf("the call ended before it was released: %+v", a)
	default:
	}

	close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := w.srv.Idle(ctx); err != nil {
		t.Fatalf("Idle after the call could end: %v", err)
	}
	a := <-done
	if a.err != nil || a.res.IsError || text(a.res) != "waited" {
		t.Fatalf("the call in flight: %v %+v; want its own answer", a.err, a.res)
	}
	if err := w.srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown after the drain: %v", err)
	}
	outs := w.outcomes("wait")
	if len(outs) != 1 || outs[0].Status != audit.StatusSuccess {
		t.Fatalf("outcomes of the drained call: %+v; want one success", outs)
	}
}

// TestHealthAnswersOnlyGetAndHead: the endpoints need no token, so they
// answer only reads: any other method, at either path, is 405 with the
// methods allowed and says nothing of serve's state; HEAD is the status
// alone.
func TestHealthAnswersOnlyGetAndHead(t *testing.T) {
	w := newWorld(t, worldOpts{})
	ts := healthServer(t, w)
	waitReady(t, w.srv)
	for _, path := range []string{LivePath, ReadyPath} {
		for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions} {
			req, err := http.NewRequest(method, ts.URL+path, strings.NewReader(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" || strings.Contains(string(body), "status") {
				t.Errorf("%s %s: %s, Allow %q, body %q; want 405, Allow: GET, HEAD, and no status", method, path, resp.Status, resp.Header.Get("Allow"), body)
			}
		}
		resp, err := http.Head(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || len(body) != 0 {
			t.Errorf("HEAD %s: %s with %d bytes, want 200 and no body", path, resp.Status, len(body))
		}
	}
}
