//go:build unix

package client

import "syscall"

// termProcessGroup sends SIGTERM to the server's process group. It is a
// no-op when the group is gone.
func termProcessGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGTERM)
	}
}
