// Package oauthtest provides a fake OAuth authorization server and an MCP
// server that requires its tokens, for tests of mcphost's OAuth support.
// Both listen on 127.0.0.1 only.
package oauthtest

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// AuthServerOptions shape the fake authorization server.
type AuthServerOptions struct {
	// Clients are pre-registered clients: client ID to secret ("" for a
	// public client). Their redirect URIs may be any loopback /callback.
	Clients map[string]string
	// MetadataClients are client IDs that are URLs of client ID metadata
	// documents (SEP-991), accepted as public clients with loopback
	// redirect URIs as if their documents had been fetched. When there are
	// any, the metadata advertises client_id_metadata_document_supported.
	MetadataClients []string
	// NoRegistration turns dynamic client registration off.
	NoRegistration bool
	// Scopes are advertised in the metadata; granted when none is asked.
	Scopes []string
	// NoRefreshTokens withholds refresh tokens.
	NoRefreshTokens bool
	// AuthorizationEndpoint, if set, is advertised instead of the real one.
	AuthorizationEndpoint string
	// Iss, if set, is sent as the iss of authorization responses instead
	// of the issuer.
	Iss string
	// Deny makes the authorization endpoint answer access_denied.
	Deny bool
	// TTL is the access tokens' lifetime (default one hour).
	TTL time.Duration
	// NoRevocation leaves the revocation endpoint (RFC 7009) out.
	NoRevocation bool
}

// TokenRequest is one request the token endpoint accepted or refused.
type TokenRequest struct {
	GrantType string
	ClientID  string
	Resource  string
	Error     string // "" when a token was issued
}

// AuthServer is a fake OAuth 2.1 authorization server: metadata (RFC 8414),
// dynamic registration (RFC 7591), the authorization endpoint with PKCE
// (S256 only) and resource indicators (RFC 8707), and the token endpoint
// for the authorization_code and refresh_token grants. It checks what a
// real server checks, so a client that skips a step fails against it.
type AuthServer struct {
	URL string // the issuer

	opts AuthServerOptions
	srv  *httptest.Server

	mu       sync.Mutex
	clients  map[string]*client
	codes    map[string]*grant
	access   map[string]*grant
	refresh  map[string]*grant
	requests []TokenRequest
	revoked  []string // token type hints of the tokens revoked, in order
}

type client struct {
	secret    string
	redirects []string // exact redirect URIs; nil for pre-registered loopback clients
}

type grant struct {
	clientID    string
	redirectURI string
	challenge   string
	resource    string
	scopes      []string
	expiry      time.Time
}

// NewAuthServer starts a fake authorization server; it stops when the test
// ends.
func NewAuthServer(t testing.TB, opts AuthServerOptions) *AuthServer {
	t.Helper()
	if opts.TTL == 0 {
		opts.TTL = time.Hour
	}
	a := &AuthServer{
		opts: opts, clients: map[string]*client{}, codes: map[string]*grant{},
		access: map[string]*grant{}, refresh: map[string]*grant{},
	}
	for id, secret := range opts.Clients {
		a.clients[id] = &client{secret: secret}
	}
	for _, id := range opts.MetadataClients {
		a.clients[id] = &client{}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", a.metadata)
	mux.HandleFunc("POST /register", a.register)
	mux.HandleFunc("GET /authorize", a.authorize)
	mux.HandleFunc("POST /token", a.token)
	if !opts.NoRevocation {
		mux.HandleFunc("POST /revoke", a.revoke)
	}
	a.srv = httptest.NewServer(mux)
	t.Cleanup(a.srv.Close)
	a.URL = a.srv.URL
	return a
}

func (a *AuthServer) metadata(w http.ResponseWriter, _ *http.Request) {
	authz := a.URL + "/authorize"
	if a.opts.AuthorizationEndpoint != "" {
		authz = a.opts.AuthorizationEndpoint
	}
	m := map[string]any{
		"issuer":                                         a.URL,
		"authorization_endpoint":                         authz,
		"token_endpoint":                                 a.URL + "/token",
		"response_types_supported":                       []string{"code"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":               []string{"S256"},
		"token_endpoint_auth_methods_supported":          []string{"none", "client_secret_basic", "client_secret_post"},
		"authorization_response_iss_parameter_supported": true,
	}
	if !a.opts.NoRegistration {
		m["registration_endpoint"] = a.URL + "/register"
	}
	if len(a.opts.Scopes) > 0 {
		m["scopes_supported"] = a.opts.Scopes
	}
	if len(a.opts.MetadataClients) > 0 {
		m["client_id_metadata_document_supported"] = true
	}
	if !a.opts.NoRevocation {
		m["revocation_endpoint"] = a.URL + "/revoke"
	}
	writeJSON(w, http.StatusOK, m)
}

func (a *AuthServer) register(w http.ResponseWriter, r *http.Request) {
	var md struct {
		RedirectURIs []string `json:"redirect_uris"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
	}
	if err := json.NewDecoder(r.Body).Decode(&md); err != nil || len(md.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	c := &client{redirects: md.RedirectURIs}
	resp := map[string]any{"client_id": random(), "redirect_uris": md.RedirectURIs, "token_endpoint_auth_method": "none"}
	if md.AuthMethod != "none" {
		c.secret = random()
		resp["client_secret"] = c.secret
		resp["token_endpoint_auth_method"] = "client_secret_basic"
	}
	a.mu.Lock()
	a.clients[resp["client_id"].(string)] = c
	a.mu.Unlock()
	writeJSON(w, http.StatusCreated, resp)
}

func (a *AuthServer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a.mu.Lock()
	c := a.clients[q.Get("client_id")]
	a.mu.Unlock()
	redirect := q.Get("redirect_uri")
	if c == nil || !c.allows(redirect) {
		// Never redirect to an unverified URI.
		http.Error(w, "unknown client or redirect URI", http.StatusBadRequest)
		return
	}
	back, _ := url.Parse(redirect)
	reply := func(v url.Values) {
		v.Set("state", q.Get("state"))
		iss := a.URL
		if a.opts.Iss != "" {
			iss = a.opts.Iss
		}
		v.Set("iss", iss)
		back.RawQuery = v.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	}
	switch {
	case a.opts.Deny:
		reply(url.Values{"error": {"access_denied"}, "error_description": {"the user said no"}})
		return
	case q.Get("response_type") != "code":
		reply(url.Values{"error": {"unsupported_response_type"}})
		return
	case q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		reply(url.Values{"error": {"invalid_request"}, "error_description": {"PKCE with S256 is required"}})
		return
	case q.Get("resource") == "":
		reply(url.Values{"error": {"invalid_target"}, "error_description": {"a resource is required"}})
		return
	}
	scopes := strings.Fields(q.Get("scope"))
	if len(scopes) == 0 {
		scopes = a.opts.Scopes
	}
	code := random()
	a.mu.Lock()
	a.codes[code] = &grant{clientID: q.Get("client_id"), redirectURI: redirect, challenge: q.Get("code_challenge"), resource: q.Get("resource"), scopes: scopes}
	a.mu.Unlock()
	reply(url.Values{"code": {code}})
}

func (c *client) allows(redirect string) bool {
	if c.redirects != nil {
		return slices.Contains(c.redirects, redirect)
	}
	u, err := url.Parse(redirect)
	return err == nil && u.Scheme == "http" && u.Hostname() == "127.0.0.1" && u.Path == "/callback"
}

func (a *AuthServer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	f := r.PostForm
	req := TokenRequest{GrantType: f.Get("grant_type"), Resource: f.Get("resource")}
	fail := func(status int, code string) {
		req.Error = code
		a.requests = append(a.requests, req)
		writeJSON(w, status, map[string]string{"error": code})
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	id, ok := a.authenticate(r)
	req.ClientID = id
	if !ok {
		fail(http.StatusUnauthorized, "invalid_client")
		return
	}
	var g *grant
	switch req.GrantType {
	case "authorization_code":
		g = a.codes[f.Get("code")]
		delete(a.codes, f.Get("code")) // single use
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		switch {
		case g == nil || g.clientID != id:
			fail(http.StatusBadRequest, "invalid_grant")
			return
		case g.redirectURI != f.Get("redirect_uri"):
			fail(http.StatusBadRequest, "invalid_grant")
			return
		case base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
			fail(http.StatusBadRequest, "invalid_grant") // PKCE
			return
		case req.Resource != g.resource:
			fail(http.StatusBadRequest, "invalid_target")
			return
		}
	case "refresh_token":
		g = a.refresh[f.Get("refresh_token")]
		switch {
		case g == nil || g.clientID != id:
			fail(http.StatusBadRequest, "invalid_grant")
			return
		case req.Resource != "" && req.Resource != g.resource:
			fail(http.StatusBadRequest, "invalid_target")
			return
		}
		delete(a.refresh, f.Get("refresh_token")) // rotation
	default:
		fail(http.StatusBadRequest, "unsupported_grant_type")
		return
	}
	a.requests = append(a.requests, req)
	tok := *g
	tok.expiry = time.Now().Add(a.opts.TTL)
	access := random()
	a.access[access] = &tok
	resp := map[string]any{
		"access_token": access, "token_type": "Bearer",
		"expires_in": int(a.opts.TTL / time.Second), "scope": strings.Join(g.scopes, " "),
	}
	if !a.opts.NoRefreshTokens {
		rt := random()
		a.refresh[rt] = &tok
		resp["refresh_token"] = rt
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, resp)
}

// TokenRequests returns the token endpoint's requests so far.
func (a *AuthServer) TokenRequests() []TokenRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.requests)
}

// Expire makes an access token invalid, as if its time had run out.
func (a *AuthServer) Expire(accessToken string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if g := a.access[accessToken]; g != nil {
		g.expiry = time.Now().Add(-time.Minute)
	}
}

// RevokeRefreshTokens makes every refresh token invalid.
func (a *AuthServer) RevokeRefreshTokens() {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.refresh)
}

// check reports the grant behind a valid access token for resource.
func (a *AuthServer) check(accessToken, resource string) (*grant, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	g := a.access[accessToken]
	if g == nil || !time.Now().Before(g.expiry) || g.resource != resource {
		return nil, false
	}
	return g, true
}

func random() string { return rand.Text() }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// revoke is the revocation endpoint (RFC 7009): it checks the client as
// the token endpoint does and forgets the token, answering 200 whether or
// not the token was known.
func (a *AuthServer) revoke(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	id, ok := a.authenticate(r)
	if !ok {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	tok := r.PostForm.Get("token")
	if g := a.refresh[tok]; g != nil && g.clientID == id {
		delete(a.refresh, tok)
		a.revoked = append(a.revoked, "refresh_token")
	}
	if g := a.access[tok]; g != nil && g.clientID == id {
		delete(a.access, tok)
		a.revoked = append(a.revoked, "access_token")
	}
	w.WriteHeader(http.StatusOK)
}

// Revoked returns the kinds of the tokens revoked so far, in order.
func (a *AuthServer) Revoked() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.revoked)
}

// authenticate returns the client a token or revocation request comes from
// (HTTP Basic, or client_id and client_secret in the form) and whether it
// proved who it is. a.mu must be held and the form parsed.
func (a *AuthServer) authenticate(r *http.Request) (string, bool) {
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	c := a.clients[id]
	return id, c != nil && subtle.ConstantTimeCompare([]byte(c.secret), []byte(secret)) == 1
}
