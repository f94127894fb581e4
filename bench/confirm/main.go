// Command confirm measures the quality of mcphost's confirmations: how
// often a working session is interrupted, and whether every call that can
// lose data or reach mcphost's own files is asked about.
//
// Each session is 200 calls drawn from a fixed workload (mostly reads, some
// additive writes, few changes that can lose data; see session.go) and run
// through a real gate in front of real servers: the tasks fixture and the
// npm server-filesystem and server-memory, trusted, each alone and all
// three together, and server-filesystem untrusted, as a project file's
// server is. A scripted person answers: a call at T1, or one that only
// reads, is approved for the session where offered; anything else once. It
// prints a markdown table (or JSON with -json):
//
//	(cd interop && npm ci) && go run ./bench/confirm -sessions 5
//
// The goals are printed beside the figures: at most 10 prompts per 100
// calls, every risky call asked, and no read asked at T3 for a reason other
// than a protected file (for trusted servers). A run exits 1 when a session
// fails (a server does not start) and 2 on a usage error; figures never
// fail it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/mcphost/mcphost/fixtures"
)

// fixtureArg makes this program serve a fixture (fixtures.Main) when it is
// re-run as a server.
const fixtureArg = "serve-fixture"

func main() {
	if len(os.Args) > 1 && os.Args[1] == fixtureArg {
		os.Exit(fixturesMain(os.Args[2:]))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// fixturesMain serves the fixture args name over stdio.
func fixturesMain(args []string) int { return fixtures.Main(args, os.Stdin, os.Stdout, os.Stderr) }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("confirm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sessions := fs.Int("sessions", 5, "sessions per set, each with its own seed")
	calls := fs.Int("calls", 200, "calls per session")
	asJSON := fs.Bool("json", false, "print JSON instead of a markdown table")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *sessions < 1 || *calls < 1 || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: go run ./bench/confirm [-sessions N] [-calls N] [-json]")
		return 2
	}
	e, err := newEnv()
	if err != nil {
		fmt.Fprintln(stderr, "confirm:", err)
		return 2
	}
	defer os.RemoveAll(e.tmp)
	type row struct {
		Set string `json:"set"`
		tally
	}
	var rows []row
	for _, s := range sets {
		var t tally
		for i := range *sessions {
			st, err := runSession(ctx, e, s, uint64(i+1), *calls)
			if err != nil {
				fmt.Fprintf(stderr, "confirm: %s, session %d: %v\n", s.Name, i+1, err)
				return 1
			}
			t.add(st)
		}
		rows = append(rows, row{s.Name, t})
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rows)
		return 0
	}
	fmt.Fprintf(stdout, "| servers | calls | prompts / 100 calls (≤ 10) | risky calls asked (100%%) | reads asked at T3, not for a protected file (0) | ordinary reads flagged protected-path (0) | prompts at T1 / T2 / T3 | prompts for calls that only read or add |\n")
	fmt.Fprintf(stdout, "|---|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range rows {
		fmt.Fprintf(stdout, "| %s | %d | %.1f (%s) | %d of %d (%s) | %d%s | %d | %d / %d / %d | %d |\n", r.Set, r.Calls,
			per100(r.Prompts, r.Calls), met(per100(r.Prompts, r.Calls) <= 10),
			r.RiskyAsked, r.Risky, met(r.RiskyAsked == r.Risky), r.ReadsT3NotProtected, trustNote(r.Set),
			r.ProtectedReasonOnRead, r.PromptsByTier[1], r.PromptsByTier[2], r.PromptsByTier[3], r.NeedlessPrompts)
	}
	return 0
}

func per100(n, of int) float64 { return 100 * float64(n) / float64(max(of, 1)) }

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "missed"
}

// trustNote marks the set whose servers stay untrusted, where every call
// is T3 by design and the reads goal does not apply.
func trustNote(set string) string {
	if strings.HasSuffix(set, "never trusted") {
		return " (untrusted: every call is T3)"
	}
	return ""
}

// newEnv finds node and the npm servers (interop/node_modules, from the
// module root) and makes the temporary directory.
func newEnv() (*env, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, errors.New("node is not installed: the npm servers need it")
	}
	npm := filepath.Join(root, "interop", "node_modules", ".bin")
	for _, s := range []string{"mcp-server-filesystem", "mcp-server-memory"} {
		if _, err := os.Stat(filepath.Join(npm, s)); err != nil {
			return nil, fmt.Errorf("the npm MCP servers are not installed: run npm ci in interop/ (%v)", err)
		}
	}
	tmp, err := os.MkdirTemp("", "mcphost-confirm-")
	if err != nil {
		return nil, err
	}
	tmp, _ = filepath.EvalSymlinks(tmp)
	return &env{self: self, node: node, npm: npm, tmp: tmp}, nil
}

// moduleRoot is the nearest directory upwards with a go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory: run from the mcphost module")
		}
		dir = parent
	}
}
