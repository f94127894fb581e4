package web

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcphost/mcphost/approver"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
)

// source is the serves as the page sees them: the test applies questions
// with Page.Apply, and the answers sent are recorded.
type source struct {
	end     chan struct{}
	mu      sync.Mutex
	answers []sent
}

type sent struct {
	id    string
	a     host.Answer
	via   string
	proof *approver.Proof
}

func (s *source) Next() (any, error) {
	<-s.end
	return nil, io.EOF
}

func (s *source) AnswerVia(q *approver.Question, a host.Answer, via string, proof *approver.Proof) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answers = append(s.answers, sent{q.ID, a, via, proof})
	return nil
}

func (s *source) sent() []sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sent(nil), s.answers...)
}

type harness struct {
	t      *testing.T
	p      *Page
	src    *source
	hc     *http.Client
	cookie *http.Cookie
	csrf   string
}

func start(t *testing.T, o Options) *harness {
	t.Helper()
	p, err := Listen(o)
	if err != nil {
		t.Fatal(err)
	}
	src := &source{end: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, src) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		close(src.end)
	})
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &harness{t: t, p: p, src: src, hc: hc}
}

// question is a T2 call of a destructive tool that offers every scope.
func question(id string) *approver.Question {
	return &approver.Question{Type: approver.TypeQuestion, ID: id, Server: "tasks", Tool: "delete_task",
		Title: "Delete a task", Description: "Deletes one task.", Tier: decide.T2, Class: decide.Destructive,
		Reasons:   []approver.Reason{{Code: "destructive", Text: "it deletes or overwrites"}, {Code: "closed-world"}},
		Arguments: `{"id":"T-1","note":"` + strings.Repeat("x", 400) + `"}`, Trusted: true,
		Scopes: []decide.Scope{decide.ScopeOnce, decide.ScopeArgs, decide.ScopeSession, decide.ScopeAlways},
		Client: "some-client 1.0"}
}

func (h *harness) get(path string, mod func(*http.Request)) (*http.Response, string) {
	h.t.Helper()
	req, err := http.NewRequest("GET", "http://"+h.p.Addr()+path, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	if h.cookie != nil {
		req.AddCookie(h.cookie)
	}
	if mod != nil {
		mod(req)
	}
	return h.do(req)
}

func (h *harness) do(req *http.Request) (*http.Response, string) {
	h.t.Helper()
	resp, err := h.hc.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return resp, string(b)
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// login opens the link and reads the session's CSRF token from the page
// (which must show a call for that).
func (h *harness) login() {
	h.t.Helper()
	resp, _ := h.do(mustReq(h.t, "GET", h.p.Link(), ""))
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		h.t.Fatalf("opening the link: %s, Location %q; want 303 to /", resp.Status, resp.Header.Get("Location"))
	}
	for _, c := range resp.Cookies() {
		h.cookie = c
	}
	if h.cookie == nil {
		h.t.Fatal("opening the link set no cookie")
	}
	_, body := h.get("/", nil)
	m := csrfRE.FindStringSubmatch(body)
	if m == nil {
		h.t.Fatalf("no CSRF token on the page:\n%s", body)
	}
	h.csrf = m[1]
}

func mustReq(t *testing.T, method, u, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	return req
}

// form is a complete answer to q.
func (h *harness) form(q *approver.Question, action string) url.Values {
	return url.Values{"csrf": {h.csrf}, "id": {q.ID}, "args": {approver.ArgsHash(q.Arguments)}, "action": {action}}
}

func (h *harness) post(f url.Values, mod func(*http.Request)) (*http.Response, string) {
	h.t.Helper()
	req := mustReq(h.t, "POST", "http://"+h.p.Addr()+"/answer", f.Encode())
	req.Header.Set("Origin", "http://"+h.p.Addr())
	if h.cookie != nil {
		req.AddCookie(h.cookie)
	}
	if mod != nil {
		mod(req)
	}
	return h.do(req)
}

func TestListenOnlyOnLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", "[::1]:0", "localhost:0", "192.0.2.1:0", ":0", "127.0.0.2:0", "example.com:80"} {
		p, err := Listen(Options{Addr: addr})
		if err == nil {
			p.Close()
			t.Errorf("Listen(%q) started; want it refused", addr)
			continue
		}
		if !errors.Is(err, ErrNotLoopback) || !strings.Contains(err.Error(), "127.0.0.1") {
			t.Errorf("Listen(%q): %v; want ErrNotLoopback naming 127.0.0.1", addr, err)
		}
	}
	p, err := Listen(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if !strings.HasPrefix(p.Addr(), "127.0.0.1:") {
		t.Errorf("the default address %q is not on 127.0.0.1", p.Addr())
	}
	u, err := url.Parse(p.Link())
	if err != nil {
		t.Fatal(err)
	}
	if k := u.Query().Get("k"); len(k) < 32 {
		// 128 bits at least, in hex
		t.Errorf("the link's secret %q is shorter than 128 bits", k)
	}
	q, err := Listen(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if p.Link() == q.Link() || p.secret == q.secret {
		t.Error("two starts share a secret")
	}
}

// TestOpenExchangesTheSecretForACookie: the link sets an HttpOnly,
// SameSite=Strict cookie for the whole page and sends the browser to an
// address without the secret; a wrong secret sets nothing.
func TestOpenExchangesTheSecretForACookie(t *testing.T) {
	h := start(t, Options{})
	resp, _ := h.do(mustReq(t, "GET", h.p.Link(), ""))
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("open: %s", resp.Status)
	}
	if loc := resp.Header.Get("Location"); loc != "/" {
		t.Errorf("open redirects to %q, want / (without the secret)", loc)
	}
	cs := resp.Cookies()
	if len(cs) != 1 {
		t.Fatalf("open set %d cookies, want 1", len(cs))
	}
	c := cs[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || len(c.Value) < 32 {
		t.Errorf("cookie %+v: want HttpOnly, SameSite=Strict, Path=/ and a long random value", c)
	}
	if strings.Contains(c.Value, h.p.secret) {
		t.Error("the cookie carries the link's secret")
	}
	for _, k := range []string{"", "0", h.p.secret[:len(h.p.secret)-1], h.p.secret + "0", strings.ToUpper(h.p.secret)} {
		resp, body := h.do(mustReq(t, "GET", "http://"+h.p.Addr()+"/open?k="+url.QueryEscape(k), ""))
		if resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 {
			t.Errorf("open with k=%q: %s, cookies %v; want 403 and none", k, resp.Status, resp.Cookies())
		}
		if !strings.Contains(body, "Open the link mcphost printed") {
			t.Errorf("the refusal does not say what to do:\n%s", body)
		}
	}
}

// TestSessionsAreBounded: a link opened again and again keeps at most
// maxSessions sessions; the oldest is forgotten and the newest still works.
func TestSessionsAreBounded(t *testing.T) {
	h := start(t, Options{})
	open := func() *http.Cookie {
		resp, _ := h.do(mustReq(t, "GET", h.p.Link(), ""))
		if cs := resp.Cookies(); len(cs) == 1 {
			return cs[0]
		}
		t.Fatalf("opening the link: %s, cookies %v; want one", resp.Status, resp.Cookies())
		return nil
	}
	first := open()
	for range maxSessions {
		h.cookie = open()
	}
	h.p.mu.Lock()
	n := len(h.p.sessions)
	h.p.mu.Unlock()
	if n != maxSessions {
		t.Errorf("%d sessions kept after %d opens, want %d", n, maxSessions+1, maxSessions)
	}
	if resp, _ := h.get("/", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("the newest session: %s, want 200", resp.Status)
	}
	h.cookie = first
	if resp, _ := h.get("/", nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("the oldest session, past the bound: %s, want 403", resp.Status)
	}
}

// TestNotesAreBounded: the outcomes shown are the newest maxNotes, newest
// first, however many came.
func TestNotesAreBounded(t *testing.T) {
	h := start(t, Options{})
	for i := range maxNotes + 5 {
		h.p.Apply(&approver.Rejected{Message: "n" + strconv.Itoa(i)})
	}
	h.p.mu.Lock()
	notes := slices.Clone(h.p.notes)
	h.p.mu.Unlock()
	if len(notes) != maxNotes || !strings.HasSuffix(notes[0].Text, "n"+strconv.Itoa(maxNotes+4)) {
		t.Errorf("%d notes, the first %q; want %d, the newest first", len(notes), notes[0].Text, maxNotes)
	}
}

// TestHeaders: every answer, refusals included, carries the strict
// policy.
func TestHeaders(t *testing.T) {
	h := start(t, Options{})
	h.p.Apply(question("q1"))
	h.login()
	for _, path := range []string{"/", "/cards", "/static/page.js", "/open?k=no"} {
		resp, _ := h.get(path, nil)
		hd := resp.Header
		for k, want := range map[string]string{
			"X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin", "X-Frame-Options": "DENY",
		} {
			if got := hd.Get(k); got != want {
				t.Errorf("%s: %s %q, want %q", path, k, got, want)
			}
		}
		csp := hd.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "form-action 'self'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: the CSP %q lacks %q", path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe") || strings.Contains(csp, "http") || strings.Contains(csp, "*") {
			t.Errorf("%s: the CSP %q lets in more than the page", path, csp)
		}
	}
	if resp, _ := h.get("/static/page.tmpl", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("the template is served: %s", resp.Status)
	}
}

// TestRefusedRequestsAnswerNothing: an answer without the cookie, with
// another cookie, without or with a wrong CSRF token, from another
// Origin, or to another Host name approves nothing, and the call still
// waits; then the same answer done right is taken once.
func TestRefusedRequestsAnswerNothing(t *testing.T) {
	h := start(t, Options{})
	q := question("q1")
	h.p.Apply(q)
	h.login()
	good := h.form(q, "once")
	with := func(k, v string) url.Values {
		f := url.Values{}
		for kk, vv := range good {
			f[kk] = vv
		}
		if v == "" {
			f.Del(k)
		} else {
			f.Set(k, v)
		}
		return f
	}
	for _, c := range []struct {
		name string
		form url.Values
		mod  func(*http.Request)
		code int
	}{
		{"no cookie", good, func(r *http.Request) { r.Header.Del("Cookie") }, http.StatusForbidden},
		{"a forged cookie", good, func(r *http.Request) {
			r.Header.Del("Cookie")
			r.AddCookie(&http.Cookie{Name: h.cookie.Name, Value: strings.Repeat("0", 64)})
		}, http.StatusForbidden},
		{"no CSRF token", with("csrf", ""), nil, http.StatusForbidden},
		{"a wrong CSRF token", with("csrf", strings.Repeat("0", 64)), nil, http.StatusForbidden},
		{"a CSRF token one character short", with("csrf", h.csrf[:len(h.csrf)-1]), nil, http.StatusForbidden},
		{"a foreign Origin", good, func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") }, http.StatusForbidden},
		{"a null Origin", good, func(r *http.Request) { r.Header.Set("Origin", "null") }, http.StatusForbidden},
		{"the page's Origin on another port", good, func(r *http.Request) { r.Header.Set("Origin", "http://127.0.0.1:1") }, http.StatusForbidden},
		{"a rebound Host name", good, func(r *http.Request) { r.Host = "evil.example:" + strings.Split(h.p.Addr(), ":")[1] }, http.StatusMisdirectedRequest},
		{"localhost as Host", good, func(r *http.Request) { r.Host = "localhost:" + strings.Split(h.p.Addr(), ":")[1] }, http.StatusMisdirectedRequest},
	} {
		resp, _ := h.post(c.form, c.mod)
		if resp.StatusCode != c.code {
			t.Errorf("%s: %s, want %d", c.name, resp.Status, c.code)
		}
		if got := h.src.sent(); len(got) != 0 {
			t.Fatalf("%s: answers were sent: %+v", c.name, got)
		}
		if len(h.p.Waiting()) != 1 {
			t.Fatalf("%s: the call no longer waits", c.name)
		}
	}
	// Reading the page is refused the same way.
	for _, c := range []struct {
		name string
		mod  func(*http.Request)
	}{
		{"no cookie", func(r *http.Request) { r.Header.Del("Cookie") }},
		{"a rebound Host name", func(r *http.Request) { r.Host = "evil.example" }},
	} {
		for _, path := range []string{"/", "/cards"} {
			resp, body := h.get(path, c.mod)
			if resp.StatusCode < 400 || strings.Contains(body, "delete_task") {
				t.Errorf("GET %s with %s: %s, showing the call", path, c.name, resp.Status)
			}
		}
		// The event stream is not read to its end: it has none.
		req := mustReq(t, "GET", "http://"+h.p.Addr()+"/events", "")
		req.AddCookie(h.cookie)
		c.mod(req)
		resp, err := h.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode < 400 {
			t.Errorf("GET /events with %s: %s", c.name, resp.Status)
		}
	}
	resp, _ := h.post(good, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("the right answer: %s", resp.Status)
	}
	resp, _ = h.post(good, nil) // a second click, or a second tab
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("the answer again: %s", resp.Status)
	}
	got := h.src.sent()
	if len(got) != 1 || got[0].id != "q1" || !got[0].a.Approve || got[0].a.Scope != decide.ScopeOnce {
		t.Fatalf("answers sent %+v, want q1 allowed once, once", got)
	}
	if _, body := h.get("/", nil); !strings.Contains(body, "Allowed tasks/delete_task (once).") || !strings.Contains(body, "that call no longer waits") {
		t.Errorf("the page does not say what happened:\n%s", body)
	}
}

// TestAnswersMustFitTheCall: an answer naming other arguments, a scope the
// call does not offer, "always", or at tier 3 without the typed name
// approves nothing and says why; deny carries the reason.
func TestAnswersMustFitTheCall(t *testing.T) {
	h := start(t, Options{})
	q := question("q1")
	q.Scopes = []decide.Scope{decide.ScopeOnce, decide.ScopeAlways}
	t3 := question("q3")
	t3.Tier = decide.T3
	h.p.Apply(q)
	h.p.Apply(t3)
	h.login()
	bad := []struct {
		name string
		form url.Values
		note string
	}{
		{"other arguments", func() url.Values { f := h.form(q, "once"); f.Set("args", approver.ArgsHash("{}")); return f }(), "named other arguments"},
		{"a scope not offered", h.form(q, "session"), "does not offer that answer"},
		{"always", h.form(q, "always"), "does not offer that answer"},
		{"no scope", h.form(q, "yes"), "does not offer that answer"},
		{"tier 3 without the name", h.form(t3, "once"), "type delete_task exactly"},
		{"tier 3 with another name", func() url.Values { f := h.form(t3, "once"); f.Set("typed", "delete_tasks"); return f }(), "type delete_task exactly"},
		{"tier 3 with the name in capitals", func() url.Values { f := h.form(t3, "once"); f.Set("typed", "DELETE_TASK"); return f }(), "type delete_task exactly"},
		{"an unknown call", func() url.Values { f := h.form(q, "once"); f.Set("id", "q9"); return f }(), "no longer waits"},
	}
	for _, c := range bad {
		h.post(c.form, nil)
		if got := h.src.sent(); len(got) != 0 {
			t.Fatalf("%s: answers were sent: %+v", c.name, got)
		}
		if _, body := h.get("/cards", nil); !strings.Contains(body, c.note) {
			t.Errorf("%s: the page does not say %q:\n%s", c.name, c.note, body)
		}
	}
	if n := len(h.p.Waiting()); n != 2 {
		t.Fatalf("%d calls wait, want both", n)
	}
	f := h.form(t3, "once")
	f.Set("typed", "delete_task")
	h.post(f, nil)
	f = h.form(q, "deny")
	f.Set("reason", "not that one \u202e")
	h.post(f, nil)
	got := h.src.sent()
	if len(got) != 2 || got[0].id != "q3" || !got[0].a.Approve || got[1].id != "q1" || got[1].a.Approve || got[1].a.Reason != "not that one \u202e" {
		t.Fatalf("answers %+v: want q3 allowed, q1 denied with its reason", got)
	}
	if _, body := h.get("/cards", nil); !strings.Contains(body, `Denied tasks/delete_task: not that one \u202e`) {
		t.Errorf("the denial's note is missing or its bidi character not escaped:\n%s", body)
	}
}

// TestVerifyGuardsApprovals: a page with a second step refuses an
// approval the step refuses, and lets a denial through without it.
func TestVerifyGuardsApprovals(t *testing.T) {
	h := start(t, Options{Verify: func(r *http.Request, q *approver.Question, a host.Answer) error {
		return errors.New("no passkey assertion")
	}})
	q := question("q1")
	h.p.Apply(q)
	h.login()
	h.post(h.form(q, "once"), nil)
	if got := h.src.sent(); len(got) != 0 {
		t.Fatalf("approved without the second step: %+v", got)
	}
	if _, body := h.get("/cards", nil); !strings.Contains(body, "no passkey assertion") {
		t.Errorf("the page does not say why:\n%s", body)
	}
	h.post(h.form(q, "deny"), nil)
	if got := h.src.sent(); len(got) != 1 || got[0].a.Approve {
		t.Fatalf("answers %+v, want one denial", got)
	}
}

// TestLiveEvents: the event stream says when a call arrives, is withdrawn
// or an answer is rejected, and the page shows it.
func TestLiveEvents(t *testing.T) {
	h := start(t, Options{})
	h.p.Apply(question("q0"))
	h.login()
	req := mustReq(t, "GET", "http://"+h.p.Addr()+"/events", "")
	req.AddCookie(h.cookie)
	resp, err := h.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("events: Content-Type %q", ct)
	}
	lines := bufio.NewScanner(resp.Body)
	next := func() string {
		t.Helper()
		for lines.Scan() {
			if l := lines.Text(); strings.HasPrefix(l, "data: ") {
				return l
			}
		}
		t.Fatalf("the event stream ended: %v", lines.Err())
		return ""
	}
	first := next()
	steps := []struct {
		ev   any
		want string
	}{
		{question("q1"), `id="q-q1"`},
		{&approver.Withdrawn{ID: "q1", Why: "the client cancelled it"}, "no longer waits: the client cancelled it."},
		{&approver.Rejected{ID: "q0", Message: "the arguments changed"}, "mcphost serve took no answer: the arguments changed"},
	}
	last := first
	for _, s := range steps {
		h.p.Apply(s.ev)
		if got := next(); got == last {
			t.Errorf("after %T the stream repeated %q", s.ev, got)
		} else {
			last = got
		}
		if _, body := h.get("/cards", nil); !strings.Contains(body, s.want) {
			t.Errorf("after %T the page lacks %q:\n%s", s.ev, s.want, body)
		}
	}
	if _, body := h.get("/cards", nil); strings.Contains(body, `id="q-q1"`) {
		t.Error("the withdrawn call is still shown")
	}
}

// TestCurrentLink: while a page runs, CurrentLink is its link, for the
// texts that name it.
func TestCurrentLink(t *testing.T) {
	p, err := Listen(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if CurrentLink() != p.Link() {
		t.Fatalf("CurrentLink() = %q, want %q", CurrentLink(), p.Link())
	}
	src := &source{end: make(chan struct{})}
	defer close(src.end)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Run(ctx, src); err != nil {
		t.Fatal(err)
	}
	if l := CurrentLink(); l != "" {
		t.Errorf("CurrentLink() = %q after the page stopped", l)
	}
}
