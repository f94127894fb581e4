//go:build unix

package client

import (
	"os/exec"
	"syscall"
	"time"
)

// setProcessGroup starts the server in its own process group, so that
// grandchildren (npx starts node, shells start programs) can be stopped with
// it, and, where the system offers it, so that the server dies with mcphost
// (see setParentDeathSignal).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setParentDeathSignal(cmd.SysProcAttr)
}

// killProcessGroup ends whatever is left of the server's process group after
// the SDK closed the connection. It is a no-op when the group is gone.
func killProcessGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

// The bounds of stopping a server: after its input is closed it has
// exitGrace to exit on its own; then its process group gets SIGTERM, and
// whatever is left after termGrace gets SIGKILL. A server that ignores both
// end of input and SIGTERM is gone within their sum, which is below the
// SDK's own TerminateDuration (2s, see dial), so the SDK never needs to
// signal the server itself.
const (
	exitGrace = 500 * time.Millisecond
	termGrace = time.Second
)

// stopProcessGroup ends the process group of the server whose process is
// pid, within exitGrace+termGrace. The caller has closed the server's input;
// exited is closed once the server process has been waited for. Members of
// the group that outlive the server (its own children) are stopped the same
// way.
func stopProcessGroup(pid int, exited <-chan struct{}) {
	if pid <= 0 {
		return // never started: -0 would be mcphost's own group
	}
	grace := time.NewTimer(exitGrace)
	defer grace.Stop()
	select {
	case <-exited:
	case <-grace.C:
	}
	if syscall.Kill(-pid, syscall.SIGTERM) != nil {
		return // no process is left in the group
	}
	deadline := time.NewTimer(termGrace)
	defer deadline.Stop()
	poll := time.NewTicker(10 * time.Millisecond)
	defer poll.Stop()
	for {
		select {
		case <-deadline.C:
			killProcessGroup(pid)
			return
		case <-poll.C:
			if syscall.Kill(-pid, 0) != nil {
				return // the whole group ended on SIGTERM
			}
		}
	}
}
