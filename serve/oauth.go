package serve

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/netcheck"
)

// AuthOptions make serve --http an OAuth 2.1 resource server (the MCP
// authorization spec): only access tokens Issuer issued for Audience are
// accepted, and the person behind each is who calls.
type AuthOptions struct {
	// Issuer is the authorization server's issuer URL; its OpenID
	// discovery document names its keys and, if it has one, its
	// introspection endpoint.
	Issuer string
	// Audience is this server's canonical URL (RFC 8707's resource
	// indicator): a token must name it in aud. Its origin and path also
	// place the Protected Resource Metadata (RFC 9728).
	Audience string
	// Scopes a token must all carry (none: any).
	Scopes []string
	// ClientID and ClientSecret authenticate serve at the introspection
	// endpoint (RFC 7662), which is how an opaque token is checked;
	// without them only JWT access tokens are accepted.
	ClientID, ClientSecret string
	// HTTPClient reaches the issuer (nil: a client with a 10s timeout).
	HTTPClient *http.Client
	// Now is the clock tokens are checked against (nil: time.Now).
	Now func() time.Time
}

// Auth checks bearer tokens against one issuer for one audience. Build it
// with NewAuth; it is safe for concurrent use.
type Auth struct {
	o          AuthOptions
	verifier   *oidc.IDTokenVerifier
	introspect string // the issuer's introspection endpoint, "" if none
	client     *http.Client
	// metadataURL is where the Protected Resource Metadata is published,
	// named in every challenge; metadataPaths its paths on this server.
	metadataURL   string
	metadataPaths []string
	metadata      []byte
}

// Maximum sizes of what serve keeps of a token's claims.
const (
	maxSubject  = 256
	maxClientID = 256
	maxName     = 128
	maxEmail    = 254
)

// CheckAuthOptions reports the first thing wrong with o, in words that name
// the fix; NewAuth calls it.
func CheckAuthOptions(o AuthOptions) error {
	iu, err := url.Parse(o.Issuer)
	if o.Issuer == "" || err != nil || iu.Host == "" || (iu.Scheme != "https" && iu.Scheme != "http") || iu.RawQuery != "" || iu.Fragment != "" {
		return fmt.Errorf("the serve auth issuer %q is not an issuer URL: give the authorization server's issuer, like https://login.example.com/realms/team", o.Issuer)
	}
	if iu.Scheme == "http" && !netcheck.IsLoopbackHost(iu.Hostname()) {
		return fmt.Errorf("the serve auth issuer %s is plain http on another machine: its keys and answers could be forged on the way; use its https URL", o.Issuer)
	}
	au, err := url.Parse(o.Audience)
	if o.Audience == "" || err != nil || au.Host == "" || (au.Scheme != "https" && au.Scheme != "http") || au.Fragment != "" || au.RawQuery != "" {
		return fmt.Errorf("the serve auth audience %q is not this server's URL: give the address clients use, like https://mcp.example.com/mcp (the resource their tokens must be issued for)", o.Audience)
	}
	if (o.ClientID == "") != (o.ClientSecret == "") {
		return errors.New("the serve auth client id and secret go together (they authenticate serve at the issuer's introspection endpoint): give both, or neither")
	}
	for _, s := range o.Scopes {
		if s == "" || strings.ContainsAny(s, "\"\\") || !printable(s) {
			return fmt.Errorf("the serve auth scope %q is not a scope token (no spaces, quotes or backslashes)", s)
		}
	}
	return nil
}

// NewAuth discovers o.Issuer (OpenID discovery: its keys, its
// introspection endpoint) and returns the checker. ctx bounds discovery
// only; keys are fetched later as tokens name them.
func NewAuth(ctx context.Context, o AuthOptions) (*Auth, error) {
	if err := CheckAuthOptions(o); err != nil {
		return nil, err
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	// The key set fetches keys later with the context discovery had, so it
	// must outlive ctx.
	kctx := oidc.ClientContext(context.WithoutCancel(ctx), hc)
	dctx, cancel := context.WithTimeout(oidc.ClientContext(ctx, hc), 30*time.Second)
	defer cancel()
	p, err := oidc.NewProvider(dctx, o.Issuer)
	if err != nil {
		return nil, fmt.Errorf("discover the serve auth issuer %s: %w (is it the issuer's exact URL, and is it reachable from here?)", o.Issuer, err)
	}
	var meta struct {
		Introspection string `json:"introspection_endpoint"`
		JWKS          string `json:"jwks_uri"`
	}
	if err := p.Claims(&meta); err != nil {
		return nil, fmt.Errorf("read the serve auth issuer's discovery document: %w", err)
	}
	if meta.JWKS == "" {
		return nil, fmt.Errorf("the serve auth issuer %s names no jwks_uri, so no token of it could be checked", o.Issuer)
	}
	keys := oidc.NewRemoteKeySet(kctx, meta.JWKS)
	a := &Auth{
		o: o, client: hc, introspect: meta.Introspection,
		// go-oidc checks the signature against the issuer's keys, then
		// issuer, audience (the resource, not a client id) and expiry.
		verifier: oidc.NewVerifier(o.Issuer, keys, &oidc.Config{ClientID: o.Audience, Now: o.Now, SupportedSigningAlgs: signingAlgs}),
	}
	a.metadataURL, a.metadataPaths = metadataLocation(o.Audience)
	a.metadata, err = json.Marshal(resourceMetadata{
		Resource: o.Audience, AuthorizationServers: []string{o.Issuer}, ScopesSupported: o.Scopes,
		BearerMethodsSupported: []string{"header"}, ResourceName: "mcphost serve",
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// signingAlgs are the algorithms a token may be signed with: every
// public-key one, never "none" or a shared-secret HS one. The key the
// issuer publishes decides which of them verifies; the issuer's discovery
// lists its ID tokens' algorithms only, and access tokens may differ.
var signingAlgs = []string{
	oidc.RS256, oidc.RS384, oidc.RS512, oidc.ES256, oidc.ES384, oidc.ES512,
	oidc.PS256, oidc.PS384, oidc.PS512, oidc.EdDSA,
}

// resourceMetadata is the Protected Resource Metadata document (RFC 9728
// §2) serve publishes.
type resourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name,omitempty"`
}

// wellKnown is RFC 9728's well-known path.
const wellKnown = "/.well-known/oauth-protected-resource"

// metadataLocation is where the metadata of resource is published: the
// well-known path put between its host and its path (RFC 9728 §3.1), and
// the bare well-known path, which the spec's clients try when the first is
// missing.
func metadataLocation(resource string) (string, []string) {
	u, _ := url.Parse(resource)
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	origin := u.Scheme + "://" + u.Host
	paths := []string{wellKnown}
	if path != "" {
		paths = append(paths, wellKnown+path)
	}
	return origin + wellKnown + path, paths
}

// MetadataPaths are the paths on this server the metadata is served at.
func (a *Auth) MetadataPaths() []string { return slices.Clone(a.metadataPaths) }

// MetadataURL is where clients are told to find the metadata.
func (a *Auth) MetadataURL() string { return a.metadataURL }

// Metadata serves the Protected Resource Metadata document to anyone: it
// holds nothing secret, and a client reads it before it has a token.
func (a *Auth) Metadata() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		switch r.Method {
		case http.MethodGet, http.MethodHead:
		case http.MethodOptions:
			w.Header().Set("Access-Control-Allow-Methods", "GET, OPTIONS")
			w.WriteHeader(http.StatusNoContent)
			return
		default:
			w.Header().Set("Allow", "GET, HEAD, OPTIONS")
			http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "max-age=3600")
		_, _ = w.Write(a.metadata)
	})
}

// Caller is who a request checked by Auth comes from: the person (the
// token's issuer and subject) and the client they use (its client id).
type Caller struct {
	Person   audit.Person // for the record: escaped and bounded
	ClientID string       // for the record: escaped and bounded
	Scopes   []string
	Expires  time.Time
	// id is the person as the token names them, issuer and subject
	// unescaped: two subjects that escape alike are still two people.
	id string
}

// key is the one string that tells people apart, and that the SDK
// compares to keep a session to its person.
func (c *Caller) key() string {
	if c.id == "" {
		return c.Person.Issuer + "\n" + c.Person.Subject
	}
	return c.id
}

// tokenError is a token refused: 401 invalid_token, with a description
// made of serve's own words (never the token's).
type tokenError struct{ why string }

func (e *tokenError) Error() string { return e.why }

func refuse(format string, args ...any) error { return &tokenError{fmt.Sprintf(format, args...)} }

// Check verifies an access token and returns its caller. A JWT (RFC 9068)
// is verified here against the issuer's keys; any other token is asked of
// the issuer's introspection endpoint (RFC 7662), when serve has one and
// credentials for it. A refused token's error is a *tokenError.
func (a *Auth) Check(ctx context.Context, token string) (*Caller, error) {
	if looksJWT(token) {
		return a.checkJWT(ctx, token)
	}
	if a.introspect == "" {
		return nil, refuse("the token is not a JWT and the issuer offers no introspection to check it")
	}
	if a.o.ClientID == "" {
		return nil, refuse("the token is not a JWT, and serve has no client credentials to introspect it with")
	}
	return a.introspectToken(ctx, token)
}

// looksJWT reports whether token is a compact JWS: three base64url parts,
// the first a JSON object.
func looksJWT(token string) bool {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return false
	}
	h, err := base64.RawURLEncoding.DecodeString(parts[0])
	return err == nil && len(h) > 0 && h[0] == '{'
}

// accessClaims are the claims serve reads of a verified JWT access token.
type accessClaims struct {
	Subject   string          `json:"sub"`
	ClientID  string          `json:"client_id"`
	AZP       string          `json:"azp"`
	Scope     json.RawMessage `json:"scope"`
	SCP       []string        `json:"scp"`
	Name      string          `json:"name"`
	Preferred string          `json:"preferred_username"`
	Email     string          `json:"email"`
	// Only ID tokens carry these.
	Nonce  string `json:"nonce"`
	AtHash string `json:"at_hash"`
	CHash  string `json:"c_hash"`
}

func (a *Auth) checkJWT(ctx context.Context, token string) (*Caller, error) {
	t, err := a.verifier.Verify(ctx, token)
	if err != nil {
		var exp *oidc.TokenExpiredError
		switch {
		case errors.As(err, &exp):
			return nil, refuse("the token has expired")
		case strings.Contains(err.Error(), "different provider"):
			return nil, refuse("the token was issued by another issuer")
		case strings.Contains(err.Error(), "expected audience"):
			return nil, refuse("the token was issued for another audience, not this server")
		case strings.Contains(err.Error(), "fetching keys"):
			// Not the token's fault: a client told its token is invalid
			// would log the person in again, to no end.
			return nil, fmt.Errorf("fetch the issuer's keys: %w", err)
		}
		return nil, refuse("the token's signature or form does not check out against the issuer's keys")
	}
	var c accessClaims
	if err := t.Claims(&c); err != nil {
		return nil, refuse("the token's claims cannot be read")
	}
	// An ID token also names the issuer, and its aud may hold this
	// server's URL; it says who logged in to a client, not that the client
	// may call here. RFC 9068 marks an access token with typ at+jwt; an
	// issuer that writes plain JWT is accepted only for a token that has
	// none of the claims only ID tokens carry.
	typ := strings.ToLower(jwtType(token))
	switch typ {
	case "at+jwt", "application/at+jwt":
	case "", "jwt":
		if c.Nonce != "" || c.AtHash != "" || c.CHash != "" {
			return nil, refuse("the token is an ID token, not an access token")
		}
	default:
		return nil, refuse("the token's type is not that of an access token")
	}
	client := c.ClientID
	if client == "" {
		client = c.AZP
	}
	return a.caller(c.Subject, client, c.Name, c.Preferred, c.Email, scopesOf(c.Scope, c.SCP), t.Expiry)
}

// caller bounds and checks what a verified token says into a Caller.
func (a *Auth) caller(sub, client, name, username, email string, scopes []string, exp time.Time) (*Caller, error) {
	if sub == "" {
		return nil, refuse("the token names no subject, so no person")
	}
	if client == "" {
		return nil, refuse("the token names no client (client_id or azp)")
	}
	if len(sub) > maxSubject || len(client) > maxClientID {
		return nil, refuse("the token's subject or client id is longer than serve keeps")
	}
	if name == "" {
		name = username
	}
	return &Caller{
		Person: audit.Person{
			Issuer: a.o.Issuer, Subject: bound(sub, maxSubject),
			Name: bound(name, maxName), Email: bound(email, maxEmail),
		},
		ClientID: bound(client, maxClientID),
		Scopes:   scopes,
		Expires:  exp,
		id:       a.o.Issuer + "\n" + sub,
	}, nil
}

// jwtType is the typ of a compact JWS's header, "" if it has none.
func jwtType(token string) string {
	h, err := base64.RawURLEncoding.DecodeString(strings.SplitN(token, ".", 2)[0])
	if err != nil {
		return ""
	}
	var hdr struct {
		Typ string `json:"typ"`
	}
	_ = json.Unmarshal(h, &hdr)
	return hdr.Typ
}

// scopesOf reads scope as RFC 9068 writes it (one space-separated string)
// or as a list, and scp as some issuers write it.
func scopesOf(scope json.RawMessage, scp []string) []string {
	var out []string
	var s string
	var list []string
	if json.Unmarshal(scope, &s) == nil {
		out = strings.Fields(s)
	} else if json.Unmarshal(scope, &list) == nil {
		out = list
	}
	return append(out, scp...)
}

// maxIntrospection bounds the issuer's introspection answer.
const maxIntrospection = 64 << 10

// introspection is what serve reads of an RFC 7662 answer.
type introspection struct {
	Active    bool            `json:"active"`
	Subject   string          `json:"sub"`
	ClientID  string          `json:"client_id"`
	Issuer    string          `json:"iss"`
	Audience  json.RawMessage `json:"aud"`
	Expiry    int64           `json:"exp"`
	Scope     string          `json:"scope"`
	Name      string          `json:"name"`
	Username  string          `json:"username"`
	Preferred string          `json:"preferred_username"`
	Email     string          `json:"email"`
}

// introspectToken asks the issuer about an opaque token and holds its
// answer to the same rules as a JWT's claims: active, this issuer, this
// audience, not expired.
func (a *Auth) introspectToken(ctx context.Context, token string) (*Caller, error) {
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.introspect, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(a.o.ClientID), url.QueryEscape(a.o.ClientSecret))
	resp, err := a.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("introspect the token at the issuer: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxIntrospection+1))
	if err != nil {
		return nil, fmt.Errorf("introspect the token at the issuer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("introspect the token at the issuer: it answered %s (are serve's client id and secret right?)", resp.Status)
	}
	if len(body) > maxIntrospection {
		return nil, errors.New("introspect the token at the issuer: its answer is larger than serve reads")
	}
	var in introspection
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("introspect the token at the issuer: its answer is not JSON: %w", err)
	}
	if !in.Active {
		return nil, refuse("the issuer says the token is not active")
	}
	if in.Issuer != "" && in.Issuer != a.o.Issuer {
		return nil, refuse("the token was issued by another issuer")
	}
	if !slices.Contains(audiences(in.Audience), a.o.Audience) {
		return nil, refuse("the token was issued for another audience, not this server")
	}
	if in.Expiry == 0 {
		return nil, refuse("the issuer's answer gives the token no expiry")
	}
	exp := time.Unix(in.Expiry, 0)
	if !a.now().Before(exp) {
		return nil, refuse("the token has expired")
	}
	name := in.Name
	if name == "" {
		name = in.Preferred
	}
	return a.caller(in.Subject, in.ClientID, name, in.Username, in.Email, strings.Fields(in.Scope), exp)
}

// audiences reads aud as one string or a list.
func audiences(raw json.RawMessage) []string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	var list []string
	_ = json.Unmarshal(raw, &list)
	return list
}

func (a *Auth) now() time.Time {
	if a.o.Now != nil {
		return a.o.Now()
	}
	return time.Now()
}

// challenge writes the spec's refusal: 401 (or 403 for missing scopes)
// with a WWW-Authenticate that names the metadata, so a client can find
// the issuer and come back with a token.
func (a *Auth) challenge(w http.ResponseWriter, status int, errCode, desc string) {
	params := []string{}
	if errCode != "" {
		params = append(params, fmt.Sprintf("error=%q", errCode))
		if desc != "" {
			params = append(params, fmt.Sprintf("error_description=%q", desc))
		}
	}
	if len(a.o.Scopes) > 0 {
		params = append(params, fmt.Sprintf("scope=%q", strings.Join(a.o.Scopes, " ")))
	}
	params = append(params, fmt.Sprintf("resource_metadata=%q", a.metadataURL))
	w.Header().Set("WWW-Authenticate", "Bearer "+strings.Join(params, ", "))
	msg := "Unauthorized: send an access token of " + a.o.Issuer + " for " + a.o.Audience + " as Authorization: Bearer <token>"
	if desc != "" {
		msg += " (" + desc + ")"
	}
	if status == http.StatusForbidden {
		msg = "Forbidden: the token lacks a scope this server needs: " + strings.Join(a.o.Scopes, " ")
	}
	http.Error(w, msg, status)
}

// HandlerOAuth serves streamable HTTP like Handler, but each request must
// carry an access token a accepts: no token, or one a refuses, is answered
// 401 with the spec's WWW-Authenticate (a token without the configured
// scopes 403 insufficient_scope). The token is never passed on: upstream
// servers are reached with their own credentials. The caller reaches
// serve's handlers through the SDK's TokenInfo, whose UserID (the person)
// the SDK also holds a session to.
func (s *Server) HandlerOAuth(a *Auth) http.Handler {
	inner := s.routes()
	return checkOrigin(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		vals := r.Header.Values("Authorization")
		if len(vals) == 0 {
			a.challenge(w, http.StatusUnauthorized, "", "")
			return
		}
		scheme, token, ok := strings.Cut(vals[0], " ")
		if len(vals) != 1 || !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
			a.challenge(w, http.StatusUnauthorized, "invalid_request", "send one Authorization: Bearer header")
			return
		}
		c, err := a.Check(r.Context(), token)
		if err != nil {
			var te *tokenError
			if errors.As(err, &te) {
				a.challenge(w, http.StatusUnauthorized, "invalid_token", te.why)
				return
			}
			http.Error(w, "Service Unavailable: mcphost could not check the token: "+bound(err.Error(), 300), http.StatusServiceUnavailable)
			return
		}
		for _, sc := range a.o.Scopes {
			if !slices.Contains(c.Scopes, sc) {
				a.challenge(w, http.StatusForbidden, "insufficient_scope", "")
				return
			}
		}
		info := &auth.TokenInfo{Scopes: c.Scopes, Expiration: c.Expires, UserID: c.key(), Extra: map[string]any{callerKey: c}}
		// The SDK's own middleware is how TokenInfo reaches the session:
		// it is given the caller already checked.
		auth.RequireBearerToken(func(context.Context, string, *http.Request) (*auth.TokenInfo, error) {
			return info, nil
		}, &auth.RequireBearerTokenOptions{ResourceMetadataURL: a.metadataURL})(inner).ServeHTTP(w, r)
	}))
}

// callerKey is where a checked request's Caller sits in its TokenInfo.
const callerKey = "mcphost.caller"

// callerOf is the Caller of a request HandlerOAuth let through, nil for
// any other (the single token, stdio).
func callerOf(extra *mcp.RequestExtra) *Caller {
	if extra == nil || extra.TokenInfo == nil {
		return nil
	}
	c, _ := extra.TokenInfo.Extra[callerKey].(*Caller)
	return c
}

// personObserver is an observer that can name the person and client of
// the calls it sees (telemetry.Exporter).
type personObserver interface {
	ForClient(c *audit.Client) host.Observer
}

// observer is the observer of a session whose audit client is c: the
// serve's own, made to name c's person and client when it can.
func (s *Server) observer(c *audit.Client) host.Observer {
	if po, ok := s.o.Observer.(personObserver); ok && c.Person != nil {
		return po.ForClient(c)
	}
	return s.o.Observer
}
