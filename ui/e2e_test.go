package ui

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestTUIEndToEnd runs scripts/tui-e2e.sh: the real mcphost binary in a
// tmux terminal, driven by keys, checked on the screen and in the audit log.
// It needs tmux and jq; the script installs them when it can, and the test
// fails, saying so, when it cannot.
func TestTUIEndToEnd(t *testing.T) {
	script, err := filepath.Abs(filepath.Join("..", "scripts", "tui-e2e.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("the end-to-end test needs bash")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		t.Log(out.String())
	case errors.As(err, &exit) && exit.ExitCode() == 3:
		t.Fatalf("tmux or jq is missing and could not be installed; the end-to-end test cannot run without them:\n%s", out.String())
	default:
		t.Fatalf("%s: %v\n%s", script, err, out.String())
	}
}
