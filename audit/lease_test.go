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
	"time"
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

// TestUnsyncedRecordsKeepTheFileLockUntilASync: a record Append does not
// sync (a read's intent, an outcome) keeps the file lock, so that a run of
// reads takes it once rather than twice a call; every sync, an intent's or
// Close's, starts only once the lock is free for other processes, and
// Append releases it before returning from a synced intent.
func TestUnsyncedRecordsKeepTheFileLockUntilASync(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	var freeDuringSync []bool
	l := open(t, path, Options{SyncDelay: never, Sync: func(f *os.File) error {
		freeDuringSync = append(freeDuringSync, lockFree(t, path))
		return f.Sync()
	}})
	read := intent("s1", "call-1")
	read.Class = ReadClass
	mustAppend(t, l, read)
	if lockFree(t, path) {
		t.Error("the file lock is free after a read's intent; want it kept until the next sync")
	}
	mustAppend(t, l, outcome("s1", "call-1"))
	if lockFree(t, path) {
		t.Error("the file lock is free after an outcome; want it kept until the next sync")
	}
	mustAppend(t, l, intent("s1", "call-2"))
	if !lockFree(t, path) {
		t.Error("the file lock is held after a synced intent; want it released before the sync")
	}
	mustAppend(t, l, outcome("s1", "call-2"))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if !lockFree(t, path) {
		t.Error("the file lock is held after Close")
	}
	if len(freeDuringSync) != 2 || !freeDuringSync[0] || !freeDuringSync[1] {
		t.Errorf("file lock free during the syncs: %v; want two syncs (the intent's, Close's), the lock free in both", freeDuringSync)
	}
	checkComplete(t, path, 2)
}

// TestBackgroundSyncReleasesTheFileLock: the background sync that follows
// an unsynced record releases the file lock before it syncs, so another
// process's Append waits at most SyncDelay.
func TestBackgroundSyncReleasesTheFileLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	free := make(chan bool, 16)
	l := open(t, path, Options{SyncDelay: time.Millisecond, Sync: func(f *os.File) error {
		free <- lockFree(t, path)
		return f.Sync()
	}})
	mustAppend(t, l, outcome("s1", "call-1"))
	select {
	case ok := <-free:
		if !ok {
			t.Error("the file lock was held during the background sync; want it released before")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no background sync after an outcome")
	}
	if !lockFree(t, path) {
		t.Error("the file lock is held after the background sync")
	}
}

// TestNoSyncReleasesTheFileLock: without syncs there is no sync to release
// the file lock by, so every Append releases it.
func TestNoSyncReleasesTheFileLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := open(t, path, Options{NoSync: true})
	mustAppend(t, l, outcome("s1", "call-1"))
	if !lockFree(t, path) {
		t.Error("the file lock is held after an Append with NoSync")
	}
}

// TestProcessesAppendReads: several processes append only reads, whose
// records keep the file lock until a background sync, and this one joins
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
