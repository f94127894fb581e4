package main

import (
	"context"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/approver"
	"github.com/mcphost/mcphost/config"
)

func TestApproveWithoutServe(t *testing.T) {
	s, out, errb := testStreams(t)
	s.Terminal = true
	if code := run(context.Background(), []string{"approve"}, s); code != exitError {
		t.Fatalf("exit %d, want %d\nstderr: %s", code, exitError, errb)
	}
	if msg := errb.String(); !strings.Contains(msg, "no mcphost serve is running") || !strings.Contains(msg, "`mcphost serve`") {
		t.Fatalf("stderr %q does not say that no serve runs and how to start one", msg)
	}
	if out.Len() > 0 {
		t.Fatalf("stdout: %s", out)
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
