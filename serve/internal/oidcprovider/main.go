// Command oidcprovider is an OpenID provider for mcphost's tests: zitadel's
// provider (its op package, pinned) over an in-memory store of its own,
// with the clients and people a JSON file names. A person logs in with a
// password on its /login form, so a test drives the real authorization
// code flow with PKCE over HTTP and gets the tokens the provider signs,
// JWT or opaque (the latter answered by its introspection endpoint). The
// tests build it from these modules, never from a downloaded binary.
//
// It listens on a free loopback port and prints one line, "issuer URL",
// once it serves; it stops on SIGTERM or SIGINT.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"html"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/zitadel/oidc/v3/pkg/op"
)

// Config is the file the provider reads.
type Config struct {
	Clients []ClientConfig `json:"clients"`
	Users   []UserConfig   `json:"users"`
}

// ClientConfig is one client of the provider.
type ClientConfig struct {
	ID string `json:"id"`
	// Secret makes a confidential client (client_secret_basic); without
	// one the client is public and must use PKCE.
	Secret       string   `json:"secret,omitempty"`
	RedirectURIs []string `json:"redirectURIs,omitempty"`
	// Audience is what the client's access tokens are for (aud).
	Audience []string `json:"audience,omitempty"`
	// Opaque makes its access tokens opaque (introspection) instead of JWT.
	Opaque bool `json:"opaque,omitempty"`
	// LifetimeSeconds is how long its access tokens live (default 300); a
	// negative one issues tokens that expired that long before they were
	// issued, for tests of expiry that need no waiting.
	LifetimeSeconds int `json:"lifetimeSeconds,omitempty"`
	// LeanIDToken leaves the person's profile claims (name, email,
	// groups) out of its ID tokens, as some issuers do: a client then
	// reads them from userinfo.
	LeanIDToken bool `json:"leanIDToken,omitempty"`
	// UserinfoOf is a misbehaving mode: userinfo asked with this client's
	// access tokens answers about the person with this id, not about the
	// token's, as a broken or hostile issuer might. Empty: the token's.
	UserinfoOf string `json:"userinfoOf,omitempty"`
}

// UserConfig is one person who can log in.
type UserConfig struct {
	ID       string `json:"id"`
	Username string `json:"username"`
	Password string `json:"password"`
	Name     string `json:"name,omitempty"`
	Email    string `json:"email,omitempty"`
	// Groups are the groups the person belongs to, in the "groups" claim
	// of their ID token and userinfo (with the profile scope).
	Groups []string `json:"groups,omitempty"`
}

func main() {
	path := flag.String("config", "", "the JSON file of clients and users")
	flag.Parse()
	if err := run(*path); err != nil {
		fmt.Fprintln(os.Stderr, "oidcprovider:", err)
		os.Exit(1)
	}
}

func run(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	// Strict: a field the tests' side (oidctest) writes that this
	// provider does not know fails here, rather than being ignored.
	var cfg Config
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	issuer := "http://" + l.Addr().String()
	st, err := newStore(issuer, &cfg)
	if err != nil {
		return err
	}
	opCfg := &op.Config{
		CodeMethodS256:           true,
		AuthMethodPost:           true,
		GrantTypeRefreshToken:    false,
		SupportedScopes:          []string{"openid", "profile", "email", "mcp"},
		DefaultLogoutRedirectURI: "/",
	}
	if _, err := rand.Read(opCfg.CryptoKey[:]); err != nil {
		return err
	}
	provider, err := op.NewOpenIDProvider(issuer, opCfg, st, op.WithAllowInsecure())
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/login", &login{st: st, callback: issuer + "/authorize/callback?id="})
	mux.Handle("/", provider)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	fmt.Printf("issuer %s\n", issuer)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-sig:
	case err := <-done:
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(ctx)
}

// login is the provider's login form: a person's username and password
// finish the authorization request named by authRequestID.
type login struct {
	st       *store
	callback string
}

func (h *login) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	id := r.Form.Get("authRequestID")
	if r.Method != http.MethodPost {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>Log in</title><form method="post" action="/login">
<input type="hidden" name="authRequestID" value="%s">
<label>Username <input name="username" autocomplete="username"></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
<button type="submit">Log in</button></form>`, html.EscapeString(id))
		return
	}
	if err := h.st.logIn(id, r.Form.Get("username"), r.Form.Get("password")); err != nil {
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	http.Redirect(w, r, h.callback+id, http.StatusFound)
}
