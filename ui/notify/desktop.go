package notify

import (
	"context"
	"os/exec"
)

// DesktopCommand is the program Desktop runs, where no terminal shows
// mcphost's notification itself (mcphost serve, whose standard streams
// belong to the host): the freedesktop notification tool.
const DesktopCommand = "notify-send"

// Exec runs a program; LookPath finds it. They are exec's own by default
// (DefaultExec) and fakes in tests.
type Exec struct {
	LookPath func(file string) (string, error)
	Run      func(ctx context.Context, path string, args ...string) error
}

// DefaultExec runs programs with os/exec.
var DefaultExec = Exec{
	LookPath: exec.LookPath,
	Run: func(ctx context.Context, path string, args ...string) error {
		return exec.CommandContext(ctx, path, args...).Run()
	},
}

// Desktop sends a desktop notification that subject (from Subject) waits
// for the person, with DesktopCommand when it is installed. Without it, or
// when it fails, nothing happens and nothing is reported: a notification is
// a courtesy, never a reason for a call to fail. It returns whether the
// command ran.
func (e Exec) Desktop(ctx context.Context, subject string) bool {
	if e.LookPath == nil || e.Run == nil {
		return false
	}
	path, err := e.LookPath(DesktopCommand)
	if err != nil {
		return false
	}
	// "--" ends the options: a subject is a server's words.
	return e.Run(ctx, path, "--app-name=mcphost", "--", "mcphost: a call waits for your approval", printable(subject)) == nil
}
