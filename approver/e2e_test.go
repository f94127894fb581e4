package approver

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestApproveEndToEnd runs scripts/tui-e2e-approve.sh: the real mcphost
// approve in a tmux terminal, answering calls that a gate over a real
// fixture server asks about through the approver socket (the stand-in for
// serve is this test binary; see harnessEnv). It needs tmux and jq; the
// script installs them when it can, and the test fails, saying so, when it
// cannot.
func TestApproveEndToEnd(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("the end-to-end test needs bash")
	}
	script, err := filepath.Abs(filepath.Join("..", "scripts", "tui-e2e-approve.sh"))
	if err != nil {
		t.Fatal(err)
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
