package config

import (
	"net/url"
	"strings"

	"github.com/mcphost/mcphost/internal/netcheck"
)

// Serve is the user's "serve" setting: how `mcphost serve --http` lets
// callers in.
type Serve struct {
	// Auth, if set, makes serve --http an OAuth resource server: callers
	// bring the issuer's access tokens instead of serve's one bearer token.
	Auth *ServeAuth
}

// ServeAuth is "serve": {"auth": {...}}: the authorization server whose
// access tokens serve accepts, and for which resource.
type ServeAuth struct {
	Issuer   string   // the issuer URL (OpenID discovery)
	Audience string   // this server's canonical URL, the tokens' aud
	Scopes   []string // scopes every token must carry
	// ClientID and ClientSecret authenticate serve at the issuer's
	// introspection endpoint, for opaque tokens; the secret may come from
	// the environment (${VAR}).
	ClientID, ClientSecret string
	// ApproveClientID (and, for a confidential client,
	// ApproveClientSecret) is the team approval page's own client at the
	// issuer, registered with the redirect URI <audience's origin>/approve/callback;
	// set, serve --http serves the page. The secret may come from the
	// environment (${VAR}).
	ApproveClientID, ApproveClientSecret string
}

// serve decodes the user's "serve" setting.
func (p *parser) serve(m member) (*Serve, error) {
	const where = `in "serve"`
	if m.val.kind != kindObject {
		return nil, p.errorf(m.val.start, `expected an object for "serve", got %s; write {"auth": {"issuer": "https://login.example.com", "audience": "https://mcp.example.com/mcp"}}`, m.val.kind)
	}
	s := &Serve{}
	for _, f := range p.uniq(m.val, where) {
		switch f.key {
		case "auth":
			a, err := p.serveAuth(f)
			if err != nil {
				return nil, err
			}
			s.Auth = a
		default:
			p.unknown(f, where, []string{"auth"}, nil)
		}
	}
	return s, nil
}

func (p *parser) serveAuth(m member) (*ServeAuth, error) {
	const where = `in "serve"."auth"`
	if m.val.kind != kindObject {
		return nil, p.errorf(m.val.start, `expected an object for "auth" %s, got %s; write {"issuer": "https://login.example.com", "audience": "https://mcp.example.com/mcp"}`, "in \"serve\"", m.val.kind)
	}
	a := &ServeAuth{}
	secretAt, approveSecretAt := -1, -1
	for _, f := range p.uniq(m.val, where) {
		var err error
		switch f.key {
		case "issuer":
			a.Issuer, err = p.str(f.val, `"issuer"`, where)
			if err == nil {
				err = p.authURL(f, a.Issuer, `the serve auth "issuer" must be the authorization server's issuer URL, like "https://login.example.com/realms/team"`)
			}
		case "audience":
			a.Audience, err = p.str(f.val, `"audience"`, where)
			if err == nil {
				err = p.authURL(f, a.Audience, `the serve auth "audience" must be this server's URL as clients reach it, like "https://mcp.example.com/mcp" (the resource tokens are issued for)`)
			}
		case "scopes":
			a.Scopes, err = p.strList(f.val, `"scopes"`, where)
			for i, s := range a.Scopes {
				if err == nil && (s == "" || strings.ContainsAny(s, " \t\"\\")) {
					err = p.errorf(f.val.elems[i].start, `the serve auth scope %q is not a scope: no spaces, quotes or backslashes`, short(s))
				}
			}
		case "clientId":
			a.ClientID, err = p.str(f.val, `"clientId"`, where)
		case "clientSecret":
			var raw string
			raw, err = p.str(f.val, `"clientSecret"`, where)
			if err == nil {
				a.ClientSecret, _, err = expand(raw, p.getenv, false)
				if err != nil {
					err = p.errorf(f.val.start, "%v (in \"clientSecret\" %s)", err, where)
				}
			}
			secretAt = f.val.start
		case "approveClientId":
			a.ApproveClientID, err = p.str(f.val, `"approveClientId"`, where)
		case "approveClientSecret":
			var raw string
			raw, err = p.str(f.val, `"approveClientSecret"`, where)
			if err == nil {
				a.ApproveClientSecret, _, err = expand(raw, p.getenv, false)
				if err != nil {
					err = p.errorf(f.val.start, "%v (in \"approveClientSecret\" %s)", err, where)
				}
			}
			approveSecretAt = f.val.start
		default:
			p.unknown(f, where, []string{"issuer", "audience", "scopes", "clientId", "clientSecret", "approveClientId", "approveClientSecret"}, nil)
		}
		if err != nil {
			return nil, err
		}
	}
	if a.Issuer == "" || a.Audience == "" {
		return nil, p.errorf(m.val.start, `"auth" %s needs both an "issuer" (the authorization server) and an "audience" (this server's URL)`, "in \"serve\"")
	}
	if (a.ClientID == "") != (a.ClientSecret == "") {
		at := m.val.start
		if secretAt >= 0 {
			at = secretAt
		}
		return nil, p.errorf(at, `"clientId" and "clientSecret" %s go together (serve introspects opaque tokens with them): give both, or neither`, where)
	}
	if a.ApproveClientSecret != "" && a.ApproveClientID == "" {
		return nil, p.errorf(approveSecretAt, `"approveClientSecret" %s needs the "approveClientId" it is the secret of (the team approval page's client at the issuer)`, where)
	}
	return a, nil
}

// authURL checks an issuer or audience: an absolute http(s) URL without
// query or fragment, plain http only on this machine.
func (p *parser) authURL(f member, v, msg string) error {
	u, err := url.Parse(v)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return p.errorf(f.val.start, "%s, not %q", msg, short(v))
	}
	if u.Scheme == "http" && !netcheck.IsLoopbackHost(u.Hostname()) {
		return p.errorf(f.val.start, `%q is plain http to another machine: tokens and keys could be read or forged on the way; use https`, short(v))
	}
	return nil
}
