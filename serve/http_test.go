package serve

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

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
		{"http://[::1]:8765", "[::1]:8765", true}, {"http://[::1]:8765", "[::1]:9999", false},
		{"http://127.0.0.1", "127.0.0.1:80", true}, {"https://127.0.0.1", "127.0.0.1:80", false}, // one origin, the default port written out or not
		{"https://127.0.0.1:443", "127.0.0.1", true}, {"http://127.0.0.1:443", "127.0.0.1", false},
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

// TestRefusedOriginIsEscaped: the 403 names the Origin a browser sent,
// escaped and bounded, never as written (it is anyone's words).
func TestRefusedOriginIsEscaped(t *testing.T) {
	h := Guard("s3cret", http.NotFoundHandler())
	r := httptest.NewRequest("POST", "http://127.0.0.1:8765/mcp", nil)
	r.Header.Set("Authorization", "Bearer s3cret")
	r.Header.Set("Origin", "http://evil.example/\x1b]0;owned\x07"+strings.Repeat("a", 5000))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	body := w.Body.String()
	if w.Code != http.StatusForbidden || strings.ContainsRune(body, 0x1b) || strings.ContainsRune(body, 0x07) || len(body) > 400 {
		t.Fatalf("status %d, body %q: want 403 with the Origin escaped and bounded", w.Code, body)
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
		{"127.0.0.2:8765", false, true}, {"app.localhost:8765", false, false}, // a name under .localhost goes to DNS
		{"[::ffff:127.0.0.1]:8765", false, true}, {"[::ffff:10.0.0.1]:8765", false, false},
		{"LOCALHOST:8765", false, true}, {"localhost.:8765", false, false},
	} {
		if err := CheckListen(c.addr, c.remote); (err == nil) != c.ok {
			t.Errorf("CheckListen(%q, %v) = %v, want ok %v", c.addr, c.remote, err, c.ok)
		}
	}
}

// Plain HTTP is served only where no other machine can reach it, unless
// TLS is on or the person passed --insecure-plain-http.
func TestCheckPlainHTTP(t *testing.T) {
	for _, c := range []struct {
		addr       string
		tls, plain bool
		ok         bool
	}{
		{"127.0.0.1:8765", false, false, true},
		{"[::1]:8765", false, false, true},
		{"localhost:8765", false, false, true},
		{"0.0.0.0:8765", false, false, false},
		{":8765", false, false, false},
		{"192.168.1.5:8765", false, false, false},
		{"example.com:8765", false, false, false},
		{"192.168.1.5:8765", true, false, true},
		{"0.0.0.0:8765", true, false, true},
		{"192.168.1.5:8765", false, true, true},
		{"8765", false, false, false},
		{"127.0.0.2:8765", false, false, true}, {"app.localhost:8765", false, false, false},
		{"[::ffff:127.0.0.1]:8765", false, false, true}, {"[::ffff:10.0.0.1]:8765", false, false, false},
	} {
		err := CheckPlainHTTP(c.addr, c.tls, c.plain)
		if (err == nil) != c.ok {
			t.Errorf("CheckPlainHTTP(%q, tls %v, plain %v) = %v, want ok %v", c.addr, c.tls, c.plain, err, c.ok)
		}
		if err != nil && c.addr != "8765" && !strings.Contains(err.Error(), "--tls-cert FILE --tls-key FILE, or pass --insecure-plain-http") {
			t.Errorf("CheckPlainHTTP(%q): %v, want the fix named", c.addr, err)
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
		{"[::ffff:127.0.0.1]:8765", false, true}, {"app.localhost:8765", false, false},
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
	if di, err := os.Stat(filepath.Dir(path)); err != nil || di.Mode().Perm() != 0o700 {
		t.Fatalf("the token's new directory: %v %v, want mode 700", di.Mode(), err)
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

// httpWorld serves w over HTTP with the token "tok" and connects clients
// to it: version "" is the SDK's newest (2026-07-28).
type httpWorld struct {
	*world
	url string
	tr  *http.Transport
}

func newHTTPWorld(t *testing.T) *httpWorld {
	w := newWorld(t, worldOpts{})
	ts := httptest.NewServer(w.srv.Handler("tok"))
	t.Cleanup(ts.Close) // after the sessions are closed (cleanups run last first)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &httpWorld{world: w, url: ts.URL, tr: tr}
}

func (h *httpWorld) connect(name string, e *elicitor, co connOpts) *mcp.ClientSession {
	h.t.Helper()
	opts := &mcp.ClientOptions{}
	if e != nil {
		opts.ElicitationHandler = e.handle
	}
	if co.byHand {
		opts.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
	}
	if co.changed != nil {
		opts.ResourceListChangedHandler = func(context.Context, *mcp.ResourceListChangedRequest) {
			select {
			case co.changed <- struct{}{}:
			default:
			}
		}
	}
	cl := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, opts)
	cs, err := cl.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: h.url,
		HTTPClient: &http.Client{Transport: bearer{"tok", h.tr}}}, &mcp.ClientSessionOptions{ProtocolVersion: co.version})
	if err != nil {
		h.t.Fatalf("connect %s at %q: %v", name, co.version, err)
	}
	h.t.Cleanup(func() { cs.Close() })
	return cs
}

func callArgs(t *testing.T, cs *mcp.ClientSession, p *mcp.CallToolParams) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func setValue(t *testing.T, cs *mcp.ClientSession, value string) *mcp.CallToolResult {
	t.Helper()
	return callArgs(t, cs, &mcp.CallToolParams{Name: "flaky__set_value", Arguments: map[string]any{"key": "k", "value": value}})
}

// A 2026-07-28 client over HTTP is served at its own version, and a call
// that needs a person is asked through an input-required result: declined,
// it never runs; accepted, it runs once.
func TestHTTPClientOfTheNewProtocolIsAskedWithInputRequired(t *testing.T) {
	h := newHTTPWorld(t)
	e := &elicitor{answers: []*mcp.ElicitResult{{Action: "decline"}, accept(DecisionAllowOnce, "")}}
	cs := h.connect("new", e, connOpts{})
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %q, want 2026-07-28", v)
	}
	if res := setValue(t, cs, "v"); !res.IsError {
		t.Fatal("a declined call ran")
	}
	if n := h.execs("flaky", "set_value"); n != 0 {
		t.Fatalf("a declined call ran %d times", n)
	}
	if res := setValue(t, cs, "v"); res.IsError {
		t.Fatalf("an accepted call was refused: %s", text(res))
	}
	if e.count() != 2 || h.execs("flaky", "set_value") != 1 {
		t.Fatalf("asked %d times, ran %d times; want 2 and 1", e.count(), h.execs("flaky", "set_value"))
	}
	if res := setValue(t, cs, "v"); !res.IsError {
		t.Fatal("allow-once let a second call run") // the elicitor declines when out of answers
	}
	if n := h.execs("flaky", "set_value"); n != 1 {
		t.Fatalf("ran %d times, want 1", n)
	}
}

// The state of a stateless client (grants, taint) belongs to its identity
// (clientInfo name and version) for serve's life, not to the SDK's
// one-request session; another identity has its own, and a 2025-11-25
// client on the same listener keeps its session's grants.
func TestHTTPStatelessClientsAreKeyedByIdentity(t *testing.T) {
	h := newHTTPWorld(t)
	ea := &elicitor{answers: []*mcp.ElicitResult{accept(DecisionAllowSession, "")}}
	a := h.connect("new-a", ea, connOpts{})
	for i := range 2 {
		if res := setValue(t, a, "v"); res.IsError {
			t.Fatalf("call %d of new-a: %s", i, text(res))
		}
	}
	if ea.count() != 1 {
		t.Fatalf("new-a was asked %d times, want once: its session grant did not last past one request", ea.count())
	}
	// The same identity connecting again is the same client to serve.
	again := h.connect("new-a", &elicitor{}, connOpts{})
	if res := setValue(t, again, "v"); res.IsError {
		t.Fatalf("new-a again lost its grant: %s", text(res))
	}
	eb := &elicitor{}
	b := h.connect("new-b", eb, connOpts{})
	if res := setValue(t, b, "v"); !res.IsError || eb.count() != 1 {
		t.Fatalf("new-b used new-a's grant (asked %d times): %s", eb.count(), text(res))
	}
	eo := &elicitor{answers: []*mcp.ElicitResult{accept(DecisionAllowSession, "")}}
	old := h.connect("old", eo, connOpts{version: "2025-11-25"})
	if v := old.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Fatalf("old client negotiated %q", v)
	}
	for i := range 2 {
		if res := setValue(t, old, "v"); res.IsError {
			t.Fatalf("call %d of the 2025-11-25 client: %s", i, text(res))
		}
	}
	if eo.count() != 1 {
		t.Fatalf("the 2025-11-25 client was asked %d times, want once: it lost its session grant", eo.count())
	}
	if n := h.execs("flaky", "set_value"); n != 5 {
		t.Fatalf("set_value ran %d times, want 5", n)
	}
	sessions := map[string]map[string]bool{}
	for _, r := range h.outcomes("set_value") {
		if r.Client == nil || r.Client.Session == "" {
			t.Fatalf("an outcome names no client: %+v", r)
		}
		if sessions[r.Client.Name] == nil {
			sessions[r.Client.Name] = map[string]bool{}
		}
		sessions[r.Client.Name][r.SessionID] = true
	}
	for name, ids := range sessions {
		if len(ids) != 1 {
			t.Errorf("%s's calls are in %d serve sessions, want one: %v", name, len(ids), ids)
		}
	}
	if len(sessions) != 3 {
		t.Errorf("outcomes name clients %v, want new-a, new-b and old", sessions)
	}
}

// Over HTTP as on stdio, an answer approves only the call it was asked
// about, once, and only for the identity it was asked of.
func TestHTTPAnAnswerIsBoundToTheStatelessIdentity(t *testing.T) {
	h := newHTTPWorld(t)
	a := h.connect("new-a", &elicitor{}, connOpts{byHand: true})
	b := h.connect("new-b", &elicitor{}, connOpts{byHand: true})
	args := map[string]any{"key": "k", "value": "harmless"}
	first := callArgs(t, a, &mcp.CallToolParams{Name: "flaky__set_value", Arguments: args})
	if !first.NeedsInput() || first.InputRequests[approvalInput] == nil || first.RequestState == "" {
		t.Fatalf("first round %+v, want mcphost's question as an input request", first)
	}
	yes := mcp.InputResponseMap{approvalInput: accept(DecisionAllowOnce, "")}
	for _, c := range []struct {
		name  string
		cs    *mcp.ClientSession
		args  map[string]any
		state string
	}{
		{"another identity", b, args, first.RequestState},
		{"other arguments", a, map[string]any{"key": "k", "value": "harmful"}, first.RequestState},
		{"forged state", a, args, first.RequestState[:len(first.RequestState)-2] + "xx"},
		{"no state", a, args, ""},
	} {
		res := callArgs(t, c.cs, &mcp.CallToolParams{Name: "flaky__set_value", Arguments: c.args, InputResponses: yes, RequestState: c.state})
		if !res.IsError {
			t.Fatalf("%s: an answer given for another call approved this one", c.name)
		}
	}
	if n := h.execs("flaky", "set_value"); n != 0 {
		t.Fatalf("set_value ran %d times on answers bound to another call", n)
	}
	for i := range 2 {
		res := callArgs(t, a, &mcp.CallToolParams{Name: "flaky__set_value", Arguments: args, InputResponses: yes, RequestState: first.RequestState})
		if i == 0 && res.IsError {
			t.Fatalf("the answer to this very call was refused: %s", text(res))
		}
		if i == 1 && !res.IsError {
			t.Fatal("a replayed answer ran the call again")
		}
	}
	if n := h.execs("flaky", "set_value"); n != 1 {
		t.Fatalf("set_value ran %d times, want 1", n)
	}
}

func TestNewProtocolRoutesOnlyWhatSaysSo(t *testing.T) {
	meta := func(v string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"` + v + `"}}}`
	}
	for _, c := range []struct {
		name, method, header, body string
		want                       bool
	}{
		{"2025 session call", "POST", "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`, false},
		{"initialize", "POST", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2026-07-28"}}`, false},
		{"old meta", "POST", "", meta("2025-11-25"), false},
		{"GET stream", "GET", "2025-11-25", "", false},
		{"batch", "POST", "", "[" + meta("2026-07-28") + "]", false},
		{"header", "POST", "2026-07-28", `{}`, true},
		{"meta", "POST", "", meta("2026-07-28"), true},
		{"header and meta", "POST", "2026-07-28", meta("2026-07-28"), true},
		{"old header decides", "POST", "2025-11-25", meta("2026-07-28"), false},
	} {
		r := httptest.NewRequest(c.method, "http://127.0.0.1/mcp", strings.NewReader(c.body))
		if c.header != "" {
			r.Header.Set("MCP-Protocol-Version", c.header)
		}
		if got := NewProtocol(r); got != c.want {
			t.Errorf("%s: new protocol %v, want %v", c.name, got, c.want)
		}
		if b, _ := io.ReadAll(r.Body); string(b) != c.body {
			t.Errorf("%s: the handler gets body %q, want %q", c.name, b, c.body)
		}
	}
	// A request of a session is the session's protocol, whatever its body.
	r0 := httptest.NewRequest("POST", "http://127.0.0.1/mcp", strings.NewReader(meta("2026-07-28")))
	r0.Header.Set("Mcp-Session-Id", "S1")
	if NewProtocol(r0) {
		t.Error("a request of a 2025-11-25 session was routed to the stateless handler")
	}
	big := meta("2026-07-28") + strings.Repeat(" ", maxPeek)
	r := httptest.NewRequest("POST", "http://127.0.0.1/mcp", strings.NewReader(big))
	if NewProtocol(r) {
		t.Error("a body past the bound was read to its end")
	}
	if b, _ := io.ReadAll(r.Body); len(b) != len(big) {
		t.Errorf("the handler gets %d bytes of a %d-byte body", len(b), len(big))
	}
}

// serve keeps the state of at most MaxStatelessClients identities and
// drops none of them (that would drop its taint): one more is refused, and
// the first is still served.
func TestHTTPStatelessIdentitiesAreBounded(t *testing.T) {
	h := newHTTPWorld(t)
	read := func(cs *mcp.ClientSession) *mcp.CallToolResult {
		return callArgs(t, cs, &mcp.CallToolParams{Name: "flaky__read_value", Arguments: map[string]any{"key": "a"}})
	}
	var first *mcp.ClientSession
	for i := range MaxStatelessClients {
		cs := h.connect("load-"+strconv.Itoa(i), nil, connOpts{})
		if res := read(cs); res.IsError {
			t.Fatalf("identity %d: %s", i, text(res))
		}
		if i == 0 {
			first = cs
		}
	}
	over := h.connect("one-more", nil, connOpts{})
	if res := read(over); !res.IsError || !strings.Contains(text(res), "client identities") {
		t.Fatalf("identity %d was served: %s", MaxStatelessClients+1, text(res))
	}
	if res := read(first); res.IsError {
		t.Fatalf("the first identity was dropped: %s", text(res))
	}
	if n := h.execs("flaky", "read_value"); n != MaxStatelessClients+1 {
		t.Fatalf("read_value ran %d times, want %d", n, MaxStatelessClients+1)
	}
}

// Both protocol versions are served by the one mcp.Server, so a 2025-11-25
// and a 2026-07-28 client on the same listener are offered the same tools,
// prompts and resources.
func TestHTTPBothVersionsSeeTheSameOffer(t *testing.T) {
	h := newHTTPWorld(t)
	ctx := context.Background()
	offer := func(cs *mcp.ClientSession) string {
		var names []string
		ts, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range ts.Tools {
			names = append(names, "tool "+tl.Name+" "+hints(tl.Annotations))
		}
		ps, err := cs.ListPrompts(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps.Prompts {
			names = append(names, "prompt "+p.Name)
		}
		rs, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs.Resources {
			names = append(names, "resource "+r.URI)
		}
		return strings.Join(names, "\n")
	}
	changed := make(chan struct{}, 1)
	old := h.connect("old", nil, connOpts{version: "2025-11-25", changed: changed})
	cur := h.connect("new", nil, connOpts{})
	// The prompt and the resource arrive once their server is ready.
	deadline := time.After(10 * time.Second)
	for !strings.Contains(offer(old), "resource note://poison/1") {
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("the poison server's resource never arrived:\n%s", offer(old))
		}
	}
	a, b := offer(old), offer(cur)
	if a != b || !strings.Contains(a, "tool flaky__set_value") || !strings.Contains(a, "prompt poison__review") {
		t.Fatalf("2025-11-25 is offered\n%s\n\n2026-07-28 is offered\n%s", a, b)
	}
	r, err := cur.ReadResource(ctx, &mcp.ReadResourceParams{URI: "note://poison/1"})
	if err != nil || r.Contents[0].Text != "note body" {
		t.Fatalf("2026-07-28 read: %v %+v", err, r)
	}
}

// An HTTP session that sends nothing for SessionTimeout is closed, its
// state with it, so that sessions opened and left cannot grow serve without
// bound; a session that keeps sending stays.
func TestHTTPIdleSessionsExpire(t *testing.T) {
	const idle = time.Second
	w := newWorld(t, worldOpts{tweak: func(o *Options) { o.SessionTimeout = idle }})
	ts := httptest.NewServer(w.srv.Handler("tok"))
	t.Cleanup(ts.Close)
	post := func(session, body string) *http.Response {
		t.Helper()
		r, err := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Authorization", "Bearer tok")
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			r.Header.Set("Mcp-Session-Id", session)
			r.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		res, err := ts.Client().Do(r)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}
	open := func() string {
		t.Helper()
		res := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"idle","version":"1"}}}`)
		id := res.Header.Get("Mcp-Session-Id")
		if res.StatusCode != http.StatusOK || id == "" {
			t.Fatalf("initialize: status %d, session %q", res.StatusCode, id)
		}
		if res := post(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); res.StatusCode/100 != 2 {
			t.Fatalf("initialized: status %d", res.StatusCode)
		}
		return id
	}
	live := func() int { return len(slices.Collect(w.srv.srv.Sessions())) }
	left, busy := open(), open()
	// busy pings at a tenth of the timeout until left is gone: it is
	// never idle for long, so it must outlive left.
	deadline := time.Now().Add(20 * time.Second) // only keeps a broken build from hanging
	for n := 2; live() > 1; n++ {
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions still open long after the idle timeout of %s", live(), idle)
		}
		if res := post(busy, `{"jsonrpc":"2.0","id":`+strconv.Itoa(n)+`,"method":"ping"}`); res.StatusCode != http.StatusOK {
			t.Fatalf("the busy session's ping: status %d, want 200: it was closed although it kept sending", res.StatusCode)
		}
		time.Sleep(idle / 10) // the pace of the busy client's requests, not a wait for a result
	}
	if res := post(left, `{"jsonrpc":"2.0","id":9,"method":"ping"}`); res.StatusCode != http.StatusNotFound {
		t.Fatalf("a request of the expired session: status %d, want 404 (the session is gone)", res.StatusCode)
	}
	if res := post(busy, `{"jsonrpc":"2.0","id":10,"method":"ping"}`); res.StatusCode != http.StatusOK {
		t.Fatalf("the busy session after the idle one expired: status %d, want 200", res.StatusCode)
	}
	// The client that stays ends its session, as a client does on leaving.
	r, _ := http.NewRequest(http.MethodDelete, ts.URL, nil)
	r.Header.Set("Authorization", "Bearer tok")
	r.Header.Set("Mcp-Session-Id", busy)
	if res, err := ts.Client().Do(r); err != nil || res.StatusCode/100 != 2 {
		t.Fatalf("ending the busy session: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	for live() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the ended session is still open")
		}
		time.Sleep(10 * time.Millisecond) // polling the SDK's session list
	}
}
