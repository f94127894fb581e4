package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A project server without a recorded consent is not served; the client is
// told in the instructions that it waits, and what it would run.
func TestServeListsProjectServersWaitingForConsent(t *testing.T) {
	root := t.TempDir()
	dir := project(t, filepath.Join(root, "p"), `{"mcpServers": {"linter": {"command": "sh", "args": ["linter.sh", "srv"]}}}`)
	s, _ := projectStreams(t, dir, filepath.Join(root, "state"))
	st, err := loadSetup(&globalOptions{Servers: []string{"tasks=fixture tasks"}}, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, sp := range st.specs {
		if sp.Name == "linter" {
			t.Fatal("a project server without consent would be served")
		}
	}
	got := serveInstructions(st)
	for _, want := range []string{"Server linter waits for the person's consent", "linter.sh"} {
		if !strings.Contains(got, want) {
			t.Errorf("instructions %q do not say %q", got, want)
		}
	}
}

// With --insecure-no-token, serve over HTTP on loopback answers a client
// that sends no token, and says on stderr, each start, that it asks none.
func TestServeWithoutTokenOnLoopback(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"XDG_STATE_HOME": filepath.Join(dir, "state"), "XDG_CONFIG_HOME": filepath.Join(dir, "config"), "NO_COLOR": "1"}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	errR, errW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		s := &streams{In: strings.NewReader(""), Out: io.Discard, Err: errW, Getenv: func(k string) string { return env[k] }, WorkDir: dir}
		done <- run(ctx, []string{"serve", "--http", "127.0.0.1:0", "--insecure-no-token"}, s) // the demo servers
		errW.Close()
	}()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(errR)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var url string
	warned := false
	for url == "" || !warned {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("serve ended before it served (url %q, warned %v)", url, warned)
			}
			if u, ok := strings.CutPrefix(l, "mcphost: serving MCP on "); ok {
				url = u
			}
			warned = warned || strings.Contains(l, "warning: --insecure-no-token: no bearer token is asked")
		case <-ctx.Done():
			t.Fatal("serve printed no address and warning")
		}
	}
	go func() {
		for range lines {
		}
	}()
	c := mcp.NewClient(&mcp.Implementation{Name: "no-token", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect without a token: %v", err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("list without a token: %v", err)
	}
	cs.Close()
	if _, err := os.Stat(filepath.Join(dir, "state", "mcphost", "serve-token")); err == nil {
		t.Error("a token file was made for a serve that asks none")
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("serve exited %d", code)
	}
}

// A new bearer token is printed once where a person reads standard error
// (a terminal), and never where a log would keep it: there the line names
// only the file.
func TestServePrintsANewTokenOnlyToATerminal(t *testing.T) {
	for _, terminal := range []bool{true, false} {
		dir := t.TempDir()
		env := map[string]string{"XDG_STATE_HOME": filepath.Join(dir, "state"), "XDG_CONFIG_HOME": filepath.Join(dir, "config"), "NO_COLOR": "1"}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		errR, errW := io.Pipe()
		done := make(chan int, 1)
		go func() {
			s := &streams{In: strings.NewReader(""), Out: io.Discard, Err: errW, ErrTerminal: terminal, Getenv: func(k string) string { return env[k] }, WorkDir: dir}
			done <- run(ctx, []string{"serve", "--http", "127.0.0.1:0"}, s)
			errW.Close()
		}()
		sc := bufio.NewScanner(errR)
		var line string
		for sc.Scan() {
			if strings.Contains(sc.Text(), "new bearer token") {
				line = sc.Text()
				break
			}
		}
		go func() {
			for sc.Scan() {
			}
		}()
		tok, err := os.ReadFile(filepath.Join(dir, "state", "mcphost", "serve-token"))
		token := strings.TrimSpace(string(tok))
		if err != nil || token == "" {
			t.Fatalf("terminal %v: no token file (%v)", terminal, err)
		}
		if printed := strings.Contains(line, token); printed != terminal || !strings.Contains(line, "serve-token") {
			t.Errorf("terminal %v: the new-token line %q, want the file named and the token printed only to a terminal", terminal, line)
		}
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("terminal %v: serve exited %d", terminal, code)
		}
	}
}
