//go:build !unix

package client

import "os/exec"

func setProcessGroup(cmd *exec.Cmd) {}
func killProcessGroup(pid int)      {}
