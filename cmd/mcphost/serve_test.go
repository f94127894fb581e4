package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A project server without a recorded consent is not served; the client is
// told in the instructions that it waits, and what it would run.
func TestServeListsProjectServersWaitingForConsent(t *testing.T) {
	root := t.TempDir()
	dir := project(t, filepath.Join(root, "p"), `{"mcpServers": {"linter": {"command": "sh", "args": ["linter.sh", "srv"]}}}`)
	s, _ := projectStreams(t, dir, filepath.Join(root, "state"))
	st, err := loadSetup(&globalOptions{Servers: []string{"tasks=fixture tasks"}}, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, sp := range st.specs {
		if sp.Name == "linter" {
			t.Fatal("a project server without consent would be served")
		}
	}
	got := serveInstructions(st)
	for _, want := range []string{"Server linter waits for the person's consent", "linter.sh"} {
		if !strings.Contains(got, want) {
			t.Errorf("instructions %q do not say %q", got, want)
		}
	}
}
