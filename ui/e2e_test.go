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

// TestTUIEndToEnd runs scripts/tui-e2e.sh, tui-e2e-sessions.sh and tui-e2e-keys.sh:
// the real mcphost binary in a tmux terminal, driven by keys, checked on the
// screen and in the audit log and the saved sessions. They need tmux and
// jq; the scripts install them when they can, and the test fails, saying
// so, when they cannot.
func TestTUIEndToEnd(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("the end-to-end test needs bash")
	}
	for _, name := range []string{"tui-e2e.sh", "tui-e2e-sessions.sh", "tui-e2e-keys.sh"} {
		t.Run(name, func(t *testing.T) {
			script, err := filepath.Abs(filepath.Join("..", "scripts", name))
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
		})
	}
}
