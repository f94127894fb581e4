//go:build !unix

package client

import "os/exec"

func setProcessGroup(cmd *exec.Cmd) {}
func killProcessGroup(pid int)      {}

// stopProcessGroup waits for the server's process to end: without process
// groups the SDK's own escalation (SIGKILL to the process) is all there is.
func stopProcessGroup(pid int, exited <-chan struct{}) { <-exited }
