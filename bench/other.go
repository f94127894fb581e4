//go:build !linux

// Command bench measures the time and memory mcphost adds on top of the MCP
// servers it runs. It reads /proc, so it runs on Linux only.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "bench: needs Linux (it samples /proc/PID/status and /proc/PID/stat)")
	os.Exit(2)
}
