package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/approver"
	"github.com/mcphost/mcphost/config"
)

// TestApproveWaitsForServe: with no serve running, approve does not end:
// it waits, connects to a serve that starts, and again to the serve that
// replaces it when it stops, until the person quits.
func TestApproveWaitsForServe(t *testing.T) {
	s, _, errb := testStreams(t)
	s.Terminal = true
	in, inW := io.Pipe()
	defer inW.Close()
	s.In, s.Out = in, io.Discard
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"approve"}, s) }()

	dir := approver.SocketDir(config.StateDir(s.Getenv("XDG_STATE_HOME")))
	for _, name := range []string{"serve-1.sock", "serve-2.sock"} {
		b, err := approver.Listen(filepath.Join(dir, name), approver.Options{})
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for !b.Waiting() {
			select {
			case code := <-done:
				t.Fatalf("approve ended (exit %d) instead of waiting for %s: %s", code, name, errb)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("approve did not connect to %s", name)
			}
			time.Sleep(10 * time.Millisecond)
		}
		b.Close() // the serve stops; a new one takes its place
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("approve exited %d when it was stopped: %s", code, errb)
	}
}

func TestApproveWithoutTerminal(t *testing.T) {
	s, _, errb := testStreams(t)
	b, err := approver.Listen(approver.SocketPath(config.StateDir(s.Getenv("XDG_STATE_HOME"))), approver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if code := run(context.Background(), []string{"approve"}, s); code != exitUsage {
		t.Fatalf("exit %d, want %d\nstderr: %s", code, exitUsage, errb)
	}
	if msg := errb.String(); !strings.Contains(msg, "needs a terminal") {
		t.Fatalf("stderr %q does not say a terminal is needed", msg)
	}
}
