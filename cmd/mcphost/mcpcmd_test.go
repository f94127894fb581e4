package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPImportAsksOnATerminal: on a terminal, import shows the plan and
// adds only after a yes; anything else adds nothing.
func TestMCPImportAsksOnATerminal(t *testing.T) {
	for _, tc := range []struct {
		answer string
		added  bool
	}{{"y\n", true}, {"YES\n", true}, {"n\n", false}, {"\n", false}, {"", false}} {
		t.Run(strings.TrimSpace(tc.answer), func(t *testing.T) {
			dir := t.TempDir()
			home := filepath.Join(dir, "home")
			src := filepath.Join(home, ".cursor", "mcp.json")
			if err := os.MkdirAll(filepath.Dir(src), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(src, []byte(`{"mcpServers": {"cur": {"command": "cur-server", "trust": true}}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(dir, "config"), "XDG_STATE_HOME": filepath.Join(dir, "state")}
			var out, errOut bytes.Buffer
			s := &streams{In: strings.NewReader(tc.answer), Out: &out, Err: &errOut, Terminal: true,
				Getenv: func(k string) string { return env[k] }, WorkDir: filepath.Join(dir, "work")}
			if code := run(context.Background(), []string{"mcp", "import", "--from", "cursor"}, s); code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, errOut.String())
			}
			if !strings.Contains(out.String(), "  + cur: cur-server\n") || !strings.Contains(out.String(), "Add 1 server to ") || !strings.Contains(out.String(), "? [y/N] ") {
				t.Errorf("the plan and the question are not shown:\n%s", out.String())
			}
			data, err := os.ReadFile(filepath.Join(dir, "config", "mcphost", "config.json"))
			if tc.added {
				if err != nil || !strings.Contains(string(data), `"cur": {`) {
					t.Fatalf("not added after %q: %v\n%s", tc.answer, err, data)
				}
				if strings.Contains(string(data), "trust") {
					t.Errorf("trust was imported:\n%s", data)
				}
				return
			}
			if err == nil {
				t.Errorf("written after %q:\n%s", tc.answer, data)
			}
			if !strings.Contains(errOut.String(), "nothing was added") {
				t.Errorf("stderr = %q, want it to say nothing was added", errOut.String())
			}
		})
	}
}

// TestMCPImportEscapesAndBounds: a project's file comes with whatever was
// cloned: its text is escaped on the terminal and its notes are bounded.
func TestMCPImportEscapesAndBounds(t *testing.T) {
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	var env strings.Builder
	for i := range 50 {
		fmt.Fprintf(&env, `"K%d": "${input:k%d}", `, i, i)
	}
	file := `{"servers": {
  "ok": {"command": "srv\u001b[2J", "env": {` + env.String() + `"L": "1"}},
  "bad\u001b]0;x\u0007name": {"command": "x"}
}}`
	if err := os.MkdirAll(filepath.Join(work, ".vscode"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, ".vscode", "mcp.json"), []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	envs := map[string]string{"HOME": filepath.Join(dir, "home"), "XDG_CONFIG_HOME": filepath.Join(dir, "config"), "XDG_STATE_HOME": filepath.Join(dir, "state")}
	var out, errOut bytes.Buffer
	s := &streams{In: strings.NewReader(""), Out: &out, Err: &errOut, Getenv: func(k string) string { return envs[k] }, WorkDir: work}
	if code := run(context.Background(), []string{"mcp", "import", "--from", "vscode"}, s); code != exitUsage {
		t.Fatalf("exit %d, want %d (no terminal, no --yes); stderr:\n%s", code, exitUsage, errOut.String())
	}
	got := out.String()
	if strings.ContainsAny(got, "\x1b\x07") {
		t.Errorf("control characters reached the terminal:\n%q", got)
	}
	for _, want := range []string{`  + ok: srv\x1b[2J`, `  skip bad\x1b]0;x\x07name: mcphost cannot name a server`, "      note: 40 more notes about this server are not shown\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "      note: env"); n != maxImportNotes {
		t.Errorf("%d notes shown, want %d", n, maxImportNotes)
	}
}
