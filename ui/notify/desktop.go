package notify

import (
	"context"
	"os/exec"
	"runtime"
)

// DesktopCommand is the program Desktop runs on every system but macOS, where
// no terminal shows mcphost's notification itself (mcphost serve, whose
// standard streams belong to the host): the freedesktop notification tool.
// On macOS it is MacCommand.
const DesktopCommand = "notify-send"

// MacCommand is the program Desktop runs on macOS: AppleScript's display
// notification, given a fixed script and the words as the script's
// arguments, so that a server's words are never read as script.
const MacCommand = "osascript"

// macScript shows its first argument as the title and its second as the
// text of a notification.
var macScript = []string{
	"-e", "on run argv",
	"-e", "display notification (item 2 of argv) with title (item 1 of argv)",
	"-e", "end run",
}

// desktopTitle is the notification's title; the subject is its text.
const desktopTitle = "mcphost: a call waits for your approval"

// Exec runs a program; LookPath finds it. They are exec's own by default
// (DefaultExec) and fakes in tests. GOOS picks the notifier (runtime.GOOS
// when empty).
type Exec struct {
	LookPath func(file string) (string, error)
	Run      func(ctx context.Context, path string, args ...string) error
	GOOS     string
}

// DefaultExec runs programs with os/exec.
var DefaultExec = Exec{
	LookPath: exec.LookPath,
	Run: func(ctx context.Context, path string, args ...string) error {
		return exec.CommandContext(ctx, path, args...).Run()
	},
}

// Desktop sends a desktop notification that subject (from Subject) waits
// for the person, with the system's notifier (DesktopCommand, or
// MacCommand on macOS) when it is installed. Without it, or when it fails,
// nothing happens and nothing is reported: a notification is a courtesy,
// never a reason for a call to fail. It returns whether the command ran.
func (e Exec) Desktop(ctx context.Context, subject string) bool {
	if e.LookPath == nil || e.Run == nil {
		return false
	}
	name, args := e.notifier(printable(subject))
	path, err := e.LookPath(name)
	if err != nil {
		return false
	}
	return e.Run(ctx, path, args...) == nil
}

// notifier is the program that shows a notification on e's system and its
// arguments for text, always after the options: a subject is a server's
// words.
func (e Exec) notifier(text string) (string, []string) {
	goos := e.GOOS
	if goos == "" {
		goos = runtime.GOOS
	}
	if goos == "darwin" {
		return MacCommand, append(append([]string{}, macScript...), desktopTitle, text)
	}
	return DesktopCommand, []string{"--app-name=mcphost", "--", desktopTitle, text}
}
