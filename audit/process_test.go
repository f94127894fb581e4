package audit

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Environment of a writer process: the test binary run again by
// TestProcessesAppend.
const (
	writerPathEnv  = "MCPHOST_AUDIT_TEST_WRITER"
	writerIDEnv    = "MCPHOST_AUDIT_TEST_WRITER_ID"
	writerCallsEnv = "MCPHOST_AUDIT_TEST_WRITER_CALLS"
	// The class of the writer's intents, when not the default.
	writerClassEnv = "MCPHOST_AUDIT_TEST_WRITER_CLASS"
	// The path a writer that is killed appends to (TestKilledWriterLosesNothing).
	killedPathEnv = "MCPHOST_AUDIT_TEST_KILLED"
)

func TestMain(m *testing.M) {
	if path := os.Getenv(writerPathEnv); path != "" {
		os.Exit(runWriter(path))
	}
	if path := os.Getenv(killedPathEnv); path != "" {
		os.Exit(runKilled(path))
	}
	os.Exit(m.Run())
}

// runWriter appends an intent and an outcome for each of its calls, syncing
// each, as an mcphost process would.
func runWriter(path string) int {
	id := os.Getenv(writerIDEnv)
	calls, err := strconv.Atoi(os.Getenv(writerCallsEnv))
	if err == nil {
		var l *Log
		if l, err = Open(path, Options{}); err == nil {
			for i := 0; i < calls && err == nil; i++ {
				call := fmt.Sprintf("%s-%d", id, i)
				r := intent(id, call)
				if c := os.Getenv(writerClassEnv); c != "" {
					r.Class = c
				}
				if err = l.Append(r); err == nil {
					err = l.Append(outcome(id, call))
				}
			}
			if cerr := l.Close(); err == nil {
				err = cerr
			}
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "writer %s: %v\n", id, err)
		return 1
	}
	return 0
}

// Several processes, and goroutines of this one, append to one file at
// once: every record lands whole, once, in one contiguous chain.
func TestProcessesAppend(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("appends from several processes need flock")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("cannot find the test binary: %v", err)
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	const procs, calls = 5, 60

	var cmds []*exec.Cmd
	var stderr []*bytes.Buffer
	for p := range procs {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(),
			writerPathEnv+"="+path,
			writerIDEnv+"="+fmt.Sprintf("p%d", p),
			writerCallsEnv+"="+strconv.Itoa(calls))
		stderr = append(stderr, new(bytes.Buffer))
		cmd.Stderr = stderr[p]
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	// This process joins in with two goroutines on its own Log.
	l := open(t, path, Options{})
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Go(func() {
			for i := range calls {
				call := fmt.Sprintf("g%d-%d", g, i)
				if err := l.Append(intent("g", call)); err != nil {
					t.Error(err)
				}
				if err := l.Append(outcome("g", call)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("writer %d: %v: %s", i, err, stderr[i])
		}
	}
	checkComplete(t, path, (procs+2)*calls)
	recs, err := Tail(path, 2*(procs+2)*calls)
	if err != nil {
		t.Fatal(err)
	}
	perSession := map[string]int{}
	for _, r := range recs {
		perSession[r.SessionID]++
	}
	for p := range procs {
		if n := perSession[fmt.Sprintf("p%d", p)]; n != 2*calls {
			t.Errorf("writer p%d: %d records, want %d", p, n, 2*calls)
		}
	}
}

// runKilled appends a read's intent and its outcome, which Append does not
// wait to sync, says so on stdout, and waits to be killed.
func runKilled(path string) int {
	l, err := Open(path, Options{SyncDelay: time.Hour})
	if err == nil {
		r := intent("k", "read-1")
		r.Class = ReadClass
		if err = l.Append(r); err == nil {
			err = l.Append(outcome("k", "read-1"))
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "killed writer: %v\n", err)
		return 1
	}
	fmt.Println("appended")
	_, _ = io.Copy(io.Discard, os.Stdin) // until killed
	return 0
}

// TestKilledWriterLosesNothing: records Append returned for are in the
// file even when the process dies before any sync or Close.
func TestKilledWriterLosesNothing(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("needs a killable subprocess")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("cannot find the test binary: %v", err)
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), killedPathEnv+"="+path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if line != "appended\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("writer said %q (%v): %s", line, err, stderr.String())
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	rep := verifyFile(t, path)
	if !rep.OK() || rep.Records != 2 || rep.Outcomes != 1 {
		t.Errorf("after the writer was killed: %d records, %d outcomes, problems %v; want its intent and outcome", rep.Records, rep.Outcomes, rep.Problems)
	}
}
