package main

import (
	"strings"
	"testing"
)

// TestServeRefusesTheTokenOptionsWithAnIssuer: with an OAuth issuer,
// callers get in with the issuer's access tokens, so --insecure-no-token
// (no token at all) and --token-file (serve's own token) contradict it:
// each is refused at start, as a usage error naming both and the fix,
// before serve reaches for the issuer.
func TestServeRefusesTheTokenOptionsWithAnIssuer(t *testing.T) {
	// Nothing listens at the issuer: a serve that got as far as
	// discovering it would fail there, with another error.
	issuer := []string{"--auth-issuer", "http://127.0.0.1:1", "--auth-audience", "https://mcp.example.com/mcp"}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"--insecure-no-token", []string{"--insecure-no-token"}, "--insecure-no-token cannot be used with an OAuth issuer"},
		{"--token-file", []string{"--token-file", "serve-token"}, "--token-file cannot be used with an OAuth issuer"},
	} {
		e := newManagedEnv(t)
		args := append([]string{"--demo", "serve", "--http", "127.0.0.1:0"}, c.args...)
		code, _, stderr := e.run(append(args, issuer...)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "drop one of them") {
			t.Errorf("%s with an issuer: exit %d, stderr:\n%s\nwant %d, %q and the fix", c.name, code, stderr, exitUsage, c.want)
		}
	}
}
