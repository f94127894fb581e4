package client

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mcphost/mcphost/fixtures"
)

// The test binary doubles as a server for subprocess tests, so they need no
// separate build. fixtureEnv holds the arguments of fixtures.Main, split on
// spaces ("tasks --stale"); procEnv selects a process that misbehaves before
// any MCP is spoken.
const (
	fixtureEnv = "MCPHOST_CLIENT_TEST_FIXTURE"
	procEnv    = "MCPHOST_CLIENT_TEST_PROC"
	// stateEnv names a file that procOnce creates on its first start.
	stateEnv = "MCPHOST_CLIENT_TEST_STATE"
)

// Values of procEnv.
const (
	// procMute reads stdin and never answers; its end does not stop it
	// either, so only a signal from the host does (or, so that a failing
	// test leaves nothing behind, the end of the test process).
	procMute = "mute"
	// procDie complains on stderr and exits at once, every time.
	procDie = "die"
	// procOnce serves the fixture on its first start and behaves as procDie
	// on every later one: a server that crashes and then cannot come back.
	procOnce = "once"
	// procFetch says on stderr that it fetches a package and never answers,
	// as a launcher does while it downloads; on SIGTERM it says that it
	// cleaned up and exits. Only SIGKILL ends it without that line.
	procFetch = "fetch"
)

// Lines procFetch writes to stderr: at its start, and on SIGTERM.
const (
	fetchMessage   = "fetching package @example/slow-server"
	cleanedMessage = "interrupted: removed the partial download"
)

// dieMessage is what procDie writes to stderr.
const dieMessage = "fatal: cannot open /var/lib/tasks.db: permission denied"

func maybeServeFixture() {
	switch os.Getenv(procEnv) {
	case procMute:
		signal.Ignore(syscall.SIGHUP, syscall.SIGPIPE)
		parent := os.Getppid()
		go func() { _, _ = io.Copy(io.Discard, os.Stdin) }()
		for os.Getppid() == parent {
			time.Sleep(100 * time.Millisecond)
		}
		os.Exit(1)
	case procDie:
		die()
	case procFetch:
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		signal.Ignore(syscall.SIGHUP, syscall.SIGPIPE)
		fmt.Fprintln(os.Stderr, fetchMessage)
		go func() { _, _ = io.Copy(io.Discard, os.Stdin) }()
		parent := os.Getppid()
		for os.Getppid() == parent {
			select {
			case <-term:
				fmt.Fprintln(os.Stderr, cleanedMessage)
				os.Exit(0)
			case <-time.After(100 * time.Millisecond):
			}
		}
		os.Exit(1)
	case procOnce:
		state := os.Getenv(stateEnv)
		f, err := os.OpenFile(state, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			die()
		}
		f.Close()
	}
	args := os.Getenv(fixtureEnv)
	if args == "" {
		return
	}
	os.Exit(fixtures.Main(strings.Fields(args), os.Stdin, os.Stdout, os.Stderr))
}

func die() {
	fmt.Fprintln(os.Stderr, dieMessage)
	os.Exit(1)
}
