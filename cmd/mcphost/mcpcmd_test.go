package main

import (
	"bytes"
	"context"
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
