//go:build unix

package client

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts the server in its own process group, so that
// grandchildren (npx starts node, shells start programs) can be stopped with
// it.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killProcessGroup ends whatever is left of the server's process group after
// the SDK closed the connection. It is a no-op when the group is gone.
func killProcessGroup(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}
