package notify

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDesktopRunsNotifySendWhenInstalled(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "args")
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + out + "\n"
	if err := os.WriteFile(filepath.Join(dir, DesktopCommand), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	if !DefaultExec.Desktop(context.Background(), Subject("fs", "delete\x1b]0;x\afile")) {
		t.Fatal("the fake notify-send on PATH did not run")
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	if len(lines) != 4 || lines[1] != "--" || !strings.HasPrefix(lines[3], "fs/delete") || strings.ContainsAny(lines[3], "\x1b\a") {
		t.Fatalf("notify-send got %q, want the options, --, a title and the escaped subject", lines)
	}
}

func TestDesktopWithoutNotifySendDoesNothing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if DefaultExec.Desktop(context.Background(), "fs/delete_file") {
		t.Fatal("Desktop reported a notification with no notify-send installed")
	}
	if (Exec{}).Desktop(context.Background(), "fs/delete_file") {
		t.Fatal("an Exec without functions ran something")
	}
}
