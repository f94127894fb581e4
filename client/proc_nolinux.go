//go:build !linux

package client

import "syscall"

// setParentDeathSignal does nothing where the kernel cannot signal a child
// when its parent dies: there a server stopped by mcphost's own shutdown is
// stopped, and one whose host was killed sees its input close.
func setParentDeathSignal(*syscall.SysProcAttr) {}

// onStarterThread runs start: without a parent-death signal the starting
// thread does not matter.
func onStarterThread(start func()) { start() }
