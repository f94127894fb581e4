package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/subtle"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// store is the provider's whole state, in memory: what op.Storage asks of
// it. Authorization requests, codes and tokens live until the process
// ends.
type store struct {
	issuer string
	key    *rsa.PrivateKey
	keyID  string

	clients map[string]*client
	users   map[string]*UserConfig // by id
	byName  map[string]*UserConfig // by username

	mu       sync.Mutex
	requests map[string]*authRequest
	codes    map[string]string // code → request id
	tokens   map[string]*token // token id → token
}

var (
	_ op.Storage                        = (*store)(nil)
	_ op.CanGetPrivateClaimsFromRequest = (*store)(nil)
)

func newStore(issuer string, cfg *Config) (*store, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	s := &store{
		issuer: issuer, key: key, keyID: rand.Text()[:8],
		clients: map[string]*client{}, users: map[string]*UserConfig{}, byName: map[string]*UserConfig{},
		requests: map[string]*authRequest{}, codes: map[string]string{}, tokens: map[string]*token{},
	}
	for i := range cfg.Clients {
		c := cfg.Clients[i]
		if c.ID == "" || s.clients[c.ID] != nil {
			return nil, fmt.Errorf("client %d: its id %q is empty or repeated", i, c.ID)
		}
		if c.LifetimeSeconds == 0 {
			c.LifetimeSeconds = 300
		}
		s.clients[c.ID] = &client{cfg: c, loginURL: issuer + "/login?authRequestID="}
	}
	for i := range cfg.Users {
		u := &cfg.Users[i]
		if u.ID == "" || u.Username == "" || s.users[u.ID] != nil || s.byName[u.Username] != nil {
			return nil, fmt.Errorf("user %d: its id or username is empty or repeated", i)
		}
		s.users[u.ID], s.byName[u.Username] = u, u
	}
	return s, nil
}

// authRequest is one authorization request, done once a person logged in.
type authRequest struct {
	id       string
	req      *oidc.AuthRequest
	audience []string
	userID   string
	authTime time.Time
	done     bool
}

func (a *authRequest) GetID() string                      { return a.id }
func (a *authRequest) GetACR() string                     { return "" }
func (a *authRequest) GetAMR() []string                   { return []string{"pwd"} }
func (a *authRequest) GetAudience() []string              { return a.audience }
func (a *authRequest) GetAuthTime() time.Time             { return a.authTime }
func (a *authRequest) GetClientID() string                { return a.req.ClientID }
func (a *authRequest) GetNonce() string                   { return a.req.Nonce }
func (a *authRequest) GetRedirectURI() string             { return a.req.RedirectURI }
func (a *authRequest) GetResponseType() oidc.ResponseType { return a.req.ResponseType }
func (a *authRequest) GetResponseMode() oidc.ResponseMode { return a.req.ResponseMode }
func (a *authRequest) GetScopes() []string                { return a.req.Scopes }
func (a *authRequest) GetState() string                   { return a.req.State }
func (a *authRequest) GetSubject() string                 { return a.userID }
func (a *authRequest) Done() bool                         { return a.done }
func (a *authRequest) GetCodeChallenge() *oidc.CodeChallenge {
	if a.req.CodeChallenge == "" {
		return nil
	}
	return &oidc.CodeChallenge{Challenge: a.req.CodeChallenge, Method: a.req.CodeChallengeMethod}
}

// token is an access token the provider issued.
type token struct {
	id       string
	clientID string
	subject  string
	audience []string
	scopes   []string
	issued   time.Time
	expires  time.Time
}

// client is one configured client.
type client struct {
	cfg      ClientConfig
	loginURL string
}

func (c *client) GetID() string                    { return c.cfg.ID }
func (c *client) RedirectURIs() []string           { return c.cfg.RedirectURIs }
func (c *client) PostLogoutRedirectURIs() []string { return nil }
func (c *client) ApplicationType() op.ApplicationType {
	return op.ApplicationTypeWeb
}
func (c *client) AuthMethod() oidc.AuthMethod {
	if c.cfg.Secret == "" {
		return oidc.AuthMethodNone
	}
	return oidc.AuthMethodBasic
}
func (c *client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}
func (c *client) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeCode}
}
func (c *client) LoginURL(id string) string { return c.loginURL + id }
func (c *client) AccessTokenType() op.AccessTokenType {
	if c.cfg.Opaque {
		return op.AccessTokenTypeBearer
	}
	return op.AccessTokenTypeJWT
}
func (c *client) IDTokenLifetime() time.Duration { return 5 * time.Minute }

// DevMode lets a web client's redirect URI be plain http on loopback, as
// the tests' are.
func (c *client) DevMode() bool { return true }
func (c *client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) IsScopeAllowed(string) bool           { return true }
func (c *client) IDTokenUserinfoClaimsAssertion() bool { return !c.cfg.LeanIDToken }
func (c *client) ClockSkew() time.Duration             { return 0 }

var errNotFound = errors.New("not found")

// logIn finishes the authorization request id for the person whose
// username and password these are.
func (s *store) logIn(id, username, password string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.requests[id]
	if a == nil {
		return errors.New("no such authorization request")
	}
	u := s.byName[username]
	if u == nil || subtle.ConstantTimeCompare([]byte(u.Password), []byte(password)) != 1 {
		return errors.New("wrong username or password")
	}
	a.userID, a.authTime, a.done = u.ID, time.Now(), true
	return nil
}

func (s *store) CreateAuthRequest(_ context.Context, req *oidc.AuthRequest, userID string) (op.AuthRequest, error) {
	c := s.clients[req.ClientID]
	if c == nil {
		return nil, errNotFound
	}
	a := &authRequest{id: rand.Text(), req: req, audience: c.cfg.Audience, userID: userID}
	s.mu.Lock()
	s.requests[a.id] = a
	s.mu.Unlock()
	return a, nil
}

func (s *store) AuthRequestByID(_ context.Context, id string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.requests[id]; a != nil {
		return a, nil
	}
	return nil, errNotFound
}

func (s *store) AuthRequestByCode(_ context.Context, code string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.requests[s.codes[code]]; a != nil {
		return a, nil
	}
	return nil, errNotFound
}

func (s *store) SaveAuthCode(_ context.Context, id, code string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.requests[id] == nil {
		return errNotFound
	}
	s.codes[code] = id
	return nil
}

func (s *store) DeleteAuthRequest(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.requests, id)
	for code, rid := range s.codes {
		if rid == id {
			delete(s.codes, code)
		}
	}
	return nil
}

// CreateAccessToken records a new access token for the request, with the
// lifetime its client is configured with.
func (s *store) CreateAccessToken(_ context.Context, req op.TokenRequest) (string, time.Time, error) {
	clientID := ""
	if a, ok := req.(*authRequest); ok {
		clientID = a.GetClientID()
	}
	c := s.clients[clientID]
	if c == nil {
		return "", time.Time{}, errNotFound
	}
	now := time.Now()
	t := &token{id: rand.Text(), clientID: clientID, subject: req.GetSubject(), audience: req.GetAudience(),
		scopes: req.GetScopes(), issued: now, expires: now.Add(time.Duration(c.cfg.LifetimeSeconds) * time.Second)}
	s.mu.Lock()
	s.tokens[t.id] = t
	s.mu.Unlock()
	return t.id, t.expires, nil
}

func (s *store) CreateAccessAndRefreshTokens(context.Context, op.TokenRequest, string) (string, string, time.Time, error) {
	return "", "", time.Time{}, errors.New("refresh tokens are not offered")
}

func (s *store) TokenRequestByRefreshToken(context.Context, string) (op.RefreshTokenRequest, error) {
	return nil, errNotFound
}

func (s *store) TerminateSession(context.Context, string, string) error { return nil }

func (s *store) GetRefreshTokenInfo(context.Context, string, string) (string, string, error) {
	return "", "", op.ErrInvalidRefreshToken
}

func (s *store) RevokeToken(_ context.Context, id, _, _ string) *oidc.Error {
	s.mu.Lock()
	delete(s.tokens, id)
	s.mu.Unlock()
	return nil
}

type signingKey struct{ s *store }

func (k signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k signingKey) Key() any                                    { return k.s.key }
func (k signingKey) ID() string                                  { return k.s.keyID }

type publicKey struct{ s *store }

func (k publicKey) ID() string                         { return k.s.keyID }
func (k publicKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k publicKey) Use() string                        { return "sig" }
func (k publicKey) Key() any                           { return &k.s.key.PublicKey }

func (s *store) SigningKey(context.Context) (op.SigningKey, error) { return signingKey{s}, nil }
func (s *store) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}
func (s *store) KeySet(context.Context) ([]op.Key, error) { return []op.Key{publicKey{s}}, nil }

func (s *store) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	if c := s.clients[id]; c != nil {
		return c, nil
	}
	return nil, errNotFound
}

func (s *store) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	c := s.clients[id]
	if c == nil || c.cfg.Secret == "" || subtle.ConstantTimeCompare([]byte(c.cfg.Secret), []byte(secret)) != 1 {
		return errors.New("wrong client id or secret")
	}
	return nil
}

// userinfo fills in what the scopes let a client know of the person.
func (s *store) userinfo(info *oidc.UserInfo, userID string, scopes []string) error {
	u := s.users[userID]
	if u == nil {
		return errNotFound
	}
	info.Subject = u.ID
	if slices.Contains(scopes, oidc.ScopeProfile) {
		info.Name, info.PreferredUsername = u.Name, u.Username
		if u.Groups != nil {
			info.AppendClaims("groups", u.Groups)
		}
	}
	if slices.Contains(scopes, oidc.ScopeEmail) {
		info.Email, info.EmailVerified = u.Email, true
	}
	return nil
}

func (s *store) SetUserinfoFromScopes(_ context.Context, info *oidc.UserInfo, userID, _ string, scopes []string) error {
	return s.userinfo(info, userID, scopes)
}

func (s *store) SetUserinfoFromToken(_ context.Context, info *oidc.UserInfo, tokenID, _, _ string) error {
	s.mu.Lock()
	t := s.live(tokenID)
	s.mu.Unlock()
	if t == nil {
		return errNotFound
	}
	subject := t.subject
	if c := s.clients[t.clientID]; c != nil && c.cfg.UserinfoOf != "" {
		subject = c.cfg.UserinfoOf
	}
	return s.userinfo(info, subject, t.scopes)
}

// live returns the token tokenID while it has not expired. s.mu is held.
func (s *store) live(tokenID string) *token {
	t := s.tokens[tokenID]
	if t == nil || !time.Now().Before(t.expires) {
		return nil
	}
	return t
}

// SetIntrospectionFromToken answers a resource server's introspection of
// an opaque token. Any client that authenticates may introspect (op checks
// its secret first); an unknown or expired token is inactive.
func (s *store) SetIntrospectionFromToken(_ context.Context, resp *oidc.IntrospectionResponse, tokenID, subject, _ string) error {
	s.mu.Lock()
	t := s.live(tokenID)
	s.mu.Unlock()
	if t == nil || t.subject != subject {
		return errNotFound
	}
	info := &oidc.UserInfo{}
	if err := s.userinfo(info, t.subject, t.scopes); err != nil {
		return err
	}
	resp.SetUserInfo(info)
	resp.Scope = t.scopes
	resp.ClientID = t.clientID
	resp.TokenType = "Bearer"
	resp.Issuer = s.issuer
	resp.Audience = t.audience
	resp.IssuedAt = oidc.FromTime(t.issued)
	resp.Expiration = oidc.FromTime(t.expires)
	resp.JWTID = t.id
	return nil
}

// GetPrivateClaimsFromScopes puts the person's name and email in a JWT
// access token too, for the resource server to show (op leaves the
// profile and email scopes out of scopes here: they are the ID token's).
func (s *store) GetPrivateClaimsFromScopes(_ context.Context, userID, _ string, _ []string) (map[string]any, error) {
	u := s.users[userID]
	if u == nil {
		return nil, nil
	}
	claims := map[string]any{}
	if u.Name != "" {
		claims["name"] = u.Name
	}
	if u.Email != "" {
		claims["email"] = u.Email
	}
	return claims, nil
}

// GetPrivateClaimsFromRequest is what op asks instead when the store has
// it: the claims above and the token's scopes (RFC 9068's scope claim,
// which op does not write itself).
func (s *store) GetPrivateClaimsFromRequest(ctx context.Context, req op.TokenRequest, _ []string) (map[string]any, error) {
	claims, err := s.GetPrivateClaimsFromScopes(ctx, req.GetSubject(), "", nil)
	if claims == nil || err != nil {
		return claims, err
	}
	if sc := req.GetScopes(); len(sc) > 0 {
		claims["scope"] = strings.Join(sc, " ")
	}
	return claims, nil
}

func (s *store) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errNotFound
}

func (s *store) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errors.New("the JWT profile grant is not offered")
}

func (s *store) Health(context.Context) error { return nil }
