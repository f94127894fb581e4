package serve

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/audit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestOriginAllowed(t *testing.T) {
	for _, c := range []struct {
		origin, host string
		ok           bool
	}{
		{"", "127.0.0.1:8765", true}, // not a browser
		{"http://127.0.0.1:8765", "127.0.0.1:8765", true},
		{"http://localhost:8765", "localhost:8765", true},
		{"https://LOCALHOST:8765", "localhost:8765", true},
		{"http://evil.example:8765", "127.0.0.1:8765", false}, // DNS rebinding: the page's own origin
		{"http://127.0.0.1:9999", "127.0.0.1:8765", false},    // another local page
		{"null", "127.0.0.1:8765", false},
		{"file://", "127.0.0.1:8765", false},
		{"ws://127.0.0.1:8765", "127.0.0.1:8765", false},
	} {
		r := httptest.NewRequest("POST", "http://"+c.host+"/mcp", nil)
		r.Host = c.host
		if c.origin != "" {
			r.Header.Set("Origin", c.origin)
		}
		if got := OriginAllowed(r); got != c.ok {
			t.Errorf("Origin %q to %s: allowed %v, want %v", c.origin, c.host, got, c.ok)
		}
	}
}

func TestGuardNeedsTheTokenAndTheOrigin(t *testing.T) {
	reached := 0
	h := Guard("s3cret", http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached++ }))
	for _, c := range []struct {
		name, auth, origin string
		code               int
	}{
		{"no token", "", "", http.StatusUnauthorized},
		{"wrong token", "Bearer s3cre", "", http.StatusUnauthorized},
		{"not bearer", "s3cret", "", http.StatusUnauthorized},
		{"token", "Bearer s3cret", "", http.StatusOK},
		{"token, foreign origin", "Bearer s3cret", "http://evil.example", http.StatusForbidden},
	} {
		r := httptest.NewRequest("POST", "http://127.0.0.1:8765/mcp", nil)
		if c.auth != "" {
			r.Header.Set("Authorization", c.auth)
		}
		if c.origin != "" {
			r.Header.Set("Origin", c.origin)
		}
		w := httptest.NewRecorder()
		before := reached
		h.ServeHTTP(w, r)
		if w.Code != c.code {
			t.Errorf("%s: status %d, want %d", c.name, w.Code, c.code)
		}
		if passed := reached > before; passed != (c.code == http.StatusOK) {
			t.Errorf("%s: reached the server %v", c.name, passed)
		}
	}
	if Guard("", http.NotFoundHandler()) == nil {
		t.Fatal("nil handler")
	}
	w := httptest.NewRecorder()
	r := httptest.NewRequest("POST", "http://127.0.0.1/mcp", nil)
	r.Header.Set("Authorization", "Bearer ")
	Guard("", http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Error("an empty token let a request through") })).ServeHTTP(w, r)
}

func TestCheckListen(t *testing.T) {
	for _, c := range []struct {
		addr   string
		remote bool
		ok     bool
	}{
		{"127.0.0.1:8765", false, true},
		{"[::1]:8765", false, true},
		{"localhost:0", false, true},
		{"0.0.0.0:8765", false, false},
		{":8765", false, false},
		{"192.168.1.5:8765", false, false},
		{"192.168.1.5:8765", true, true},
		{"8765", false, false},
	} {
		if err := CheckListen(c.addr, c.remote); (err == nil) != c.ok {
			t.Errorf("CheckListen(%q, %v) = %v, want ok %v", c.addr, c.remote, err, c.ok)
		}
	}
}

// Without the token serve listens only where no other machine can reach
// it, and never with --allow-remote.
func TestCheckNoToken(t *testing.T) {
	for _, c := range []struct {
		addr   string
		remote bool
		ok     bool
	}{
		{"127.0.0.1:8765", false, true},
		{"127.0.0.2:0", false, true},
		{"[::1]:8765", false, true},
		{"localhost:0", false, true},
		{"127.0.0.1:8765", true, false},
		{"192.168.1.5:8765", true, false},
		{"192.168.1.5:8765", false, false},
		{"0.0.0.0:8765", false, false},
		{"[::]:8765", false, false},
		{":8765", false, false},
		{"example.com:8765", false, false},
		{"8765", false, false},
	} {
		if err := CheckNoToken(c.addr, c.remote); (err == nil) != c.ok {
			t.Errorf("CheckNoToken(%q, %v) = %v, want ok %v", c.addr, c.remote, err, c.ok)
		}
	}
}

// Without the token a request needs no Authorization, but a browser page
// from elsewhere is still refused.
func TestWithoutTheTokenTheOriginIsStillChecked(t *testing.T) {
	h := newWorld(t, worldOpts{only: "tasks"}).srv.HandlerWithoutToken()
	for _, origin := range []string{"http://evil.example", ""} {
		// A GET without a session reaches the SDK, which refuses it
		// for want of one: anything but 403 and 401 got through.
		r := httptest.NewRequest("GET", "http://127.0.0.1:8765/mcp", nil)
		r.Header.Set("Accept", "text/event-stream")
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if refused := w.Code == http.StatusForbidden; refused != (origin != "") || w.Code == http.StatusUnauthorized {
			t.Errorf("Origin %q: status %d: %s", origin, w.Code, w.Body)
		}
	}
}

func TestLoadTokenCreatesAPrivateFileOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "serve-token")
	tok, created, err := LoadToken(path)
	if err != nil || !created || len(tok) < 20 {
		t.Fatalf("first load: %q %v %v", tok, created, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Fatalf("token file mode %o, want 600", perm)
	}
	again, created, err := LoadToken(path)
	if err != nil || created || again != tok {
		t.Fatalf("second load: %q %v %v, want the same token, not created", again, created, err)
	}
	if err := os.WriteFile(path, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadToken(path); err == nil {
		t.Fatal("an empty token file was accepted")
	}
}

// bearer adds the token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func TestHTTPSessionsAreSeparate(t *testing.T) {
	w := newWorld(t, worldOpts{})
	ts := httptest.NewServer(w.srv.Handler("tok"))
	t.Cleanup(ts.Close) // after the sessions are closed (cleanups run last first)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	connect := func(e *elicitor) *mcp.ClientSession {
		opts := &mcp.ClientOptions{}
		if e != nil {
			opts.ElicitationHandler = e.handle
		}
		cl := mcp.NewClient(&mcp.Implementation{Name: "http-client", Version: "1"}, opts)
		cs, err := cl.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL,
			HTTPClient: &http.Client{Transport: bearer{"tok", tr}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	call := func(cs *mcp.ClientSession) *mcp.CallToolResult {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "flaky__set_value", Arguments: map[string]any{"key": "k", "value": "v"}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	a := connect(&elicitor{answers: []*mcp.ElicitResult{accept(DecisionAllowSession, "")}})
	b := connect(nil)
	if res := call(a); res.IsError {
		t.Fatalf("session a, allowed: %s", text(res))
	}
	if res := call(a); res.IsError {
		t.Fatalf("session a, its session grant: %s", text(res))
	}
	if res := call(b); !res.IsError || !strings.Contains(text(res), "needs a person's approval") {
		t.Fatalf("session b used session a's grant: %s", text(res))
	}
	if n := w.execs("flaky", "set_value"); n != 2 {
		t.Fatalf("ran %d times, want 2", n)
	}

	// Without the token nothing reaches the gate.
	cl := mcp.NewClient(&mcp.Implementation{Name: "no-token", Version: "1"}, nil)
	if cs, err := cl.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: &http.Client{Transport: tr}}, nil); err == nil {
		cs.Close()
		t.Fatal("a client without the token connected")
	}
}

// Many HTTP clients calling at once: every call has exactly one intent and
// one outcome, under its own session, and the chain verifies.
func TestConcurrentHTTPClientsLoseNoAuditRecord(t *testing.T) {
	const clients, calls = 20, 10
	w := newWorld(t, worldOpts{})
	ts := httptest.NewServer(w.srv.Handler("tok"))
	t.Cleanup(ts.Close)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	errs := make(chan error, clients)
	for i := range clients {
		go func() {
			cl := mcp.NewClient(&mcp.Implementation{Name: "load", Version: strconv.Itoa(i)}, nil)
			cs, err := cl.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL,
				HTTPClient: &http.Client{Transport: bearer{"tok", tr}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				errs <- err
				return
			}
			defer cs.Close()
			for range calls {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "flaky__read_value", Arguments: map[string]any{"key": "a"}})
				if err == nil && res.IsError {
					err = fmt.Errorf("refused: %s", text(res))
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range clients {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := w.execs("flaky", "read_value"); n != clients*calls {
		t.Fatalf("read_value ran %d times, want %d", n, clients*calls)
	}
	recs, err := audit.Tail(w.audit, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	sessions := map[string]bool{}
	for _, r := range recs {
		if r.Tool != "read_value" {
			continue
		}
		seen[r.SessionID+"/"+r.CallID+"/"+string(r.Kind)]++
		sessions[r.SessionID] = true
	}
	if len(seen) != 2*clients*calls || len(sessions) != clients {
		t.Fatalf("%d distinct records in %d sessions, want %d in %d", len(seen), len(sessions), 2*clients*calls, clients)
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("record %s written %d times", k, n)
		}
	}
	w.outcomes("read_value") // verifies the chain
}

// A client that starts with 2026-07-28 over HTTP is told which versions
// the stateful server speaks and falls back to 2025-11-25.
func TestHTTPClientOfTheNewProtocolFallsBack(t *testing.T) {
	w := newWorld(t, worldOpts{})
	ts := httptest.NewServer(w.srv.Handler("tok"))
	t.Cleanup(ts.Close)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	cl := mcp.NewClient(&mcp.Implementation{Name: "new", Version: "1"}, nil)
	cs, err := cl.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL,
		HTTPClient: &http.Client{Transport: bearer{"tok", tr}}}, nil)
	if err != nil {
		t.Fatalf("a 2026-07-28 client could not connect over HTTP: %v", err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Errorf("negotiated %q, want 2025-11-25", v)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "flaky__read_value", Arguments: map[string]any{"key": "a"}})
	if err != nil || res.IsError {
		t.Fatalf("read: %v %s", err, text(res))
	}
}
