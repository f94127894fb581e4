package main

import (
	"github.com/mcphost/mcphost/trace"
	"io"
	"os"

	"github.com/charmbracelet/x/term"
)

// streams are the program's standard streams, injected so that every
// command can run against buffers in tests.
type streams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
	// Terminal reports whether stdin and stdout are both a terminal: the
	// condition for starting the TUI or prompting.
	Terminal bool
	// InTerminal reports whether stdin is a terminal. Such an input is
	// never read as data: run reads standard input only when it is piped.
	InTerminal bool
	// Color reports whether colour may be used on Out.
	Color bool
	// Getenv reads the environment.
	Getenv func(string) string
	// WorkDir is the working directory, where a project's .mcp.json lives.
	WorkDir string

	// notes counts servers' requests to a headless command; run prints
	// their summary when the command ends (serverreq.go).
	notes *requestNotes
	// trace is --trace's writer once a command opened it; run closes it
	// when the command ends (trace.go).
	trace *trace.Writer
}

func systemStreams() *streams {
	wd, _ := os.Getwd()
	inTTY := term.IsTerminal(os.Stdin.Fd())
	tty := inTTY && term.IsTerminal(os.Stdout.Fd())
	return &streams{
		In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		Terminal: tty, InTerminal: inTTY,
		Color:   tty && os.Getenv("NO_COLOR") == "",
		Getenv:  os.Getenv,
		WorkDir: wd,
	}
}
