// Command mcphost is a terminal host for the Model Context Protocol that
// decides, before a tool call runs, whether it may run.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signalContext()
	code := run(ctx, os.Args[1:], systemStreams())
	stop()
	os.Exit(code)
}

// signalContext ends on Ctrl-C and on SIGTERM: the call in flight is
// cancelled (a task it runs as gets tasks/cancel) and its outcome recorded.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}
