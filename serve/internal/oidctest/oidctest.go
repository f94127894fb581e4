// Package oidctest builds and runs a real OpenID provider for tests (the
// module in serve/internal/oidcprovider: zitadel's provider, pinned, with
// a store of its own) and gets tokens from it the way a client does: the
// authorization code flow with PKCE, a person logging in on its form.
package oidctest

import (
	"bufio"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// Client is a client of the provider (see its main.go).
type Client struct {
	ID              string   `json:"id"`
	Secret          string   `json:"secret,omitempty"`
	RedirectURIs    []string `json:"redirectURIs,omitempty"`
	Audience        []string `json:"audience,omitempty"`
	Opaque          bool     `json:"opaque,omitempty"`
	LifetimeSeconds int      `json:"lifetimeSeconds,omitempty"`
	LeanIDToken     bool     `json:"leanIDToken,omitempty"`
	// UserinfoOf makes the provider misbehave: its userinfo, asked with
	// this client's tokens, answers about the person with this id.
	UserinfoOf string `json:"userinfoOf,omitempty"`
}

// User is a person who can log in.
type User struct {
	ID       string   `json:"id"`
	Username string   `json:"username"`
	Password string   `json:"password"`
	Name     string   `json:"name,omitempty"`
	Email    string   `json:"email,omitempty"`
	Groups   []string `json:"groups,omitempty"`
}

// Config is what the provider is started with.
type Config struct {
	Clients []Client `json:"clients"`
	Users   []User   `json:"users"`
}

// Build builds the provider into a directory of the test's and returns
// its path (go's build cache makes a second build a link). A test may be
// skipped only when the provider cannot be built here at all (no go
// command, or its modules cannot be downloaded) and CI is unset; under
// CI=true, as for every other failure, the test fails.
func Build(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(file), "..", "oidcprovider")
	goBin, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("the test OpenID provider cannot be built here: no go command (%v)", err)
		}
		t.Fatalf("the test OpenID provider cannot be built: no go command (%v)", err)
	}
	bin := filepath.Join(t.TempDir(), "oidcprovider")
	cmd := exec.Command(goBin, "build", "-o", bin, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	out, err := cmd.CombinedOutput()
	if err != nil {
		if os.Getenv("CI") == "" && unreachable(string(out)) {
			t.Skipf("the test OpenID provider cannot be built here: its modules cannot be downloaded (scripts/test.sh downloads them):\n%s", out)
		}
		t.Fatalf("build the test OpenID provider in %s: %v\n%s", src, err, out)
	}
	return bin
}

// unreachable reports whether go build failed for want of the modules.
func unreachable(out string) bool {
	for _, s := range []string{"dial tcp", "no such host", "connection refused", "GOPROXY=off", "i/o timeout", "module lookup disabled"} {
		if strings.Contains(out, s) {
			return true
		}
	}
	return false
}

// Provider is a running provider.
type Provider struct {
	// Issuer is its issuer URL, as its discovery document says it.
	Issuer string
	cfg    Config
	cmd    *exec.Cmd
	log    *strings.Builder
	mu     sync.Mutex
	// stopOnce stops it once (Stop, and the test's cleanup).
	stopOnce sync.Once
}

// Start runs the provider with cfg and waits (bounded) until it serves.
// The test's cleanup stops it.
func Start(t testing.TB, cfg Config) *Provider {
	t.Helper()
	bin := Build(t)
	dir := t.TempDir()
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "provider.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	p := &Provider{cfg: cfg, log: &strings.Builder{}}
	p.cmd = exec.Command(bin, "-config", path)
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stderr = &lockedWriter{mu: &p.mu, w: p.log}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start the OpenID provider: %v", err)
	}
	t.Cleanup(p.Stop)
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case l, ok := <-line:
		issuer, found := strings.CutPrefix(l, "issuer ")
		if !ok || !found {
			t.Fatalf("the OpenID provider did not start: %q\n%s", l, p.stderr())
		}
		p.Issuer = issuer
	case <-time.After(60 * time.Second):
		t.Fatalf("the OpenID provider did not start within 60s:\n%s", p.stderr())
	}
	return p
}

// Stop stops the provider and waits for it to exit. Calling it again
// does nothing.
func (p *Provider) Stop() {
	p.stopOnce.Do(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		_ = p.cmd.Wait()
	})
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func (p *Provider) stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// Tokens is what the token endpoint answered.
type Tokens struct {
	Access string
	ID     string
}

// Login runs the authorization code flow with PKCE for clientID: the
// person username logs in with password on the provider's form, and the
// code is exchanged at the token endpoint. Nothing listens at the
// redirect URI: the code is read from the provider's redirect to it.
func (p *Provider) Login(t testing.TB, clientID, username, password string) Tokens {
	t.Helper()
	tok, err := p.login(clientID, username, password)
	if err != nil {
		t.Fatalf("log %s in at the OpenID provider through %s: %v\n%s", username, clientID, err, p.stderr())
	}
	return tok
}

func (p *Provider) login(clientID, username, password string) (Tokens, error) {
	var c *Client
	for i := range p.cfg.Clients {
		if p.cfg.Clients[i].ID == clientID {
			c = &p.cfg.Clients[i]
		}
	}
	if c == nil || len(c.RedirectURIs) == 0 {
		return Tokens{}, fmt.Errorf("no client %q with a redirect URI in the provider's config", clientID)
	}
	conf := &oauth2.Config{
		ClientID: c.ID, ClientSecret: c.Secret, RedirectURL: c.RedirectURIs[0],
		Endpoint: oauth2.Endpoint{AuthURL: p.Issuer + "/authorize", TokenURL: p.Issuer + "/oauth/token"},
		Scopes:   []string{"openid", "profile", "email", "mcp"},
	}
	verifier, state := oauth2.GenerateVerifier(), rand.Text()
	cb, err := p.Authorize(conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier),
		oauth2.SetAuthURLParam("nonce", rand.Text())), username, password)
	if err != nil {
		return Tokens{}, err
	}
	if cb.Query().Get("state") != state {
		return Tokens{}, fmt.Errorf("the redirect %s does not carry the state sent", cb)
	}
	code := cb.Query().Get("code")
	if code == "" {
		return Tokens{}, fmt.Errorf("the redirect %s carries no code", cb)
	}
	return p.exchange(conf, code, verifier)
}

// exchange redeems code at the token endpoint. It reads the answer itself
// rather than through oauth2.Config.Exchange, whose parsing refuses the
// expires_in of a token issued already expired (LifetimeSeconds < 0).
func (p *Provider) exchange(conf *oauth2.Config, code, verifier string) (Tokens, error) {
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {conf.RedirectURL}, "code_verifier": {verifier}}
	if conf.ClientSecret == "" {
		form.Set("client_id", conf.ClientID)
	}
	req, err := http.NewRequest(http.MethodPost, conf.Endpoint.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return Tokens{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if conf.ClientSecret != "" {
		req.SetBasicAuth(url.QueryEscape(conf.ClientID), url.QueryEscape(conf.ClientSecret))
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return Tokens{}, fmt.Errorf("exchange the code: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return Tokens{}, fmt.Errorf("exchange the code: %w", err)
	}
	var tok struct {
		Access string `json:"access_token"`
		ID     string `json:"id_token"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &tok) != nil || tok.Access == "" {
		return Tokens{}, fmt.Errorf("exchange the code: %s: %s", resp.Status, b)
	}
	return Tokens{Access: tok.Access, ID: tok.ID}, nil
}

// Authorize does what a person's browser does with an authorization
// request URL: it follows it to the provider's login form, logs username
// in with password, and returns where the provider then sends the browser
// (the client's redirect URI, with the code and state, or the error).
func (p *Provider) Authorize(authURL, username, password string) (*url.URL, error) {
	hc := &http.Client{
		Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	// /authorize sends the browser to the login form.
	loc, err := redirect(hc, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, fmt.Errorf("authorize: %w", err)
	}
	lu, err := url.Parse(loc)
	if err != nil {
		return nil, err
	}
	form := url.Values{"authRequestID": {lu.Query().Get("authRequestID")}, "username": {username}, "password": {password}}
	// The form's answer sends it back to the provider's callback, which
	// sends it to the redirect URI with the code.
	loc, err = redirect(hc, http.MethodPost, p.Issuer+"/login", form)
	if err != nil {
		return nil, fmt.Errorf("log in: %w", err)
	}
	loc, err = redirect(hc, http.MethodGet, absolute(p.Issuer, loc), nil)
	if err != nil {
		return nil, fmt.Errorf("callback: %w", err)
	}
	return url.Parse(loc)
}

func absolute(base, loc string) string {
	if strings.HasPrefix(loc, "/") {
		return base + loc
	}
	return loc
}

// redirect makes one request and returns where its answer redirects.
func redirect(hc *http.Client, method, u string, form url.Values) (string, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		return "", err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	loc := resp.Header.Get("Location")
	if resp.StatusCode/100 != 3 || loc == "" {
		return "", errors.New(resp.Status + ": " + string(b))
	}
	return loc, nil
}
