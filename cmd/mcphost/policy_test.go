package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCLI runs the command line against buffers, with config and state in a
// fresh directory.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	dir := t.TempDir()
	env := map[string]string{"XDG_STATE_HOME": filepath.Join(dir, "state"), "XDG_CONFIG_HOME": filepath.Join(dir, "config"), "NO_COLOR": "1"}
	var out, errOut bytes.Buffer
	s := &streams{In: strings.NewReader(""), Out: &out, Err: &errOut, Getenv: func(k string) string { return env[k] }, WorkDir: dir}
	code = run(context.Background(), args, s)
	return code, out.String(), errOut.String()
}

// TestRuleErrorsFailClosed: a rule that cannot be parsed — another glob
// dialect, an unknown operator, an empty argument path — stops every
// command with the configuration exit code, naming the file, line and
// column of the rule, instead of compiling to a rule that matches nothing.
func TestRuleErrorsFailClosed(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.json")
	data := "{\n  \"permissions\": {\n    \"deny\": [\"tasks/delete_*\", \"tasks/get_[t]ask\"]\n  }\n}\n"
	if err := os.WriteFile(cfg, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"file glob", []string{"tools", "--config", cfg}, cfg + ":3:32: deny rule 1: the tool pattern \"tasks/get_[t]ask\" contains '['"},
		{"malformed flag glob", []string{"tools", "--deny", "tasks/get_[task"}, "--deny: deny rule 0: the tool pattern \"tasks/get_[task\" contains '['"},
		{"unknown operator", []string{"tools", "--deny", `{"tool":"fs/*","args":{"path":{"startsWith":"/"}}}`}, `unknown operator "startsWith"`},
		{"empty path part", []string{"tools", "--allow", `{"tool":"fs/*","args":{"a..b":{"equals":1}}}`}, "empty part"},
		{"brace in arg glob", []string{"tools", "--allow", `{"tool":"fs/*","args":{"p":{"glob":"*.{js,ts}"}}}`}, `contains '{'`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, c.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d (configuration error); stderr %q", code, exitUsage, stderr)
			}
			if !strings.Contains(stderr, c.want) {
				t.Errorf("stderr %q does not say %q", stderr, c.want)
			}
		})
	}
}
