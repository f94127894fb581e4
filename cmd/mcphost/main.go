// Command mcphost is a terminal host for the Model Context Protocol that
// decides, before a tool call runs, whether it may run.
package main

import (
	"context"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], systemStreams())
	stop()
	os.Exit(code)
}
