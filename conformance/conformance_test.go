package conformance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// skipVar, set to 1, skips the suite on purpose; nothing else does.
const skipVar = "MCPHOST_SKIP_CONFORMANCE"

// suitePackage is the npm package of the suite, pinned in package.json.
const suitePackage = "@modelcontextprotocol/conformance"

// referenceClient is the go-sdk's own conformance client, built from the
// module version that go.mod requires.
const referenceClient = "github.com/modelcontextprotocol/go-sdk/conformance/everything-client"

// suite is an installed conformance suite and the Node.js that runs it.
type suite struct {
	node, cli string
}

// requireSuite returns the installed suite, or fails the test with what to
// do about it. A missing install is an error, not a reason to skip: a
// silently skipped conformance run looks exactly like a passing one.
func requireSuite(t *testing.T) suite {
	t.Helper()
	if os.Getenv(skipVar) == "1" {
		t.Skip(skipVar + "=1: the MCP conformance suite is skipped")
	}
	install := fmt.Sprintf("run `npm ci` in conformance/ (scripts/test.sh does) to install the pinned suite and Node.js 22, or set %s=1 to skip this test", skipVar)
	s := suite{
		node: abs(t, filepath.Join("node_modules", "node", "bin", "node")),
		cli:  abs(t, filepath.Join("node_modules", filepath.FromSlash(suitePackage), "dist", "index.js")),
	}
	for _, p := range []string{s.node, s.cli} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%v: %s", err, install)
		}
	}
	if v := s.output(t, "--version"); !strings.HasPrefix(v, "v22.") {
		t.Fatalf("node_modules holds Node.js %s, want 22.x: %s", v, install)
	}
	s.checkPinned(t, "package.json", install)
	return s
}

// checkPinned fails the test unless the installed suite is the version the
// manifest (a package.json) pins.
func (s suite) checkPinned(t *testing.T, manifestPath, install string) {
	t.Helper()
	pkg, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(pkg, &manifest); err != nil {
		t.Fatalf("%s: %v", manifestPath, err)
	}
	if got, want := s.output(t, s.cli, "--version"), manifest.Dependencies[suitePackage]; got != want {
		t.Fatalf("installed %s is %s, %s pins %s: %s", suitePackage, got, manifestPath, want, install)
	}
}

func abs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// output runs node with args and returns its trimmed standard output.
func (s suite) output(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, s.node, args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("%w: %s", err, bytes.TrimSpace(ee.Stderr))
		}
		t.Fatalf("node %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

// clientScenarios lists every client scenario of the installed suite.
func (s suite) clientScenarios(t *testing.T) []string {
	t.Helper()
	var names []string
	sc := bufio.NewScanner(strings.NewReader(s.output(t, s.cli, "list", "--client")))
	for sc.Scan() {
		// "  - initialize [2025-06-18,2025-11-25]"
		if name, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "- "); ok {
			names = append(names, strings.Fields(name)[0])
		}
	}
	if len(names) == 0 {
		t.Fatal("the suite lists no client scenarios")
	}
	return names
}

// run runs every client scenario against command, in parallel (the suite's
// "all" suite), and leaves the results in outDir. The suite's exit code says
// nothing useful (a scenario failing is an exit code of 1): the checks are
// read instead.
func (s suite) run(t *testing.T, command, outDir string, extra ...string) string {
	t.Helper()
	// The suite hands the command to a shell after splitting it at spaces.
	if !regexp.MustCompile(`^[A-Za-z0-9/._+-]+$`).MatchString(command) {
		t.Fatalf("the suite cannot run a client at %q: it splits the command at spaces and runs it through a shell", command)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	args := append([]string{s.cli, "client", "--command", command, "--suite", "all", "--timeout", "30000", "-o", outDir}, extra...)
	cmd := exec.CommandContext(ctx, s.node, args...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if (err != nil && !errors.As(err, &ee)) || ctx.Err() != nil {
		t.Fatalf("running the suite on %s: %v\n%s", filepath.Base(command), err, out)
	}
	return string(out)
}

// build builds a Go package into dir and returns the executable's path.
// raceFlags are the build flags that give the programs under test the race
// detector when the test itself has it.
func raceFlags() []string {
	if raceEnabled {
		return []string{"-race"}
	}
	return nil
}

func build(t *testing.T, dir, name, pkg string, flags ...string) string {
	t.Helper()
	exe := filepath.Join(dir, name)
	args := append(append([]string{"build"}, flags...), "-o", exe, pkg)
	out, err := exec.CommandContext(t.Context(), "go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return exe
}

// result is what one scenario's checks.json recorded.
type result struct {
	dir                       string
	success, failure, warning int
	problems                  []string // "id: message" of each failed or warned check
}

func (r *result) checks() int { return r.success + r.failure + r.warning }

func (r *result) String() string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("%d/%d", r.success, r.checks())
}

// timestamp is the suffix the suite adds to each scenario's result folder.
var timestamp = regexp.MustCompile(`-\d{4}-\d{2}-\d{2}T[\d-]+Z$`)

// readResults reads each scenario's checks.json under dir, keyed by scenario
// name ("auth/metadata-default" lives in auth/metadata-default-<time>/).
func readResults(dir string) (map[string]*result, error) {
	results := map[string]*result{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != "checks.json" {
			return err
		}
		rel, err := filepath.Rel(dir, filepath.Dir(path))
		if err != nil {
			return err
		}
		name := timestamp.ReplaceAllString(filepath.ToSlash(rel), "")
		if results[name] != nil {
			return fmt.Errorf("scenario %s has two results", name)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var checks []struct {
			ID           string `json:"id"`
			Status       string `json:"status"`
			Description  string `json:"description"`
			ErrorMessage string `json:"errorMessage"`
		}
		if err := json.Unmarshal(data, &checks); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		r := &result{dir: filepath.Dir(path)}
		for _, c := range checks {
			switch c.Status {
			case "SUCCESS":
				r.success++
				continue
			case "FAILURE":
				r.failure++
			case "WARNING":
				r.warning++
			default: // INFO and the like record traffic, not verdicts
				continue
			}
			msg := c.ErrorMessage
			if msg == "" {
				msg = c.Description
			}
			r.problems = append(r.problems, fmt.Sprintf("%s %s: %s", c.Status, c.ID, msg))
		}
		results[name] = r
		return nil
	})
	return results, err
}

// passes reports whether a scenario passed: nothing failed or warned,
// something succeeded, and no fewer checks succeeded than for the reference
// client (a client that skips a step can avoid a failure without earning the
// success). If not, why says why.
// judge adds one scenario's results to the totals and fails the test when
// mcphost's client does worse than the reference without a line in the
// baseline file, when it passes with one (the line is stale), or when the
// race detector reported a race in it.
func judge(t *testing.T, key, baselineFile, reason string, listed bool, g, r *result, total, refTotal *result) {
	t.Helper()
	for _, res := range []struct{ sum, one *result }{{total, g}, {refTotal, r}} {
		if res.one != nil {
			res.sum.success += res.one.success
			res.sum.failure += res.one.failure + res.one.warning
		}
	}
	ok, why := passes(g, r)
	switch {
	case ok && listed:
		t.Errorf("%s passes now but is in %s (%s): delete its line", key, baselineFile, reason)
	case !ok && !listed:
		t.Errorf("%s: %s\nclient stderr:\n%s", key, why, tail(g, "stderr.txt"))
	}
	if g != nil && raceEnabled {
		if stderr := saved(g, "stderr.txt"); strings.Contains(stderr, "WARNING: DATA RACE") {
			t.Errorf("%s: the race detector found a data race in mcphost's client:\n%s", key, stderr)
		}
	}
}

func passes(got, ref *result) (ok bool, why string) {
	switch {
	case got == nil:
		return false, "no checks.json (the suite did not run it)"
	case got.failure+got.warning > 0:
		return false, fmt.Sprintf("%d checks failed, %d warned:\n\t%s", got.failure, got.warning, strings.Join(got.problems, "\n\t"))
	case got.success == 0:
		return false, "no check succeeded"
	case ref != nil && got.success < ref.success:
		return false, fmt.Sprintf("%d checks succeeded, fewer than the reference client's %d", got.success, ref.success)
	}
	return true, ""
}

// loadBaseline reads the scenarios that are known not to pass, each with
// its reason.
func loadBaseline(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	known := map[string]string{}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, reason, _ := strings.Cut(line, " ")
		reason = strings.TrimSpace(reason)
		switch {
		case reason == "":
			return nil, fmt.Errorf("%s:%d: %s has no reason", path, i+1, name)
		case known[name] != "":
			return nil, fmt.Errorf("%s:%d: %s is listed twice", path, i+1, name)
		}
		known[name] = reason
	}
	return known, nil
}

// TestClientScenarios runs every client scenario of the suite against
// mcphost's client and the reference client, and holds mcphost's results to
// the baseline.
func TestClientScenarios(t *testing.T) {
	s := requireSuite(t)
	baseline, err := loadBaseline("baseline.txt")
	if err != nil {
		t.Fatal(err)
	}
	scenarios := s.clientScenarios(t)

	dir := t.TempDir()
	mcphost := build(t, dir, "mcphost-client", "./client", raceFlags()...)
	reference := build(t, dir, "reference-client", referenceClient)

	// One suite run after the other: each already runs its scenarios in
	// parallel, and sse-retry measures the client's reconnection delay.
	start := time.Now()
	mcphostOut, referenceOut := filepath.Join(dir, "mcphost"), filepath.Join(dir, "reference")
	s.run(t, mcphost, mcphostOut)
	referenceLog := s.run(t, reference, referenceOut)
	elapsed := time.Since(start)
	got, err := readResults(mcphostOut)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := readResults(referenceOut)
	if err != nil {
		t.Fatal(err)
	}
	if len(ref) == 0 {
		t.Fatalf("the reference client's run recorded no scenario:\n%s", referenceLog)
	}

	var table strings.Builder
	fmt.Fprintf(&table, "%-45s %-9s %-9s\n", "scenario", "mcphost", "reference")
	var total, refTotal result
	for _, name := range scenarios {
		g, r := got[name], ref[name]
		reason, listed := baseline[name]
		mark := ""
		if listed {
			mark = "baseline: " + reason
		}
		fmt.Fprintf(&table, "%-45s %-9s %-9s %s\n", name, g, r, mark)
		judge(t, name, "baseline.txt", reason, listed, g, r, &total, &refTotal)
	}
	for name := range baseline {
		if !slices.Contains(scenarios, name) {
			t.Errorf("baseline.txt lists %s, which the suite does not have: delete its line", name)
		}
	}
	for name := range got {
		if !slices.Contains(scenarios, name) {
			t.Errorf("the suite ran %s, which it does not list", name)
		}
	}
	fmt.Fprintf(&table, "mcphost: %s checks\nreference: %s checks\n(%d scenarios, both runs in %s)",
		&total, &refTotal, len(scenarios), elapsed.Round(100*time.Millisecond))
	t.Log("\n" + table.String())
}

// saved returns a file the suite saved for a scenario.
func saved(r *result, name string) string {
	if r == nil {
		return ""
	}
	data, err := os.ReadFile(filepath.Join(r.dir, name))
	if err != nil {
		return err.Error()
	}
	return string(data)
}

// tail returns the end of a file the suite saved for a scenario.
func tail(r *result, name string) string {
	const max = 4096
	s := saved(r, name)
	if len(s) > max {
		s = "…" + s[len(s)-max:]
	}
	return s
}
