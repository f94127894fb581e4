package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spf13/cobra"
)

// testStreams are streams over buffers, with an environment that points
// every file mcphost would touch into a temporary directory.
func testStreams(t *testing.T) (*streams, *bytes.Buffer, *bytes.Buffer) {
	dir := t.TempDir()
	env := map[string]string{"XDG_CONFIG_HOME": dir + "/config", "XDG_STATE_HOME": dir + "/state", "NO_COLOR": "1"}
	var out, errb bytes.Buffer
	return &streams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(k string) string { return env[k] }, WorkDir: dir}, &out, &errb
}

// everyCommand lists the path of every command of the tree, root first.
func everyCommand(t *testing.T) [][]string {
	s, _, _ := testStreams(t)
	root := newRootCmd(context.Background(), s)
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range c.Commands() {
			walk(sub, append(append([]string(nil), path...), sub.Name()))
		}
	}
	walk(root, nil)
	return paths
}

// TestEveryUsageMistakeExits2 walks the whole command tree: a word that is
// no subcommand, or more arguments than a command takes, is a usage error
// (exit 2) everywhere, and runs nothing.
func TestEveryUsageMistakeExits2(t *testing.T) {
	paths := everyCommand(t)
	if len(paths) < 20 {
		t.Fatalf("walked only %d commands: %v", len(paths), paths)
	}
	for _, path := range paths {
		for _, extra := range [][]string{{"bogus"}, {"a", "b", "c", "d", "e"}} {
			args := append(append([]string(nil), path...), extra...)
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				s, out, errb := testStreams(t)
				if code := run(context.Background(), args, s); code != exitUsage {
					if len(extra) == 1 && !isGroup(path) {
						// A command taking one argument may accept "bogus"
						// as that argument; five are too many for any.
						return
					}
					t.Errorf("mcphost %s exited %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, exitUsage, out, errb)
				}
				if out.Len() > 0 {
					t.Errorf("a usage error printed on stdout: %s", out)
				}
			})
		}
	}
}

// isGroup reports whether the command at path has subcommands.
func isGroup(path []string) bool {
	s := &streams{Getenv: func(string) string { return "" }}
	c, _, err := newRootCmd(context.Background(), s).Find(path)
	return err == nil && c.HasSubCommands()
}

// TestNearNamesAreSuggested: a misspelt command or subcommand names the
// one that was meant.
func TestNearNamesAreSuggested(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{"toolz", `did you mean "tools"?`},
		{"audit tial", `did you mean "tail"?`},
		{"pin acept", `did you mean "accept"?`},
		{"auth stauts", `did you mean "status"?`},
		{"help explian", `did you mean "explain"?`},
		{"tools --jsno", `unknown flag: --jsno; did you mean "--json"?`},
		{"call --trsut tasks", `did you mean "--trust"?`},
	} {
		s, _, errb := testStreams(t)
		if code := run(context.Background(), strings.Fields(tc.args), s); code != exitUsage || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("mcphost %s: exit %d, stderr %q; want exit 2 and %q", tc.args, code, errb, tc.want)
		}
	}
}

// TestGroupsAloneAreUsageErrors: a command that only groups subcommands,
// run alone, is a usage error that names them (as auth always was).
func TestGroupsAloneAreUsageErrors(t *testing.T) {
	for g, want := range map[string]string{"audit": "or verify (see mcphost audit --help)", "pin": "pin needs a command: accept",
		"completion": "completion needs a command: bash, fish, powershell or zsh"} {
		s, out, errb := testStreams(t)
		if code := run(context.Background(), []string{g}, s); code != exitUsage || !strings.Contains(errb.String(), want) || out.Len() > 0 {
			t.Errorf("mcphost %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", g, code, out, errb, want)
		}
	}
}

// TestHelpColumnsAlign: in every command's --help, the descriptions of the
// flags of one section start in the same column, counted in characters.
func TestHelpColumnsAlign(t *testing.T) {
	for _, path := range everyCommand(t) {
		s, out, _ := testStreams(t)
		if code := run(context.Background(), append(path, "--help"), s); code != exitOK {
			t.Fatalf("mcphost %v --help exited %d", path, code)
		}
		col := -1
		for _, line := range strings.Split(out.String(), "\n") {
			if strings.HasSuffix(line, "Flags:") {
				col = -1
				continue
			}
			if !strings.HasPrefix(strings.TrimSpace(line), "-") {
				continue
			}
			i := strings.Index(strings.TrimLeft(line, " "), "  ")
			if i < 0 {
				continue
			}
			lead := len(line) - len(strings.TrimLeft(line, " "))
			rest := line[lead+i:]
			c := utf8.RuneCountInString(line[:lead+i]) + len(rest) - len(strings.TrimLeft(rest, " "))
			if col == -1 {
				col = c
			} else if c != col {
				t.Errorf("mcphost %v --help: the description of %q starts in column %d, the others in %d", path, strings.TrimSpace(line), c, col)
			}
		}
	}
}
