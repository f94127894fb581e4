package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestTableApplies checks, without running a mutation, that every row of
// the table still names a line that exists exactly once: code that moved
// under a row would otherwise turn its guarantee into an untested one that
// only a full mutation run (tens of minutes) reports.
func TestTableApplies(t *testing.T) {
	root := filepath.Join("..", "..")
	ms, err := load(filepath.Join(root, "scripts", "mutants", "mutants.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 {
		t.Fatal("the table has no rows")
	}
	for _, m := range ms {
		if m.equivalent != "" {
			continue
		}
		if err := applies(root, m); err != nil {
			t.Errorf("mutants.txt:%d (%s): %v", m.line, m.guarantee, err)
		}
		if m.from == m.to {
			t.Errorf("mutants.txt:%d (%s): the mutation changes nothing", m.line, m.guarantee)
		}
	}
}

// TestTableNamesTests checks that every alternative of a row's test
// pattern matches a test of its package: a renamed test would leave
// `go test -run` running nothing, and the mutation would look survived for
// a reason that has nothing to do with the guarantee.
func TestTableNamesTests(t *testing.T) {
	root := filepath.Join("..", "..")
	ms, err := load(filepath.Join(root, "scripts", "mutants", "mutants.txt"))
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string][]string{} // package dir → its Test functions
	for _, m := range ms {
		if m.equivalent != "" {
			continue
		}
		dir := filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(m.pkg, "./")))
		names, ok := tests[dir]
		if !ok {
			names = testNames(t, dir)
			tests[dir] = names
		}
		for _, alt := range alternatives(topLevel(m.tests)) {
			re, err := regexp.Compile(alt)
			if err != nil {
				t.Errorf("mutants.txt:%d: test pattern %q: %v", m.line, alt, err)
				continue
			}
			if !slices.ContainsFunc(names, re.MatchString) {
				t.Errorf("mutants.txt:%d (%s): no test in %s matches %q", m.line, m.guarantee, m.pkg, alt)
			}
		}
	}
}

// testNames lists the Test functions declared in dir's _test.go files.
func testNames(t *testing.T, dir string) []string {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no tests in %s (err %v)", dir, err)
	}
	var names []string
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz)\w*)\(`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range decl.FindAllSubmatch(b, -1) {
			names = append(names, string(m[1]))
		}
	}
	return names
}

// topLevel is the part of a -run pattern that names top-level tests: up to
// its first slash outside brackets and parentheses (go test's own split).
func topLevel(pattern string) string {
	depth := 0
	for i, r := range pattern {
		switch r {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case '/':
			if depth == 0 {
				return pattern[:i]
			}
		}
	}
	return pattern
}

// alternatives splits a pattern at its top-level "|".
func alternatives(pattern string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range pattern {
		switch r {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case '|':
			if depth == 0 {
				out = append(out, pattern[start:i])
				start = i + 1
			}
		}
	}
	return append(out, pattern[start:])
}
