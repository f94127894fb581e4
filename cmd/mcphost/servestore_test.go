package main

import (
	"bufio"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mcphost/mcphost/internal/pgtest"
	"github.com/mcphost/mcphost/serve"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeKeepsStatelessSessionsInTheStore: serve --http --store keeps a
// 2026-07-28 client's session state (here the taint of a read), the key
// that seals its request states and the nonce of the answer it gave in the
// database, where every replica on it reads them.
func TestServeKeepsStatelessSessionsInTheStore(t *testing.T) {
	url := pgtest.DB(t)
	dir := t.TempDir()
	env := map[string]string{"XDG_STATE_HOME": filepath.Join(dir, "state"), "XDG_CONFIG_HOME": filepath.Join(dir, "config"), "NO_COLOR": "1"}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	errR, errW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		s := &streams{In: strings.NewReader(""), Out: io.Discard, Err: errW, Getenv: func(k string) string { return env[k] }, WorkDir: dir}
		done <- run(ctx, []string{"serve", "--http", "127.0.0.1:0", "--insecure-no-token", "--store", url}, s) // the demo servers
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
	var addr string
	for addr == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("serve ended before it served")
			}
			addr, _ = strings.CutPrefix(l, "mcphost: serving MCP on ")
		case <-ctx.Done():
			t.Fatal("serve printed no address")
		}
	}
	go func() {
		for range lines {
		}
	}()
	answer := func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": serve.DecisionAllowOnce, "confirm": "delete_task"}}, nil
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "desk", Version: "1"}, &mcp.ClientOptions{ElicitationHandler: answer})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: addr}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %q, want 2026-07-28", v)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tasks__list_tasks", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("a read: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "tasks__delete_task", Arguments: map[string]any{"id": "T-1"}})
	if err != nil || res.IsError {
		t.Fatalf("a call the client approved: %v %+v", err, res)
	}
	cs.Close()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var tainted, keys, spent int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM mcphost_session_taint WHERE open_world OR private_read`).Scan(&tainted); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM mcphost_secrets WHERE name = 'request-state'`).Scan(&keys); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM mcphost_spent`).Scan(&spent); err != nil {
		t.Fatal(err)
	}
	if tainted != 1 || keys != 1 || spent != 1 {
		t.Fatalf("the store holds %d tainted sessions, %d request-state keys and %d spent nonces, want the client's one, one and its answer's", tainted, keys, spent)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("serve exited %d", code)
	}
}
