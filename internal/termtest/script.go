package termtest

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// RunScript runs the end-to-end script scripts/NAME of the repository
// (root is the path from the test's package to the repository) with bash,
// bounded to five minutes, and fails the test with its output when it
// fails. Exit status 3 is the scripts' word for "tmux or jq is missing and
// could not be installed": a failure too, said so.
func RunScript(t *testing.T, root, name string) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("the end-to-end test needs bash")
	}
	script, err := filepath.Abs(filepath.Join(root, "scripts", name))
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
