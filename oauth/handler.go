package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/mcphost/mcphost/internal/netcheck"
)

// ClientConfig is a client registered with the authorization server ahead
// of time, as a server's configuration gives it. Without one, mcphost
// registers itself dynamically (RFC 7591) at each login.
type ClientConfig struct {
	ClientID     string
	ClientSecret string   // empty for a public client
	Scopes       []string // requested instead of the scopes the server advertises
}

// Config describes one server for a [Handler].
type Config struct {
	Server string // the server's name in the configuration
	URL    string // its MCP endpoint
	Store  *Store

	// Client is the pre-registered client, or nil for dynamic registration.
	// Its Scopes, if any, are requested in either case.
	Client *ClientConfig

	// ClientMetadataURL, if set, is the https URL of a client ID metadata
	// document that describes mcphost (SEP-991). An authorization server
	// that advertises client_id_metadata_document_supported gets this URL
	// as the client ID, in place of Client or dynamic registration; other
	// servers never see it.
	ClientMetadataURL string

	// Headers are the server's configured headers, sent with the request
	// that asks the server whether it wants a login.
	Headers map[string]string

	// Login, when set, lets the handler run the authorization code flow
	// when the server asks for authorization. When nil, no person can log in
	// now (a headless run): such a request fails with a
	// [*LoginRequiredError] at once.
	Login *LoginOptions

	Now func() time.Time // default time.Now

	net netOptions // tests: the proxy and resolver in place of the process's
}

// LoginRequiredError reports a server that needs a login that could not run.
// Its message names the command that fixes it.
type LoginRequiredError struct {
	Server string
	// Reason says why, for status displays: no token, an expired token that
	// cannot be refreshed, a refresh the authorization server refused.
	Reason string
}

func (e *LoginRequiredError) Error() string {
	return fmt.Sprintf("server %s needs you to log in: run mcphost auth login %s", e.Server, e.Server)
}

// Handler implements auth.OAuthHandler for one server. It hands the
// transport the stored token (refreshing it when it expired) and, when the
// server answers 401, refreshes a rejected token or runs a login if one can
// run. Its methods may be called concurrently.
type Handler struct {
	cfg      Config
	origin   string
	insecure bool // plain http to another machine: never send a token
	now      func() time.Time
	hc       *http.Client // for the authorization server

	mu     sync.Mutex
	rec    *Record // the record in use; nil when there is none for this URL
	reason string  // why rec is nil, when a file exists but cannot be used
	need   *LoginRequiredError

	loginMu sync.Mutex
}

var _ auth.OAuthHandler = (*Handler)(nil)

// NewHandler returns the handler for cfg's server.
func NewHandler(cfg Config) (*Handler, error) {
	if cfg.Server == "" || cfg.Store == nil {
		return nil, errors.New("oauth: a handler needs a server name and a store")
	}
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("oauth: server %s: %w", cfg.Server, err)
	}
	origin, err := netcheck.Origin(u)
	if err != nil {
		return nil, fmt.Errorf("oauth: server %s: %w", cfg.Server, err)
	}
	if m := cfg.ClientMetadataURL; m != "" {
		if mu, err := url.Parse(m); err != nil || mu.Scheme != "https" || mu.Host == "" || strings.TrimPrefix(mu.Path, "/") == "" {
			return nil, fmt.Errorf("oauth: server %s: client metadata URL %q is not an https URL with a path", cfg.Server, m)
		}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Handler{
		cfg:      cfg,
		origin:   origin,
		insecure: u.Scheme != "https" && !netcheck.IsLoopbackHost(u.Hostname()),
		now:      cfg.Now,
		hc:       newGuardedClient(cfg.URL, cfg.net),
	}, nil
}

// Server is the name of the handler's server.
func (h *Handler) Server() string { return h.cfg.Server }

// Origin is the origin (scheme://host:port) the handler's token may be sent to.
func (h *Handler) Origin() string { return h.origin }

// LoginRequired returns the error of the last request that needed a login
// that could not run, or nil. A successful login or refresh clears it.
func (h *Handler) LoginRequired() *LoginRequiredError {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.need
}

// TokenSource returns the source of the stored token, or nil when there is
// no usable token, in which case the request goes out without one.
func (h *Handler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	if h.insecure {
		return nil, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.rec == nil {
		if err := h.reloadLocked(); err != nil {
			return nil, err
		}
	}
	if h.rec == nil {
		return nil, nil
	}
	return tokenSource{h}, nil
}

type tokenSource struct{ h *Handler }

// Token returns the access token, refreshed if it expired.
func (ts tokenSource) Token() (*oauth2.Token, error) {
	h := ts.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.rec != nil && h.rec.fresh(h.now()) {
		return h.rec.token(), nil
	}
	if err := h.reloadLocked(); err != nil {
		return nil, err
	}
	if h.rec == nil {
		return nil, h.needLoginLocked("there is no stored token")
	}
	if h.rec.fresh(h.now()) {
		return h.rec.token(), nil
	}
	if err := h.refreshLocked(""); err != nil {
		return nil, err
	}
	return h.rec.token(), nil
}

// Authorize is called by the transport after a 401 or 403. A rejected token
// that can be refreshed is refreshed; otherwise a login runs if one can,
// and the request fails with a *LoginRequiredError if not. Authorize
// closes resp's body.
func (h *Handler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	if h.insecure {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return fmt.Errorf("server %s asks for authorization over plain http; mcphost sends tokens only over https (or to this machine)", h.cfg.Server)
	}
	if resp.StatusCode == http.StatusForbidden && !insufficientScope(resp) {
		// Not a question of credentials: let the request be retried once
		// and fail with the server's own answer.
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil
	}
	if sent, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer "); ok && resp.StatusCode == http.StatusUnauthorized {
		h.mu.Lock()
		err := h.retryRejectedLocked(sent)
		h.mu.Unlock()
		if err == nil {
			io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			return nil
		}
	}
	if h.cfg.Login == nil {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.needLoginLocked("the server asked for authorization")
	}
	return h.login(ctx, req, resp)
}

// retryRejectedLocked prepares a retry after the server rejected the token
// sent: it succeeds if a newer token is already at hand or a refresh gives
// one.
func (h *Handler) retryRejectedLocked(sent string) error {
	if err := h.reloadLocked(); err != nil {
		return err
	}
	if h.rec == nil {
		return errors.New("no token")
	}
	if h.rec.AccessToken != sent && h.rec.fresh(h.now()) {
		return nil
	}
	return h.refreshLocked(sent)
}

func insufficientScope(resp *http.Response) bool {
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return false
	}
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params["error"] == "insufficient_scope" {
			return true
		}
	}
	return false
}

// reloadLocked reads the record from the store, keeping it only if it was
// issued for this server's URL.
func (h *Handler) reloadLocked() error {
	rec, err := h.cfg.Store.Load(h.cfg.Server)
	if err != nil {
		return err
	}
	h.rec, h.reason = nil, ""
	switch {
	case rec == nil:
	case rec.Origin != h.origin || !covers(rec.Resource, h.cfg.URL):
		// The server's URL changed since the login: the token belongs to
		// the old one and must not travel to the new.
		h.reason = "the stored token was issued for another URL"
	default:
		h.rec = rec
	}
	return nil
}

// refreshLocked refreshes the access token under the cross-process lock.
// rejected, if set, is a token the server refused even though it has not
// expired: it is refreshed regardless of its expiry.
func (h *Handler) refreshLocked(rejected string) error {
	if h.rec.RefreshToken == "" {
		return h.needLoginLocked("the token expired and there is no refresh token")
	}
	unlock, err := h.cfg.Store.lock(h.cfg.Server)
	if err != nil {
		return fmt.Errorf("refresh token for %s: %w", h.cfg.Server, err)
	}
	defer unlock()
	// Another process may have refreshed it while this one waited.
	if err := h.reloadLocked(); err != nil {
		return err
	}
	if h.rec == nil {
		return h.needLoginLocked("there is no stored token")
	}
	if h.rec.fresh(h.now()) && h.rec.AccessToken != rejected {
		return nil
	}
	if h.rec.RefreshToken == "" {
		return h.needLoginLocked("the token expired and there is no refresh token")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	next, err := refresh(ctx, h.hc, h.rec, h.clientSecret(), h.now())
	var re *refreshError
	if errors.As(err, &re) && re.needsLogin() {
		return h.needLoginLocked("the authorization server refused to refresh the token (" + re.Code + ")")
	}
	if err != nil {
		return fmt.Errorf("refresh token for %s: %w", h.cfg.Server, err)
	}
	if err := h.cfg.Store.Save(next); err != nil {
		return err
	}
	h.rec, h.need = next, nil
	return nil
}

// clientSecret is the secret to authenticate refreshes with: the one kept
// from dynamic registration, else the configured one for the same client.
func (h *Handler) clientSecret() string {
	if h.rec.ClientSecret != "" {
		return h.rec.ClientSecret
	}
	if c := h.cfg.Client; c != nil && c.ClientID == h.rec.ClientID {
		return c.ClientSecret
	}
	return ""
}

func (h *Handler) needLoginLocked(reason string) *LoginRequiredError {
	if h.reason != "" {
		reason = h.reason
	}
	h.need = &LoginRequiredError{Server: h.cfg.Server, Reason: reason}
	return h.need
}
