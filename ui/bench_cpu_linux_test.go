//go:build linux

package ui

import (
	"syscall"
	"time"
)

// threadCPU is the CPU time the calling OS thread has used: with the
// goroutine locked to its thread, a frame's cost without the time it
// waited for a core on a busy machine.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
