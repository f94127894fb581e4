//go:build unix && !aix && (!solaris || illumos)

package audit

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// lockFree reports whether another open file could take the file lock on
// path at this moment, as another process's Append would.
func lockFree(t *testing.T, path string) bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	switch err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); {
	case err == nil:
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
			t.Fatal(err)
		}
		return true
	case errors.Is(err, syscall.EWOULDBLOCK):
		return false
	default:
		t.Fatal(err)
		return false
	}
}

// TestAppendNeverKeepsTheFileLock: Append holds the file lock for its write
// alone, whatever the record: after a read's intent, an outcome (neither
// synced at once) and a synced intent, another process could lock at once,
// and every sync starts with the lock free. A process stopped between two
// records (Ctrl-Z on the chat, SIGSTOP) so never holds up another's Append.
func TestAppendNeverKeepsTheFileLock(t *testing.T) {
	for _, o := range []Options{{SyncDelay: never}, {NoSync: true}} {
		path := filepath.Join(t.TempDir(), "audit.jsonl")
		var freeDuringSync []bool
		if !o.NoSync {
			o.Sync = func(f *os.File) error {
				freeDuringSync = append(freeDuringSync, lockFree(t, path))
				return f.Sync()
			}
		}
		l := open(t, path, o)
		read := intent("s1", "call-1")
		read.Class = ReadClass
		for i, r := range []*Record{read, outcome("s1", "call-1"), intent("s1", "call-2"), outcome("s1", "call-2")} {
			mustAppend(t, l, r)
			if !lockFree(t, path) {
				t.Errorf("NoSync %v: the file lock is held after record %d (%s); want it free once Append returns", o.NoSync, i+1, r.Kind)
			}
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		for i, free := range freeDuringSync {
			if !free {
				t.Errorf("the file lock was held during sync %d", i+1)
			}
		}
		if !o.NoSync && len(freeDuringSync) != 2 {
			t.Errorf("%d syncs, want two (the intent's, Close's)", len(freeDuringSync))
		}
		checkComplete(t, path, 2)
	}
}

// TestProcessesAppendReads: several processes append only reads, whose
// records are synced in the background, and this one joins
// in: every record lands whole, once, in one contiguous chain.
func TestProcessesAppendReads(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("cannot find the test binary: %v", err)
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	const procs, calls = 4, 100
	var cmds []*exec.Cmd
	for p := range procs {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), writerPathEnv+"="+path, writerIDEnv+"="+fmt.Sprintf("r%d", p),
			writerCallsEnv+"="+strconv.Itoa(calls), writerClassEnv+"="+ReadClass)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	l := open(t, path, Options{})
	for i := range calls {
		call := fmt.Sprintf("here-%d", i)
		r := intent("here", call)
		r.Class = ReadClass
		mustAppend(t, l, r)
		mustAppend(t, l, outcome("here", call))
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	}
	checkComplete(t, path, (procs+1)*calls)
}
