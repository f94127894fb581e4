//go:build unix

package main

import (
	"os"
	"syscall"
	"testing"
)

// TestSignalContext: SIGTERM ends the command's context as Ctrl-C does, so
// a call in flight is cancelled (and its task gets tasks/cancel) instead of
// the process dying with the call's outcome unrecorded.
func TestSignalContext(t *testing.T) {
	ctx, stop := signalContext()
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-ctx.Done() // the test's own timeout bounds the wait
}
