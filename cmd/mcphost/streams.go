package main

import (
	"github.com/mcphost/mcphost/trace"
	"io"
	"os"
	"strconv"

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
	// ErrTerminal reports whether Err is a terminal: a person reads it now,
	// rather than a log that keeps it.
	ErrTerminal bool
	// Width is Out's width in columns when it is a terminal, else 0.
	Width int
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
	outTTY := term.IsTerminal(os.Stdout.Fd())
	tty := inTTY && outTTY
	width := 0
	if outTTY {
		width, _, _ = term.GetSize(os.Stdout.Fd())
	}
	return &streams{
		In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		Terminal: tty, InTerminal: inTTY, Width: width,
		ErrTerminal: term.IsTerminal(os.Stderr.Fd()),
		Color:       tty && os.Getenv("NO_COLOR") == "",
		Getenv:      os.Getenv,
		WorkDir:     wd,
	}
}

// columns is the width a command fits its text to: Out's terminal width,
// else $COLUMNS when it is set (as shells and CI set it), else 0 (not
// fitted).
func (s *streams) columns() int {
	if s.Width > 0 {
		return s.Width
	}
	if s.Getenv == nil {
		return 0
	}
	if n, err := strconv.Atoi(s.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 0
}
