package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcphost/mcphost/oauth/oauthtest"
)

// lines is an output stream whose lines a test can wait for while the
// command that writes them still runs.
type lines struct {
	mu  sync.Mutex
	buf bytes.Buffer
	ch  chan string
}

func newLines() *lines { return &lines{ch: make(chan string, 100)} }

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	for _, line := range strings.SplitAfter(string(p), "\n") {
		if strings.HasSuffix(line, "\n") {
			select {
			case l.ch <- strings.TrimSuffix(line, "\n"):
			default: // nobody waits for this many lines
			}
		}
	}
	return len(p), nil
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

type authEnv struct {
	dir, server string
	as          *oauthtest.AuthServer
}

// mcphost runs the command in-process with its own state directory and
// returns the exit code, stdout and stderr.
func (e *authEnv) mcphost(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	out, errOut := newLines(), newLines()
	code := run(t.Context(), append(args, "--server", "remote="+e.server), e.streams(out, errOut))
	return code, out.String(), errOut.String()
}

func (e *authEnv) streams(out, errOut io.Writer) *streams {
	env := map[string]string{"XDG_STATE_HOME": filepath.Join(e.dir, "state"), "XDG_CONFIG_HOME": filepath.Join(e.dir, "config"), "NO_COLOR": "1"}
	return &streams{In: strings.NewReader(""), Out: out, Err: errOut, Getenv: func(k string) string { return env[k] }, WorkDir: e.dir}
}

func TestAuthCommands(t *testing.T) {
	as := oauthtest.NewAuthServer(t, oauthtest.AuthServerOptions{Scopes: []string{"tools"}})
	srv := oauthtest.NewMCPServer(t, as, oauthtest.MCPServerOptions{})
	e := &authEnv{dir: t.TempDir(), server: srv.URL, as: as}
	const needsLogin = "server remote needs you to log in: run mcphost auth login remote"

	// Headless, without a token: exit 2 and the command to run.
	for _, args := range [][]string{{"tools"}, {"call", "remote/echo", `{"text":"hi"}`}} {
		code, _, stderr := e.mcphost(t, args...)
		if code != exitUsage || !strings.Contains(stderr, needsLogin) {
			t.Errorf("%s without a token: exit %d, stderr %q; want exit 2 saying %q", args[0], code, stderr, needsLogin)
		}
	}
	if code, stdout, _ := e.mcphost(t, "auth", "status"); code != 0 || !strings.Contains(stdout, "not logged in") {
		t.Errorf("auth status before login: exit %d, %q", code, stdout)
	}

	// Log in, playing the browser with the URL the command prints.
	out, errOut := newLines(), newLines()
	done := make(chan int)
	go func() {
		done <- run(t.Context(), []string{"auth", "login", "remote", "--no-browser", "--server", "remote=" + e.server}, e.streams(out, errOut))
	}()
	var authURL string
	select {
	case authURL = <-out.ch:
	case code := <-done:
		t.Fatalf("auth login ended (exit %d) before printing a URL: %s", code, errOut.String())
	}
	resp, err := http.Get(authURL)
	if err != nil {
		t.Fatalf("following the authorization URL: %v", err)
	}
	resp.Body.Close()
	if code := <-done; code != 0 {
		t.Fatalf("auth login: exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "logged in to remote") {
		t.Errorf("auth login said %q, want it to confirm the login", out.String())
	}
	tokenFile := filepath.Join(e.dir, "state", "mcphost", "tokens", "remote.json")
	fi, err := os.Stat(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %o, want 600", fi.Mode().Perm())
	}
	var rec struct{ AccessToken, RefreshToken, ClientSecret string }
	data, _ := os.ReadFile(tokenFile)
	if err := json.Unmarshal(data, &rec); err != nil || rec.AccessToken == "" {
		t.Fatalf("token file: %v", err)
	}

	// Every command now works with the stored token.
	if code, stdout, stderr := e.mcphost(t, "tools"); code != 0 || !strings.Contains(stdout, "remote/echo") {
		t.Errorf("tools after login: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if code, stdout, stderr := e.mcphost(t, "call", "remote/echo", `{"text":"hello"}`, "--yes"); code != 0 || !strings.Contains(stdout, "hello") {
		t.Errorf("call after login: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}

	// Status shows the grant but no secret, in either form.
	for _, args := range [][]string{{"auth", "status"}, {"auth", "status", "--json"}} {
		code, stdout, stderr := e.mcphost(t, args...)
		if code != 0 || !strings.Contains(stdout, "tools") || !strings.Contains(stdout, "logged") {
			t.Errorf("%v: exit %d, stdout %q", args, code, stdout)
		}
		for _, secret := range []string{rec.AccessToken, rec.RefreshToken, rec.ClientSecret} {
			if secret != "" && strings.Contains(stdout+stderr, secret) {
				t.Errorf("%v shows a secret", args)
			}
		}
	}

	// Logout revokes the grant at the authorization server and removes the
	// token; headless runs need a login again.
	if code, stdout, _ := e.mcphost(t, "auth", "logout", "remote"); code != 0 || !strings.Contains(stdout, "logged out of remote: its token is revoked and removed") {
		t.Errorf("auth logout: exit %d, %q", code, stdout)
	}
	if got := e.as.Revoked(); !slices.Equal(got, []string{"refresh_token", "access_token"}) {
		t.Errorf("the authorization server revoked %v, want the refresh token then the access token", got)
	}
	if _, err := os.Stat(tokenFile); !os.IsNotExist(err) {
		t.Errorf("token file after logout: %v, want it gone", err)
	}
	if code, _, stderr := e.mcphost(t, "tools"); code != exitUsage || !strings.Contains(stderr, needsLogin) {
		t.Errorf("tools after logout: exit %d, stderr %q", code, stderr)
	}
}

func TestAuthLoginRefusesWhatIsNotAnHTTPServer(t *testing.T) {
	e := &authEnv{dir: t.TempDir(), server: "http://127.0.0.1:1/mcp"}
	for _, args := range [][]string{
		{"auth", "login", "nosuch"},
		{"auth", "login", "local", "--server", "local=fixture tasks"},
		{"auth", "login", "legacy", "--server", "legacy=http://127.0.0.1:1/sse"},
	} {
		code, _, stderr := e.mcphost(t, args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d (%s), want 2", args, code, stderr)
		}
	}
}

func TestAuthLoginToUnprotectedServerHasNothingToDo(t *testing.T) {
	plain := oauthtest.NewRecorder(t)
	e := &authEnv{dir: t.TempDir(), server: plain.URL + "/mcp"}
	code, stdout, stderr := e.mcphost(t, "auth", "login", "remote", "--no-browser")
	if code != 0 || !strings.Contains(stdout, "nothing to log in to") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
