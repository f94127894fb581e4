package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/config"
)

// docExample is one command of a documented example: a line of a fenced
// block that the docs mark with "<!-- tested -->" on the line before it.
type docExample struct {
	file string
	line int
	args []string
	exit int // the exit code the line's comment names ("# exit 3"); 0 without one
}

var exitComment = regexp.MustCompile(`#\s*exit (\d)\b`)

// docExamples reads every tested block of the README and docs/*.md. A
// block runs in one fresh environment (no configuration: the demo
// servers), its lines in order; "go run ./cmd/mcphost" counts as mcphost.
func docExamples(t *testing.T) [][]docExample {
	t.Helper()
	files, _ := filepath.Glob("../../docs/*.md")
	files = append([]string{"../../README.md"}, files...)
	var blocks [][]docExample
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		n, marked, in := 0, false, false
		var block []docExample
		for sc.Scan() {
			n++
			line := sc.Text()
			switch {
			case strings.TrimSpace(line) == "<!-- tested -->":
				marked = true
			case marked && strings.HasPrefix(line, "```"):
				marked, in, block = false, true, nil
			case in && strings.HasPrefix(line, "```"):
				in = false
				blocks = append(blocks, block)
			case in:
				cmd, comment, _ := strings.Cut(line, "  #")
				cmd = strings.TrimSpace(cmd)
				if cmd == "" || strings.HasPrefix(cmd, "#") {
					continue
				}
				rest, ok := strings.CutPrefix(cmd, "mcphost")
				if !ok {
					rest, ok = strings.CutPrefix(cmd, "go run ./cmd/mcphost")
				}
				if !ok {
					t.Fatalf("%s:%d: a tested example runs only mcphost, not %q", f, n, cmd)
				}
				args, err := config.SplitWords(rest)
				if err != nil {
					t.Fatalf("%s:%d: %v", f, n, err)
				}
				ex := docExample{file: filepath.Base(f), line: n, args: args}
				if m := exitComment.FindStringSubmatch("#" + comment); m != nil {
					ex.exit, _ = strconv.Atoi(m[1])
				}
				block = append(block, ex)
			default:
				marked = false
			}
		}
	}
	return blocks
}

// TestDocExamples runs every tested example of the README and docs/ and
// checks its exit code, so that the documentation cannot drift from the
// program.
func TestDocExamples(t *testing.T) {
	blocks := docExamples(t)
	count := 0
	for _, b := range blocks {
		count += len(b)
	}
	if len(blocks) < 3 || count < 8 {
		t.Fatalf("found %d tested blocks with %d commands; the docs mark more than that", len(blocks), count)
	}
	for _, b := range blocks {
		dir := t.TempDir()
		t.Chdir(dir) // a file an example names (--trace FILE) lands there
		env := map[string]string{"XDG_STATE_HOME": filepath.Join(dir, "state"), "XDG_CONFIG_HOME": filepath.Join(dir, "config"), "NO_COLOR": "1", "HOME": dir}
		for _, ex := range b {
			var out, errOut bytes.Buffer
			s := &streams{In: strings.NewReader(""), Out: &out, Err: &errOut, Getenv: func(k string) string { return env[k] }, WorkDir: dir}
			if code := run(context.Background(), ex.args, s); code != ex.exit {
				t.Errorf("%s:%d: mcphost %s exited %d, want %d\nstdout:\n%s\nstderr:\n%s", ex.file, ex.line, strings.Join(ex.args, " "), code, ex.exit, out.String(), errOut.String())
			}
		}
	}
}
