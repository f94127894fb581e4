package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// nextVersions are the protocol versions the newer line of the suite tests
// (its --spec-version).
var nextVersions = []string{"2025-11-25", "2026-07-28"}

// requireNextSuite returns the newer line of the suite, installed in next/,
// run by the Node.js 22 installed here.
func requireNextSuite(t *testing.T) suite {
	t.Helper()
	base := requireSuite(t) // Node.js 22, and the same skip variable
	install := fmt.Sprintf("run `npm ci` in conformance/next/ (scripts/test.sh does) to install the newer suite, or set %s=1 to skip this test", skipVar)
	s := suite{node: base.node, cli: abs(t, filepath.Join("next", "node_modules", filepath.FromSlash(suitePackage), "dist", "index.js"))}
	if _, err := os.Stat(s.cli); err != nil {
		t.Fatalf("%v: %s", err, install)
	}
	s.checkPinned(t, filepath.Join("next", "package.json"), install)
	return s
}

// TestClientScenariosNext runs the newer line of the suite at each protocol
// version it tests, against mcphost's client and the reference client, and
// prints one line per client and version ("mcphost 2026-07-28: N/M
// checks"). Scenarios are judged as in TestClientScenarios, against
// baseline-next.txt, whose entries name the version: "2026-07-28/scenario".
func TestClientScenariosNext(t *testing.T) {
	s := requireNextSuite(t)
	baseline, err := loadBaseline("baseline-next.txt")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mcphost := build(t, dir, "mcphost-client", "./client", raceFlags()...)
	reference := build(t, dir, "reference-client", referenceClient)

	start := time.Now()
	var lines, table strings.Builder
	seen := map[string]bool{}
	for _, v := range nextVersions {
		mcphostOut, referenceOut := filepath.Join(dir, "mcphost-"+v), filepath.Join(dir, "reference-"+v)
		s.run(t, mcphost, mcphostOut, "--spec-version", v)
		referenceLog := s.run(t, reference, referenceOut, "--spec-version", v)
		got, err := readResults(mcphostOut)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := readResults(referenceOut)
		if err != nil {
			t.Fatal(err)
		}
		if len(ref) == 0 {
			t.Fatalf("%s: the reference client's run recorded no scenario:\n%s", v, referenceLog)
		}
		names := make([]string, 0, len(ref))
		for name := range ref {
			names = append(names, name)
		}
		for name := range got {
			if ref[name] == nil {
				names = append(names, name)
			}
		}
		slices.Sort(names)
		var total, refTotal result
		for _, name := range names {
			g, r := got[name], ref[name]
			key := v + "/" + name
			seen[key] = true
			reason, listed := baseline[key]
			mark := ""
			if listed {
				mark = "baseline: " + reason
			}
			fmt.Fprintf(&table, "%-12s %-40s %-9s %-9s %s\n", v, name, g, r, mark)
			judge(t, key, "baseline-next.txt", reason, listed, g, r, &total, &refTotal)
		}
		fmt.Fprintf(&lines, "mcphost %s: %s checks\nreference %s: %s checks\n", v, &total, v, &refTotal)
	}
	for key := range baseline {
		if !seen[key] {
			t.Errorf("baseline-next.txt lists %s, which the suite did not run: delete its line", key)
		}
	}
	t.Logf("\n%s%s(all runs in %s)", table.String(), lines.String(), time.Since(start).Round(100*time.Millisecond))
}
