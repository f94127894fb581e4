package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcphost/mcphost/fixtures"
	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"mcphost": func() { os.Exit(run(context.Background(), os.Args[1:], systemStreams())) },
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
			return nil
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
