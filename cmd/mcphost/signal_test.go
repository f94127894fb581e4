//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcphost/mcphost/fixtures"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as a stdio server that ignores the end of its
// input and SIGTERM, answers initialize and tools/list, and never answers
// tools/call, with a child of its own that ignores SIGTERM too: the worst
// server mcphost can be asked to stop. Both count the SIGTERMs they get in
// a file of the directory they are given (server-sigterm, child-sigterm). The mode is chosen by the first
// argument, before the testing package reads the command line.
const (
	hangServerArg = "-mcphost-hang-server"
	hangChildArg  = "-mcphost-hang-child"
)

func init() {
	if len(os.Args) < 3 {
		return
	}
	switch os.Args[1] {
	case hangServerArg:
		os.Exit(hangServer(os.Args[2]))
	case hangChildArg:
		signal.Ignore(syscall.SIGHUP, syscall.SIGINT)
		countSIGTERM(filepath.Join(os.Args[2], "child-sigterm"))
		hangForever()
	}
}

// countSIGTERM makes SIGTERM do nothing but add a line to file.
func countSIGTERM(file string) {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, syscall.SIGTERM)
	go func() {
		for range ch {
			f, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
			if err == nil {
				_, _ = f.WriteString("SIGTERM\n")
				_ = f.Close()
			}
		}
	}()
}

// hangForever blocks without ever ending; a sleeping loop, because a
// process whose goroutines all wait on channels is stopped by the runtime.
func hangForever() {
	for {
		time.Sleep(time.Hour)
	}
}

// hangServer serves MCP on stdin and stdout. It writes the pids of itself
// and its child to dir/pids before it answers anything, and creates
// dir/called when a tools/call arrives. (A tools/call is never answered.)
func hangServer(dir string) int {
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT, syscall.SIGPIPE)
	countSIGTERM(filepath.Join(dir, "server-sigterm"))
	child := exec.Command(os.Args[0], hangChildArg, dir)
	child.Stderr = os.Stderr // holds the stderr pipe too, as npx's node does
	if err := child.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "hang server:", err)
		return 1
	}
	pids := fmt.Sprintf("%d %d\n", os.Getpid(), child.Process.Pid)
	if err := writeAtomic(filepath.Join(dir, "pids"), pids); err != nil {
		fmt.Fprintln(os.Stderr, "hang server:", err)
		return 1
	}
	srv := &fixtures.RawServer{Name: "hang",
		Tools: []map[string]any{{"name": "wait", "description": "Never returns."}},
		Call: func(json.RawMessage) (any, bool) {
			_ = writeAtomic(filepath.Join(dir, "called"), "")
			return nil, false // never answered
		}}
	srv.Serve(os.Stdin, os.Stdout)
	hangForever() // the end of input changes nothing
	return 0
}

func writeAtomic(path, data string) error {
	if err := os.WriteFile(path+".tmp", []byte(data), 0o600); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}

// buildMcphost builds the real command, with the race detector when the
// test has it, so that main's signal handling is what runs.
func buildMcphost(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mcphost")
	args := []string{"build", "-o", bin}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" && s.Value == "true" {
				args = append(args, "-race")
			}
		}
	}
	out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// hangingCall is mcphost running a command that calls hang/wait on the hang
// server, the call in flight.
type hangingCall struct {
	cmd           *exec.Cmd
	stderr        bytes.Buffer
	dir           string // the server's directory
	audit         string
	server, child int // pids
}

// startHangingCall starts mcphost with args (a command that calls
// hang/wait; $DIR in an argument is a directory for the test's files) and
// returns once the server has received tools/call.
func startHangingCall(t *testing.T, bin string, args ...string) *hangingCall {
	t.Helper()
	h := newHangingCall(t, bin, args...)
	h.cmd.Stderr = &h.stderr
	h.start(t)
	h.waitCalled(t)
	return h
}

// newHangingCall prepares mcphost with args, and the scripted model
// $DIR/model.jsonl, which calls hang/wait.
func newHangingCall(t *testing.T, bin string, args ...string) *hangingCall {
	t.Helper()
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h := &hangingCall{dir: dir, audit: filepath.Join(dir, "audit.jsonl")}
	for i := range args {
		args[i] = strings.ReplaceAll(args[i], "$DIR", dir)
	}
	h.cmd = exec.Command(bin, append([]string{"--audit", h.audit, "--server", "hang=" + self + " " + hangServerArg + " " + dir}, args...)...)
	h.cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+dir+"/config", "XDG_STATE_HOME="+dir+"/state",
		"NO_COLOR=1", "GORACE=atexit_sleep_ms=0")
	model := `{"toolCalls": [{"name": "hang__wait"}]}` + "\n" + `{"text": "never reached"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "model.jsonl"), []byte(model), 0o600); err != nil {
		t.Fatal(err)
	}
	return h
}

// start starts mcphost. Whatever of it and of the server outlives the test
// is killed.
func (h *hangingCall) start(t *testing.T) {
	t.Helper()
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if h.cmd.ProcessState == nil {
			_ = h.cmd.Process.Kill()
			_ = h.cmd.Wait()
		}
		_ = h.readPIDs()
		for _, pid := range []int{h.server, h.child} {
			if ours(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
}

// readPIDs reads the pids the server wrote when it started.
func (h *hangingCall) readPIDs() error {
	data, err := os.ReadFile(filepath.Join(h.dir, "pids"))
	if err != nil {
		return err
	}
	if _, err := fmt.Sscan(string(data), &h.server, &h.child); err != nil {
		return fmt.Errorf("pids file %q: %w", data, err)
	}
	return nil
}

// waitCalled waits until the server has received tools/call.
func (h *hangingCall) waitCalled(t *testing.T) {
	t.Helper()
	waitUntil(t, "the server received tools/call", func() bool {
		_, err := os.Stat(filepath.Join(h.dir, "called"))
		return err == nil
	})
	if err := h.readPIDs(); err != nil {
		t.Fatal(err)
	}
	if !ours(h.server) || !ours(h.child) {
		t.Fatalf("the server (%d) and its child (%d) should be running", h.server, h.child)
	}
}

// wait waits for mcphost to exit and returns its exit code and how long
// the exit took from now.
func (h *hangingCall) wait(t *testing.T) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	exited := make(chan error, 1)
	go func() { exited <- h.cmd.Wait() }()
	var err error
	select {
	case err = <-exited:
	case <-time.After(time.Minute): // only keeps a broken build from hanging the suite
		_ = h.cmd.Process.Kill()
		<-exited
		t.Fatalf("mcphost did not exit within a minute; output:\n%s", h.stderr.String())
	}
	took := time.Since(start)
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return h.cmd.ProcessState.ExitCode(), took
}

// ours reports whether pid is a live (not zombie) process started from this
// test binary in a hang mode: a reused pid is never mistaken for it.
func ours(pid int) bool {
	if pid <= 0 {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name, which ends at the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' {
		return false
	}
	cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return bytes.Contains(cmdline, []byte("-mcphost-hang-"))
}

// groupMembers lists the live processes whose process group is pgid.
func groupMembers(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		// After the name: state ppid pgrp …
		f := strings.Fields(string(stat[i+1:]))
		if len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			out = append(out, pid)
		}
	}
	return out
}

// waitUntil polls cond until it holds; a bound only keeps a broken build
// from hanging the suite.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond) // polling another process's state
	}
}

// auditRecords reads the audit log's records.
func auditRecords(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// checkUnknownOutcome requires an outcome record with status unknown for
// the call to hang/wait, after that call's intent.
func checkUnknownOutcome(t *testing.T, path string) {
	t.Helper()
	recs := auditRecords(t, path)
	intent := -1
	for i, r := range recs {
		if r["tool"] != "wait" {
			continue
		}
		switch r["kind"] {
		case "intent":
			intent = i
		case "outcome":
			if intent < 0 {
				t.Fatalf("outcome before its intent: %v", recs)
			}
			if r["callId"] != recs[intent]["callId"] || r["status"] != "unknown" {
				t.Fatalf("outcome %v, want status unknown for call %v", r, recs[intent]["callId"])
			}
			return
		}
	}
	t.Fatalf("no outcome record for the cancelled call; records: %v", recs)
}

// TestSignals runs `mcphost call` against a server that ignores the end of
// its input and SIGTERM, and has a child that does too, and signals mcphost
// while the call is in flight.
//
// SIGTERM and SIGHUP end it the way Ctrl-C does: the call is cancelled and
// recorded as unknown after its intent, the exit code is 6, and the
// server's whole process group is gone once mcphost has exited.
//
// SIGKILL leaves mcphost no say: the kernel kills the server (the
// parent-death signal), although it ignores the end of input and SIGTERM.
func TestSignals(t *testing.T) {
	bin := buildMcphost(t)
	call := []string{"call", "--yes", "hang/wait", "{}"}
	run := []string{"run", "-p", "wait", "--allow", "hang/wait", "--model", "script:$DIR/model.jsonl"}
	for _, tc := range []struct {
		name string
		sig  syscall.Signal
		args []string
	}{
		{"SIGTERM", syscall.SIGTERM, call},
		{"SIGHUP", syscall.SIGHUP, call},
		{"run/SIGTERM", syscall.SIGTERM, run},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := startHangingCall(t, bin, tc.args...)
			if err := h.cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			code, took := h.wait(t)
			t.Logf("exit %d %v after %s; stderr:\n%s", code, took, tc.name, h.stderr.String())
			if code != exitUnknown {
				t.Fatalf("exit code %d after %s, want %d (unknown)", code, tc.name, exitUnknown)
			}
			if !regexp.MustCompile(`hang/wait: .*→ unknown`).MatchString(h.stderr.String()) {
				t.Errorf("stderr does not say the outcome is unknown:\n%s", h.stderr.String())
			}
			if strings.Contains(h.stderr.String(), "DATA RACE") {
				t.Error("the race detector reported a race")
			}
			checkUnknownOutcome(t, h.audit)
			// mcphost sent SIGKILL to the group before it exited; what is
			// left can only be on its way out.
			waitUntil(t, "the server's process group is gone", func() bool { return len(groupMembers(h.server)) == 0 })
			// The whole group got SIGTERM once, and SIGKILL came before
			// the SDK's own escalation would have signalled the server
			// again.
			for _, f := range []string{"server-sigterm", "child-sigterm"} {
				data, _ := os.ReadFile(filepath.Join(h.dir, f))
				if n := strings.Count(string(data), "SIGTERM"); n != 1 {
					t.Errorf("%s: %d SIGTERMs, want 1", f, n)
				}
			}
		})
	}
	t.Run("SIGKILL", func(t *testing.T) {
		h := startHangingCall(t, bin, call...)
		if err := h.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		if code, _ := h.wait(t); code != -1 {
			t.Fatalf("exit code %d, want -1 (killed)", code)
		}
		waitUntil(t, "the server died with mcphost", func() bool { return !ours(h.server) })
	})
}
