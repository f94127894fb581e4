//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mcphost/mcphost/chatlog"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/host"
)

// resumeFixtureArg makes the test binary a fixture server (the arguments of
// fixtures.Main after a directory) that writes its pid to a file of that
// directory first, so that a test which kills mcphost can stop it too.
const resumeFixtureArg = "-mcphost-resume-fixture"

func init() {
	if len(os.Args) < 4 || os.Args[1] != resumeFixtureArg {
		return
	}
	pid := []byte(strconv.Itoa(os.Getpid()) + "\n")
	f, err := os.OpenFile(filepath.Join(os.Args[2], "fixture-pids"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err == nil {
		_, _ = f.Write(pid)
		_ = f.Close()
	}
	os.Exit(fixtures.Main(os.Args[3:], os.Stdin, os.Stdout, os.Stderr))
}

// resumeRun is one mcphost TUI on a pseudo-terminal over the tasks and
// flaky fixtures, both trusted, with an allow rule for tasks/read_context
// (an open-world read): what a person would have set up.
type resumeRun struct {
	dir string
	cmd *exec.Cmd
	p   *pty
}

func startResumeRun(t *testing.T, bin, dir, model string, extra ...string) *resumeRun {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	fixture := self + " " + resumeFixtureArg + " " + dir + " "
	args := append([]string{"--audit", filepath.Join(dir, "audit.jsonl"),
		"--server", "tasks=" + fixture + "tasks",
		"--server", "flaky=" + fixture + "flaky --log " + filepath.Join(dir, "exec.jsonl"),
		"--trust", "tasks", "--trust", "flaky", "--allow", "tasks/read_context",
		"--model", "script:" + filepath.Join(dir, model)}, extra...)
	r := &resumeRun{dir: dir, p: openPTY(t)}
	r.cmd = exec.Command(bin, args...)
	r.cmd.Dir = dir
	r.cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+dir+"/config", "XDG_STATE_HOME="+dir+"/state",
		"NO_COLOR=1", "GORACE=atexit_sleep_ms=0", "TERM=xterm-256color")
	r.cmd.Stdin, r.cmd.Stdout, r.cmd.Stderr = r.p.tty, r.p.tty, r.p.tty
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if r.cmd.ProcessState == nil {
			_ = r.cmd.Process.Kill()
			_ = r.cmd.Wait()
		}
		data, _ := os.ReadFile(filepath.Join(dir, "fixture-pids"))
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil && ours(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	waitUntil(t, "the TUI is drawn", func() bool { return bytes.Contains(r.p.output(), []byte("Write to the model")) })
	return r
}

func (r *resumeRun) send(t *testing.T, text string) {
	t.Helper()
	if _, err := r.p.master.WriteString(text + "\r"); err != nil {
		t.Fatal(err)
	}
}

// TestResumeAfterKill: mcphost is killed (SIGKILL) in the middle of a turn
// of four calls — a closed-world read, an open-world read that returns a
// tool error, a write, and a read still running. Resumed with --continue:
// every call that ran is answered as it ran and the running one as an
// unknown outcome, none as "not run"; the session is tainted as the first
// process was (the status line says so, and the allowed open-world call
// now asks, with the reason tainted-session); the session file is 0600 in
// a 0700 folder.
func TestResumeAfterKill(t *testing.T) {
	bin := buildMcphost(t)
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("model1.jsonl", `{"toolCalls": [{"name": "tasks__get_task", "args": {"id": "T-1"}}, {"name": "tasks__read_context", "args": {"ref": "nowhere"}}, {"name": "flaky__write_record", "args": {"key": "a", "value": "1"}}, {"name": "flaky__hang"}]}`+"\n"+`{"text": "never reached"}`+"\n")
	write("model2.jsonl", `{"toolCalls": [{"name": "tasks__read_context", "args": {"ref": "drive:1"}}]}`+"\n"+`{"text": "done"}`+"\n")

	first := startResumeRun(t, bin, dir, "model1.jsonl")
	first.send(t, "go")
	execLog := filepath.Join(dir, "exec.jsonl")
	waitUntil(t, "the hang call reached the server", func() bool {
		data, _ := os.ReadFile(execLog)
		return bytes.Contains(data, []byte(`"tool":"hang"`))
	})
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.cmd.Wait()

	// What --continue gives the model: the saved session settled from the
	// audit log, as resumeState does.
	sessions := filepath.Join(dir, "state", "mcphost", "sessions")
	sum, err := chatlog.Latest(sessions, dir)
	if err != nil {
		t.Fatal(err)
	}
	checkModes(t, sessions, filepath.Join(sessions, sum.ID+".jsonl"))
	prev, err := chatlog.Load(sessions, sum.ID)
	if err != nil {
		t.Fatal(err)
	}
	taint, _, warn := resumeState(nil, prev, filepath.Join(dir, "audit.jsonl"))
	if warn != "" {
		t.Fatal(warn)
	}
	if !taint.OpenWorld || !taint.PrivateRead {
		t.Errorf("the resumed session's taint is %+v, want both kinds (a closed-world read and an open-world tool error)", taint)
	}
	hist := prev.History()
	last := hist[len(hist)-1]
	if last.Role != "tool" || len(last.ToolResults) != 4 {
		t.Fatalf("the resumed history ends with %+v, want the four calls answered", last)
	}
	for i, want := range []string{
		"[output of the tool tasks__get_task", "[output of the tool tasks__read_context", "[output of the tool flaky__write_record",
		"the outcome of flaky/hang is unknown",
	} {
		if got := last.ToolResults[i].Content; !strings.Contains(got, want) || strings.Contains(got, "not run") {
			t.Errorf("call %d is resumed as %q, want %q", i+1, got, want)
		}
	}
	calls := prev.Calls()
	if len(calls) != 4 || calls[3].Status != host.StatusUnknown || calls[3].CallID == "" || calls[2].Status != host.StatusSuccess {
		t.Errorf("the resumed calls are %+v, want the write a success and the hang unknown, with mcphost's id", calls)
	}

	second := startResumeRun(t, bin, dir, "model2.jsonl", "--continue")
	waitUntil(t, "the resumed status line says the session is tainted", func() bool {
		return bytes.Contains(second.p.output(), []byte("⚠ TAINTED"))
	})
	mark := len(second.p.output())
	second.send(t, "and now")
	waitUntil(t, "the allowed open-world call asks", func() bool {
		return bytes.Contains(second.p.output()[mark:], []byte("Allow once"))
	})
	if err := second.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = second.cmd.Wait()
	asked := false
	for _, r := range auditRecords(t, filepath.Join(dir, "audit.jsonl")) {
		if r["tool"] != "read_context" || r["kind"] != "outcome" {
			continue
		}
		reasons, _ := r["reasons"].([]any)
		for _, x := range reasons {
			asked = asked || x == "tainted-session"
		}
		if r["status"] == "success" {
			t.Errorf("the open-world call ran in the resumed session: %v", r)
		}
	}
	if !asked {
		t.Error("no outcome of the resumed session's read_context names tainted-session")
	}
	if data, _ := os.ReadFile(execLog); bytes.Count(data, []byte(`"tool":"write_record"`)) != 1 {
		t.Errorf("the write ran other than once:\n%s", data)
	}
}

// checkModes requires the session folder 0700 and the file 0600: a chat
// holds tool output.
func checkModes(t *testing.T, dir, file string) {
	t.Helper()
	for path, want := range map[string]os.FileMode{dir: 0o700, file: 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s has mode %o, want %o", path, got, want)
		}
	}
}
