// Command mutants applies, one at a time, the mutations listed in
// mutants.txt — each removes or weakens the line that implements one safety
// guarantee — and runs the tests that must catch it. A mutation whose tests
// still pass is a guarantee without a test; the command lists every
// survivor and exits 1 if there is one.
//
//	go run ./scripts/mutants [-table FILE] [-run REGEXP]
//
// Each entry of the table is a block of "key: value" lines separated by a
// blank line:
//
//	guarantee: a read is retried at most twice
//	file:      host/gate.go
//	from:      unknownLimit = 2
//	to:        unknownLimit = 3
//	test:      ./host/ TestReadRetriedAtMostTwice
//	equivalent: why it cannot be caught (optional; the entry is then only listed)
//
// "from" must occur exactly once in the file, so that the mutation is the
// one intended; "\n" in from and to stands for a line break. The file is
// restored after every run, also when the command is interrupted.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

type mutant struct {
	line                                  int
	guarantee, file, from, to, pkg, tests string
	equivalent                            string
}

func main() {
	table := flag.String("table", "scripts/mutants/mutants.txt", "the table of mutations")
	only := flag.String("run", "", "only the entries whose guarantee matches `REGEXP`")
	flag.Parse()
	ms, err := load(*table)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutants:", err)
		os.Exit(2)
	}
	var filter *regexp.Regexp
	if *only != "" {
		if filter, err = regexp.Compile(*only); err != nil {
			fmt.Fprintln(os.Stderr, "mutants: -run:", err)
			os.Exit(2)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	survivors, broken := 0, 0
	fmt.Printf("%-4s  %-8s  %6s  %s\n", "#", "result", "secs", "guarantee (file: mutation)")
	for i, m := range ms {
		if filter != nil && !filter.MatchString(m.guarantee) {
			continue
		}
		if m.equivalent != "" {
			fmt.Printf("%-4d  %-8s  %6s  %s (%s) — equivalent: %s\n", i+1, "equiv", "-", m.guarantee, m.file, m.equivalent)
			continue
		}
		start := time.Now()
		res, err := try(ctx, m)
		if ctx.Err() != nil {
			os.Exit(2)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "mutants: %s:%d: %v\n", *table, m.line, err)
			res = "BROKEN"
			broken++
		}
		if res == "SURVIVED" {
			survivors++
		}
		fmt.Printf("%-4d  %-8s  %6.1f  %s (%s: %q → %q)\n", i+1, res, time.Since(start).Seconds(), m.guarantee, m.file, m.from, m.to)
	}
	if broken > 0 {
		fmt.Printf("%d entry(ies) of the table could not be applied or did not compile\n", broken)
		os.Exit(2)
	}
	if survivors > 0 {
		fmt.Printf("%d mutation(s) survived\n", survivors)
		os.Exit(1)
	}
	fmt.Println("every mutation was killed")
}

// applies reports why m cannot be applied to the tree rooted at root, or
// nil: its file must exist and hold its "from" exactly once, so that the
// mutation removes the one line it names.
func applies(root string, m mutant) error {
	orig, err := os.ReadFile(filepath.Join(root, m.file))
	if err != nil {
		return err
	}
	if n := strings.Count(string(orig), m.from); n != 1 {
		return fmt.Errorf("%s: %q occurs %d times, want exactly once", m.file, m.from, n)
	}
	return nil
}

// try applies m, runs its tests and restores the file. It reports "killed"
// when the tests fail and "SURVIVED" when they pass.
func try(ctx context.Context, m mutant) (string, error) {
	if err := applies(".", m); err != nil {
		return "", err
	}
	orig, err := os.ReadFile(m.file)
	if err != nil {
		return "", err
	}
	mutated := strings.Replace(string(orig), m.from, m.to, 1)
	if err := os.WriteFile(m.file, []byte(mutated), 0o644); err != nil {
		return "", err
	}
	defer os.WriteFile(m.file, orig, 0o644)
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-run", m.tests, m.pkg)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	if err == nil {
		return "SURVIVED", nil
	}
	if strings.Contains(string(out), "[build failed]") || strings.Contains(string(out), "[setup failed]") {
		return "", fmt.Errorf("the mutation does not compile, so it proves nothing:\n%s", out)
	}
	return "killed", nil
}

func load(path string) ([]mutant, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ms []mutant
	var cur *mutant
	var seen map[string]bool // the keys of cur so far
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		if strings.TrimSpace(line) == "" {
			cur = nil
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("%s:%d: want \"key: value\"", path, n)
		}
		if cur == nil {
			ms = append(ms, mutant{line: n})
			cur = &ms[len(ms)-1]
			seen = map[string]bool{}
		}
		k := strings.TrimSpace(key)
		if seen[k] {
			// A merge can leave two versions of a line in one entry; the
			// last would win silently.
			return nil, fmt.Errorf("%s:%d: %q given twice in one entry", path, n, k)
		}
		seen[k] = true
		val = strings.ReplaceAll(strings.TrimSpace(val), `\n`, "\n")
		switch strings.TrimSpace(key) {
		case "guarantee":
			cur.guarantee = val
		case "file":
			cur.file = val
		case "from":
			cur.from = val
		case "to":
			cur.to = val
		case "test":
			pkg, tests, ok := strings.Cut(val, " ")
			if !ok {
				return nil, fmt.Errorf("%s:%d: test: want PACKAGE TESTREGEXP", path, n)
			}
			cur.pkg, cur.tests = pkg, strings.TrimSpace(tests)
		case "equivalent":
			cur.equivalent = val
		default:
			return nil, fmt.Errorf("%s:%d: unknown key %q", path, n, key)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, m := range ms {
		if m.guarantee == "" || m.file == "" || m.from == "" || (m.pkg == "" && m.equivalent == "") {
			return nil, fmt.Errorf("%s:%d: an entry needs guarantee, file, from, to and test", path, m.line)
		}
	}
	return ms, nil
}
