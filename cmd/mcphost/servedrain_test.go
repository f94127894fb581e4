//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/serve"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fifoServerArg makes the test binary a raw MCP server whose one read,
// "wait", answers once the named pipe given as the next argument has been
// opened for writing and closed: the test holds the call in flight, and
// knows it is, without sleeping.
const fifoServerArg = "drain-fifo-test-server"

func init() {
	if len(os.Args) > 2 && os.Args[1] == fifoServerArg {
		(&fixtures.RawServer{Name: "fifo", Tools: []map[string]any{
			{"name": "wait", "description": "Wait for the test.", "inputSchema": map[string]any{"type": "object"},
				"annotations": map[string]any{"readOnlyHint": true, "openWorldHint": false}},
		}, Call: func(json.RawMessage) (any, bool) {
			if f, err := os.Open(os.Args[2]); err == nil { // blocks until the test opens it to write
				_, _ = io.Copy(io.Discard, f)
				f.Close()
			}
			return map[string]any{"content": []any{map[string]any{"type": "text", "text": "waited"}}}, true
		}}).Serve(os.Stdin, os.Stdout)
		os.Exit(0)
	}
}

// TestServeDrainLetsTheCallInFlightFinish: serve --http --drain-timeout,
// stopped (its context ends, as on SIGTERM) while a call runs, answers not
// ready on /readyz, stays live on /healthz, lets the call finish with its
// own answer, audits its outcome as a success, and exits 0.
func TestServeDrainLetsTheCallInFlightFinish(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "release")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const token = "0123456789abcdefghijklmnop"
	tokenFile, auditFile := filepath.Join(dir, "token"), filepath.Join(dir, "audit.jsonl")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"XDG_STATE_HOME": filepath.Join(dir, "state"), "XDG_CONFIG_HOME": filepath.Join(dir, "config"), "NO_COLOR": "1"}
	ctx, stop := context.WithCancel(context.Background()) // stop is the signal
	defer stop()
	errR, errW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		s := &streams{In: strings.NewReader(""), Out: io.Discard, Err: errW, Getenv: func(k string) string { return env[k] }, WorkDir: dir}
		done <- run(ctx, []string{"--audit", auditFile, "--server", "slow=" + self + " " + fifoServerArg + " " + fifo, "--trust", "slow",
			"serve", "--http", "127.0.0.1:0", "--token-file", tokenFile, "--drain-timeout", "30s"}, s)
		errW.Close()
	}()
	url, draining := make(chan string, 1), make(chan struct{})
	var stderr lockedText
	go func() {
		sc := bufio.NewScanner(errR)
		for sc.Scan() {
			stderr.add(sc.Text())
			if u, ok := strings.CutPrefix(sc.Text(), "mcphost: serving MCP on "); ok {
				url <- u
			}
			if strings.HasPrefix(sc.Text(), "mcphost: draining: ") {
				close(draining)
			}
		}
	}()
	watchdog := time.After(60 * time.Second)
	var u string
	select {
	case u = <-url:
	case c := <-done:
		t.Fatalf("serve exited %d before it served: %s", c, stderr.String())
	case <-watchdog:
		t.Fatal("serve printed no address")
	}
	base := strings.TrimSuffix(u, "/mcp")
	get := func(path string) (int, string) {
		t.Helper()
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}

	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "drain-test", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: u, HTTPClient: &http.Client{Transport: withToken{token, tr}}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	answered := make(chan answer, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow__wait", Arguments: map[string]any{}})
		answered <- answer{res, err}
	}()
	opened := make(chan *os.File, 1)
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0) // returns once the server waits on it: the call is in flight
		if err == nil {
			opened <- f
		}
	}()
	var release *os.File
	select {
	case release = <-opened:
	case a := <-answered:
		t.Fatalf("the call ended before it reached the server: %+v %v", a.res, a.err)
	case <-watchdog:
		t.Fatal("the call did not reach the server")
	}

	stop()
	select {
	case <-draining:
	case <-watchdog:
		t.Fatalf("serve did not say it drains: %s", stderr.String())
	}
	if code, body := get(serve.ReadyPath); code != http.StatusServiceUnavailable || !strings.Contains(body, `"status":"not ready"`) || !strings.Contains(body, "draining") {
		t.Fatalf("%s while draining: %d %s; want 503, not ready, draining", serve.ReadyPath, code, body)
	}
	if code, body := get(serve.LivePath); code != http.StatusOK || !strings.Contains(body, `"status":"ok"`) {
		t.Fatalf("%s while draining: %d %s; want 200 ok", serve.LivePath, code, body)
	}
	release.Close()
	var a answer
	select {
	case a = <-answered:
	case <-watchdog:
		t.Fatal("the call in flight got no answer")
	}
	if a.err != nil || a.res.IsError || !strings.Contains(callText(a.res), "waited") {
		t.Fatalf("the call in flight during the drain: %v %+v; want its own answer", a.err, a.res)
	}
	cs.Close()
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("serve exited %d: %s", code, stderr.String())
		}
	case <-watchdog:
		t.Fatal("serve did not exit after the drain")
	}
	f, err := os.Open(auditFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if rep, err := audit.Verify(f); err != nil || len(rep.Problems) > 0 {
		t.Fatalf("the audit log does not verify: %v %+v", err, rep.Problems)
	}
	recs, err := audit.Tail(auditFile, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var outcomes []audit.Status
	for _, r := range recs {
		if r.Tool == "wait" && r.Kind == audit.Outcome {
			outcomes = append(outcomes, r.Status)
		}
	}
	if len(outcomes) != 1 || outcomes[0] != audit.StatusSuccess {
		t.Fatalf("outcomes of the drained call: %v; want one success", outcomes)
	}
}

// callText is the text of res's content.
func callText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
