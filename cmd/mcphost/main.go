// Command mcphost is a terminal host for the Model Context Protocol that
// decides, before a tool call runs, whether it may run.
//
// Each command parses its flags and arguments into its options struct and
// hands them to one run function of one shape:
//
//	func runX(ctx context.Context, g *globalOptions, o *xOptions, s *streams) error
//
// (a command without options or without the global flags leaves that
// parameter out; a command that does no I/O it could cancel takes the
// context as _ all the same), so behaviour is tested apart from flag parsing.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// stopSignals end mcphost the way Ctrl-C does: SIGTERM is what timeout,
// docker stop and CI cancellation send, SIGHUP what a closed terminal
// sends. Each cancels the command's context, so the running call is
// cancelled and recorded (unknown), every server's process group is
// stopped, and the exit code says what became of the call.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

func main() {
	ctx, stop := signalContext()
	code := run(ctx, os.Args[1:], systemStreams())
	stop()
	os.Exit(code)
}

// signalContext ends on any of stopSignals: the call in flight is
// cancelled (a task it runs as gets tasks/cancel) and its outcome recorded.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), stopSignals...)
}
