package config

import (
	"slices"
	"strings"
	"testing"
)

// TestServeAuthKey: the user's "serve"."auth" names an issuer and an
// audience (and may name scopes and introspection credentials, the secret
// from the environment); a project file's is ignored with a warning; a
// wrong one is an error at its place that says what to write.
func TestServeAuthKey(t *testing.T) {
	env := func(k string) string { return map[string]string{"RS_SECRET": "s3cret"}[k] }
	r, err := parse("c.json", []byte(`{"serve": {"auth": {"issuer": "https://login.example.com/realms/team", "audience": "https://mcp.example.com/mcp",
		"scopes": ["mcp"], "clientId": "mcphost", "clientSecret": "${RS_SECRET}"}}}`), SourceUser, env)
	if err != nil {
		t.Fatal(err)
	}
	a := r.cfg.Serve.Auth
	if a == nil || a.Issuer != "https://login.example.com/realms/team" || a.Audience != "https://mcp.example.com/mcp" ||
		!slices.Equal(a.Scopes, []string{"mcp"}) || a.ClientID != "mcphost" || a.ClientSecret != "s3cret" {
		t.Fatalf("serve auth = %+v", a)
	}
	r, err = parse("c.json", []byte(`{"serve": {"auth": {"issuer": "http://127.0.0.1:9000", "audience": "http://localhost:8765/mcp"}}}`), SourceUser, env)
	if err != nil || r.cfg.Serve.Auth.Issuer != "http://127.0.0.1:9000" {
		t.Fatalf("a loopback issuer over plain http: %v %+v", err, r.cfg.Serve)
	}

	r, err = parse(".mcp.json", []byte(`{"serve": {"auth": {"issuer": "https://evil.example", "audience": "https://mcp.example.com/mcp"}}}`), SourceProject, env)
	if err != nil {
		t.Fatal(err)
	}
	if r.cfg.Serve != nil || len(r.warnings) != 1 || !strings.Contains(r.warnings[0].Message, `"serve" is ignored in a project file`) {
		t.Errorf("a project file's serve: %+v, warnings %v", r.cfg.Serve, r.warnings)
	}

	for _, c := range []struct{ data, want string }{
		{`{"serve": true}`, `c.json:1:11: expected an object for "serve"`},
		{`{"serve": {"auth": "https://x"}}`, `expected an object for "auth"`},
		{`{"serve": {"auth": {"issuer": "https://login.example.com"}}}`, `needs both an "issuer"`},
		{`{"serve": {"auth": {"issuer": "login.example.com", "audience": "https://m/mcp"}}}`, `c.json:1:31: the serve auth "issuer" must be`},
		{`{"serve": {"auth": {"issuer": "https://u:p@login.example.com", "audience": "https://m/mcp"}}}`, `the serve auth "issuer" must be`},
		{`{"serve": {"auth": {"issuer": "https://login.example.com?x=1", "audience": "https://m/mcp"}}}`, `the serve auth "issuer" must be`},
		{`{"serve": {"auth": {"issuer": "https://login.example.com#f", "audience": "https://m/mcp"}}}`, `the serve auth "issuer" must be`},
		{`{"serve": {"auth": {"issuer": "https://l", "audience": "/mcp"}}}`, `the serve auth "audience" must be this server's URL`},
		{`{"serve": {"auth": {"issuer": "https://l", "audience": "https://m/mcp#x"}}}`, `the serve auth "audience" must be`},
		{`{"serve": {"auth": {"issuer": "http://login.example.com", "audience": "https://m/mcp"}}}`, `is plain http to another machine`},
		{`{"serve": {"auth": {"issuer": "https://l", "audience": "https://m/mcp", "scopes": ["a b"]}}}`, `is not a scope`},
		{`{"serve": {"auth": {"issuer": "https://l", "audience": "https://m/mcp", "clientId": "x"}}}`, `"clientId" and "clientSecret"`},
		{`{"serve": {"auth": {"issuer": "https://l", "audience": "https://m/mcp", "clientId": "x", "clientSecret": "${NOPE}"}}}`, `NOPE`},
	} {
		_, err := parse("c.json", []byte(c.data), SourceUser, env)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.data, err, c.want)
		}
	}
}

// TestServeApprovePageClient: "approveClientId" (with an optional secret,
// from the environment) names the team approval page's own client; a
// secret without its id is an error that says so.
func TestServeApprovePageClient(t *testing.T) {
	env := func(k string) string { return map[string]string{"PAGE_SECRET": "p4ge"}[k] }
	r, err := parse("c.json", []byte(`{"serve": {"auth": {"issuer": "https://l", "audience": "https://m/mcp",
		"approveClientId": "mcphost-approve", "approveClientSecret": "${PAGE_SECRET}"}}}`), SourceUser, env)
	if err != nil {
		t.Fatal(err)
	}
	if a := r.cfg.Serve.Auth; a.ApproveClientID != "mcphost-approve" || a.ApproveClientSecret != "p4ge" {
		t.Fatalf("serve auth = %+v", a)
	}
	_, err = parse("c.json", []byte(`{"serve": {"auth": {"issuer": "https://l", "audience": "https://m/mcp", "approveClientSecret": "x"}}}`), SourceUser, env)
	if err == nil || !strings.Contains(err.Error(), `needs the "approveClientId"`) {
		t.Errorf("a page secret without its client id: %v", err)
	}
}
