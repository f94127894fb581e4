package serve

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/serve/internal/oidctest"
)

// resource is the audience the tests' serve is: its canonical URL as the
// clients would know it.
const resource = "https://mcp.test/mcp"

// metadataURL is where resource's Protected Resource Metadata lives.
const metadataURL = "https://mcp.test/.well-known/oauth-protected-resource/mcp"

const redirectURI = "http://127.0.0.1:1/callback"

// providerConfig has a client for this serve (JWT and opaque tokens), one
// for another resource, serve's own for introspection, and two people.
func providerConfig() oidctest.Config {
	return oidctest.Config{
		Clients: []oidctest.Client{
			{ID: "desk-app", RedirectURIs: []string{redirectURI}, Audience: []string{resource}},
			{ID: "other-app", RedirectURIs: []string{redirectURI}, Audience: []string{"https://other.test/mcp"}},
			{ID: "opaque-app", RedirectURIs: []string{redirectURI}, Audience: []string{resource}, Opaque: true},
			{ID: "other-opaque-app", RedirectURIs: []string{redirectURI}, Audience: []string{"https://other.test/mcp"}, Opaque: true},
			{ID: "expired-app", RedirectURIs: []string{redirectURI}, Audience: []string{resource}, LifetimeSeconds: -60},
			{ID: "mcphost-serve", Secret: "serve-secret-0123456789"},
		},
		Users: []oidctest.User{
			{ID: "u-alice", Username: "alice", Password: "alice-pw", Name: "Alice Example", Email: "alice@example.test"},
			{ID: "u-bob", Username: "bob", Password: "bob-pw", Name: "Bob\u202eExample", Email: "bob@example.test"},
		},
	}
}

// oauthWorld is a world served over HTTP as a resource server of p.
type oauthWorld struct {
	*world
	url string // the server's root
	tr  *http.Transport
}

func newAuth(t *testing.T, p *oidctest.Provider, o AuthOptions) *Auth {
	t.Helper()
	o.Issuer = p.Issuer
	if o.Audience == "" {
		o.Audience = resource
	}
	a, err := NewAuth(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func newOAuthWorld(t *testing.T, a *Auth) *oauthWorld {
	t.Helper()
	return newOAuthWorldWith(t, a, worldOpts{})
}

func newOAuthWorldWith(t *testing.T, a *Auth, wo worldOpts) *oauthWorld {
	t.Helper()
	w := newWorld(t, wo)
	mux := http.NewServeMux()
	mux.Handle("/mcp", w.srv.HandlerOAuth(a))
	for _, p := range a.MetadataPaths() {
		mux.Handle(p, a.Metadata())
	}
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &oauthWorld{world: w, url: ts.URL, tr: tr}
}

// connect connects a client that sends token, at version ("" the newest).
func (o *oauthWorld) connect(t *testing.T, token, version string, e *elicitor) *mcp.ClientSession {
	t.Helper()
	opts := &mcp.ClientOptions{}
	if e != nil {
		opts.ElicitationHandler = e.handle
	}
	cl := mcp.NewClient(&mcp.Implementation{Name: "desk", Version: "1"}, opts)
	cs, err := cl.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: o.url + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{token, o.tr}}}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect with a token: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// post sends an initialize with the Authorization header auth ("": none)
// and returns the answer's status and WWW-Authenticate.
func (o *oauthWorld) post(t *testing.T, auth string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, o.url+"/mcp", strings.NewReader(initialize))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := (&http.Client{Transport: o.tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		// Let in: end the session it opened.
		del, _ := http.NewRequest(http.MethodDelete, o.url+"/mcp", nil)
		del.Header.Set("Mcp-Session-Id", id)
		del.Header.Set("Authorization", auth)
		if dr, err := (&http.Client{Transport: o.tr}).Do(del); err == nil {
			dr.Body.Close()
		}
	}
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate")
}

// forge returns token (a JWT) with its header replaced by hdr and its
// payload changed by edit, keeping its signature unless drop says so.
func forge(t *testing.T, token, hdr string, edit func(map[string]any), drop bool) string {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", token)
	}
	if hdr != "" {
		parts[0] = base64.RawURLEncoding.EncodeToString([]byte(hdr))
	}
	if edit != nil {
		b, err := base64.RawURLEncoding.DecodeString(parts[1])
		if err != nil {
			t.Fatal(err)
		}
		var claims map[string]any
		if err := json.Unmarshal(b, &claims); err != nil {
			t.Fatal(err)
		}
		edit(claims)
		b, _ = json.Marshal(claims)
		parts[1] = base64.RawURLEncoding.EncodeToString(b)
	}
	if drop {
		parts[2] = ""
	}
	return strings.Join(parts, ".")
}

// TestOAuthRefusesEveryTokenNotIssuedForIt: serve with an issuer accepts
// only the issuer's access tokens for its own audience, signed, unexpired;
// each refusal is the spec's 401 whose WWW-Authenticate names the
// Protected Resource Metadata. A token it accepts runs the call, and the
// audit record names the person and the client.
func TestOAuthRefusesEveryTokenNotIssuedForIt(t *testing.T) {
	p := oidctest.Start(t, providerConfig())
	other := oidctest.Start(t, providerConfig()) // another issuer, same clients
	a := newAuth(t, p, AuthOptions{ClientID: "mcphost-serve", ClientSecret: "serve-secret-0123456789"})
	o := newOAuthWorld(t, a)
	alice := p.Login(t, "desk-app", "alice", "alice-pw")

	wantChallenge := func(t *testing.T, name, auth, errCode string) {
		t.Helper()
		status, www := o.post(t, auth)
		if status != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", name, status)
		}
		if !strings.HasPrefix(www, "Bearer ") || !strings.Contains(www, `resource_metadata="`+metadataURL+`"`) {
			t.Errorf("%s: WWW-Authenticate %q, want Bearer naming %s", name, www, metadataURL)
		}
		if errCode == "" && strings.Contains(www, "error=") {
			t.Errorf("%s: WWW-Authenticate %q names an error for a request without a token", name, www)
		}
		if errCode != "" && !strings.Contains(www, `error="`+errCode+`"`) {
			t.Errorf("%s: WWW-Authenticate %q, want error=%q", name, www, errCode)
		}
	}
	for _, c := range []struct{ name, auth, errCode string }{
		{"no token", "", ""},
		{"another audience", "Bearer " + p.Login(t, "other-app", "alice", "alice-pw").Access, "invalid_token"},
		{"another issuer", "Bearer " + other.Login(t, "desk-app", "alice", "alice-pw").Access, "invalid_token"},
		{"alg none, unsigned", "Bearer " + forge(t, alice.Access, `{"alg":"none","typ":"JWT"}`, nil, true), "invalid_token"},
		{"signature dropped", "Bearer " + forge(t, alice.Access, "", nil, true), "invalid_token"},
		{"HS256 keyed with the issuer's public keys", "Bearer " + hmacForge(t, p.Issuer, alice.Access), "invalid_token"},
		{"claims changed under the signature", "Bearer " + forge(t, alice.Access, "", func(c map[string]any) { c["sub"] = "u-bob" }, false), "invalid_token"},
		{"an ID token naming this audience", "Bearer " + alice.ID, "invalid_token"},
		{"an opaque token the issuer never issued", "Bearer not-a-token-of-anyone", "invalid_token"},
		{"an opaque token for another audience", "Bearer " + p.Login(t, "other-opaque-app", "alice", "alice-pw").Access, "invalid_token"},
		{"basic, not bearer", "Basic YWxpY2U6cHc=", "invalid_request"},
	} {
		wantChallenge(t, c.name, c.auth, c.errCode)
	}

	// The ID token really does name this audience: only its kind refuses it.
	if !strings.Contains(string(mustDecode(t, alice.ID)), resource) {
		t.Fatalf("the provider's ID token does not name %s; the ID-token case tests nothing", resource)
	}

	// Expired: a token the issuer made already expired, by serve's own
	// clock; and a good token an hour later, by a clock set ahead.
	status, www := o.post(t, "Bearer "+p.Login(t, "expired-app", "alice", "alice-pw").Access)
	if status != http.StatusUnauthorized || !strings.Contains(www, `error="invalid_token"`) || !strings.Contains(www, "expired") {
		t.Errorf("a token the issuer made expired: %d %q, want 401 invalid_token saying it expired", status, www)
	}
	later := newAuth(t, p, AuthOptions{Now: func() time.Time { return time.Now().Add(time.Hour) }})
	lo := newOAuthWorld(t, later)
	status, www = lo.post(t, "Bearer "+alice.Access)
	if status != http.StatusUnauthorized || !strings.Contains(www, `error="invalid_token"`) || !strings.Contains(www, "expired") {
		t.Errorf("an expired token: %d %q, want 401 invalid_token saying it expired", status, www)
	}

	// Accepted: the call runs, and the audit record names person and client.
	cs := o.connect(t, alice.Access, "2025-11-25", nil)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "flaky__read_value", Arguments: map[string]any{"key": "a"}})
	if err != nil || res.IsError {
		t.Fatalf("alice's call with a good token: %v %s", err, textOf(res))
	}
	recs := o.outcomes("read_value")
	if len(recs) != 1 {
		t.Fatalf("%d outcomes, want 1", len(recs))
	}
	c := recs[0].Client
	if c == nil || c.Person == nil || c.Person.Issuer != p.Issuer || c.Person.Subject != "u-alice" || c.ID != "desk-app" ||
		c.Person.Name != "Alice Example" || c.Person.Email != "alice@example.test" {
		t.Fatalf("the outcome names %+v (person %+v), want alice of %s through desk-app", c, personOf(c), p.Issuer)
	}

	// An opaque token is checked by introspection and runs as its person.
	opaque := p.Login(t, "opaque-app", "bob", "bob-pw")
	if strings.Count(opaque.Access, ".") == 2 {
		t.Fatalf("the opaque client got a JWT: %q", opaque.Access)
	}
	cs = o.connect(t, opaque.Access, "2025-11-25", nil)
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "flaky__read_value", Arguments: map[string]any{"key": "b"}})
	if err != nil || res.IsError {
		t.Fatalf("bob's call with an opaque token: %v %s", err, textOf(res))
	}
	recs = o.outcomes("read_value")
	if c := recs[len(recs)-1].Client; c == nil || c.Person == nil || c.Person.Subject != "u-bob" || c.ID != "opaque-app" ||
		c.Person.Name != `Bob\u202eExample` {
		t.Fatalf("the opaque token's outcome names %+v (person %+v), want bob through opaque-app, his name escaped", c, personOf(c))
	}

	// An opaque token the issuer still calls active is refused once it
	// has expired by serve's clock.
	lateIntro := newOAuthWorld(t, newAuth(t, p, AuthOptions{ClientID: "mcphost-serve", ClientSecret: "serve-secret-0123456789",
		Now: func() time.Time { return time.Now().Add(time.Hour) }}))
	status, www = lateIntro.post(t, "Bearer "+opaque.Access)
	if status != http.StatusUnauthorized || !strings.Contains(www, "expired") {
		t.Errorf("an opaque token past its expiry: %d %q, want 401 saying it expired", status, www)
	}

	// Without introspection credentials an opaque token cannot be checked.
	noIntro := newOAuthWorld(t, newAuth(t, p, AuthOptions{}))
	status, www = noIntro.post(t, "Bearer "+opaque.Access)
	if status != http.StatusUnauthorized || !strings.Contains(www, `error="invalid_token"`) {
		t.Errorf("an opaque token without introspection credentials: %d %q, want 401 invalid_token", status, www)
	}

	// A scope serve requires and the token lacks: 403 insufficient_scope.
	scoped := newOAuthWorld(t, newAuth(t, p, AuthOptions{Scopes: []string{"mcp:admin"}}))
	status, www = scoped.post(t, "Bearer "+alice.Access)
	if status != http.StatusForbidden || !strings.Contains(www, `error="insufficient_scope"`) || !strings.Contains(www, `scope="mcp:admin"`) ||
		!strings.Contains(www, `resource_metadata="`+metadataURL+`"`) {
		t.Errorf("a token without the required scope: %d %q, want 403 insufficient_scope naming the scope and metadata", status, www)
	}
	if status, _ := newOAuthWorld(t, newAuth(t, p, AuthOptions{Scopes: []string{"mcp"}})).post(t, "Bearer "+alice.Access); status != http.StatusOK {
		t.Errorf("a token with the required scope: status %d, want 200", status)
	}
}

func mustDecode(t *testing.T, jwt string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(strings.Split(jwt, ".")[1])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func textOf(res *mcp.CallToolResult) string {
	if res == nil {
		return "<nil>"
	}
	return text(res)
}

// TestOAuthMetadataDocument: the Protected Resource Metadata is served,
// without a token, at the well-known path with the resource's path and at
// the bare one, and names the resource, the issuer and the scopes.
func TestOAuthMetadataDocument(t *testing.T) {
	p := oidctest.Start(t, providerConfig())
	a := newAuth(t, p, AuthOptions{Scopes: []string{"mcp"}})
	if a.MetadataURL() != metadataURL {
		t.Errorf("MetadataURL %q, want %q", a.MetadataURL(), metadataURL)
	}
	o := newOAuthWorld(t, a)
	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		resp, err := http.Get(o.url + path)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Resource    string   `json:"resource"`
			AuthServers []string `json:"authorization_servers"`
			Scopes      []string `json:"scopes_supported"`
			Methods     []string `json:"bearer_methods_supported"`
		}
		err = json.NewDecoder(resp.Body).Decode(&doc)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("GET %s: %d %s %v", path, resp.StatusCode, resp.Header.Get("Content-Type"), err)
		}
		if doc.Resource != resource || !slices.Equal(doc.AuthServers, []string{p.Issuer}) ||
			!slices.Equal(doc.Scopes, []string{"mcp"}) || !slices.Equal(doc.Methods, []string{"header"}) {
			t.Errorf("GET %s: %+v, want resource %s, issuer %s, scope mcp, header", path, doc, resource, p.Issuer)
		}
	}
}

// TestOAuthPeopleDoNotShareGrantsOrTaint: alice's and bob's sessions on
// one serve, through the same client program, each have their own grants
// and taint, at both protocol versions; and bob cannot use alice's
// session by its id.
func TestOAuthPeopleDoNotShareGrantsOrTaint(t *testing.T) {
	p := oidctest.Start(t, providerConfig())
	o := newOAuthWorld(t, newAuth(t, p, AuthOptions{}))
	alice := p.Login(t, "desk-app", "alice", "alice-pw").Access
	bob := p.Login(t, "desk-app", "bob", "bob-pw").Access
	for _, version := range []string{"2025-11-25", ""} {
		ea := &elicitor{answers: []*mcp.ElicitResult{accept(DecisionAllowSession, "")}}
		a := o.connect(t, alice, version, ea)
		for i := range 2 {
			if res := setValue(t, a, "v"); res.IsError {
				t.Fatalf("%q: alice's call %d: %s", version, i, text(res))
			}
		}
		if ea.count() != 1 {
			t.Fatalf("%q: alice was asked %d times, want once (her session grant)", version, ea.count())
		}
		if res := callArgs(t, a, &mcp.CallToolParams{Name: "flaky__read_value", Arguments: map[string]any{"key": "k"}}); res.IsError {
			t.Fatalf("%q: alice's read: %s", version, text(res))
		}
		eb := &elicitor{}
		b := o.connect(t, bob, version, eb)
		if res := setValue(t, b, "v"); !res.IsError || eb.count() != 1 {
			t.Fatalf("%q: bob's call ran on alice's grant (bob asked %d times): %s", version, eb.count(), text(res))
		}
	}
	// Taint: alice's sessions read what a server holds (a private read);
	// bob's, whose calls were all refused, saw nothing.
	o.srv.mu.Lock()
	var aliceTaint, bobTaint []bool
	for _, sess := range append(mapValues(o.srv.sessions), mapValues(o.srv.idents)...) {
		_, priv := sess.gate.Taint()
		switch sess.caller.Person.Subject {
		case "u-alice":
			aliceTaint = append(aliceTaint, priv)
		case "u-bob":
			bobTaint = append(bobTaint, priv)
		}
	}
	o.srv.mu.Unlock()
	if len(aliceTaint) != 2 || len(bobTaint) != 2 {
		t.Fatalf("sessions: alice %d, bob %d; want 2 each (one per protocol version)", len(aliceTaint), len(bobTaint))
	}
	if slices.Contains(aliceTaint, false) || slices.Contains(bobTaint, true) {
		t.Fatalf("private-read taint: alice %v, bob %v; want alice's sessions tainted and bob's not", aliceTaint, bobTaint)
	}

	// Bob's token with alice's session id is refused before serve.
	cs := o.connect(t, alice, "2025-11-25", nil)
	req, _ := http.NewRequest(http.MethodPost, o.url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"flaky__set_value","arguments":{"key":"k","value":"v"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	req.Header.Set("Authorization", "Bearer "+bob)
	resp, err := (&http.Client{Transport: o.tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("bob on alice's session: status %d, want 403", resp.StatusCode)
	}
	for _, r := range o.outcomes("set_value") {
		if r.Client == nil || r.Client.Person == nil {
			t.Fatalf("an outcome names no person: %+v", r)
		}
		if r.Client.Person.Subject == "u-bob" && r.Status == "success" {
			t.Fatalf("a call of bob's ran: %+v", r)
		}
	}
}

func mapValues[K comparable](m map[K]*session) []*session {
	out := make([]*session, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// personOf is c's person, for messages.
func personOf(c *audit.Client) any {
	if c == nil {
		return nil
	}
	return c.Person
}

// TestASessionKeepsItsPerson: a client session is the person's who opened
// it; serve refuses it to anyone else, whatever the transport (over HTTP
// the SDK refuses first).
func TestASessionKeepsItsPerson(t *testing.T) {
	w := newWorld(t, worldOpts{})
	w.connect(nil) // initialized; no call yet, so serve has no state for it
	var ss *mcp.ServerSession
	for s := range w.srv.srv.Sessions() {
		ss = s
	}
	if ss == nil {
		t.Fatal("no SDK session")
	}
	alice := &Caller{Person: audit.Person{Issuer: "https://login.test", Subject: "u-alice"}, ClientID: "desk"}
	bob := &Caller{Person: audit.Person{Issuer: "https://login.test", Subject: "u-bob"}, ClientID: "desk"}
	first, err := w.srv.session(ss, alice)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := w.srv.session(ss, &Caller{Person: alice.Person, ClientID: "desk"}); err != nil || again != first {
		t.Fatalf("alice again: %v, same session %v; want hers", err, again == first)
	}
	for _, c := range []*Caller{bob, nil} {
		if sess, err := w.srv.session(ss, c); err != ErrOtherPerson || sess != nil {
			t.Errorf("%+v on alice's session: %v, %v; want ErrOtherPerson", c, sess, err)
		}
	}
}

// TestOAuthTheTokenIsNotPassedOn: a caller's access token is for serve
// alone (the spec forbids passing it through): an upstream server over
// HTTP never sees it.
func TestOAuthTheTokenIsNotPassedOn(t *testing.T) {
	p := oidctest.Start(t, providerConfig())
	f, err := fixtures.New("tasks", fixtures.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	fh := f.HTTPHandler()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		fh.ServeHTTP(w, r)
	}))
	t.Cleanup(up.Close)
	o := newOAuthWorldWith(t, newAuth(t, p, AuthOptions{}), worldOpts{specs: []client.Spec{{Name: "tasks", Transport: client.TransportHTTP, URL: up.URL}}})
	alice := p.Login(t, "desk-app", "alice", "alice-pw").Access
	<-o.srv.ready // the upstream server has listed its tools
	cs := o.connect(t, alice, "2025-11-25", nil)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tasks__list_tasks", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("alice's call: %v %s (servers %+v)", err, textOf(res), o.m.Servers())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("the upstream server saw no request")
	}
	for _, h := range seen {
		if strings.Contains(h, alice) || h != "" {
			t.Fatalf("the upstream server was sent Authorization %q; want none (serve has no credentials of its own for it)", h)
		}
	}
}

// clientObserver is an Observer that can name a session's person
// (personObserver), recording the clients it was asked for.
type clientObserver struct {
	host.NopObserver
	mu      sync.Mutex
	clients []*audit.Client
}

func (o *clientObserver) ForClient(c *audit.Client) host.Observer {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.clients = append(o.clients, c)
	return o
}

// TestOAuthTelemetryNamesThePerson: a person's session observes its calls
// through the observer made for its client, which names the person.
func TestOAuthTelemetryNamesThePerson(t *testing.T) {
	p := oidctest.Start(t, providerConfig())
	obs := &clientObserver{}
	o := newOAuthWorldWith(t, newAuth(t, p, AuthOptions{}), worldOpts{tweak: func(so *Options) { so.Observer = obs }})
	cs := o.connect(t, p.Login(t, "desk-app", "alice", "alice-pw").Access, "2025-11-25", nil)
	if res := callArgs(t, cs, &mcp.CallToolParams{Name: "flaky__read_value", Arguments: map[string]any{"key": "k"}}); res.IsError {
		t.Fatalf("alice's read: %s", text(res))
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.clients) != 1 || obs.clients[0].Person == nil || obs.clients[0].Person.Subject != "u-alice" || obs.clients[0].ID != "desk-app" {
		t.Fatalf("observers made for %+v, want one for alice through desk-app", obs.clients)
	}
}

// TestCallerIdentityIsTheRawSubject: two subjects that escape to the same
// text for the record are two people, never one.
func TestCallerIdentityIsTheRawSubject(t *testing.T) {
	a := &Auth{o: AuthOptions{Issuer: "https://login.test"}}
	raw, err := a.caller("u\x01", "desk", "", "", "", nil, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	lookalike, err := a.caller(raw.Person.Subject, "desk", "", "", "", nil, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if raw.Person.Subject != lookalike.Person.Subject {
		t.Fatalf("the recorded subjects %q and %q differ; the test needs two that escape alike", raw.Person.Subject, lookalike.Person.Subject)
	}
	if samePerson(raw, lookalike) {
		t.Fatalf("subjects %q and %q are one person to serve", "u\x01", lookalike.Person.Subject)
	}
}

// hmacForge re-signs token with HS256, keyed with the issuer's published
// key set: the old trick against a verifier that lets the token choose
// its algorithm.
func hmacForge(t *testing.T, issuer, token string) string {
	t.Helper()
	resp, err := http.Get(issuer + "/keys")
	if err != nil {
		t.Fatal(err)
	}
	jwks, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the issuer's keys: %d %v", resp.StatusCode, err)
	}
	parts := strings.Split(forge(t, token, `{"alg":"HS256","typ":"JWT"}`, nil, true), ".")
	mac := hmac.New(sha256.New, jwks)
	mac.Write([]byte(parts[0] + "." + parts[1]))
	return parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// TestAccessTokenTypes: RFC 9068 marks an access token with typ at+jwt;
// an issuer that writes JWT (the provider the other tests run does) is
// taken at its word only for a token with no claim only ID tokens carry;
// any other typ is refused. The provider of the other tests cannot write
// at+jwt, so these tokens are signed here, with a key the verifier is
// given directly.
func TestAccessTokenTypes(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	const issuer = "https://login.test"
	a := &Auth{o: AuthOptions{Issuer: issuer, Audience: resource}, verifier: oidc.NewVerifier(issuer,
		&oidc.StaticKeySet{PublicKeys: []crypto.PublicKey{&key.PublicKey}}, &oidc.Config{ClientID: resource, SupportedSigningAlgs: signingAlgs})}
	sign := func(typ string, extra map[string]any) string {
		t.Helper()
		opts := &jose.SignerOptions{}
		if typ != "" {
			opts = opts.WithType(jose.ContentType(typ))
		}
		signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, opts)
		if err != nil {
			t.Fatal(err)
		}
		claims := map[string]any{"iss": issuer, "sub": "u-1", "aud": resource, "client_id": "desk", "exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix()}
		for k, v := range extra {
			claims[k] = v
		}
		b, _ := json.Marshal(claims)
		jws, err := signer.Sign(b)
		if err != nil {
			t.Fatal(err)
		}
		s, err := jws.CompactSerialize()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, c := range []struct {
		name  string
		token string
		ok    bool
	}{
		{"at+jwt", sign("at+jwt", nil), true},
		{"application/at+jwt", sign("application/at+jwt", nil), true},
		{"JWT", sign("JWT", nil), true},
		{"no typ", sign("", nil), true},
		{"at+jwt with a nonce", sign("at+jwt", map[string]any{"nonce": "n"}), true},
		{"JWT with a nonce", sign("JWT", map[string]any{"nonce": "n"}), false},
		{"JWT with at_hash", sign("JWT", map[string]any{"at_hash": "h"}), false},
		{"no typ with c_hash", sign("", map[string]any{"c_hash": "h"}), false},
		{"a logout token's typ", sign("logout+jwt", nil), false},
		{"no client", sign("at+jwt", map[string]any{"client_id": ""}), false},
		{"the client as azp", sign("at+jwt", map[string]any{"client_id": "", "azp": "desk"}), true},
		{"no subject", sign("at+jwt", map[string]any{"sub": ""}), false},
	} {
		c2, err := a.Check(context.Background(), c.token)
		var te *tokenError
		switch {
		case c.ok && (err != nil || c2.ClientID != "desk" || c2.Person.Subject != "u-1"):
			t.Errorf("%s: %v %+v, want accepted as u-1 through desk", c.name, err, c2)
		case !c.ok && !errors.As(err, &te):
			t.Errorf("%s: %v, want refused as an invalid token", c.name, err)
		}
	}
}

// TestOAuthAnMCPClientFindsItsWayFromThe401: go-sdk's own OAuth client,
// pointed at serve alone, follows the 401 to the Protected Resource
// Metadata, from it to the issuer, logs the person in there (the code
// flow with PKCE and the resource indicator) and comes back with a token
// serve accepts: the challenge and the metadata are what the spec's
// clients expect.
func TestOAuthAnMCPClientFindsItsWayFromThe401(t *testing.T) {
	ts := httptest.NewUnstartedServer(nil)
	res := "http://" + ts.Listener.Addr().String() + "/mcp"
	cfg := providerConfig()
	cfg.Clients = append(cfg.Clients, oidctest.Client{ID: "sdk-app", RedirectURIs: []string{redirectURI}, Audience: []string{res}})
	p := oidctest.Start(t, cfg)
	a := newAuth(t, p, AuthOptions{Audience: res, Scopes: []string{"mcp"}})
	w := newWorld(t, worldOpts{})
	mux := http.NewServeMux()
	mux.Handle("/mcp", w.srv.HandlerOAuth(a))
	for _, path := range a.MetadataPaths() {
		mux.Handle(path, a.Metadata())
	}
	ts.Config.Handler = mux
	ts.Start()
	t.Cleanup(ts.Close)

	var asked []string
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		PreregisteredClient: &oauthex.ClientCredentials{ClientID: "sdk-app"},
		RedirectURL:         redirectURI,
		AuthorizationCodeFetcher: func(_ context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			asked = append(asked, args.URL)
			cb, err := p.Authorize(args.URL, "alice", "alice-pw")
			if err != nil {
				return nil, err
			}
			return &auth.AuthorizationResult{Code: cb.Query().Get("code"), State: cb.Query().Get("state")}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	cl := mcp.NewClient(&mcp.Implementation{Name: "sdk", Version: "1"}, nil)
	cs, err := cl.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: res, OAuthHandler: h},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("go-sdk's OAuth client could not get in: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	if r := callArgs(t, cs, &mcp.CallToolParams{Name: "flaky__read_value", Arguments: map[string]any{"key": "k"}}); r.IsError {
		t.Fatalf("the call: %s", text(r))
	}
	if len(asked) != 1 || !strings.HasPrefix(asked[0], p.Issuer+"/authorize?") || !strings.Contains(asked[0], "resource="+url.QueryEscape(res)) ||
		!strings.Contains(asked[0], "scope=mcp") {
		t.Errorf("the client was sent to %v; want the issuer's authorization endpoint once, for this resource and scope mcp", asked)
	}
	recs := w.outcomes("read_value")
	if c := recs[len(recs)-1].Client; c == nil || c.Person == nil || c.Person.Subject != "u-alice" || c.ID != "sdk-app" {
		t.Fatalf("the outcome names %+v, want alice through sdk-app", c)
	}
}

// TestOAuthAnIssuerGoneIsNotTheTokensFault: when the issuer's keys cannot
// be fetched, a token is answered 503, not 401: a client told its token is
// invalid would send the person to log in again, to no end.
func TestOAuthAnIssuerGoneIsNotTheTokensFault(t *testing.T) {
	p := oidctest.Start(t, providerConfig())
	alice := p.Login(t, "desk-app", "alice", "alice-pw").Access
	o := newOAuthWorld(t, newAuth(t, p, AuthOptions{})) // discovered; its keys are fetched at the first token
	p.Stop()
	if status, www := o.post(t, "Bearer "+alice); status != http.StatusServiceUnavailable || www != "" {
		t.Fatalf("a token while the issuer is gone: %d %q, want 503 without a challenge", status, www)
	}
}
