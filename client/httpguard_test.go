package client

// Hostile HTTP servers: what a remote server can make mcphost send, post or
// hold. Every server here binds loopback; 127.0.0.2 is the other origin.

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcphost/mcphost/fixtures"
)

// serveOn starts h on host (an address of this machine), plain or TLS.
func serveOn(t *testing.T, host string, tls bool, h http.Handler) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", host+":0")
	if err != nil {
		t.Fatalf("listen on %s: %v", host, err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = ln
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv
}

// recorder is a server on another origin that must never be reached: it
// keeps what it was sent.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string // "METHOD path X-Api-Key=… Authorization=… body"
}

func newRecorder(t *testing.T, host string) *recorder {
	r := &recorder{}
	r.Server = serveOn(t, host, false, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(req.Body, 4096))
		r.mu.Lock()
		r.seen = append(r.seen, fmt.Sprintf("%s %s X-Api-Key=%s Authorization=%s %s", req.Method, req.URL.Path,
			req.Header.Get("X-Api-Key"), req.Header.Get("Authorization"), body))
		r.mu.Unlock()
		http.Error(w, "gotcha", http.StatusTeapot)
	}))
	return r
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

// intercept serves the flaky fixture over streamable HTTP, except that the
// POSTs and GETs hook claims (it returns true) are answered by hook.
func intercept(t *testing.T, hook func(w http.ResponseWriter, r *http.Request, body []byte) bool) (http.Handler, *fixtures.Fixture) {
	t.Helper()
	f, err := fixtures.New("flaky", fixtures.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := f.HTTPHandler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if r.Method == http.MethodPost {
			body, _ = io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		if hook(w, r, body) {
			return
		}
		h.ServeHTTP(w, r)
	}), f
}

func isToolsCall(r *http.Request, body []byte) bool {
	return r.Method == http.MethodPost && bytes.Contains(body, []byte(`"method":"tools/call"`))
}

var secretHeaders = map[string]string{"X-Api-Key": "key-123", "Authorization": "Bearer tok-456"}

func checkNotReached(t *testing.T, r *recorder) {
	t.Helper()
	if got := r.requests(); len(got) > 0 {
		t.Errorf("the other origin received %q", got)
	}
}

// TestRedirectOffOriginRefused: a call, the handshake or the event stream
// redirected to another origin (another host, another port, https to http)
// is refused, naming both origins; the other origin receives nothing, so
// neither the configured headers nor the arguments leave.
func TestRedirectOffOriginRefused(t *testing.T) {
	other := newRecorder(t, "127.0.0.2")
	otherPort := newRecorder(t, "127.0.0.1")
	for _, c := range []struct {
		name  string
		tls   bool
		to    *recorder
		what  string // "call", "initialize" or "get"
		check func(t *testing.T, m *Manager, origin string)
	}{
		{name: "call to another host", to: other, what: "call"},
		{name: "call to another port", to: otherPort, what: "call"},
		{name: "https call to http", tls: true, to: otherPort, what: "call"},
		{name: "initialize", to: other, what: "initialize"},
		{name: "event stream", to: other, what: "get"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var (
				mu        sync.Mutex
				redirects int
			)
			h, _ := intercept(t, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
				hit := c.what == "call" && isToolsCall(r, body) && bytes.Contains(body, []byte(`"set_value"`)) ||
					c.what == "initialize" && bytes.Contains(body, []byte(`"method":"initialize"`)) ||
					c.what == "get" && r.Method == http.MethodGet
				if hit {
					mu.Lock()
					redirects++
					mu.Unlock()
					w.Header().Set("Content-Type", "text/html")
					w.Header().Set("Location", c.to.URL+"/steal")
					w.WriteHeader(http.StatusTemporaryRedirect)
					io.WriteString(w, "<a href=elsewhere>moved</a>")
				}
				return hit
			})
			srv := serveOn(t, "127.0.0.1", c.tls, h)
			base := srv.Client().Transport.(*http.Transport).Clone()
			t.Cleanup(base.CloseIdleConnections)
			m := New([]Spec{{Name: "s", Transport: TransportHTTP, URL: srv.URL + "/mcp", Headers: secretHeaders}},
				Options{HTTPTransport: base, MaxCrashes: 1})
			t.Cleanup(func() { m.Close() })
			events, unsub := m.Subscribe()
			defer unsub()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			m.Start(ctx)
			origin := srv.URL
			switch c.what {
			case "initialize":
				st := m.Servers()[0]
				if st.State != StateFailed || !strings.Contains(st.LastError, "refused a redirect from "+origin+" to "+c.to.URL) {
					t.Errorf("server %s (%q), want failed naming both origins", st.State, st.LastError)
				}
			case "call":
				r := m.Call(context.Background(), "s", "set_value", json.RawMessage(`{"key":"k","value":"secret-arg"}`), CallOptions{})
				if r.Outcome != OutcomeUnknown || r.Detail != "redirect refused" || r.Err == nil ||
					!strings.Contains(r.Err.Error(), `Post "`+srv.URL+`/mcp": refused a redirect from `+origin+" to "+c.to.URL) ||
					!strings.Contains(r.Err.Error(), `HTTP 307, text/html, body begins "<a href=elsewhere>moved</a>"`) {
					t.Errorf("call: %s (%s): %v; want unknown, the redirect refused naming both origins and the answer", r.Outcome, r.Detail, r.Err)
				}
				callOK(t, m, "s", "read_value", `{"key":"k"}`) // the session survived
			case "get":
				// The refused stream breaks the session; the server is
				// restarted once and then given up on (MaxCrashes 1).
				e := waitFor(t, events, func(e Event) bool { return e.Kind == EventState && e.State == StateFailed })
				if !strings.Contains(e.Err, "refused a redirect from "+origin+" to "+c.to.URL) {
					t.Errorf("stream failure %q does not name both origins", e.Err)
				}
			}
			mu.Lock()
			n := redirects
			mu.Unlock()
			if n == 0 {
				t.Fatal("the server never redirected; the test proves nothing")
			}
			checkNotReached(t, c.to)
		})
	}
}

// TestRedirectWithinOriginFollowed: a redirect to another path on the same
// origin is followed, with the configured headers.
func TestRedirectWithinOriginFollowed(t *testing.T) {
	var (
		mu   sync.Mutex
		keys []string
	)
	h, _ := intercept(t, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		mu.Lock()
		keys = append(keys, r.Method+" "+r.URL.Path+" "+r.Header.Get("X-Api-Key"))
		mu.Unlock()
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/mcp", http.StatusPermanentRedirect)
			return true
		}
		return false
	})
	srv := serveOn(t, "127.0.0.1", false, h)
	m := startManager(t, []Spec{{Name: "s", Transport: TransportHTTP, URL: srv.URL + "/old", Headers: secretHeaders}},
		Options{HTTPTransport: httpTransport(t)})
	callOK(t, m, "s", "set_value", `{"key":"k","value":"v"}`)
	mu.Lock()
	defer mu.Unlock()
	var followed bool
	for _, k := range keys {
		if !strings.HasSuffix(k, " key-123") {
			t.Errorf("request %q arrived without the configured header", k)
		}
		followed = followed || strings.HasPrefix(k, "POST /mcp ")
	}
	if !followed {
		t.Errorf("requests %q: the redirect was not followed", keys)
	}
}

// TestGuardRefusesOtherOrigins: beneath the redirect policy, the transport
// itself sends nothing to another origin — not the configured headers, not
// the body — whatever client drives it.
func TestGuardRefusesOtherOrigins(t *testing.T) {
	other := newRecorder(t, "127.0.0.2")
	g, err := newHTTPGuard(httpTransport(t), "http://127.0.0.1:1/mcp", secretHeaders)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: g}).Post(other.URL+"/steal", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`))
	if err == nil {
		resp.Body.Close()
	}
	want := "refused to send a request to " + other.URL + ": the server is configured at http://127.0.0.1:1"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want %q", err, want)
	}
	checkNotReached(t, other)
}

// TestCheckRedirectPolicy: the client's own redirect policy, under the
// guard's, follows redirects within the origin only, and not forever.
func TestCheckRedirectPolicy(t *testing.T) {
	g, err := newHTTPGuard(http.DefaultTransport, "https://127.0.0.1:8443/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	req := func(u string) *http.Request {
		r, err := http.NewRequest(http.MethodPost, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	via := []*http.Request{req("https://127.0.0.1:8443/mcp")}
	if err := g.checkRedirect(req("https://127.0.0.1:8443/other"), via); err != nil {
		t.Errorf("a redirect within the origin: %v", err)
	}
	for _, to := range []string{"http://127.0.0.1:8443/mcp", "https://127.0.0.1:9443/mcp", "https://127.0.0.2:8443/mcp"} {
		err := g.checkRedirect(req(to), via)
		if err == nil || !strings.Contains(err.Error(), "refused a redirect from https://127.0.0.1:8443 to ") {
			t.Errorf("redirect to %s: %v, want refused", to, err)
		}
	}
	if err := g.checkRedirect(req("https://127.0.0.1:8443/again"), make([]*http.Request, maxRedirects)); err == nil {
		t.Errorf("redirect %d was followed", maxRedirects+1)
	}
}

// TestSSEEndpointOnOtherOrigin: a legacy SSE server whose endpoint event
// names another origin fails to start, saying so; nothing is posted there.
func TestSSEEndpointOnOtherOrigin(t *testing.T) {
	other := newRecorder(t, "127.0.0.2")
	for _, endpoint := range []string{other.URL + "/steal?session=1", "//" + strings.TrimPrefix(other.URL, "http://") + "/steal"} {
		t.Run(endpoint, func(t *testing.T) {
			srv := serveOn(t, "127.0.0.1", false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodGet {
					http.Error(w, "no", http.StatusMethodNotAllowed)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, ": hello\n\nevent: endpoint\ndata: %s\n\n", endpoint)
				w.(http.Flusher).Flush()
				<-r.Context().Done()
			}))
			m := startManager(t, []Spec{{Name: "legacy", Transport: TransportSSE, URL: srv.URL + "/sse", Headers: secretHeaders}},
				Options{HTTPTransport: httpTransport(t)})
			st := m.Servers()[0]
			want := "the SSE server at " + srv.URL + " names an endpoint on another origin, " + other.URL
			if st.State != StateFailed || !strings.Contains(st.LastError, want) {
				t.Errorf("server %s (%q), want failed with %q", st.State, st.LastError, want)
			}
			checkNotReached(t, other)
		})
	}
}

// gzipOf compresses n bytes of b.
func gzipOf(t testing.TB, b byte, n int) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	chunk := bytes.Repeat([]byte{b}, 1<<20)
	for n > 0 {
		k := min(n, len(chunk))
		zw.Write(chunk[:k])
		n -= k
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestOversizedAnswerFailsThatCallOnly: an answer over the bound on one
// message — a huge JSON body, a gzip bomb, a huge event — fails that call
// as unknown (it may have run), and other servers keep working.
func TestOversizedAnswerFailsThatCallOnly(t *testing.T) {
	bomb := gzipOf(t, ' ', 2*maxMessage)
	huge := `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", sdkEventCap+64<<10) + `"}]}}` // past the SDK's bound too
	for _, c := range []struct {
		name   string
		answer func(w http.ResponseWriter, id string)
	}{
		{"json body", func(w http.ResponseWriter, id string) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, huge, id)
		}},
		{"gzip bomb", func(w http.ResponseWriter, id string) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(bomb)
		}},
		{"event", func(w http.ResponseWriter, id string) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: "+huge+"\n\n", id)
		}},
		{"line that does not end", func(w http.ResponseWriter, id string) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: message\ndata: ")
			io.WriteString(w, strings.Repeat("x", sdkEventCap+64<<10))
		}},
		{"event of many lines", func(w http.ResponseWriter, id string) {
			w.Header().Set("Content-Type", "text/event-stream")
			line := "data: " + strings.Repeat("x", 1<<20) + "\n"
			io.WriteString(w, "event: message\n")
			for range 20 {
				io.WriteString(w, line)
			}
			io.WriteString(w, "\n")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, f := intercept(t, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
				if !isToolsCall(r, body) || !bytes.Contains(body, []byte(`"set_value"`)) {
					return false
				}
				var msg struct{ ID json.RawMessage }
				json.Unmarshal(body, &msg)
				c.answer(w, string(msg.ID))
				return true
			})
			srv := serveOn(t, "127.0.0.1", false, h)
			good, _ := intercept(t, func(http.ResponseWriter, *http.Request, []byte) bool { return false })
			goodSrv := serveOn(t, "127.0.0.1", false, good)
			m := startManager(t, []Spec{
				{Name: "big", Transport: TransportHTTP, URL: srv.URL + "/mcp"},
				{Name: "good", Transport: TransportHTTP, URL: goodSrv.URL + "/mcp"},
			}, Options{HTTPTransport: httpTransport(t)})
			r := m.Call(context.Background(), "big", "set_value", json.RawMessage(`{"key":"k","value":"v"}`), CallOptions{})
			if r.Outcome != OutcomeUnknown || r.Detail != "answer over the size limit" || r.Err == nil || !strings.Contains(r.Err.Error(), "larger than 16777216 bytes") {
				t.Errorf("call: %s (%s: %v), want unknown, answer over the size limit", r.Outcome, r.Detail, r.Err)
			}
			if n := countLog(f.Log(), fixtures.EventExec, ""); n != 0 {
				t.Errorf("%d executions: the hook should have answered in the server's place", n)
			}
			callOK(t, m, "good", "set_value", `{"key":"k","value":"v"}`)
		})
	}
}

// TestUnaskedEncodingRefused: a body in an encoding mcphost did not ask
// for is refused, not handed on compressed or inflated.
func TestUnaskedEncodingRefused(t *testing.T) {
	bomb := gzipOf(t, ' ', 1<<20)
	h, _ := intercept(t, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if !isToolsCall(r, body) {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(bomb)
		return true
	})
	srv := serveOn(t, "127.0.0.1", false, h)
	tr := &http.Transport{DisableCompression: true} // so nothing inflates it on the way
	t.Cleanup(tr.CloseIdleConnections)
	m := startManager(t, []Spec{{Name: "s", Transport: TransportHTTP, URL: srv.URL + "/mcp"}}, Options{HTTPTransport: tr})
	r := m.Call(context.Background(), "s", "set_value", json.RawMessage(`{"key":"k","value":"v"}`), CallOptions{})
	if r.Outcome != OutcomeUnknown || r.Err == nil || !strings.Contains(r.Err.Error(), `"gzip" content encoding, which mcphost did not ask for`) {
		t.Errorf("call: %s (%s: %v), want unknown, the encoding refused", r.Outcome, r.Detail, r.Err)
	}
}

// TestEndlessEventOnStreamIsCut: an event that never ends on the background
// GET stream is cut at the bound, not held: the server writes no more than
// the bound and what sockets buffer before mcphost hangs up.
func TestEndlessEventOnStreamIsCut(t *testing.T) {
	const ceiling = 64 << 20 // what the server is willing to write per stream
	var (
		mu      sync.Mutex
		written []int
	)
	h, _ := intercept(t, func(w http.ResponseWriter, r *http.Request, _ []byte) bool {
		if r.Method != http.MethodGet {
			return false
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message\ndata: ")
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		n := 0
		for n < ceiling {
			k, err := w.Write(chunk)
			n += k
			if err != nil {
				break
			}
		}
		mu.Lock()
		written = append(written, n)
		mu.Unlock()
		if n >= ceiling {
			<-r.Context().Done() // the client held it all
		}
		return true
	})
	srv := serveOn(t, "127.0.0.1", false, h)
	m := New([]Spec{{Name: "s", Transport: TransportHTTP, URL: srv.URL + "/mcp"}}, Options{HTTPTransport: httpTransport(t), MaxCrashes: 1})
	t.Cleanup(func() { m.Close() })
	events, unsub := m.Subscribe()
	defer unsub()
	m.Start(context.Background())
	e := waitFor(t, events, func(e Event) bool { return e.Kind == EventState && e.State == StateFailed })
	if !strings.Contains(e.Err, "exceeded "+strconv.Itoa(sdkEventCap)+" bytes") {
		t.Errorf("the stream failed with %q, want the bound named", e.Err)
	}
	m.Close()
	mu.Lock()
	defer mu.Unlock()
	for _, n := range written {
		if n >= ceiling {
			t.Errorf("the server wrote %d bytes into one event unhindered", n)
		}
	}
}

// TestUnexpectedAnswersAreDescribed: an answer that is no MCP message is
// reported with its status, content type and first bytes, escaped.
func TestUnexpectedAnswersAreDescribed(t *testing.T) {
	for _, c := range []struct {
		name, ct, body string
		status         int
		want           string
	}{
		{"html page", "text/html; charset=utf-8", "<html><title>Sign in</title>", 200, `the server answered HTTP 200, text/html, body begins "<html><title>Sign in</title>": it is not an MCP message`},
		{"json that is not", "application/json", "\x1b[31mnot json", 200, `the server answered HTTP 200, application/json, body begins "\\x1b[31mnot json": its body is not JSON`},
		{"proxy error page", "text/html", "<h1>Bad Gateway</h1>", 502, `the server answered HTTP 502, text/html, body begins "<h1>Bad Gateway</h1>": it is an error page`},
		{"plain text", "", "oops", 500, `the server answered HTTP 500, text/plain, body begins "oops"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			answer := func(w http.ResponseWriter) {
				if c.ct != "" {
					w.Header().Set("Content-Type", c.ct)
				}
				w.WriteHeader(c.status)
				io.WriteString(w, c.body)
			}
			h, _ := intercept(t, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
				if isToolsCall(r, body) {
					answer(w)
					return true
				}
				return false
			})
			srv := serveOn(t, "127.0.0.1", false, h)
			init := serveOn(t, "127.0.0.1", false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { answer(w) }))
			m := startManager(t, []Spec{
				{Name: "s", Transport: TransportHTTP, URL: srv.URL + "/mcp"},
				{Name: "init", Transport: TransportHTTP, URL: init.URL + "/mcp"},
			}, Options{HTTPTransport: httpTransport(t)})
			r := m.Call(context.Background(), "s", "set_value", json.RawMessage(`{"key":"k","value":"v"}`), CallOptions{})
			if detail := fmt.Sprintf("HTTP %d %s", c.status, mediaType(c.ct)); r.Err == nil || !strings.Contains(r.Err.Error(), c.want) || r.Detail != detail && c.ct != "" {
				t.Errorf("call: %s (%s: %v), want %q", r.Outcome, r.Detail, r.Err, c.want)
			}
			if st, _ := statusOf(m, "init"); st.State != StateFailed || !strings.Contains(st.LastError, c.want) {
				t.Errorf("start: %s (%q), want failed with %q", st.State, st.LastError, c.want)
			}
		})
	}
}

func TestRedactURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://host/mcp", "https://host/mcp"},
		{"https://host:8443/mcp?token=s3cret&mode=x", "https://host:8443/mcp?token=REDACTED&mode=REDACTED"},
		{"https://user:pass@host/mcp", "https://REDACTED@host/mcp"},
		{"https://tok@host/mcp?bare", "https://REDACTED@host/mcp?REDACTED"},
		{"http://host/mcp#frag", "http://host/mcp#REDACTED"},
		{"http://host/mcp?a=1&&b", "http://host/mcp?a=REDACTED&&REDACTED"},
		{"http://us er:p@ss@host/x?t=1", "http://REDACTED@host/x?REDACTED"},
	} {
		if got := RedactURL(c.in); got != c.want {
			t.Errorf("RedactURL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestURLSecretsStayOutOfErrors: a token in the query or the userinfo of a
// server's URL reaches the server but no error: not a failed start, not a
// failed call.
func TestURLSecretsStayOutOfErrors(t *testing.T) {
	const token = "tok-789-secret"
	other := newRecorder(t, "127.0.0.2")
	h, _ := intercept(t, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		user, pass, _ := r.BasicAuth()
		if r.URL.Query().Get("token") != token || user != "me" || pass != token {
			http.Error(w, "who are you", http.StatusUnauthorized)
			return true
		}
		if isToolsCall(r, body) {
			http.Redirect(w, r, other.URL+"/?token="+token, http.StatusTemporaryRedirect)
			return true
		}
		return false
	})
	srv := serveOn(t, "127.0.0.1", false, h)
	secretURL := strings.Replace(srv.URL, "http://", "http://me:"+token+"@", 1) + "/mcp?token=" + token
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/mcp?token=" + token
	ln.Close()
	// A server that hangs up on mcphost's own tools/list request, which
	// goes beside the SDK.
	cut, _ := intercept(t, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if !bytes.Contains(body, []byte(`"method":"tools/list"`)) {
			return false
		}
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return true
	})
	cutSrv := serveOn(t, "127.0.0.1", false, cut)
	m := startManager(t, []Spec{
		{Name: "s", Transport: TransportHTTP, URL: secretURL},
		{Name: "dead", Transport: TransportHTTP, URL: dead},
		{Name: "deadsse", Transport: TransportSSE, URL: dead},
		{Name: "cut", Transport: TransportHTTP, URL: cutSrv.URL + "/mcp?token=" + token},
	}, Options{HTTPTransport: httpTransport(t)})
	st, _ := statusOf(m, "s")
	if st.State != StateReady {
		t.Fatalf("s: %s (%s): the real URL did not reach the server", st.State, st.LastError)
	}
	r := m.Call(context.Background(), "s", "set_value", json.RawMessage(`{"key":"k","value":"v"}`), CallOptions{})
	texts := []string{r.Err.Error()}
	for _, name := range []string{"dead", "deadsse", "cut"} {
		st, _ := statusOf(m, name)
		if st.State != StateFailed || !strings.Contains(st.LastError, "token=REDACTED") {
			t.Errorf("%s: %s (%q), want failed, naming the redacted URL", name, st.State, st.LastError)
		}
		texts = append(texts, st.LastError)
	}
	for _, s := range texts {
		if strings.Contains(s, token) {
			t.Errorf("the secret shows in %q", s)
		}
	}
	checkNotReached(t, other)
}

// TestBoundedBodyCountsPerEvent: an event stream is bounded per event, with
// any line ending; any other body in total.
func TestBoundedBodyCountsPerEvent(t *testing.T) {
	read := func(events bool, body string) error {
		b := &boundedBody{rc: io.NopCloser(strings.NewReader(body)), limit: 20, events: events}
		_, err := io.Copy(io.Discard, iotest(b))
		return err
	}
	ev := "data: 0123456789\n\n" // 18 bytes
	for _, c := range []struct {
		events bool
		body   string
		ok     bool
	}{
		{true, strings.Repeat(ev, 50), true},
		{true, strings.Repeat(strings.ReplaceAll(ev, "\n", "\r\n"), 50), true},
		{true, strings.Repeat(strings.ReplaceAll(ev, "\n", "\r"), 50), true},
		{true, "data: 0123456789012345\n\n", false},
		{true, "data: 01234\ndata: 56789\n\n", false}, // one event of two lines
		{true, "data: 0123456789\r\n\r\ndata: 012345678901234567890\n\n", false},
		{false, strings.Repeat("x", 20), true},
		{false, strings.Repeat("x", 21), false},
	} {
		err := read(c.events, c.body)
		var tl *TooLargeError
		if c.ok && err != nil || !c.ok && !errors.As(err, &tl) {
			t.Errorf("events=%v %q: %v, want ok=%v", c.events, c.body, err, c.ok)
		}
	}
}

// iotest reads r a few bytes at a time, so that line ends fall across reads.
func iotest(r io.Reader) io.Reader { return &smallReads{r} }

type smallReads struct{ r io.Reader }

func (s *smallReads) Read(p []byte) (int, error) { return s.r.Read(p[:min(len(p), 3)]) }

// seenOAuth records the URL of the request each Authorize was given.
type seenOAuth struct{ urls []string }

func (s *seenOAuth) TokenSource(context.Context) (oauth2.TokenSource, error) { return nil, nil }
func (s *seenOAuth) Authorize(_ context.Context, req *http.Request, resp *http.Response) error {
	s.urls = append(s.urls, req.URL.String())
	return nil
}

// TestOAuthSeesTheRealURL: the SDK holds the redacted URL, but the OAuth
// handler, which derives the token's resource from the request, is given
// the real one.
func TestOAuthSeesTheRealURL(t *testing.T) {
	const real = "https://127.0.0.1:8443/mcp?key=s3cret"
	g, err := newHTTPGuard(http.DefaultTransport, real, nil)
	if err != nil {
		t.Fatal(err)
	}
	if g.endpoint() != "https://127.0.0.1:8443/mcp?key=REDACTED" {
		t.Fatalf("endpoint %q, want the URL redacted", g.endpoint())
	}
	inner := &seenOAuth{}
	req, _ := http.NewRequest(http.MethodPost, g.endpoint(), nil)
	g.unredacting(inner).Authorize(context.Background(), req, &http.Response{Body: http.NoBody})
	if len(inner.urls) != 1 || inner.urls[0] != real {
		t.Errorf("the handler saw %q, want %q", inner.urls, real)
	}
}

// TestOAuthKeepsRedirectPolicy: the client of a server behind OAuth keeps
// the redirect policy of the guard beneath it.
func TestOAuthKeepsRedirectPolicy(t *testing.T) {
	g, err := newHTTPGuard(http.DefaultTransport, "https://127.0.0.1:8443/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	hc := withOAuth(g.client(), "https://127.0.0.1:8443/mcp", &seenOAuth{})
	from, _ := http.NewRequest(http.MethodPost, "https://127.0.0.1:8443/mcp", nil)
	to, _ := http.NewRequest(http.MethodPost, "https://127.0.0.2:8443/mcp", nil)
	if hc.CheckRedirect == nil || hc.CheckRedirect(to, []*http.Request{from}) == nil {
		t.Error("the OAuth client follows a redirect to another origin")
	}
}

// TestLegacySSEPostAnswerIgnored: a legacy SSE server answers a posted
// message on its stream; whatever 2xx body the POST itself gets is no
// error. A failed POST is described.
func TestLegacySSEPostAnswerIgnored(t *testing.T) {
	f, err := fixtures.New("flaky", fixtures.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var fail sync.Map
	h := f.SSEHandler()
	srv := serveOn(t, "127.0.0.1", false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if _, bad := fail.Load("on"); bad && bytes.Contains(body, []byte(`"tools/call"`)) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, "<h1>Bad Gateway</h1>")
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		// Some servers answer 200 with a word of text instead of 202.
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "Accepted")
	}))
	m := startManager(t, []Spec{{Name: "legacy", Transport: TransportSSE, URL: srv.URL + "/sse"}}, Options{HTTPTransport: httpTransport(t)})
	callOK(t, m, "legacy", "read_value", `{"key":"k"}`)
	fail.Store("on", true)
	r := m.Call(context.Background(), "legacy", "read_value", json.RawMessage(`{"key":"k"}`), CallOptions{})
	if want := `HTTP 502, text/html, body begins "<h1>Bad Gateway</h1>"`; r.Err == nil || !strings.Contains(r.Err.Error(), want) {
		t.Errorf("call: %s (%s: %v), want %q", r.Outcome, r.Detail, r.Err, want)
	}
}
