package conformance

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// referenceServer is the go-sdk's own conformance server, built from the
// module version that go.mod requires. It passes the server scenarios.
const referenceServer = "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"

// serveVersions are the protocol versions the server scenarios are run at,
// each with the suite's flags that select its scenarios and the reference
// server's flags for speaking it over HTTP (stateful for 2025-11-25, the
// stateless default for 2026-07-28).
var serveVersions = []struct {
	version     string
	suiteFlags  []string
	serverFlags []string
}{
	{"2025-11-25", []string{"--spec-version", "2025-11-25"}, []string{"-stateless=false"}},
	{"2026-07-28", []string{"--requirements", "2026-07-28"}, nil},
}

// TestServeServerScenarios runs the newer suite's server scenarios against
// the reference server directly, and against `mcphost serve --http`
// fronting the same server on stdio (trusted, every tool allowed, raw
// names, no bearer token, servers' sampling passed to the client), at each version in serveVersions. serve must
// pass no fewer checks of a scenario than the server does directly, unless
// the scenario is in baseline-serve.txt ("VERSION/scenario reason"); a
// listed scenario that passes fails the test, so the list only shrinks,
// unless its reason starts with "timing:" (whether it passes depends on how
// requests interleave on a loaded machine, so either outcome is taken). It
// prints one line per version: "serve 2025-11-25: N/M checks (direct N/M)".
// timingPrefix marks a baseline reason whose scenario may pass or fail by
// how requests interleave.
const timingPrefix = "timing:"

func TestServeServerScenarios(t *testing.T) {
	s := requireNextSuite(t)
	baseline, err := loadBaseline("baseline-serve.txt")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mcphost := build(t, dir, "mcphost", "../cmd/mcphost", raceFlags()...)
	everything := build(t, dir, "everything-server", referenceServer)
	config := filepath.Join(dir, "config")
	if err := os.MkdirAll(filepath.Join(config, "mcphost"), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg, err := json.Marshal(map[string]any{
		"mcpServers": map[string]any{"everything": map[string]any{"command": everything, "trust": true}},
		// Every tool allowed, also once the session is tainted: the suite
		// reads resources (private data) and calls unannotated tools
		// (outside content) under one client, and a tainted session would
		// ask about every later call. What is compared is the protocol.
		"permissions": map[string]any{"allow": []any{map[string]any{"tool": "everything/*", "evenWhenTainted": true}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(config, "mcphost", "config.json"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	var lines, table strings.Builder
	seen := map[string]bool{}
	for _, v := range serveVersions {
		directURL := startReferenceServer(t, everything, v.serverFlags)
		serveURL, serveLog := startServe(t, mcphost, dir, config)
		directOut, serveOut := filepath.Join(dir, "direct-"+v.version), filepath.Join(dir, "serve-"+v.version)
		directLog := s.runServer(t, directURL, directOut, v.suiteFlags...)
		s.runServer(t, serveURL, serveOut, v.suiteFlags...)
		direct, err := readResults(directOut)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readResults(serveOut)
		if err != nil {
			t.Fatal(err)
		}
		if len(direct) == 0 {
			t.Fatalf("%s: the direct run recorded no scenario:\n%s", v.version, directLog)
		}
		names := make([]string, 0, len(direct))
		for name := range direct {
			names = append(names, name)
		}
		for name := range got {
			if direct[name] == nil {
				names = append(names, name)
			}
		}
		slices.Sort(names)
		var total, directTotal result
		for _, name := range names {
			g, r := got[name], direct[name]
			key := v.version + "/" + strings.TrimPrefix(name, "server-")
			seen[key] = true
			reason, listed := baseline[key]
			mark := ""
			if listed {
				mark = "baseline: " + reason
			}
			fmt.Fprintf(&table, "%-12s %-46s %-9s %-9s %s\n", v.version, strings.TrimPrefix(name, "server-"), g, r, mark)
			for _, res := range []struct{ sum, one *result }{{&total, g}, {&directTotal, r}} {
				if res.one != nil {
					res.sum.success += res.one.success
					res.sum.failure += res.one.failure + res.one.warning
				}
			}
			ok, why := servePasses(g, r)
			switch {
			case ok && listed && !strings.HasPrefix(reason, timingPrefix):
				t.Errorf("%s passes through serve now but is in baseline-serve.txt (%s): delete its line", key, reason)
			case !ok && !listed:
				t.Errorf("%s: %s", key, why)
			}
		}
		if raceEnabled {
			if log := serveLog(); strings.Contains(log, "WARNING: DATA RACE") {
				t.Errorf("%s: the race detector found a data race in mcphost serve:\n%s", v.version, log)
			}
		}
		fmt.Fprintf(&lines, "serve %s: %s checks (direct %s)\n", v.version, &total, &directTotal)
	}
	for key := range baseline {
		if !seen[key] {
			t.Errorf("baseline-serve.txt lists %s, which the suite did not run: delete its line", key)
		}
	}
	t.Logf("\n%s%s(all runs in %s)", table.String(), lines.String(), time.Since(start).Round(100*time.Millisecond))
}

// servePasses reports whether serve did as well as the server directly: a
// result, and no fewer checks succeeded. If not, why says why.
func servePasses(got, direct *result) (ok bool, why string) {
	switch {
	case got == nil:
		return false, "no checks.json through serve (the suite did not run it)"
	case direct != nil && got.success < direct.success:
		return false, fmt.Sprintf("%d checks succeeded through serve, fewer than the %d directly:\n\t%s", got.success, direct.success, strings.Join(got.problems, "\n\t"))
	case direct == nil && got.success == 0:
		return false, "no check succeeded"
	}
	return true, ""
}

// runServer runs the server scenarios selected by extra against url and
// leaves the results in outDir. As for clients, the exit code says nothing
// useful; the checks are read instead.
func (s suite) runServer(t *testing.T, url, outDir string, extra ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	args := append([]string{s.cli, "server", "--url", url, "--timeout", "30000", "-o", outDir}, extra...)
	cmd := exec.CommandContext(ctx, s.node, args...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if (err != nil && !errors.As(err, &ee)) || ctx.Err() != nil {
		t.Fatalf("running the suite on %s: %v\n%s", url, err, out)
	}
	return string(out)
}

// startReferenceServer starts the reference server on HTTP at a free
// loopback port and returns its URL once it accepts connections. It is
// stopped when the test ends.
func startReferenceServer(t *testing.T, exe string, flags []string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // the server prints no address of its own, so it is given one
	cmd := exec.Command(exe, append([]string{"-http", addr}, flags...)...)
	stderr := &lockedBuilder{}
	cmd.Stderr = stderr
	exited, waitErr := startProcess(t, cmd, nil)
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return "http://" + addr + "/mcp"
		}
		select {
		case <-exited:
			t.Fatalf("the reference server exited before listening on %s: %v\n%s", addr, waitErr(), stderr)
		case <-time.After(20 * time.Millisecond): // polling for the port, not waiting out a race
		}
		if time.Now().After(deadline) {
			t.Fatalf("the reference server did not listen on %s within 30s", addr)
		}
	}
}

// startServe starts `mcphost serve --http` on a port of its choosing with
// the configuration under configDir and a state directory of its own, and
// returns the URL it prints and a function that returns what it wrote on
// stderr so far. It is stopped (interrupted) when the test ends.
func startServe(t *testing.T, exe, dir, configDir string) (url string, stderr func() string) {
	t.Helper()
	state, err := os.MkdirTemp(dir, "state-")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "--allow-sampling", "serve", "--http", "127.0.0.1:0", "--no-prefix", "--insecure-no-token")
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+configDir, "XDG_STATE_HOME="+state, "NO_COLOR=1")
	cmd.Dir = dir
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	exited, waitErr := startProcess(t, cmd, func() { pw.Close() })
	log := &lockedBuilder{}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			log.add(line + "\n")
			if rest, ok := strings.CutPrefix(line, "mcphost: serving MCP on "); ok {
				select {
				case found <- rest:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	select {
	case url = <-found:
		return url, log.String
	case <-exited:
		t.Fatalf("mcphost serve exited before serving: %v\n%s", waitErr(), log.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("mcphost serve printed no address within 60s:\n%s", log.String())
	}
	return "", nil
}

// startProcess starts cmd and, when the test ends, interrupts it (killing
// it after 10s) and waits for it. exited is closed once it exited, after
// onExit (if set) ran; waitErr then says how it ended.
func startProcess(t *testing.T, cmd *exec.Cmd, onExit func()) (exited <-chan struct{}, waitErr func() error) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var err error
	go func() {
		err = cmd.Wait()
		if onExit != nil {
			onExit()
		}
		close(done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return done, func() error { <-done; return err }
}

// lockedBuilder is a string builder that one goroutine writes and others
// read.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(s)
}

// Write lets a lockedBuilder be a command's output.
func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.add(string(p))
	return len(p), nil
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
