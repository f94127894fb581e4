package oauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/internal/netcheck"
	"github.com/mcphost/mcphost/oauth"
	"github.com/mcphost/mcphost/oauth/oauthtest"
)

// browse plays the person's browser: it follows the authorization URL, and
// the fake authorization server's redirect, back to mcphost's loopback
// callback.
func browse(ctx context.Context, authURL string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

type env struct {
	as    *oauthtest.AuthServer
	srv   *oauthtest.MCPServer
	store *oauth.Store
}

func newEnv(t *testing.T, aso oauthtest.AuthServerOptions, mso oauthtest.MCPServerOptions) *env {
	as := oauthtest.NewAuthServer(t, aso)
	return &env{as: as, srv: oauthtest.NewMCPServer(t, as, mso), store: oauth.NewStore(filepath.Join(t.TempDir(), "state", "tokens"))}
}

func (e *env) config() oauth.Config {
	return oauth.Config{Server: "remote", URL: e.srv.URL, Store: e.store}
}

func (e *env) login(t *testing.T, cfg oauth.Config) *oauth.Record {
	t.Helper()
	var prompted []string
	rec, err := oauth.Login(t.Context(), cfg, oauth.LoginOptions{Prompt: func(ctx context.Context, u string) error {
		prompted = append(prompted, u)
		return browse(ctx, u)
	}})
	if err != nil {
		t.Fatalf("Login: %v", err)
	}
	if len(prompted) != 1 {
		t.Fatalf("prompted %d times, want once", len(prompted))
	}
	return rec
}

// manager starts one HTTP server with a headless handler, as mcphost's
// commands do.
func (e *env) manager(t *testing.T, serverURL string) (*client.Manager, *oauth.Handler) {
	t.Helper()
	cfg := e.config()
	cfg.URL = serverURL
	h, err := oauth.NewHandler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := client.New([]client.Spec{{Name: "remote", Transport: client.TransportHTTP, URL: serverURL, OAuth: h}}, client.Options{StartTimeout: 30 * time.Second})
	t.Cleanup(func() { m.Close() })
	m.Start(t.Context())
	return m, h
}

func TestLoginWithDynamicRegistration(t *testing.T) {
	e := newEnv(t, oauthtest.AuthServerOptions{Scopes: []string{"tools"}}, oauthtest.MCPServerOptions{})
	rec := e.login(t, e.config())

	su, _ := url.Parse(e.srv.URL)
	origin, _ := netcheck.Origin(su)
	if rec.Origin != origin || rec.Resource != e.srv.URL || rec.Issuer != e.as.URL {
		t.Errorf("record bound to origin %q, resource %q, issuer %q; want %q, %q, %q", rec.Origin, rec.Resource, rec.Issuer, origin, e.srv.URL, e.as.URL)
	}
	if rec.AccessToken == "" || rec.RefreshToken == "" || rec.Expiry.IsZero() {
		t.Errorf("record lacks a token, refresh token or expiry: %+v", rec.Expiry)
	}
	if !slices.Equal(rec.Scopes, []string{"tools"}) {
		t.Errorf("scopes = %q, want [tools]", rec.Scopes)
	}
	reqs := e.as.TokenRequests()
	if len(reqs) != 1 || reqs[0].GrantType != "authorization_code" || reqs[0].Resource != e.srv.URL || reqs[0].Error != "" {
		t.Errorf("token requests = %+v, want one authorization_code grant for %s", reqs, e.srv.URL)
	}

	// The file is the user's alone, in a directory that is too.
	path := filepath.Join(e.store.Dir(), "remote.json")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o600 {
		t.Errorf("token file mode = %o, want 600", got)
	}
	di, err := os.Stat(e.store.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if got := di.Mode().Perm(); got != 0o700 {
		t.Errorf("token directory mode = %o, want 700", got)
	}
	entries, _ := os.ReadDir(e.store.Dir())
	for _, de := range entries {
		if strings.HasPrefix(de.Name(), ".tmp-") {
			t.Errorf("temporary file %s left behind", de.Name())
		}
	}
	loaded, err := e.store.Load("remote")
	if err != nil || loaded == nil || loaded.AccessToken != rec.AccessToken {
		t.Errorf("Load after Login = %v, %v; want the same token", loaded != nil, err)
	}
}

func TestLoginWithPreregisteredClientKeepsSecretOutOfStore(t *testing.T) {
	e := newEnv(t, oauthtest.AuthServerOptions{Clients: map[string]string{"mcphost-ci": "s3cret-value"}, NoRegistration: true, Scopes: []string{"tools", "admin"}}, oauthtest.MCPServerOptions{})
	cfg := e.config()
	cfg.Client = &oauth.ClientConfig{ClientID: "mcphost-ci", ClientSecret: "s3cret-value", Scopes: []string{"tools"}}
	rec := e.login(t, cfg)
	if rec.ClientID != "mcphost-ci" || !slices.Equal(rec.Scopes, []string{"tools"}) {
		t.Errorf("client %q with scopes %q, want mcphost-ci with [tools]", rec.ClientID, rec.Scopes)
	}
	data, err := os.ReadFile(filepath.Join(e.store.Dir(), "remote.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "s3cret-value") {
		t.Error("the configured client secret was written to the token file")
	}

	// A refresh authenticates with the configured secret.
	e.expireStored(t)
	m, _ := e.managerWithClient(t, cfg)
	if st := m.Servers()[0]; st.State != client.StateReady {
		t.Fatalf("server state %s (%s), want ready after a refresh", st.State, st.LastError)
	}
	reqs := e.as.TokenRequests()
	if last := reqs[len(reqs)-1]; last.GrantType != "refresh_token" || last.Error != "" || last.ClientID != "mcphost-ci" {
		t.Errorf("last token request = %+v, want a successful refresh by mcphost-ci", last)
	}
}

// A server that supports client ID metadata documents gets mcphost's
// document URL as the client ID, with no registration, and refreshes go by
// it too; one that does not never sees the URL.
func TestLoginWithClientMetadataDocument(t *testing.T) {
	const doc = "https://mcphost.example/oauth/client.json"
	t.Run("supported", func(t *testing.T) {
		e := newEnv(t, oauthtest.AuthServerOptions{MetadataClients: []string{doc}, NoRegistration: true}, oauthtest.MCPServerOptions{})
		cfg := e.config()
		cfg.ClientMetadataURL = doc
		if rec := e.login(t, cfg); rec.ClientID != doc || rec.ClientSecret != "" {
			t.Errorf("client %q (secret kept: %v), want %s without a secret", rec.ClientID, rec.ClientSecret != "", doc)
		}
		e.expireStored(t)
		m, _ := e.managerWithClient(t, cfg)
		if st := m.Servers()[0]; st.State != client.StateReady {
			t.Fatalf("server state %s (%s), want ready after a refresh", st.State, st.LastError)
		}
		reqs := e.as.TokenRequests()
		if last := reqs[len(reqs)-1]; last.GrantType != "refresh_token" || last.Error != "" || last.ClientID != doc {
			t.Errorf("last token request = %+v, want a successful refresh by %s", last, doc)
		}
	})
	t.Run("unsupported", func(t *testing.T) {
		e := newEnv(t, oauthtest.AuthServerOptions{}, oauthtest.MCPServerOptions{})
		cfg := e.config()
		cfg.ClientMetadataURL = doc
		if rec := e.login(t, cfg); rec.ClientID == doc || rec.ClientID == "" {
			t.Errorf("client %q, want one from dynamic registration", rec.ClientID)
		}
	})
}

func TestNewHandlerRefusesClientMetadataURL(t *testing.T) {
	for _, u := range []string{"http://mcphost.example/client.json", "https://mcphost.example", "https://mcphost.example/", "https:///client.json", "client.json"} {
		cfg := oauth.Config{Server: "remote", URL: "https://mcp.example/mcp", Store: oauth.NewStore(t.TempDir()), ClientMetadataURL: u}
		if _, err := oauth.NewHandler(cfg); err == nil {
			t.Errorf("NewHandler accepted client metadata URL %q, want an error", u)
		}
	}
}

func (e *env) managerWithClient(t *testing.T, cfg oauth.Config) (*client.Manager, *oauth.Handler) {
	t.Helper()
	h, err := oauth.NewHandler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := client.New([]client.Spec{{Name: cfg.Server, Transport: client.TransportHTTP, URL: cfg.URL, OAuth: h}}, client.Options{})
	t.Cleanup(func() { m.Close() })
	m.Start(t.Context())
	return m, h
}

// expireStored makes the stored access token expired on both sides.
func (e *env) expireStored(t *testing.T) string {
	t.Helper()
	rec, err := e.store.Load("remote")
	if err != nil || rec == nil {
		t.Fatalf("Load: %v, %v", rec, err)
	}
	e.as.Expire(rec.AccessToken)
	rec.Expiry = time.Now().Add(-time.Hour)
	if err := e.store.Save(rec); err != nil {
		t.Fatal(err)
	}
	return rec.AccessToken
}

func TestManagerListsAndCallsWithToken(t *testing.T) {
	e := newEnv(t, oauthtest.AuthServerOptions{}, oauthtest.MCPServerOptions{})
	rec := e.login(t, e.config())
	m, h := e.manager(t, e.srv.URL)
	if st := m.Servers()[0]; st.State != client.StateReady {
		t.Fatalf("server state %s (%s), want ready", st.State, st.LastError)
	}
	if _, ok := m.Tool("remote", "echo"); !ok {
		t.Fatal("echo is not in the catalog")
	}
	res := m.Call(t.Context(), "remote", "echo", json.RawMessage(`{"text":"hi"}`), client.CallOptions{})
	if res.Outcome != client.OutcomeSuccess {
		t.Fatalf("call: %s (%v)", res.Outcome, res.Err)
	}
	if h.LoginRequired() != nil {
		t.Errorf("LoginRequired = %v after a good run", h.LoginRequired())
	}
	// The catalog comes from mcphost's own raw tools/list POST: it must have
	// carried the token like the SDK's requests.
	var listed, called bool
	for _, s := range e.srv.Seen() {
		switch s.RPCMethod {
		case "tools/list":
			listed = listed || s.Bearer == rec.AccessToken
		case "tools/call":
			called = called || s.Bearer == rec.AccessToken
		}
	}
	if !listed || !called {
		t.Errorf("tools/list with token: %v, tools/call with token: %v; want both", listed, called)
	}
}

func TestExpiredTokenIsRefreshedWithResource(t *testing.T) {
	e := newEnv(t, oauthtest.AuthServerOptions{}, oauthtest.MCPServerOptions{})
	e.login(t, e.config())
	old := e.expireStored(t)

	m, _ := e.manager(t, e.srv.URL)
	if st := m.Servers()[0]; st.State != client.StateReady {
		t.Fatalf("server state %s (%s), want ready", st.State, st.LastError)
	}
	reqs := e.as.TokenRequests()
	last := reqs[len(reqs)-1]
	if last.GrantType != "refresh_token" || last.Resource != e.srv.URL || last.Error != "" {
		t.Errorf("last token request = %+v, want a refresh for resource %s", last, e.srv.URL)
	}
	rec, _ := e.store.Load("remote")
	if rec.AccessToken == old || !rec.Expiry.After(time.Now()) {
		t.Error("the stored token was not replaced by the refreshed one")
	}
	for _, s := range e.srv.Seen() {
		if s.Bearer == old {
			t.Errorf("the expired token was sent (%s %s)", s.HTTPMethod, s.RPCMethod)
		}
	}
	fi, _ := os.Stat(filepath.Join(e.store.Dir(), "remote.json"))
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode after refresh = %o, want 600", fi.Mode().Perm())
	}
}

func TestRejectedTokenIsRefreshed(t *testing.T) {
	e := newEnv(t, oauthtest.AuthServerOptions{}, oauthtest.MCPServerOptions{})
	rec := e.login(t, e.config())
	e.as.Expire(rec.AccessToken) // the server says no; mcphost's clock still says yes

	m, _ := e.manager(t, e.srv.URL)
	if st := m.Servers()[0]; st.State != client.StateReady {
		t.Fatalf("server state %s (%s), want ready", st.State, st.LastError)
	}
	if reqs := e.as.TokenRequests(); reqs[len(reqs)-1].GrantType != "refresh_token" {
		t.Errorf("token requests = %+v, want a refresh last", reqs)
	}
}

func TestHeadlessWithoutTokenNeedsLogin(t *testing.T) {
	e := newEnv(t, oauthtest.AuthServerOptions{}, oauthtest.MCPServerOptions{})
	m, h := e.manager(t, e.srv.URL)
	st := m.Servers()[0]
	if st.State != client.StateFailed {
		t.Fatalf("server state %s, want failed", st.State)
	}
	const want = "server remote needs you to log in: run mcphost auth login remote"
	lr := h.LoginRequired()
	if lr == nil || lr.Error() != want {
		t.Fatalf("LoginRequired = %v, want %q", lr, want)
	}
	if !strings.Contains(st.LastError, want) {
		t.Errorf("last error %q does not say %q", st.LastError, want)
	}
	if len(e.as.TokenRequests()) != 0 {
		t.Error("a headless run talked to the token endpoint without a token to refresh")
	}
}

func TestHeadlessWithDeadRefreshTokenNeedsLogin(t *testing.T) {
	e := newEnv(t, oauthtest.AuthServerOptions{}, oauthtest.MCPServerOptions{})
	e.login(t, e.config())
	e.expireStored(t)
	e.as.RevokeRefreshTokens()
	_, h := e.manager(t, e.srv.URL)
	if lr := h.LoginRequired(); lr == nil || !strings.Contains(lr.Reason, "invalid_grant") {
		t.Fatalf("LoginRequired = %+v, want one saying the refresh was refused", lr)
	}
}

func TestHeadlessWithExpiredTokenAndNoRefreshTokenSendsNothing(t *testing.T) {
	e := newEnv(t, oauthtest.AuthServerOptions{NoRefreshTokens: true}, oauthtest.MCPServerOptions{})
	rec := e.login(t, e.config())
	e.expireStored(t)
	_, h := e.manager(t, e.srv.URL)
	if h.LoginRequired() == nil {
		t.Fatal("no login required for an expired token without a refresh token")
	}
	for _, s := range e.srv.Seen() {
		if s.Bearer == rec.AccessToken {
			t.Error("the expired token was sent")
		}
	}
}

func TestTokenNeverLeavesItsOrigin(t *testing.T) {
	other := oauthtest.NewRecorder(t)
	e := newEnv(t, oauthtest.AuthServerOptions{}, oauthtest.MCPServerOptions{RedirectTool: "leak", RedirectTo: other.URL + "/steal"})
	e.login(t, e.config())
	m, _ := e.manager(t, e.srv.URL)
	if st := m.Servers()[0]; st.State != client.StateReady {
		t.Fatalf("server state %s (%s), want ready", st.State, st.LastError)
	}
	// The server redirects this call to another port on the same host:
	// net/http would keep the Authorization header on such a redirect. The
	// client refuses to follow it at all.
	r := m.Call(t.Context(), "remote", "leak", json.RawMessage(`{}`), client.CallOptions{})
	if got := other.Authorization(); len(got) != 0 {
		t.Errorf("the other origin received %d requests (Authorization %q)", len(got), got)
	}
	if r.Err == nil || !strings.Contains(r.Err.Error(), "refused a redirect") {
		t.Errorf("call: %s (%v), want the redirect refused", r.Outcome, r.Err)
	}
}

func TestTokenIsNotSentAfterTheServerMoved(t *testing.T) {
	e := newEnv(t, oauthtest.AuthServerOptions{}, oauthtest.MCPServerOptions{})
	rec := e.login(t, e.config())
	// The configuration now points "remote" at another server.
	moved := oauthtest.NewMCPServer(t, e.as, oauthtest.MCPServerOptions{})
	_, h := e.manager(t, moved.URL)
	for _, s := range moved.Seen() {
		if s.Bearer != "" {
			t.Errorf("a token reached the new URL: old token %v", s.Bearer == rec.AccessToken)
		}
	}
	if h.LoginRequired() == nil {
		t.Error("no login required at the new URL")
	}
}

func TestLoginRefusesJavascriptAuthorizationURL(t *testing.T) {
	e := newEnv(t, oauthtest.AuthServerOptions{AuthorizationEndpoint: "javascript:alert(document.cookie)//"}, oauthtest.MCPServerOptions{})
	prompted := false
	_, err := oauth.Login(t.Context(), e.config(), oauth.LoginOptions{Prompt: func(context.Context, string) error {
		prompted = true
		return nil
	}})
	if err == nil || prompted {
		t.Fatalf("Login = %v, prompted %v; want an error before any prompt", err, prompted)
	}
	if rec, _ := e.store.Load("remote"); rec != nil {
		t.Error("a token was stored")
	}
}

func TestCheckAuthorizationURL(t *testing.T) {
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"https://auth.example.com/authorize?client_id=a&state=b", true},
		{"http://127.0.0.1:8080/authorize", true},
		{"HTTPS://auth.example.com/authorize", true},
		{"javascript:alert(1)", false},
		{"JavaScript:alert(1)", false},
		{"file:///etc/passwd", false},
		{"data:text/html,<script>alert(1)</script>", false},
		{"vbscript:msgbox", false},
		{"ftp://example.com/", false},
		{"-a https://example.com", false},
		{"https://example.com/$(calc)\x1b[31m", false},
		{"https://example.com/\u202eevil", false},
		{"https://user:pass@example.com/", false},
		{"https://good.example@evil.example/", false},
		{"https:///nohost", false},
		{"https:opaque", false},
		{"https://example.com/" + strings.Repeat("a", 9000), false},
	} {
		_, err := oauth.CheckAuthorizationURL(tc.url)
		if (err == nil) != tc.ok {
			t.Errorf("CheckAuthorizationURL(%.60q) = %v, want ok %v", tc.url, err, tc.ok)
		}
	}
}

func TestOpenBrowserRefusesBadURLBeforeRunningAnything(t *testing.T) {
	t.Setenv("PATH", "") // were anything run, it would fail differently
	err := oauth.OpenBrowser("javascript:alert(1)")
	if err == nil || errors.Is(err, oauth.ErrNoBrowser) {
		t.Fatalf("OpenBrowser(javascript:) = %v, want the URL refused", err)
	}
	if err := oauth.OpenBrowser("https://example.com/"); !errors.Is(err, oauth.ErrNoBrowser) {
		t.Fatalf("OpenBrowser with no opener = %v, want ErrNoBrowser", err)
	}
}

func TestLoginFailsOnWrongState(t *testing.T) {
	e := newEnv(t, oauthtest.AuthServerOptions{}, oauthtest.MCPServerOptions{})
	_, err := oauth.Login(t.Context(), e.config(), oauth.LoginOptions{Prompt: func(ctx context.Context, authURL string) error {
		// Someone else reaches the callback first, with a forged state.
		u, _ := url.Parse(authURL)
		cb, _ := url.Parse(u.Query().Get("redirect_uri"))
		cb.RawQuery = url.Values{"code": {"forged"}, "state": {"not-the-state"}}.Encode()
		if err := browse(ctx, cb.String()); err != nil {
			return err
		}
		// The real answer arrives too late: the callback took one request.
		return browse(ctx, authURL)
	}})
	if err == nil || !strings.Contains(err.Error(), "wrong state") {
		t.Fatalf("Login = %v, want a state error", err)
	}
	for _, r := range e.as.TokenRequests() {
		if r.GrantType == "authorization_code" {
			t.Error("a code was exchanged after a state mismatch")
		}
	}
}

func TestLoginFailsWhenDenied(t *testing.T) {
	e := newEnv(t, oauthtest.AuthServerOptions{Deny: true}, oauthtest.MCPServerOptions{})
	_, err := oauth.Login(t.Context(), e.config(), oauth.LoginOptions{Prompt: browse})
	if err == nil || !strings.Contains(err.Error(), "access_denied") {
		t.Fatalf("Login = %v, want access_denied", err)
	}
}

func TestLoginFailsOnIssuerMismatch(t *testing.T) {
	e := newEnv(t, oauthtest.AuthServerOptions{Iss: "https://mix-up.example"}, oauthtest.MCPServerOptions{})
	_, err := oauth.Login(t.Context(), e.config(), oauth.LoginOptions{Prompt: browse})
	if err == nil || !strings.Contains(err.Error(), "issuer") {
		t.Fatalf("Login = %v, want an issuer mismatch", err)
	}
	if len(e.as.TokenRequests()) != 0 {
		t.Error("the code was exchanged despite the issuer mismatch")
	}
}

func TestLoginToUnprotectedServer(t *testing.T) {
	e := newEnv(t, oauthtest.AuthServerOptions{}, oauthtest.MCPServerOptions{})
	plain := oauthtest.NewRecorder(t) // answers 404: no challenge
	cfg := e.config()
	cfg.URL = plain.URL + "/mcp"
	_, err := oauth.Login(t.Context(), cfg, oauth.LoginOptions{Prompt: browse})
	if !errors.Is(err, oauth.ErrNotProtected) {
		t.Fatalf("Login = %v, want ErrNotProtected", err)
	}
}

func TestStatusAndLogout(t *testing.T) {
	e := newEnv(t, oauthtest.AuthServerOptions{Scopes: []string{"tools"}}, oauthtest.MCPServerOptions{})
	rec := e.login(t, e.config())
	now := time.Now()
	st, err := e.store.Status("remote", e.srv.URL, now)
	if err != nil || st.State != oauth.StateLoggedIn || !slices.Equal(st.Scopes, []string{"tools"}) || st.Issuer != e.as.URL {
		t.Fatalf("Status = %+v, %v; want logged in with scope tools", st, err)
	}
	data, _ := json.Marshal(st)
	for _, secret := range []string{rec.AccessToken, rec.RefreshToken, rec.ClientSecret} {
		if secret != "" && strings.Contains(string(data), secret) {
			t.Error("Status carries a secret")
		}
	}
	if st, _ := e.store.Status("remote", e.srv.URL, rec.Expiry.Add(time.Minute)); st.State != oauth.StateExpired {
		t.Errorf("Status after expiry = %s, want %s", st.State, oauth.StateExpired)
	}
	if st, _ := e.store.Status("remote", "https://elsewhere.example/mcp", now); st.State != oauth.StateOtherURL {
		t.Errorf("Status for a moved server = %s, want %s", st.State, oauth.StateOtherURL)
	}
	if ok, err := e.store.Delete("remote"); !ok || err != nil {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	if st, _ := e.store.Status("remote", e.srv.URL, now); st.State != oauth.StateNotLoggedIn {
		t.Errorf("Status after logout = %s, want %s", st.State, oauth.StateNotLoggedIn)
	}
	if ok, _ := e.store.Delete("remote"); ok {
		t.Error("Delete found a record twice")
	}
}

func TestConcurrentRefreshesShareOneGrant(t *testing.T) {
	e := newEnv(t, oauthtest.AuthServerOptions{}, oauthtest.MCPServerOptions{})
	e.login(t, e.config())
	e.expireStored(t)
	before := len(e.as.TokenRequests())

	// Two handlers on one store stand for two mcphost processes. The
	// authorization server rotates refresh tokens, so a second refresh with
	// the same refresh token would be refused.
	const n = 4
	toks := make(chan string, n)
	errs := make(chan error, n)
	for range n {
		h, err := oauth.NewHandler(e.config())
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			ts, err := h.TokenSource(t.Context())
			if err != nil || ts == nil {
				errs <- errors.New("no token source")
				return
			}
			tok, err := ts.Token()
			if err != nil {
				errs <- err
				return
			}
			toks <- tok.AccessToken
		}()
	}
	seen := map[string]bool{}
	for range n {
		select {
		case err := <-errs:
			t.Fatalf("Token: %v", err)
		case tok := <-toks:
			seen[tok] = true
		}
	}
	if len(seen) != 1 {
		t.Errorf("%d different tokens, want every handler to use the one refresh", len(seen))
	}
	var refreshes int
	for _, r := range e.as.TokenRequests()[before:] {
		if r.GrantType == "refresh_token" {
			refreshes++
		}
	}
	if refreshes != 1 {
		t.Errorf("%d refresh grants, want 1", refreshes)
	}
}

// Revoke ends the grant at the authorization server: the refresh token
// first, then the access token, after which the MCP server refuses the
// token. A server without a revocation endpoint is reported as such.
func TestRevoke(t *testing.T) {
	e := newEnv(t, oauthtest.AuthServerOptions{}, oauthtest.MCPServerOptions{})
	rec := e.login(t, e.config())
	if rec.RevocationURL != e.as.URL+"/revoke" {
		t.Fatalf("RevocationURL = %q, want the metadata's", rec.RevocationURL)
	}
	if err := oauth.Revoke(t.Context(), rec, ""); err != nil {
		t.Fatalf("Revoke: %v", err)
	}
	if got := e.as.Revoked(); !slices.Equal(got, []string{"refresh_token", "access_token"}) {
		t.Errorf("revoked %v, want the refresh token then the access token", got)
	}
	m, _ := e.manager(t, e.srv.URL)
	if st := m.Servers()[0]; st.State == client.StateReady {
		t.Error("the server still accepts the revoked token")
	}
	// Revoking again is no error: the server answers 200 for unknown tokens.
	if err := oauth.Revoke(t.Context(), rec, ""); err != nil {
		t.Errorf("second Revoke: %v", err)
	}

	e2 := newEnv(t, oauthtest.AuthServerOptions{NoRevocation: true}, oauthtest.MCPServerOptions{})
	rec2 := e2.login(t, e2.config())
	if err := oauth.Revoke(t.Context(), rec2, ""); !errors.Is(err, oauth.ErrNoRevocation) {
		t.Errorf("Revoke without an endpoint = %v, want ErrNoRevocation", err)
	}
}
