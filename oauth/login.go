package oauth

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcphost/mcphost/sanitize"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// DefaultLoginTimeout is how long a login waits for the browser to come back.
const DefaultLoginTimeout = 5 * time.Minute

// LoginOptions say how a login reaches the person.
type LoginOptions struct {
	// Prompt shows the authorization URL to the person and may open a
	// browser on it. The URL has been checked (http or https, no
	// credentials, no control characters) but comes from the server's
	// authorization server: display it sanitized. An error abandons the
	// login.
	Prompt func(ctx context.Context, authURL string) error
	// Timeout bounds the wait for the redirect back (default 5 minutes).
	Timeout time.Duration
}

// ErrNotProtected is returned by [Login] when the server did not ask for
// authorization.
var ErrNotProtected = errors.New("the server did not ask for authorization")

// Login runs the authorization code flow for cfg's server: it asks the
// server, unauthenticated, to initialize; on its 401 it discovers the
// authorization server, registers (unless cfg.Client is set), shows the
// authorization URL through opts.Prompt, receives the code on a loopback
// redirect, exchanges it and stores the token. It returns the stored record.
func Login(ctx context.Context, cfg Config, opts LoginOptions) (*Record, error) {
	if opts.Prompt == nil {
		return nil, errors.New("oauth: Login needs a Prompt")
	}
	cfg.Login = &opts
	h, err := NewHandler(cfg)
	if err != nil {
		return nil, err
	}
	if h.insecure {
		return nil, fmt.Errorf("server %s is reached over plain http; mcphost logs in only over https (or on this machine)", cfg.Server)
	}
	req, resp, err := h.probe(ctx)
	if err != nil {
		return nil, fmt.Errorf("log in to %s: %w", cfg.Server, err)
	}
	if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		resp.Body.Close()
		return nil, fmt.Errorf("log in to %s: %w (HTTP %d)", cfg.Server, ErrNotProtected, resp.StatusCode)
	}
	if err := h.login(ctx, req, resp); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	rec := *h.rec
	return &rec, nil
}

// probe sends an initialize request without a token, as a client that
// knows nothing yet would, to get the server's challenge.
func (h *Handler) probe(ctx context.Context) (*http.Request, *http.Response, error) {
	body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcphost","version":"login"}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.cfg.URL, strings.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	for k, v := range h.cfg.Headers {
		if !strings.EqualFold(k, "Authorization") {
			req.Header.Set(k, v)
		}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	c := &http.Client{Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode/100 == 2 {
		// The server let us in without a token; end the session it opened.
		if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
			if del, err := http.NewRequestWithContext(ctx, http.MethodDelete, h.cfg.URL, nil); err == nil {
				del.Header.Set("Mcp-Session-Id", sid)
				if r, err := c.Do(del); err == nil {
					r.Body.Close()
				}
			}
		}
	}
	return req, resp, nil
}

// login runs the SDK's authorization code flow with mcphost's fetcher and
// stores the token it yields.
func (h *Handler) login(ctx context.Context, req *http.Request, resp *http.Response) error {
	h.loginMu.Lock()
	defer h.loginMu.Unlock()
	defer resp.Body.Close()
	opts := h.cfg.Login
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultLoginTimeout
	}
	cb, err := listenCallback(h.cfg.Server)
	if err != nil {
		return fmt.Errorf("log in to %s: %w", h.cfg.Server, err)
	}
	defer cb.close()

	obs := &observer{base: h.hc.Transport, check: h.checkURL}
	hc := &http.Client{Transport: obs, Timeout: h.hc.Timeout, CheckRedirect: h.hc.CheckRedirect}
	var (
		resource string
		exchCfg  *oauth2.Config
		tok      *oauth2.Token
	)
	fetch := func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		meta := obs.metadata()
		if meta == nil {
			return nil, fmt.Errorf("the authorization server publishes no metadata (RFC 8414), so mcphost cannot check that it supports PKCE%s", obs.triedNote())
		}
		if !slices.Contains(meta.CodeChallengeMethodsSupported, "S256") {
			return nil, errors.New("the authorization server does not support PKCE with S256")
		}
		u, err := CheckAuthorizationURL(args.URL)
		if err != nil {
			return nil, err
		}
		q := u.Query()
		if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
			return nil, errors.New("the authorization request carries no S256 code challenge")
		}
		resource = q.Get("resource")
		if !covers(resource, h.cfg.URL) {
			return nil, fmt.Errorf("the resource %q the server names does not cover its URL", sanitize.Line(resource))
		}
		cb.expect(q.Get("state"))
		if err := opts.Prompt(ctx, u.String()); err != nil {
			return nil, err
		}
		return cb.wait(ctx, timeout)
	}
	ac := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              cb.url,
		AuthorizationCodeFetcher: fetch,
		RequestRefreshToken:      true,
		// A matching iss is accepted even if the server does not advertise
		// sending it; a mismatching one is always refused.
		AcceptUnadvertisedIss: true,
		Client:                hc,
		NewTokenSource: func(_ context.Context, c *oauth2.Config, t *oauth2.Token) (oauth2.TokenSource, error) {
			exchCfg, tok = c, t
			return oauth2.StaticTokenSource(t), nil
		},
	}
	if h.cfg.ClientMetadataURL != "" {
		// The SDK uses it only with a server that supports such documents.
		ac.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: h.cfg.ClientMetadataURL}
	}
	if c := h.cfg.Client; c != nil && c.ClientID != "" {
		creds := &oauthex.ClientCredentials{ClientID: c.ClientID}
		if c.ClientSecret != "" {
			creds.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: c.ClientSecret}
		}
		ac.PreregisteredClient = creds
	} else {
		ac.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs:            []string{cb.url},
			ClientName:              "mcphost",
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
			TokenEndpointAuthMethod: "none",
		}}
	}
	if c := h.cfg.Client; c != nil && len(c.Scopes) > 0 {
		scopes := slices.Clone(c.Scopes)
		ac.ScopeFilter = func([]string) []string { return scopes }
	}
	flow, err := auth.NewAuthorizationCodeHandler(ac)
	if err != nil {
		return fmt.Errorf("log in to %s: %w", h.cfg.Server, err)
	}
	if err := flow.Authorize(ctx, req, resp); err != nil {
		return &loginError{server: h.cfg.Server, err: obs.explain(err)}
	}
	if tok == nil || exchCfg == nil || tok.AccessToken == "" {
		return fmt.Errorf("log in to %s: the authorization server returned no access token", h.cfg.Server)
	}
	if tt := tok.Type(); !strings.EqualFold(tt, "bearer") {
		return fmt.Errorf("log in to %s: token type %q is not Bearer", h.cfg.Server, sanitize.Line(tt))
	}
	now := h.now()
	rec := &Record{
		Server:       h.cfg.Server,
		Origin:       h.origin,
		Resource:     resource,
		TokenURL:     exchCfg.Endpoint.TokenURL,
		AuthStyle:    int(exchCfg.Endpoint.AuthStyle),
		ClientID:     exchCfg.ClientID,
		Scopes:       exchCfg.Scopes,
		TokenType:    "Bearer",
		AccessToken:  tok.AccessToken,
		RefreshToken: tok.RefreshToken,
		Expiry:       tok.Expiry,
		Obtained:     now,
	}
	if meta := obs.metadata(); meta != nil {
		rec.Issuer = meta.Issuer
		if checkEndpoint(meta.RevocationEndpoint) == nil {
			rec.RevocationURL = meta.RevocationEndpoint
		}
	}
	if ac.PreregisteredClient == nil {
		rec.ClientSecret = exchCfg.ClientSecret
	}
	if s, ok := tok.Extra("scope").(string); ok && s != "" {
		rec.Scopes = strings.Fields(s)
	}
	if err := h.cfg.Store.Save(rec); err != nil {
		return err
	}
	h.mu.Lock()
	h.rec, h.reason, h.need = rec, "", nil
	h.mu.Unlock()
	return nil
}

// loginError keeps the cause of a failed login for errors.Is and As, but
// its message is sanitized: parts of it come from the authorization server.
type loginError struct {
	server string
	err    error
}

func (e *loginError) Error() string {
	var re *oauth2.RetrieveError
	if errors.As(e.err, &re) && re.Response != nil {
		// RetrieveError's own message quotes the whole response body.
		msg := fmt.Sprintf("log in to %s: the token endpoint refused the code: HTTP %d", e.server, re.Response.StatusCode)
		if re.ErrorCode != "" {
			msg += ": " + sanitize.Line(re.ErrorCode)
		}
		if re.ErrorDescription != "" {
			msg += ": " + sanitize.Line(sanitize.Truncate(re.ErrorDescription, 200))
		}
		return msg
	}
	return fmt.Sprintf("log in to %s: %s", e.server, sanitize.Line(sanitize.Truncate(e.err.Error(), 1000)))
}

func (e *loginError) Unwrap() error { return e.err }

// CheckAuthorizationURL parses an authorization URL and refuses anything a
// browser should not be pointed at by a server: schemes other than http and
// https (javascript:, data:, file:, …), credentials in the URL, control or
// invisible characters, a leading '-' that an opener could take for a flag,
// and absurd lengths.
func CheckAuthorizationURL(raw string) (*url.URL, error) {
	return checkBrowserURL(raw, "authorization URL")
}

func checkBrowserURL(raw, what string) (*url.URL, error) {
	if len(raw) > 8<<10 {
		return nil, fmt.Errorf("%s refused: longer than %d bytes", what, 8<<10)
	}
	if strings.HasPrefix(raw, "-") {
		return nil, fmt.Errorf("%s refused: it starts with '-'", what)
	}
	for _, r := range raw {
		if r <= ' ' || sanitize.Unsafe(r) {
			return nil, fmt.Errorf("%s refused: it contains %q", what, r)
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s refused: %v", what, err)
	}
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
		return nil, fmt.Errorf("%s refused: scheme %q is not http or https", what, sanitize.Line(u.Scheme))
	}
	if u.Opaque != "" || u.Host == "" {
		return nil, fmt.Errorf("%s refused: it names no host", what)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%s refused: it carries credentials before the host", what)
	}
	return u, nil
}

// callback receives the authorization response on a loopback address. It
// handles exactly one request to /callback: the expected state yields the
// code, anything else ends the login.
type callback struct {
	server string
	url    string
	srv    *http.Server
	result chan callbackResult

	mu    sync.Mutex
	state string
	used  bool
}

type callbackResult struct {
	res *auth.AuthorizationResult
	err error
}

func listenCallback(server string) (*callback, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the browser's redirect: %w", err)
	}
	cb := &callback{
		server: server,
		url:    "http://" + ln.Addr().String() + "/callback",
		result: make(chan callbackResult, 1),
	}
	cb.srv = &http.Server{Handler: cb, ReadHeaderTimeout: 10 * time.Second}
	go cb.srv.Serve(ln)
	return cb, nil
}

func (cb *callback) expect(state string) {
	cb.mu.Lock()
	cb.state = state
	cb.mu.Unlock()
}

func (cb *callback) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/callback" || r.Method != http.MethodGet {
		http.NotFound(w, r) // a browser asks for /favicon.ico too
		return
	}
	cb.mu.Lock()
	used, state := cb.used, cb.state
	cb.used = true
	cb.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if used {
		w.WriteHeader(http.StatusGone)
		io.WriteString(w, "mcphost: this login is over.\n")
		return
	}
	q := r.URL.Query()
	var res callbackResult
	switch {
	case state == "" || subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(state)) != 1:
		res.err = errors.New("the browser came back with the wrong state; the login was abandoned")
	case q.Get("error") != "":
		msg := "the authorization server refused: " + sanitize.Line(sanitize.Truncate(q.Get("error"), 100))
		if d := q.Get("error_description"); d != "" {
			msg += ": " + sanitize.Line(sanitize.Truncate(d, 300))
		}
		res.err = errors.New(msg)
	case q.Get("code") == "":
		res.err = errors.New("the browser came back without an authorization code")
	default:
		res.res = &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}
	}
	if res.err != nil {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, "mcphost: the login failed; see the terminal.\n")
	} else {
		fmt.Fprintf(w, "mcphost: authorization for %s received; you can close this tab.\n", cb.server)
	}
	cb.result <- res
}

func (cb *callback) wait(ctx context.Context, timeout time.Duration) (*auth.AuthorizationResult, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r := <-cb.result:
		return r.res, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return nil, fmt.Errorf("no answer from the browser within %s", timeout)
	}
}

func (cb *callback) close() { cb.srv.Close() }

// observer watches the OAuth client's traffic for the authorization server
// metadata the SDK fetched, which the SDK does not hand back: mcphost needs
// its issuer for the record and its PKCE methods for the check above. It
// also checks the metadata's endpoints before the SDK uses any of them, and
// lets no registration or token request out before metadata was seen (the
// SDK would otherwise post to endpoints it guessed). It remembers the URLs
// it refused, since the SDK drops some errors on its way to a fallback.
type observer struct {
	base http.RoundTripper
	// check refuses a URL the OAuth client may not reach (the net guard).
	check func(ctx context.Context, u *url.URL) error

	mu      sync.Mutex
	asm     *oauthex.AuthServerMeta
	tried   []string // authorization server metadata URLs, with outcomes
	refused []string // URLs refused, with reasons
}

func (o *observer) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && o.metadata() == nil {
		err := fmt.Errorf("mcphost posts nothing to %s: the authorization server publishes no usable metadata (RFC 8414)%s",
			sanitize.Line(req.URL.Redacted()), o.triedNote())
		o.note(err)
		return nil, err
	}
	resp, err := o.base.RoundTrip(req)
	asPath := req.Method == http.MethodGet && isASMetadataPath(req.URL.Path)
	if err != nil {
		o.note(err)
		if asPath {
			o.try(req.URL, "not fetched")
		}
		return resp, err
	}
	if !asPath {
		return resp, nil
	}
	if resp.StatusCode != http.StatusOK {
		o.try(req.URL, fmt.Sprintf("HTTP %d", resp.StatusCode))
		return resp, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var m oauthex.AuthServerMeta
	if json.Unmarshal(body, &m) != nil || m.Issuer == "" {
		o.try(req.URL, "no issuer in it")
		return resp, nil
	}
	if err := o.checkEndpoints(req.Context(), &m); err != nil {
		o.try(req.URL, "refused")
		o.note(err)
		return nil, err
	}
	o.mu.Lock()
	o.asm = &m
	o.mu.Unlock()
	return resp, nil
}

// checkEndpoints refuses metadata whose endpoints mcphost would not use:
// not https (or http on this machine), or not reachable under the net
// guard. It names the endpoint and the reason.
func (o *observer) checkEndpoints(ctx context.Context, m *oauthex.AuthServerMeta) error {
	for _, ep := range []struct{ name, url string }{
		{"authorization_endpoint", m.AuthorizationEndpoint},
		{"token_endpoint", m.TokenEndpoint},
		{"registration_endpoint", m.RegistrationEndpoint},
	} {
		if ep.url == "" {
			continue
		}
		if err := checkEndpoint(ep.url); err != nil {
			return fmt.Errorf("the authorization server's %s %w", ep.name, err)
		}
		if ep.name == "authorization_endpoint" {
			continue // the browser goes there, not mcphost
		}
		u, _ := url.Parse(ep.url)
		if err := o.check(ctx, u); err != nil {
			return fmt.Errorf("the authorization server's %s: %w", ep.name, err)
		}
	}
	return nil
}

func (o *observer) try(u *url.URL, outcome string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.tried) < 8 {
		o.tried = append(o.tried, sanitize.Line(u.Redacted())+" ("+outcome+")")
	}
}

// note remembers a refusal among err's causes.
func (o *observer) note(err error) {
	var r *RefusedURLError
	if !errors.As(err, &r) {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.refused) < 4 && !slices.Contains(o.refused, r.Error()) {
		o.refused = append(o.refused, r.Error())
	}
}

func (o *observer) triedNote() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.tried) == 0 {
		return ""
	}
	return "; tried " + strings.Join(o.tried, ", ")
}

// explain adds the URLs refused on the way to err, unless err names them.
func (o *observer) explain(err error) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	var extra []string
	for _, r := range o.refused {
		if !strings.Contains(err.Error(), r) {
			extra = append(extra, r)
		}
	}
	if len(extra) == 0 {
		return err
	}
	return fmt.Errorf("%w (on the way, %s)", err, strings.Join(extra, "; "))
}

func (o *observer) metadata() *oauthex.AuthServerMeta {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.asm
}

func isASMetadataPath(p string) bool {
	return strings.HasPrefix(p, "/.well-known/oauth-authorization-server") || strings.Contains(p, "/.well-known/openid-configuration")
}
