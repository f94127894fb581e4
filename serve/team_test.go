package serve

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	approve "github.com/mcphost/mcphost/approver"
	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/later"
	"github.com/mcphost/mcphost/serve/internal/oidctest"
)

// teamPolicy routes rogue's set_value (rogue is an untrusted flaky: it is
// tier 3) to owners with four eyes, and flaky's to owners without;
// rogue's write_record is routed nowhere.
const teamPolicy = `{"approvers": [
  {"server": "rogue", "tool": "set_*", "group": "owners", "fourEyes": true},
  {"server": "flaky", "tool": "set_value", "group": "owners"}
]}`

// teamWorld is serve --http as a resource server of p with its team page,
// on a listener whose address the provider's page client was registered
// with.
type teamWorld struct {
	*oauthWorld
	p     *oidctest.Provider
	base  string
	store *later.Store
}

func newTeamWorld(t *testing.T) *teamWorld {
	t.Helper()
	return newTeamWorldLean(t, false)
}

// newTeamWorldLean is newTeamWorld whose page client, when lean, gets ID
// tokens without the person's profile and groups (read from userinfo).
func newTeamWorldLean(t *testing.T, lean bool) *teamWorld {
	t.Helper()
	return newTeamWorldPage(t, oidctest.Client{LeanIDToken: lean})
}

// newTeamWorldPage is newTeamWorld whose page client at the provider is
// page, its id, secret and redirect URI filled in.
func newTeamWorldPage(t *testing.T, page oidctest.Client) *teamWorld {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	cfg := teamProviderConfig()
	page.ID, page.Secret, page.RedirectURIs = "approve-page", "page-secret-0123456789", []string{base + TeamPath + "callback"}
	cfg.Clients = append(cfg.Clients, page)
	p := oidctest.Start(t, cfg)
	store := later.New(later.Options{})
	tw := buildTeamWorld(t, p, ln, "approve-page", store)
	tw.store = store
	return tw
}

// teamProviderConfig is the provider of the team tests: its people, with
// their groups, and the clients of the OAuth tests.
func teamProviderConfig() oidctest.Config {
	cfg := providerConfig()
	cfg.Users = []oidctest.User{
		{ID: "u-alice", Username: "alice", Password: "alice-pw", Name: "Alice Example", Email: "alice@example.test", Groups: []string{"dev"}},
		{ID: "u-bob", Username: "bob", Password: "bob-pw", Name: "Bob Example", Email: "bob@example.test", Groups: []string{"owners"}},
		{ID: "u-carol", Username: "carol", Password: "carol-pw", Name: "Carol Example", Email: "carol@example.test", Groups: []string{"owners", "dev"}},
	}
	return cfg
}

// buildTeamWorld is serve on ln, a resource server of p with its team page
// (the page client pageClient, registered with ln's address), holding
// calls in held and routing them by teamPolicy.
func buildTeamWorld(t *testing.T, p *oidctest.Provider, ln net.Listener, pageClient string, held Later, more ...func(*TeamOptions)) *teamWorld {
	t.Helper()
	return buildTeamWorldWith(t, p, ln, pageClient, held, nil, more...)
}

// buildTeamWorldWith is buildTeamWorld whose serve has the approver
// socket approver (nil: none).
func buildTeamWorldWith(t *testing.T, p *oidctest.Provider, ln net.Listener, pageClient string, held Later, approver Approver, more ...func(*TeamOptions)) *teamWorld {
	t.Helper()
	base := "http://" + ln.Addr().String()
	a := newAuth(t, p, AuthOptions{})
	m, err := config.ParseManaged("managed.json", []byte(teamPolicy))
	if err != nil {
		t.Fatal(err)
	}
	var page *TeamPage
	w := newWorld(t, worldOpts{approver: approver, tweak: func(o *Options) {
		o.MayApprove, o.Later = defaultAskVia, held
		o.Link = func(id string) string { return page.Link(id) }
		o.Route = func(server, tool string, tier decide.Tier) *Route {
			if r := m.ApproverRoute(server, tool, tier.String()); r != nil {
				return &Route{Group: r.Group, FourEyes: r.FourEyes}
			}
			return nil
		}
	}})
	to := TeamOptions{Issuer: p.Issuer, ClientID: pageClient, ClientSecret: "page-secret-0123456789", BaseURL: base}
	for _, f := range more {
		f(&to)
	}
	page, err = w.srv.NewTeamPage(context.Background(), to)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", w.srv.HandlerOAuth(a))
	mux.Handle(TeamPath, page.Handler())
	ts := httptest.NewUnstartedServer(mux)
	ts.Listener.Close()
	ts.Listener = ln
	ts.Start()
	t.Cleanup(ts.Close)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &teamWorld{oauthWorld: &oauthWorld{world: w, url: ts.URL, tr: tr}, p: p, base: base}
}

// client connects person's client (the provider's desk-app) to serve;
// with form, it declares elicitation and answers every form with it, as
// an autopilot host does.
func (tw *teamWorld) client(t *testing.T, user, pw string, form *autopilot) *conn {
	t.Helper()
	tok := tw.p.Login(t, "desk-app", user, pw).Access
	opts := &mcp.ClientOptions{}
	if form != nil {
		opts.ElicitationHandler = form.handle
	}
	cl := mcp.NewClient(&mcp.Implementation{Name: "desk", Version: "1"}, opts)
	cs, err := cl.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: tw.url + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{tok, tw.tr}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &conn{cs: cs}
}

// browser is a person's browser on the team page.
type browser struct {
	t    *testing.T
	hc   *http.Client
	base string
}

func (tw *teamWorld) newBrowser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: tw.base, hc: &http.Client{Jar: jar, Transport: tw.tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) do(req *http.Request) (*http.Response, string) {
	b.t.Helper()
	resp, err := b.hc.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func (b *browser) get(u string) (*http.Response, string) {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.do(req)
}

// startLogin opens the page without a session and follows it to the
// issuer: it returns the authorization request URL.
func (b *browser) startLogin() string {
	b.t.Helper()
	resp, _ := b.get(b.base + TeamPath)
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != TeamPath+"login" {
		b.t.Fatalf("the page without a session answered %s to %q, want a redirect to log in", resp.Status, resp.Header.Get("Location"))
	}
	resp, _ = b.get(b.base + TeamPath + "login")
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || !strings.Contains(loc, "code_challenge_method=S256") || !strings.Contains(loc, "nonce=") {
		b.t.Fatalf("login answered %s to %q, want the issuer's authorization URL with PKCE and a nonce", resp.Status, loc)
	}
	return loc
}

// login logs user in through the issuer's form.
func (b *browser) login(p *oidctest.Provider, user, pw string) {
	b.t.Helper()
	cb, err := p.Authorize(b.startLogin(), user, pw)
	if err != nil {
		b.t.Fatal(err)
	}
	resp, body := b.get(cb.String())
	if resp.StatusCode != http.StatusSeeOther {
		b.t.Fatalf("the callback answered %s: %s", resp.Status, body)
	}
	var sc *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == sessionCookie && c.Value != "" {
			sc = c
		}
	}
	if sc == nil || !sc.HttpOnly || sc.SameSite != http.SameSiteLaxMode || sc.Path != TeamPath {
		b.t.Fatalf("the session cookie is %+v, want HttpOnly, SameSite=Lax, under %s", sc, TeamPath)
	}
}

var (
	csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	callCard  = regexp.MustCompile(`data-id="([0-9a-f]+)"`)
)

// page returns the page's CSRF token and the held calls it shows.
func (b *browser) page() (csrf string, ids []string, body string) {
	b.t.Helper()
	resp, body := b.get(b.base + TeamPath)
	if resp.StatusCode != http.StatusOK {
		b.t.Fatalf("the page answered %s: %s", resp.Status, body)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		b.t.Errorf("the page's CSP is %q, want default-src 'none'", csp)
	}
	for _, m := range callCard.FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	if m := csrfField.FindStringSubmatch(body); m != nil {
		csrf = m[1]
	}
	return csrf, ids, body
}

// answer posts an answer to id with csrf (and origin as Origin, "" none).
func (b *browser) answer(id, decision, csrf, origin string) (int, string) {
	b.t.Helper()
	return b.answerWith(id, decision, csrf, origin, "")
}

// answerWith posts an answer with confirm, the tool name typed.
func (b *browser) answerWith(id, decision, csrf, origin, confirm string) (int, string) {
	b.t.Helper()
	form := url.Values{"id": {id}, "decision": {decision}, "csrf": {csrf}, "confirm": {confirm}}
	req, err := http.NewRequest(http.MethodPost, b.base+TeamPath+"answer", strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, body := b.do(req)
	return resp.StatusCode, body
}

// csrfOf returns the CSRF token of b's session (the page shows it only
// with a call's form, so a page without calls is given one to read).
func csrfOf(t *testing.T, b *browser) string {
	t.Helper()
	csrf, _, body := b.page()
	if csrf == "" {
		t.Fatalf("the page shows no form to read the CSRF token of: %s", body)
	}
	return csrf
}

func teamHeldID(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	m := approvalID.FindStringSubmatch(text(res))
	if m == nil {
		t.Fatalf("the refusal names no approval id:\n%s", text(res))
	}
	return m[1]
}

// TestTeamRoutedCallApprovedByAMemberOnly: Alice's call that the managed
// policy routes to owners is held (her own autopilot form is never
// shown it), her refusal says a member of owners (not her) must approve
// it, her page never shows it and her forged answer is refused; Bob, a
// member, sees and approves it on his page; Alice's retry runs it once,
// and the approval record names Bob and the web channel.
func TestTeamRoutedCallApprovedByAMemberOnly(t *testing.T) {
	tw := newTeamWorld(t)
	form := &autopilot{}
	alice := tw.client(t, "alice", "alice-pw", form)
	const args = `{"key":"k","value":"v"}`
	res := alice.call(t, "rogue__set_value", args)
	txt := text(res)
	if !res.IsError || tw.execs("rogue", "set_value") != 0 {
		t.Fatalf("the routed call ran before anyone approved it: %s", txt)
	}
	if !strings.Contains(txt, "a member of owners (not you)") || !strings.Contains(txt, tw.base+TeamPath+"#call-") {
		t.Fatalf("the refusal does not say who must approve it and where:\n%s", txt)
	}
	id := teamHeldID(t, res)
	// A routed call of a server the form may approve at its tier: the
	// autopilot's form is not asked either.
	res2 := alice.call(t, "flaky__set_value", args)
	if !res2.IsError || tw.execs("flaky", "set_value") != 0 || form.count() != 0 {
		t.Fatalf("a routed call was asked of the caller's own form (%d forms) or ran: %s", form.count(), text(res2))
	}
	if !strings.Contains(text(res2), "a member of owners") || strings.Contains(text(res2), "(not you)") {
		t.Errorf("the refusal of a routed call without four eyes: %s", text(res2))
	}

	// Alice's page: neither call is hers to answer.
	ab := tw.newBrowser(t)
	ab.login(tw.p, "alice", "alice-pw")
	_, ids, body := ab.page()
	if len(ids) != 0 || strings.Contains(body, "set_value") {
		t.Fatalf("Alice's page shows calls routed to owners: %v\n%s", ids, body)
	}
	// A forged answer with Alice's own session and token: she gets a form
	// by a call of her own that is not routed.
	res3 := alice.call(t, "rogue__write_record", `{"key":"own","value":"1"}`)
	own := teamHeldID(t, res3)
	csrf, ids, _ := ab.page()
	if len(ids) != 1 || ids[0] != own {
		t.Fatalf("Alice's page shows %v, want only her own unrouted call %s", ids, own)
	}
	if status, body := ab.answer(id, "approve", csrf, tw.base); status != http.StatusForbidden || !strings.Contains(body, "not a member") {
		t.Fatalf("Alice's forged approval of the routed call: %d %s, want 403 as a non-member", status, body)
	}
	if ap, _ := tw.store.Get(id); ap.State != later.Waiting {
		t.Fatalf("after Alice's forged answer the routed call is %s, want waiting", ap.State)
	}

	// Bob, a member of owners.
	bb := tw.newBrowser(t)
	bb.login(tw.p, "bob", "bob-pw")
	bcsrf, ids, body := bb.page()
	if len(ids) != 2 || !strings.Contains(body, "Alice Example") || strings.Contains(body, own) {
		t.Fatalf("Bob's page shows %v, want the two routed calls of Alice and not her own:\n%s", ids, body)
	}
	if status, body := bb.answer(own, "approve", bcsrf, tw.base); status != http.StatusForbidden {
		t.Fatalf("Bob answered Alice's unrouted call: %d %s", status, body)
	}
	if status, body := bb.answer(id, "approve", bcsrf, tw.base); status != http.StatusBadRequest || !strings.Contains(body, "type the tool's raw name") {
		t.Fatalf("Bob's approval of a tier-3 call without its name typed: %d %s, want 400", status, body)
	}
	if ap, _ := tw.store.Get(id); ap.State != later.Waiting {
		t.Fatalf("after an approval without the name the call is %s, want waiting", ap.State)
	}
	if status, body := bb.answerWith(id, "approve", bcsrf, tw.base, "set_value"); status != http.StatusSeeOther {
		t.Fatalf("Bob's approval: %d %s", status, body)
	}
	if status, _ := bb.answerWith(id, "approve", bcsrf, tw.base, "set_value"); status != http.StatusConflict {
		t.Errorf("a second answer to an answered call: %d, want 409", status)
	}
	if res := alice.call(t, "rogue__set_value", args); res.IsError || tw.execs("rogue", "set_value") != 1 {
		t.Fatalf("Alice's retry after Bob's approval: %s (%d runs), want it run once", text(res), tw.execs("rogue", "set_value"))
	}
	if res := alice.call(t, "rogue__set_value", args); !res.IsError || tw.execs("rogue", "set_value") != 1 {
		t.Fatalf("a second retry ran again: %s", text(res))
	}
	var approved *audit.Record
	for _, r := range readAudit(t, tw.audit) {
		if r.Kind == audit.Approval && r.ApprovalID == id && r.ApprovalState == audit.ApprovalApproved {
			approved = &r
		}
	}
	if approved == nil || approved.Approver == nil || approved.Approver.Subject != "u-bob" || approved.Approver.Issuer != tw.p.Issuer || approved.Via != audit.ChannelWeb {
		t.Fatalf("the approval record is %+v, want Bob named as approver through web", approved)
	}
	if approved.Client == nil || approved.Client.Person == nil || approved.Client.Person.Subject != "u-alice" {
		t.Errorf("the approval record's caller is %+v, want Alice", approved.Client)
	}
	// The loopback page's door (Server.AnswerLater) does not answer a
	// routed call either.
	if err := tw.srv.AnswerLater(teamHeldID(t, res2), hostAnswerApprove()); err == nil {
		t.Error("a routed call was answered past the team page")
	}
}

// TestTeamFourEyes: a member of the group may not approve their own
// routed call under four eyes; another member may.
func TestTeamFourEyes(t *testing.T) {
	tw := newTeamWorld(t)
	bob := tw.client(t, "bob", "bob-pw", nil)
	res := bob.call(t, "rogue__set_value", `{"key":"b","value":"1"}`)
	id := teamHeldID(t, res)
	if !strings.Contains(text(res), "a member of owners (not you)") {
		t.Errorf("the refusal: %s", text(res))
	}
	bb := tw.newBrowser(t)
	bb.login(tw.p, "bob", "bob-pw")
	// Bob's own unrouted call gives him a form to take the token from.
	own := teamHeldID(t, bob.call(t, "rogue__write_record", `{"key":"own","value":"1"}`))
	csrf, ids, _ := bb.page()
	if len(ids) != 1 || ids[0] != own {
		t.Fatalf("Bob's page shows %v, want only his own unrouted call, not his routed one", ids)
	}
	if status, body := bb.answer(id, "approve", csrf, tw.base); status != http.StatusForbidden || !strings.Contains(body, "four eyes") {
		t.Fatalf("Bob's approval of his own call under four eyes: %d %s, want 403", status, body)
	}
	cb := tw.newBrowser(t)
	cb.login(tw.p, "carol", "carol-pw")
	ccsrf, ids, _ := cb.page()
	if len(ids) != 1 || ids[0] != id {
		t.Fatalf("Carol's page shows %v, want Bob's routed call %s", ids, id)
	}
	if status, body := cb.answerWith(id, "approve", ccsrf, tw.base, "set_value"); status != http.StatusSeeOther {
		t.Fatalf("Carol's approval: %d %s", status, body)
	}
	if res := bob.call(t, "rogue__set_value", `{"key":"b","value":"1"}`); res.IsError || tw.execs("rogue", "set_value") != 1 {
		t.Fatalf("Bob's retry after Carol's approval: %s", text(res))
	}
}

// TestTeamUnroutedCallIsTheCallersOwn: a call no route takes is shown to
// and answered by its caller only.
func TestTeamUnroutedCallIsTheCallersOwn(t *testing.T) {
	tw := newTeamWorld(t)
	alice := tw.client(t, "alice", "alice-pw", nil)
	res := alice.call(t, "rogue__write_record", `{"key":"a","value":"<script>alert(1)</script>\u202e`+strings.Repeat("y", 2000)+`"}`)
	id := teamHeldID(t, res)
	if strings.Contains(text(res), "a member of") {
		t.Errorf("an unrouted call's refusal names a group: %s", text(res))
	}
	bb := tw.newBrowser(t)
	bb.login(tw.p, "bob", "bob-pw")
	bob := tw.client(t, "bob", "bob-pw", nil)
	teamHeldID(t, bob.call(t, "rogue__write_record", `{"key":"b","value":"1"}`)) // Bob's own, for a form
	bcsrf, ids, _ := bb.page()
	for _, x := range ids {
		if x == id {
			t.Fatalf("Bob's page shows Alice's unrouted call")
		}
	}
	if status, body := bb.answer(id, "deny", bcsrf, tw.base); status != http.StatusForbidden || !strings.Contains(body, "not yours") {
		t.Fatalf("Bob's answer to Alice's call: %d %s, want 403", status, body)
	}
	ab := tw.newBrowser(t)
	ab.login(tw.p, "alice", "alice-pw")
	acsrf, ids, body := ab.page()
	if len(ids) != 1 || ids[0] != id {
		t.Fatalf("Alice's page shows %v, want her call %s", ids, id)
	}
	// The arguments are the server's and the model's words: text, escaped.
	if strings.Contains(body, "<script>") || strings.Contains(body, "\u202e") || !strings.Contains(body, `\u003cscript\u003ealert(1)`) {
		t.Errorf("the page renders the call's arguments as markup or with a raw bidi control:\n%s", body)
	}
	// Every argument is listed, a long value whole one click away.
	if !strings.Contains(body, "Every argument") || !strings.Contains(body, "show all") ||
		!strings.Contains(body, `&lt;script&gt;alert(1)&lt;/script&gt;\u202e`+strings.Repeat("y", 2000)) {
		t.Errorf("the page does not list the long value whole, as text:\n%s", body)
	}
	if status, body := ab.answer(id, "deny", acsrf, tw.base); status != http.StatusSeeOther {
		t.Fatalf("Alice's denial: %d %s", status, body)
	}
	if ap, _ := tw.store.Get(id); ap.State != later.Denied {
		t.Errorf("after Alice's denial the call is %s", ap.State)
	}
}

// TestTeamPageRefusesWithoutCookieCSRFOrState: an answer without the
// session cookie, with a wrong CSRF token or from another origin changes
// nothing; a callback whose state was not started in this browser, was
// used already, or names no login is refused, and so is a login whose
// ID token's nonce is not the login's.
func TestTeamPageRefusesWithoutCookieCSRFOrState(t *testing.T) {
	tw := newTeamWorld(t)
	alice := tw.client(t, "alice", "alice-pw", nil)
	id := teamHeldID(t, alice.call(t, "rogue__write_record", `{"key":"c","value":"1"}`))
	ab := tw.newBrowser(t)
	ab.login(tw.p, "alice", "alice-pw")
	csrf := csrfOf(t, ab)
	anon := tw.newBrowser(t)
	if status, _ := anon.answer(id, "approve", csrf, tw.base); status != http.StatusForbidden {
		t.Errorf("an answer without the session cookie: %d, want 403", status)
	}
	if status, _ := ab.answer(id, "approve", "wrong"+csrf, tw.base); status != http.StatusForbidden {
		t.Errorf("an answer with a wrong CSRF token: %d, want 403", status)
	}
	if status, _ := ab.answer(id, "approve", "", tw.base); status != http.StatusForbidden {
		t.Errorf("an answer without a CSRF token: %d, want 403", status)
	}
	if status, _ := ab.answer(id, "approve", csrf, "https://evil.example"); status != http.StatusForbidden {
		t.Errorf("an answer from another origin: %d, want 403", status)
	}
	if ap, _ := tw.store.Get(id); ap.State != later.Waiting {
		t.Fatalf("after the refused answers the call is %s, want waiting", ap.State)
	}

	// Logging out ends the session on serve, not only in the browser: its
	// cookie, sent again, answers nothing.
	u, _ := url.Parse(tw.base + TeamPath)
	old := ab.hc.Jar.Cookies(u)
	req, _ := http.NewRequest(http.MethodPost, tw.base+TeamPath+"logout", strings.NewReader(url.Values{"csrf": {csrf}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", tw.base)
	if resp, body := ab.do(req); resp.StatusCode != http.StatusOK || !strings.Contains(body, "Logged out") {
		t.Fatalf("logout: %s %s", resp.Status, body)
	}
	ab.hc.Jar.SetCookies(u, old)
	if status, _ := ab.answer(id, "deny", csrf, tw.base); status != http.StatusForbidden {
		t.Errorf("an answer with the cookie of a session logged out: %d, want 403", status)
	}

	// A login started in one browser and finished in another (the
	// attacker's code pushed to a victim): refused.
	mallory := tw.newBrowser(t)
	cb, err := tw.p.Authorize(mallory.startLogin(), "alice", "alice-pw")
	if err != nil {
		t.Fatal(err)
	}
	victim := tw.newBrowser(t)
	if resp, body := victim.get(cb.String()); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a callback in a browser that did not start the login: %s %s, want 403", resp.Status, body)
	}
	// The state is spent by that attempt: its own browser cannot use it.
	if resp, _ := mallory.get(cb.String()); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a callback whose state was used already: %s, want 403", resp.Status)
	}
	// A state that names no login.
	b := tw.newBrowser(t)
	cb2, err := tw.p.Authorize(b.startLogin(), "alice", "alice-pw")
	if err != nil {
		t.Fatal(err)
	}
	q := cb2.Query()
	q.Set("state", "made-up")
	cb2.RawQuery = q.Encode()
	if resp, _ := b.get(cb2.String()); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a callback with a made-up state: %s, want 403", resp.Status)
	}
	// A login whose ID token carries another nonce: the code of an
	// authorization request the page did not make (its state and cookie
	// swapped into the page's own login).
	c := tw.newBrowser(t)
	pageAuth, _ := url.Parse(c.startLogin())
	pq := pageAuth.Query()
	pq.Set("nonce", "not-the-page's")
	pageAuth.RawQuery = pq.Encode()
	cb3, err := tw.p.Authorize(pageAuth.String(), "alice", "alice-pw")
	if err != nil {
		t.Fatal(err)
	}
	if resp, body := c.get(cb3.String()); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "not issued for this login") {
		t.Errorf("a callback whose ID token carries another nonce: %s %s, want 403", resp.Status, body)
	}
}

func readAudit(t *testing.T, path string) []audit.Record {
	t.Helper()
	recs, err := audit.Tail(path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func hostAnswerApprove() host.Answer {
	return host.Answer{Approve: true, Scope: decide.ScopeOnce, Via: audit.ChannelWeb}
}

// TestTeamRoutedCallNeverReachesTheCallersChannels: a call routed to a
// group is asked neither of the caller's own form (an autopilot's,
// at 2025-11-25, where the form is sent during the call) nor of a
// waiting approver (`mcphost approve`), live or once held; an unrouted
// call still is.
func TestTeamRoutedCallNeverReachesTheCallersChannels(t *testing.T) {
	w, b, _ := laterWorld(t, nil, func(o *Options) {
		o.Route = func(server, tool string, tier decide.Tier) *Route {
			if tool == "set_value" {
				return &Route{Group: "owners"}
			}
			return nil
		}
	})
	conn, err := approve.Dial(context.Background(), b.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Hello(); err != nil {
		t.Fatal(err)
	}
	ap := &autopilot{}
	c := w.connectClient(&mcp.ClientOptions{ElicitationHandler: ap.handle}, "2025-11-25")
	for _, name := range []string{"flaky__set_value", "rogue__set_value"} {
		res := c.call(t, name, `{"key":"k","value":"v"}`)
		if !res.IsError || !strings.Contains(text(res), "a member of owners") {
			t.Fatalf("%s routed to owners: %s", name, text(res))
		}
	}
	if n := ap.count(); n != 0 || w.execs("flaky", "set_value")+w.execs("rogue", "set_value") != 0 {
		t.Fatalf("routed calls were shown to the caller's form %d times, or ran", n)
	}
	// The first question the approver sees is the unrouted call's.
	done := make(chan *mcp.CallToolResult, 1)
	go func() { done <- c.call(t, "rogue__write_record", `{"key":"k","value":"v"}`) }()
	q := nextQuestion(t, conn)
	if q.Tool != "write_record" {
		t.Fatalf("the approver was shown %s (held %v), want the unrouted write_record first", q.Tool, q.Later)
	}
	if err := conn.Answer(q, host.Answer{Reason: "not now"}); err != nil {
		t.Fatal(err)
	}
	<-done
}

// TestTeamGroupsFromUserinfo: an issuer that leaves the groups and the
// profile out of its ID tokens has them read from its userinfo, for the
// same subject: Bob is still a member of owners and named on the page.
func TestTeamGroupsFromUserinfo(t *testing.T) {
	tw := newTeamWorldLean(t, true)
	alice := tw.client(t, "alice", "alice-pw", nil)
	id := teamHeldID(t, alice.call(t, "rogue__set_value", `{"key":"u","value":"1"}`))
	bb := tw.newBrowser(t)
	bb.login(tw.p, "bob", "bob-pw")
	_, ids, body := bb.page()
	if len(ids) != 1 || ids[0] != id || !strings.Contains(body, "Logged in as Bob Example (groups: owners)") {
		t.Fatalf("Bob's page with groups from userinfo shows %v:\n%s", ids, body)
	}
}

// TestTeamUserinfoAboutAnotherSubjectIsIgnored: an issuer whose userinfo
// answers about another person than the ID token's (here Bob, a member of
// owners, for Alice's login) lends Alice neither his name nor his
// groups: she stays herself on the page, a call routed to owners is not
// shown to her, and her answer to it is refused.
func TestTeamUserinfoAboutAnotherSubjectIsIgnored(t *testing.T) {
	tw := newTeamWorldPage(t, oidctest.Client{LeanIDToken: true, UserinfoOf: "u-bob"})
	carol := tw.client(t, "carol", "carol-pw", nil)
	res := carol.call(t, "flaky__set_value", `{"key":"u","value":"1"}`)
	id := teamHeldID(t, res)
	ab := tw.newBrowser(t)
	ab.login(tw.p, "alice", "alice-pw")
	csrf, ids, body := ab.page()
	if len(ids) != 0 || strings.Contains(body, "Bob") || strings.Contains(body, "owners") || !strings.Contains(body, "Logged in as u-alice.") {
		t.Fatalf("Alice's page, with userinfo about Bob, shows %v:\n%s\nwant her as u-alice, without Bob's name, groups or the call routed to owners", ids, body)
	}
	if status, body := ab.answer(id, "approve", csrf, tw.base); status != http.StatusForbidden || !strings.Contains(body, "not a member") {
		t.Fatalf("Alice's approval of the call routed to owners: %d %s, want 403 as a non-member", status, body)
	}
	if ap, _ := tw.store.Get(id); ap.State != later.Waiting {
		t.Fatalf("after Alice's answer the routed call is %s, want waiting", ap.State)
	}
}
