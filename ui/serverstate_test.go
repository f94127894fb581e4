package ui

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/host"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestDeadServerShownAtOnce: a server whose connection ends while nothing
// calls it shows as failed in the state line, in /servers and in the
// transcript, with its error's line breaks kept.
func TestDeadServerShownAtOnce(t *testing.T) {
	var mu sync.Mutex
	var sessions []*mcp.ServerSession
	spec := client.Spec{Name: "brittle", Dial: func(ctx context.Context) (mcp.Transport, error) {
		srv := mcp.NewServer(&mcp.Implementation{Name: "brittle", Version: "1"}, nil)
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		sessions = append(sessions, ss)
		mu.Unlock()
		return ct, nil
	}}
	h := newHarness(t, Config{Servers: []client.Spec{spec}, Client: client.Options{MaxCrashes: 1},
		Gate: host.GateOptions{Policy: policy(t)}, Now: newClock().Now, Dark: dark(true)})
	h.send(teaSize(140, 40))
	h.ready()
	if s := h.screen(); !strings.Contains(s, "servers 1/1 ready ·") {
		t.Fatalf("not ready:\n%s", s)
	}
	mu.Lock()
	sessions[0].Close()
	mu.Unlock()
	h.until("the failure is told", func() bool { return strings.Contains(h.screen(), "server brittle failed: crashed 1 times") })
	s := h.screen()
	if !strings.Contains(s, "servers 0/1 ready, 1 failed") || !strings.Contains(s, "/servers restarts it") {
		t.Errorf("the state line or the notice lacks the failure:\n%s", s)
	}
	if strings.Contains(s, `\n`) {
		t.Errorf("an escaped line break on screen:\n%s", s)
	}
	h.command("/servers")
	if s := h.screen(); !strings.Contains(s, "✗ failed  brittle") || !strings.Contains(s, "error     crashed 1 times") || !strings.Contains(s, "          last: the server closed the connection") {
		t.Errorf("/servers does not show the failure on its lines:\n%s", s)
	}
}

// TestServerErrorKeepsLineBreaks: control characters are still escaped,
// but a line break is a line break, and a long error is cut.
func TestServerErrorKeepsLineBreaks(t *testing.T) {
	got := serverError("spawn failed\nstderr:\n\x1b[31mboom\x1b[0m\n")
	if got != "spawn failed\nstderr:\n\\x1b[31mboom\\x1b[0m" {
		t.Errorf("serverError = %q", got)
	}
	long := serverError(strings.Repeat("line\n", 40))
	if n := strings.Count(long, "\n"); n != maxErrorLines || !strings.HasSuffix(long, "… 28 more lines (/servers)") {
		t.Errorf("40 lines give %d breaks: %q", n, long)
	}
}
