package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/mcphost/mcphost/audit"
)

// testProvider is the project's test OpenID provider
// (serve/internal/oidcprovider), built and started for a test of the
// command. Its login form is driven as a browser would.
type testProvider struct {
	issuer string
}

// startTestProvider builds and starts the provider with cfg (its JSON
// config). The provider can be skipped only when it cannot be built here
// for want of its modules and CI is unset.
func startTestProvider(t *testing.T, cfg any) *testProvider {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "oidcprovider")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = filepath.Join("..", "..", "serve", "internal", "oidcprovider")
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	if out, err := build.CombinedOutput(); err != nil {
		if os.Getenv("CI") == "" && (strings.Contains(string(out), "dial tcp") || strings.Contains(string(out), "GOPROXY=off")) {
			t.Skipf("the test OpenID provider cannot be built here (scripts/test.sh downloads its modules):\n%s", out)
		}
		t.Fatalf("build the test OpenID provider: %v\n%s", err, out)
	}
	b, _ := json.Marshal(cfg)
	path := filepath.Join(t.TempDir(), "provider.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-config", path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Scan()
		line <- sc.Text()
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case l := <-line:
		issuer, ok := strings.CutPrefix(l, "issuer ")
		if !ok {
			t.Fatalf("the provider said %q", l)
		}
		return &testProvider{issuer: issuer}
	case <-time.After(60 * time.Second):
		t.Fatal("the provider did not start within 60s")
	}
	return nil
}

// logIn fills in the provider's login form as username, in hc (which
// follows redirects), starting from a response that reached the form.
func (p *testProvider) logIn(t *testing.T, hc *http.Client, form *http.Response, username, password string) *http.Response {
	t.Helper()
	id := form.Request.URL.Query().Get("authRequestID")
	if id == "" {
		t.Fatalf("the browser did not reach the provider's login form: %s", form.Request.URL)
	}
	resp, err := hc.PostForm(p.issuer+"/login", url.Values{"authRequestID": {id}, "username": {username}, "password": {password}})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// accessToken logs username in for the client desk-app and returns its
// access token.
func (p *testProvider) accessToken(t *testing.T, username, password, redirect string) string {
	t.Helper()
	conf := &oauth2.Config{ClientID: "desk-app", RedirectURL: redirect, Scopes: []string{"openid", "profile", "email"},
		Endpoint: oauth2.Endpoint{AuthURL: p.issuer + "/authorize", TokenURL: p.issuer + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams}}
	verifier, state := oauth2.GenerateVerifier(), rand.Text()
	var code string
	hc := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), redirect) {
			code = req.URL.Query().Get("code")
			return http.ErrUseLastResponse
		}
		return nil
	}}
	resp, err := hc.Get(conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	p.logIn(t, hc, resp, username, password).Body.Close()
	if code == "" {
		t.Fatalf("no code came back for %s", username)
	}
	tok, err := conf.Exchange(context.Background(), code, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	return tok.AccessToken
}

type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestServeTeamPageEndToEnd runs `mcphost serve --http` as a team's gate:
// the config names the issuer and the page's client (its secret from the
// environment), the managed policy routes wipe_* to owners with four
// eyes. Alice's call is held and her refusal names who must approve it and
// the team page's link; Bob logs in on the page through the provider's
// form and approves it; Alice's retry runs once; the audit log names Bob.
func TestServeTeamPageEndToEnd(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // serve listens there itself
	base := "http://" + addr
	const deskRedirect = "http://127.0.0.1:1/callback"
	p := startTestProvider(t, map[string]any{
		"clients": []map[string]any{
			{"id": "desk-app", "redirectURIs": []string{deskRedirect}, "audience": []string{base + "/mcp"}},
			{"id": "approve-page", "secret": "page-secret-0123456789", "redirectURIs": []string{base + "/approve/callback"}},
		},
		"users": []map[string]any{
			{"id": "u-alice", "username": "alice", "password": "alice-pw", "name": "Alice", "groups": []string{"dev"}},
			{"id": "u-bob", "username": "bob", "password": "bob-pw", "name": "Bob", "groups": []string{"owners"}},
		},
	})
	e := newManagedEnv(t)
	e.managed(`{"approvers": [{"server": "web", "tool": "wipe_*", "group": "owners", "fourEyes": true}]}`)
	dir := t.TempDir()
	effects := filepath.Join(dir, "effects")
	auditPath := filepath.Join(dir, "audit.jsonl")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := `{"serve": {"auth": {"issuer": "` + p.issuer + `", "audience": "` + base + `/mcp", "approveClientId": "approve-page", "approveClientSecret": "${PAGE_SECRET}"}}}`
	if err := os.MkdirAll(filepath.Join(dir, "config", "mcphost"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config", "mcphost", "config.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"XDG_STATE_HOME": filepath.Join(dir, "state"), "XDG_CONFIG_HOME": filepath.Join(dir, "config"), "NO_COLOR": "1",
		"PAGE_SECRET": "page-secret-0123456789"}
	errR, errW := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	t.Cleanup(cancel)
	done := make(chan int, 1)
	go func() {
		s := &streams{In: strings.NewReader(""), Out: io.Discard, Err: errW, Getenv: func(k string) string { return env[k] }, WorkDir: dir}
		done <- run(ctx, []string{"--audit", auditPath, "--server", "web=" + exe + " " + webServerArg + " " + effects,
			"serve", "--http", addr}, s)
		errW.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve exited %d", code)
		}
	})
	ready := make(chan bool, 1)
	var said strings.Builder
	go func() {
		sc := bufio.NewScanner(errR)
		sent := false
		for sc.Scan() {
			said.WriteString(sc.Text() + "\n")
			if !sent && strings.Contains(sc.Text(), "the team approval page is at "+base+"/approve/") {
				ready <- true
				sent = true
			}
		}
		if !sent {
			ready <- false
		}
	}()
	if !<-ready {
		t.Fatalf("serve did not announce the team approval page")
	}

	cl := mcp.NewClient(&mcp.Implementation{Name: "desk", Version: "1"}, nil)
	cs, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp",
		HTTPClient: &http.Client{Transport: bearerTransport{p.accessToken(t, "alice", "alice-pw", deskRedirect)}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func() *mcp.CallToolResult {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "web__wipe_all", Arguments: map[string]any{"where": "everywhere"}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := call()
	var txt string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			txt += tc.Text
		}
	}
	m := regexp.MustCompile(`approval id ([0-9a-f]+)`).FindStringSubmatch(txt)
	if !res.IsError || m == nil || !strings.Contains(txt, "a member of owners (not you)") || !strings.Contains(txt, base+"/approve/#call-"+m[1]) {
		t.Fatalf("Alice's routed call: %s", txt)
	}
	id := m[1]

	// Bob's browser: the page sends it to the provider's form, and back.
	jar, _ := cookiejar.New(nil)
	bob := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	form, err := bob.Get(base + "/approve/")
	if err != nil {
		t.Fatal(err)
	}
	form.Body.Close()
	page := p.logIn(t, bob, form, "bob", "bob-pw")
	body, _ := io.ReadAll(page.Body)
	page.Body.Close()
	if page.Request.URL.String() != base+"/approve/" || !strings.Contains(string(body), `id="call-`+id+`"`) {
		t.Fatalf("Bob's page (%s) does not show Alice's call:\n%s", page.Request.URL, body)
	}
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(string(body))
	if csrf == nil {
		t.Fatal("Bob's page has no CSRF token")
	}
	req, _ := http.NewRequest(http.MethodPost, base+"/approve/answer", strings.NewReader(url.Values{"id": {id}, "decision": {"approve"}, "csrf": {csrf[1]}, "confirm": {"wipe_all"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	resp, err := bob.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "Approved") {
		t.Fatalf("Bob's approval: %s\n%s", resp.Status, body)
	}
	if res := call(); res.IsError {
		t.Fatalf("Alice's retry after Bob's approval did not run: %+v", res.Content)
	}
	ran, _ := os.ReadFile(effects)
	if strings.Count(string(ran), "wipe_all") != 1 {
		t.Fatalf("the server ran %q, want wipe_all once", ran)
	}
	recs, err := audit.Tail(auditPath, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	named := false
	for _, r := range recs {
		if r.Kind == audit.Approval && r.ApprovalID == id && r.ApprovalState == audit.ApprovalApproved {
			named = r.Approver != nil && r.Approver.Subject == "u-bob" && r.Via == audit.ChannelWeb
		}
	}
	if !named {
		t.Errorf("no approval record names Bob through web:\n%s", said.String())
	}
}
