package main

import (
	"errors"

	"github.com/mcphost/mcphost/config"
)

// Exit codes, the same for every command (README, "Exit codes").
const (
	exitOK      = 0
	exitError   = 1 // runtime error
	exitUsage   = 2 // usage or configuration error
	exitBlocked = 3 // a call needed approval and none could be asked
	exitDenied  = 4 // a call was denied by a rule, or by the person asked
	exitTool    = 5 // the tool returned isError
	exitUnknown = 6 // the outcome of a call is unknown
)

// codeError carries an exit code with an error; the error may be nil when
// the command already said everything on its streams.
type codeError struct {
	code int
	err  error
}

func (e *codeError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func (e *codeError) Unwrap() error { return e.err }

func withCode(code int, err error) error { return &codeError{code: code, err: err} }

// usageError marks a mistake on the command line or in the configuration.
func usageError(err error) error { return withCode(exitUsage, err) }

// exitCode is the one place that maps an error to the process's exit code.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ce *codeError
	if errors.As(err, &ce) {
		return ce.code
	}
	var cfg *config.Error
	if errors.As(err, &cfg) {
		return exitUsage
	}
	return exitError
}
