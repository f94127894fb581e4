// Package web is the approval page: a web page on the loopback address
// that shows every call the person's running serves wait on a person for
// (through an approver.Mux, like `mcphost approve`), with everything the
// chat's dialog shows, and sends the person's answers back.
//
// # Who may answer
//
// The page listens on 127.0.0.1 only and refuses any other address. Each
// start makes a secret of 256 random bits; the link that carries it (Link)
// is printed where the person reads it. Opening the link exchanges the
// secret for a session cookie (HttpOnly, SameSite=Strict, Path=/, named
// after the port, so two pages on two ports do not share one) and
// redirects to the page without the secret in the address. Every request
// but the page's own script and style needs that cookie; every answer also
// carries the session's CSRF token, compared in constant time. The Host
// header must be the address the page listens on (a DNS name rebound to
// 127.0.0.1 is refused), and an Origin header, when there is one, must be
// the page's own. The page loads nothing from anywhere else: its script
// and style are embedded, and the Content-Security-Policy forbids the
// rest.
//
// Everything a question holds came from an MCP server or a client: it is
// rendered by html/template (contextual escaping), with control and bidi
// characters shown as visible escapes (package sanitize), and the script
// only moves nodes the server rendered; it never writes markup.
package web

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcphost/mcphost/approver"
	"github.com/mcphost/mcphost/approver/passkey"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/mcphost/mcphost/ui/dialog"
)

//go:embed static
var static embed.FS

// DefaultAddr is where the page listens unless told: a free port of the
// loopback address.
const DefaultAddr = "127.0.0.1:0"

// Bounds of what the page keeps.
const (
	maxSessions = 32       // browsers that opened the link; the oldest is forgotten
	maxNotes    = 20       // outcomes shown under the calls
	maxForm     = 64 << 10 // an answer's body
	maxReason   = 500      // a denial's reason, as the dialog's field
	maxSent     = 256      // answered calls kept in case serve refuses the answer
)

// Source is where the questions come from and the answers go: every serve
// of the person (*approver.Mux) or one serve (*approver.Conn).
type Source interface {
	Next() (any, error)
	// AnswerVia sends a, given on the page (via approver.ViaWeb), with
	// the passkey proof of the call when there is one.
	AnswerVia(q *approver.Question, a host.Answer, via string, proof *approver.Proof) error
}

// Options configure a Page.
type Options struct {
	// Addr is the address to listen on: 127.0.0.1 and a port (0 for a
	// free one). Empty means DefaultAddr.
	Addr string
	// Serves, if set, returns the serves connected now (Mux.Serves), for
	// the status line.
	Serves func() []*approver.Hello
	// Verify, if set, is asked before an approval is sent, with the
	// request that carries it: an error refuses the approval (the call
	// keeps waiting) and is shown to the person. It is where a second
	// step, such as a passkey assertion bound to the call, plugs in.
	Verify func(r *http.Request, q *approver.Question, a host.Answer) error
	// Now is the clock (tests).
	Now func() time.Time
	// PasskeyStore, if set, is the passkey credential file: the page is
	// then opened at http://localhost:PORT, approvals on it are signed
	// with an enrolled passkey, and /enroll enrolls one (see passkeys.go).
	PasskeyStore string
	// OnEnroll, if set, is told the label of each passkey enrolled.
	OnEnroll func(label string)
}

// Page is the approval page of one start.
type Page struct {
	o      Options
	ln     net.Listener
	addr   string // host:port as listened on, the only Host accepted
	host   string // localhost:port, also accepted when the page has passkeys
	rp     *passkey.RP
	secret string
	link   string
	cookie string

	mu       sync.Mutex
	sessions map[string]*session
	order    []string // session ids, oldest first
	waiting  []*approver.Question
	sent     map[string]*approver.Question // answered lately: back to waiting should serve refuse the answer
	notes    []note
	changed  chan struct{} // closed and replaced on every change
	version  uint64
}

type session struct{ csrf string }

type note struct {
	At   time.Time
	Text string
	Bad  bool // a refusal: the answer approved nothing
}

// current is the link of the page this process serves, for the texts
// that name it (CurrentLink).
var current atomic.Pointer[string]

// CurrentLink returns the link of the approval page this process serves
// now (from Listen until Run ends or Close), secret included, or "" when
// it serves none.
func CurrentLink() string {
	if p := current.Load(); p != nil {
		return *p
	}
	return ""
}

// ErrNotLoopback is returned by Listen for an address other than
// 127.0.0.1.
var ErrNotLoopback = errors.New("the approval page listens only on 127.0.0.1, so that no other machine can reach it")

// Listen opens the page's listener on o.Addr and makes the secret of its
// link. It refuses any address but 127.0.0.1.
func Listen(o Options) (*Page, error) {
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	h, port, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return nil, fmt.Errorf("approval page address %q: want 127.0.0.1:PORT (0 for a free port): %w", o.Addr, err)
	}
	if ip, err := netip.ParseAddr(h); err != nil || ip != netip.MustParseAddr("127.0.0.1") {
		return nil, fmt.Errorf("approval page address %q: %w: use 127.0.0.1:%s", o.Addr, ErrNotLoopback, port)
	}
	ln, err := net.Listen("tcp4", o.Addr)
	if err != nil {
		return nil, fmt.Errorf("approval page: %w", err)
	}
	p := &Page{o: o, ln: ln, addr: ln.Addr().String(), secret: randomHex(32),
		sessions: map[string]*session{}, sent: map[string]*approver.Question{}, changed: make(chan struct{})}
	p.cookie = "mcphost-approve-" + strings.TrimPrefix(p.addr[strings.LastIndexByte(p.addr, ':'):], ":")
	if err := p.withPasskeys(); err != nil {
		ln.Close()
		return nil, fmt.Errorf("approval page: %w", err)
	}
	at := p.addr
	if p.host != "" {
		at = p.host
	}
	p.link = "http://" + at + "/open?k=" + p.secret
	current.Store(&p.link)
	return p, nil
}

// randomHex returns n random bytes in hex; crypto/rand does not fail.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Addr returns the address the page listens on.
func (p *Page) Addr() string { return p.addr }

// Link returns the link that opens the page: it carries the secret, so
// it is shown only to the person.
func (p *Page) Link() string { return p.link }

// EnrollLink returns the link that opens the page at its enrollment of a
// passkey (with Options.PasskeyStore); like Link it carries the secret.
func (p *Page) EnrollLink() string { return p.link + "&next=enroll" }

// Run serves the page and reads src until ctx ends (nil) or src ends
// (its error). The caller closes src.
func (p *Page) Run(ctx context.Context, src Source) error {
	defer p.forget()
	srv := &http.Server{Handler: p.Handler(src), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(p.ln) }()
	read := make(chan error, 1)
	go func() {
		for {
			ev, err := src.Next()
			if err != nil {
				read <- err
				return
			}
			p.Apply(ev)
		}
	}()
	var err error
	select {
	case <-ctx.Done():
	case err = <-read:
	case err = <-served:
	}
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if srv.Shutdown(sctx) != nil {
		// An event stream outlived the second (src ended, not ctx):
		// cut it.
		_ = srv.Close()
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// Close closes the listener of a page that does not Run.
func (p *Page) Close() error {
	p.forget()
	return p.ln.Close()
}

// forget stops CurrentLink naming this page.
func (p *Page) forget() { current.CompareAndSwap(&p.link, nil) }

// Apply takes one message of the serves: a *approver.Question waits, a
// *approver.Withdrawn no longer does, a *approver.Rejected is shown.
func (p *Page) Apply(ev any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev := ev.(type) {
	case *approver.Question:
		p.waiting = append(p.waiting, ev)
	case *approver.Withdrawn:
		for i, q := range p.waiting {
			if q.ID == ev.ID {
				p.waiting = append(p.waiting[:i:i], p.waiting[i+1:]...)
				p.noteLocked("The call to "+ref(q)+" no longer waits: "+sanitize.Line(ev.Why)+".", false)
				break
			}
		}
	case *approver.Rejected:
		p.noteLocked("mcphost serve took no answer: "+sanitize.Line(ev.Message), true)
		if q, ok := p.sent[ev.ID]; ok && indexOf(p.waiting, ev.ID) < 0 {
			// The call still waits in its serve: it may be answered again.
			delete(p.sent, ev.ID)
			p.waiting = append(p.waiting, q)
		}
	case *approver.ServesChanged:
	default:
		return
	}
	p.changedLocked()
}

// noteLocked adds an outcome to show. p.mu is held.
func (p *Page) noteLocked(text string, bad bool) {
	p.notes = append([]note{{At: p.o.Now(), Text: text, Bad: bad}}, p.notes...)
	if len(p.notes) > maxNotes {
		p.notes = p.notes[:maxNotes]
	}
}

// changedLocked wakes every event stream. p.mu is held.
func (p *Page) changedLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
	p.version++
}

// Waiting returns the questions the page shows, in the order asked.
func (p *Page) Waiting() []*approver.Question {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*approver.Question(nil), p.waiting...)
}

func ref(q *approver.Question) string { return sanitize.Name(q.Server) + "/" + sanitize.Name(q.Tool) }

// Handler returns the page's HTTP handler, answering through src.
func (p *Page) Handler(src Source) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /open", p.open)
	mux.HandleFunc("GET /{$}", p.withSession(p.page))
	mux.HandleFunc("GET /cards", p.withSession(p.cards))
	mux.HandleFunc("GET /events", p.withSession(p.events))
	mux.HandleFunc("POST /answer", p.withSession(func(w http.ResponseWriter, r *http.Request, s *session) {
		p.answer(w, r, s, src)
	}))
	mux.HandleFunc("POST /passkey/begin", p.withSession(p.beginApproval))
	mux.HandleFunc("GET /enroll", p.withSession(p.enrollPage))
	mux.HandleFunc("POST /enroll/begin", p.withSession(p.beginEnroll))
	mux.HandleFunc("POST /enroll/finish", p.withSession(p.finishEnroll))
	for _, f := range []string{"page.js", "page.css"} {
		mux.HandleFunc("GET /static/"+f, func(w http.ResponseWriter, r *http.Request) {
			http.ServeFileFS(w, r, static, "static/"+f)
		})
	}
	return p.guard(mux)
}

// csp is the page's Content-Security-Policy: its own script, style and
// connections only, no frames, forms posting only to itself.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
	"frame-ancestors 'none'; form-action 'self'; base-uri 'none'"

// guard refuses a request whose Host is not the page's address (DNS
// rebinding) or whose Origin, when sent, is not the page's, and sets the
// headers every answer carries.
func (p *Page) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		// same-origin, not no-referrer: under no-referrer a browser sends
		// "Origin: null" with the page's own form posts, and the Origin
		// check could not tell them from a sandboxed frame's. No other
		// site is ever sent a referrer either way.
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		if r.Host != p.addr && (p.host == "" || r.Host != p.host) {
			http.Error(w, "This page answers only at the address mcphost printed: open the link it printed.", http.StatusMisdirectedRequest)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host {
			http.Error(w, "Requests from other sites are refused.", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// open exchanges the link's secret for a session cookie and sends the
// browser on to the page, leaving the secret out of its address and
// history.
func (p *Page) open(w http.ResponseWriter, r *http.Request) {
	k := r.URL.Query().Get("k")
	if subtle.ConstantTimeCompare([]byte(k), []byte(p.secret)) != 1 {
		p.refuse(w, http.StatusForbidden, "This link does not open this page (a page's link changes each time it starts). Open the link mcphost printed when the page started.")
		return
	}
	id, csrf := randomHex(32), randomHex(32)
	p.mu.Lock()
	p.sessions[id] = &session{csrf: csrf}
	p.order = append(p.order, id)
	if len(p.order) > maxSessions {
		delete(p.sessions, p.order[0])
		p.order = p.order[1:]
	}
	p.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: p.cookie, Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	to := "/"
	if r.URL.Query().Get("next") == "enroll" && p.rp != nil {
		to = "/enroll"
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// withSession passes on a request that carries a session cookie of this
// start, and refuses the others.
func (p *Page) withSession(next func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var s *session
		if c, err := r.Cookie(p.cookie); err == nil {
			p.mu.Lock()
			s = p.sessions[c.Value]
			p.mu.Unlock()
		}
		if s == nil {
			p.refuse(w, http.StatusForbidden, "This browser has not opened the page's link. Open the link mcphost printed when the page started (run mcphost approve --web to get one).")
			return
		}
		next(w, r, s)
	}
}

// refuse answers a refused request with a page that says why.
func (p *Page) refuse(w http.ResponseWriter, code int, why string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_ = pageTmpl.ExecuteTemplate(w, "refused", why)
}

// events streams one event whenever the calls or the notes change, so the
// page can fetch them anew.
func (p *Page) events(w http.ResponseWriter, r *http.Request, _ *session) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for {
		p.mu.Lock()
		ch, v := p.changed, p.version
		p.mu.Unlock()
		if _, err := fmt.Fprintf(w, "data: %d\n\n", v); err != nil {
			return
		}
		fl.Flush()
		select {
		case <-ch:
		case <-r.Context().Done():
			return
		}
	}
}

// answer takes the person's answer to one call. A request refused by the
// guard, the session or the CSRF token never gets here or answers nothing;
// an answer this function refuses (a call that no longer waits, another
// call's arguments, a scope not offered, a wrong tier-3 name) leaves the
// call waiting and says why.
func (p *Page) answer(w http.ResponseWriter, r *http.Request, s *session, src Source) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "The answer could not be read: "+err.Error(), http.StatusBadRequest)
		return
	}
	if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(s.csrf)) != 1 {
		p.refuse(w, http.StatusForbidden, "The answer did not carry this page's token, so it was not taken. Answer from the page itself.")
		return
	}
	q, a, err := p.take(r)
	var proof *approver.Proof
	if err == nil && a.Approve {
		proof, err = proofOf(r.PostForm.Get("passkey"))
	}
	if err == nil && a.Approve && p.o.Verify != nil {
		if verr := p.o.Verify(r, q, a); verr != nil {
			err = fmt.Errorf("not allowed: %w", verr)
		}
	}
	p.mu.Lock()
	if err == nil {
		// The first answer wins: a second tab's answer finds it gone.
		i := indexOf(p.waiting, q.ID)
		if i < 0 {
			err = errors.New("that call no longer waits")
		} else {
			p.waiting = append(p.waiting[:i:i], p.waiting[i+1:]...)
			if len(p.sent) >= maxSent {
				clear(p.sent)
			}
			p.sent[q.ID] = q
		}
	}
	if err != nil {
		p.noteLocked(err.Error(), true)
	} else {
		p.noteLocked(outcome(q, a), false)
	}
	p.changedLocked()
	p.mu.Unlock()
	if err == nil {
		if serr := src.AnswerVia(q, a, approver.ViaWeb, proof); serr != nil {
			p.mu.Lock()
			p.noteLocked("The answer could not be sent to mcphost serve: "+sanitize.Line(serr.Error()), true)
			p.changedLocked()
			p.mu.Unlock()
		}
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// take reads the answer the form holds and checks it against the call
// it names: the same arguments as shown, a scope the call offers, and at
// tier 3 the typed name.
func (p *Page) take(r *http.Request) (*approver.Question, host.Answer, error) {
	f := r.PostForm
	p.mu.Lock()
	i := indexOf(p.waiting, f.Get("id"))
	var q *approver.Question
	if i >= 0 {
		q = p.waiting[i]
	}
	p.mu.Unlock()
	if q == nil {
		return nil, host.Answer{}, errors.New("that call no longer waits")
	}
	if subtle.ConstantTimeCompare([]byte(f.Get("args")), []byte(approver.ArgsHash(q.Arguments))) != 1 {
		return nil, host.Answer{}, fmt.Errorf("the answer to %s named other arguments than the call's: it was not taken", ref(q))
	}
	action := f.Get("action")
	if action == "deny" {
		return q, host.Answer{Reason: strings.TrimSpace(sanitize.Truncate(f.Get("reason"), maxReason))}, nil
	}
	var scope decide.Scope
	if err := scope.UnmarshalText([]byte(action)); err != nil || !offered(q, scope) {
		return nil, host.Answer{}, fmt.Errorf("the call to %s does not offer that answer: it was not taken", ref(q))
	}
	if q.Tier >= decide.T3 {
		if want := dialog.TypedWord(q.Tool); f.Get("typed") != want {
			return nil, host.Answer{}, fmt.Errorf("not allowed: to allow %s, type %s exactly; the call still waits", ref(q), want)
		}
	}
	return q, host.Answer{Approve: true, Scope: scope}, nil
}

// offered reports whether the page offers approval of q at scope s: the
// question lists it, and it is not "always", which the page never offers
// (remembering an approval is for the chat and the configuration).
func offered(q *approver.Question, s decide.Scope) bool {
	if s == decide.ScopeAlways {
		return false
	}
	for _, x := range q.Scopes {
		if x == s {
			return true
		}
	}
	return false
}

func indexOf(qs []*approver.Question, id string) int {
	for i, q := range qs {
		if q.ID == id && id != "" {
			return i
		}
	}
	return -1
}

// outcome is the note left after the person answered q.
func outcome(q *approver.Question, a host.Answer) string {
	if a.Approve {
		return "Allowed " + ref(q) + " (" + a.Scope.String() + ")."
	}
	if a.Reason != "" {
		return "Denied " + ref(q) + ": " + sanitize.Line(a.Reason)
	}
	return "Denied " + ref(q) + "."
}
