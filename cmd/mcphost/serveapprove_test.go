package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/approver"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeAsksTheApprover: `mcphost serve` opens the approver socket in
// the state directory, and a call its client cannot be asked about (this
// client offers no elicitation) goes to the connected `mcphost approve`:
// approved, it runs once; denied, it does not run and the client is told.
func TestServeAsksTheApprover(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"XDG_STATE_HOME": filepath.Join(dir, "state"), "XDG_CONFIG_HOME": filepath.Join(dir, "config"), "NO_COLOR": "1"}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan int, 1)
	go func() {
		s := &streams{In: inR, Out: outW, Err: io.Discard, Getenv: func(k string) string { return env[k] }, WorkDir: dir}
		done <- run(ctx, []string{"serve"}, s) // no configuration: the demo servers
		outW.Close()
	}()
	defer func() {
		inW.Close()
		if code := <-done; code != 0 {
			t.Errorf("serve exited %d", code)
		}
	}()

	c := mcp.NewClient(&mcp.Implementation{Name: "no-forms", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	sock := approver.SocketPath(filepath.Join(dir, "state", "mcphost"))
	if fi, err := os.Stat(sock); err != nil || fi.Mode()&os.ModeSocket == 0 {
		t.Fatalf("no approver socket at %s once serve answered: %v", sock, err)
	}
	ap, err := approver.Dial(ctx, sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ap.Close()
	if h, err := ap.Hello(); err != nil {
		t.Fatal(err)
	} else if h.Label != "stdio in "+dir {
		// With several serves connected, the approver tells them apart by it.
		t.Errorf("the serve's label %q, want %q", h.Label, "stdio in "+dir)
	}

	for _, approve := range []bool{true, false} {
		res := make(chan *mcp.CallToolResult, 1)
		go func() {
			r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tasks__delete_task", Arguments: map[string]any{"id": "T-1"}})
			if err != nil {
				t.Errorf("call: %v", err)
			}
			res <- r
		}()
		ev, err := ap.Next()
		if err != nil {
			t.Fatal(err)
		}
		q, ok := ev.(*approver.Question)
		if !ok || q.Tool != "delete_task" {
			t.Fatalf("the approver got %#v, want the question about delete_task", ev)
		}
		if err := ap.Answer(q, host.Answer{Approve: approve, Scope: decide.ScopeOnce}); err != nil {
			t.Fatal(err)
		}
		r := <-res
		if r == nil {
			t.Fatal("no result")
		}
		text, _ := json.Marshal(r.Content)
		if approve && (r.IsError || !strings.Contains(string(text), "T-1")) {
			t.Errorf("approved: isError %v, %s; want the task deleted", r.IsError, text)
		}
		if !approve && (!r.IsError || !strings.Contains(string(text), "denied")) {
			t.Errorf("denied: isError %v, %s; want a refusal that says it was denied", r.IsError, text)
		}
	}
}

// TestManagedServeKeepsHTTPOff: a managed "serve": {"http": false} refuses
// serve --http at once (exit 2, naming the managed file); without the
// rule, the same command would be serving until its context ends.
func TestManagedServeKeepsHTTPOff(t *testing.T) {
	e := newManagedEnv(t)
	e.managed(`{"serve": {"http": false}}`)
	env := map[string]string{"XDG_STATE_HOME": filepath.Join(e.dir, "state"), "XDG_CONFIG_HOME": filepath.Join(e.dir, "config"), "NO_COLOR": "1"}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var errOut strings.Builder
	s := &streams{In: strings.NewReader(""), Out: io.Discard, Err: &errOut, Getenv: func(k string) string { return env[k] }, WorkDir: e.dir}
	if code := run(ctx, []string{"serve", "--http", "127.0.0.1:0"}, s); code != exitUsage || !strings.Contains(errOut.String(), "managed.json:1:") {
		t.Fatalf("serve --http under a managed policy without HTTP: exit %d, %q; want exit %d naming the managed file", code, errOut.String(), exitUsage)
	}
}

// TestManagedTelemetryCannotBeMovedOrStopped: the export a managed policy
// requires goes to its endpoint whatever the OTEL_* variables say,
// OTEL_SDK_DISABLED included; without one the variables decide.
func TestManagedTelemetryCannotBeMovedOrStopped(t *testing.T) {
	e := newManagedEnv(t)
	e.managed(`{"telemetry": {"endpoint": "https://otel.team.example:4318", "headers": {"X-Team": "a"}}}`)
	s, _, errOut := e.streams()
	st, err := loadSetup(&globalOptions{Demo: true}, s)
	if err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	vars := map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9/elsewhere"}
	getenv := func(k string) string { return vars[k] }
	cfg, err := st.telemetryConfig(getenv)
	if err != nil || !cfg.Enabled() || cfg.Endpoint != "https://otel.team.example:4318" || cfg.Headers["X-Team"] != "a" {
		t.Fatalf("with a managed export: %+v, %v; want the managed endpoint and headers, on", cfg, err)
	}
	e.noManaged()
	st, err = loadSetup(&globalOptions{Demo: true}, s)
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err := st.telemetryConfig(getenv); err != nil || cfg.Enabled() {
		t.Fatalf("without one, OTEL_SDK_DISABLED=true: %+v, %v; want off", cfg, err)
	}
}

// TestServeApproverSocketBeforeAnyRequest: serve's approver socket is there
// from its first moment: before its client has sent anything and while its
// one server is still starting (it never answers), an approver connects.
func TestServeApproverSocketBeforeAnyRequest(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"XDG_STATE_HOME": filepath.Join(dir, "state"), "XDG_CONFIG_HOME": filepath.Join(dir, "config"), "NO_COLOR": "1"}
	if err := os.MkdirAll(filepath.Join(dir, "config", "mcphost"), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := `{"mcpServers": {"hang": {"command": "sleep", "args": ["600"]}}}`
	if err := os.WriteFile(filepath.Join(dir, "config", "mcphost", "config.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	defer inW.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan int, 1)
	go func() {
		s := &streams{In: inR, Out: io.Discard, Err: io.Discard, Getenv: func(k string) string { return env[k] }, WorkDir: dir}
		done <- run(ctx, []string{"serve"}, s) // its client sends nothing
	}()
	wait, stop := context.WithTimeout(ctx, 20*time.Second)
	defer stop()
	sock := approver.SocketPath(filepath.Join(dir, "state", "mcphost"))
	var ap *approver.Conn
	for ap == nil {
		c, err := approver.Dial(wait, sock)
		switch {
		case err == nil:
			ap = c
		case wait.Err() != nil:
			t.Fatalf("no approver socket at %s before any request: %v", sock, err)
		default:
			select {
			case code := <-done:
				t.Fatalf("serve exited %d", code)
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	defer ap.Close()
	if _, err := ap.Hello(); err != nil {
		t.Fatalf("the approver socket did not answer before any request: %v", err)
	}
	inW.Close()
	if code := <-done; code != 0 {
		t.Errorf("serve exited %d", code)
	}
}
