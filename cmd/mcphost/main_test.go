package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/fixtures"
	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	// Tests never read this machine's managed policy: a story that wants
	// one writes $WORK/managed/managed.json (see TestScripts), and an
	// in-process test sets managedPath itself.
	managedPath = os.Getenv("MCPHOST_TEST_MANAGED")
	if managedPath == "" {
		managedPath = filepath.Join(os.TempDir(), "mcphost-tests-have-no-managed-policy", "managed.json")
	}
	testscript.Main(m, map[string]func(){
		"mcphost": func() {
			ctx, stop := signalContext()
			code := run(ctx, os.Args[1:], systemStreams())
			stop()
			os.Exit(code)
		},
		"fixture": func() { os.Exit(fixtures.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the end-to-end stories in testdata/script: the real
// command, real fixture servers as subprocesses.
func TestScripts(t *testing.T) {
	npmBin, err := filepath.Abs("../../interop/node_modules/.bin")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("XDG_CONFIG_HOME", env.WorkDir+"/config")
			env.Setenv("XDG_STATE_HOME", env.WorkDir+"/state")
			env.Setenv("NO_COLOR", "1")
			env.Setenv("GORACE", "atexit_sleep_ms=0")
			env.Setenv("NPMBIN", npmBin)
			env.Setenv("MCPHOST_TEST_MANAGED", env.WorkDir+"/managed/managed.json")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// tamper FILE LINE: change one character of line LINE.
			// dropline FILE LINE: remove line LINE.
			"tamper":   func(ts *testscript.TestScript, neg bool, args []string) { editLine(ts, args, false) },
			"dropline": func(ts *testscript.TestScript, neg bool, args []string) { editLine(ts, args, true) },
			// waitfor FILE TEXT: wait (bounded) until FILE contains TEXT.
			"waitfor": waitFor,
			// consent SERVER CHOICE: record a choice as the consent dialog does.
			"consent": consentAsTheDialogDoes,
			// exits CODE PROG ARGS...: run PROG as exec does and require
			// exit code CODE.
			"exits": exits,
			// chat ID DIR TEXT: save a chat as the interactive interface does.
			"chat": saveChat,
			// tracematch TRACE SERVER IN OUT: the trace holds what the
			// server's side logged, both ways (trace_test.go).
			"tracematch": traceMatch,
		},
		Condition: func(cond string) (bool, error) {
			if cond != "npm" {
				return false, fmt.Errorf("unknown condition %q", cond)
			}
			// The npm servers are part of the suite: missing ones fail it,
			// unless skipping was asked for by name.
			if _, err := os.Stat(filepath.Join(npmBin, "mcp-server-filesystem")); err != nil {
				if os.Getenv("MCPHOST_SKIP_INTEROP") == "1" {
					return false, nil
				}
				return false, fmt.Errorf("the npm MCP servers are not installed: run npm ci in interop/ (or set MCPHOST_SKIP_INTEROP=1 to skip these scripts)")
			}
			return true, nil
		},
	})
}

func exits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", strings.Join(args[1:], " "), got, want)
	}
}

func editLine(ts *testscript.TestScript, args []string, drop bool) {
	if len(args) != 2 {
		ts.Fatalf("usage: tamper|dropline FILE LINE")
	}
	path := ts.MkAbs(args[0])
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	data, err := os.ReadFile(path)
	ts.Check(err)
	lines := strings.SplitAfter(string(data), "\n")
	if n < 1 || n > len(lines) {
		ts.Fatalf("%s has no line %d", path, n)
	}
	if drop {
		lines = append(lines[:n-1], lines[n:]...)
	} else {
		l := []byte(lines[n-1])
		i := strings.Index(string(l), `"tool":"`) + len(`"tool":"`)
		l[i] ^= 0x20 // flip the case of the tool name's first letter
		lines[n-1] = string(l)
	}
	ts.Check(os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600))
}

func waitFor(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: waitfor FILE TEXT")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, _ := os.ReadFile(ts.MkAbs(args[0]))
		if strings.Contains(string(data), args[1]) {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s never contained %q", args[0], args[1])
		}
		time.Sleep(20 * time.Millisecond) // polling a file another process writes
	}
}
