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
	e := DefaultExec
	e.GOOS = "linux" // notify-send's system, wherever the test runs
	if !e.Desktop(context.Background(), Subject("fs", "delete\x1b]0;x\afile")) {
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

// TestDesktopOnMacPassesTheWordsAsArguments: on macOS the notifier is
// osascript with a fixed script, and the title and the server's words
// are the script's arguments, never part of its text, so quotes or
// AppleScript in a tool name cannot run.
func TestDesktopOnMacPassesTheWordsAsArguments(t *testing.T) {
	var ran []string
	e := Exec{GOOS: "darwin",
		LookPath: func(file string) (string, error) { return "/usr/bin/" + file, nil },
		Run: func(_ context.Context, path string, args ...string) error {
			ran = append([]string{path}, args...)
			return nil
		}}
	hostile := `x" & (do shell script "touch /tmp/owned") & "`
	if !e.Desktop(context.Background(), Subject("fs", hostile)) {
		t.Fatal("Desktop did not run the notifier")
	}
	if len(ran) != 9 || ran[0] != "/usr/bin/osascript" {
		t.Fatalf("ran %q, want osascript, its script in three -e, the title and the subject", ran)
	}
	for i := 1; i < 7; i++ {
		if strings.Contains(ran[i], "fs/") || strings.Contains(ran[i], "shell") {
			t.Fatalf("the server's words reached the script: %q", ran[i])
		}
	}
	if ran[7] != desktopTitle || !strings.HasPrefix(ran[8], "fs/") || !strings.Contains(ran[8], "do shell script") {
		t.Fatalf("the arguments are %q, want the title and the subject as they are", ran[7:])
	}
	if name, _ := (Exec{GOOS: "linux"}).notifier("fs/t"); name != DesktopCommand {
		t.Fatalf("on Linux the notifier is %q, want %q", name, DesktopCommand)
	}
}
