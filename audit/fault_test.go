package audit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

var errDisk = errors.New("injected: disk failed")

// syncs is an Options.Sync that does the real sync and keeps, for each
// one, the file's size when it started; it can be made to fail. Syncs run
// on the Log's own goroutine too, hence the lock.
type syncs struct {
	mu    sync.Mutex
	sizes []int64
	fail  error
	ended chan int64 // if set, gets the size of each sync that ended
}

func (s *syncs) sync(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.sizes = append(s.sizes, fi.Size())
	fail := s.fail
	s.mu.Unlock()
	if fail == nil {
		fail = f.Sync()
	}
	if s.ended != nil && fail == nil {
		s.ended <- fi.Size()
	}
	return fail
}

func (s *syncs) at() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sizes)
}

func (s *syncs) setFail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = err
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// never is a SyncDelay no test lasts: background syncs stay out of the way.
const never = time.Hour

// TestIntentSyncedBeforeAppendReturns: the intent of a call that is not a
// read — whatever its class, none included — is on disk before Append
// returns: the sync runs after the write of its line, and Append waits for
// it. An outcome and a read's intent are not waited for.
func TestIntentSyncedBeforeAppendReturns(t *testing.T) {
	for _, class := range []string{"destructive", "additive", "unknown", ""} {
		t.Run("class="+class, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			s := &syncs{}
			l := open(t, path, Options{Sync: s.sync, SyncDelay: never})
			r := intent("s1", "call-1")
			r.Class = class
			mustAppend(t, l, r)
			if got, want := s.at(), []int64{fileSize(t, path)}; !slices.Equal(got, want) {
				t.Fatalf("syncs at sizes %v before Append returned; want %v: one, after the intent's line was written", got, want)
			}
			mustAppend(t, l, outcome("s1", "call-1"))
			read := intent("s1", "call-2")
			read.Class = ReadClass
			mustAppend(t, l, read)
			if got := s.at(); len(got) != 1 {
				t.Errorf("syncs at sizes %v; want only the first intent's: an outcome and a read's intent do not wait for the disk", got)
			}
		})
	}
}

// TestUnwaitedRecordsAreWrittenBeforeAppendReturns: an outcome and a
// read's intent are in the file when Append returns (a crash of the
// process cannot lose them), though not yet synced.
func TestUnwaitedRecordsAreWrittenBeforeAppendReturns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s := &syncs{}
	l := open(t, path, Options{Sync: s.sync, SyncDelay: never})
	read := intent("s1", "call-1")
	read.Class = ReadClass
	mustAppend(t, l, read)
	mustAppend(t, l, outcome("s1", "call-1"))
	rep := verifyFile(t, path)
	if !rep.OK() || rep.Records != 2 || rep.Outcomes != 1 {
		t.Errorf("file after Append returned: %d records, %d outcomes, problems %v; want both records", rep.Records, rep.Outcomes, rep.Problems)
	}
	if got := s.at(); len(got) != 0 {
		t.Errorf("syncs at sizes %v; want none yet", got)
	}
}

// TestBackgroundSyncFollowsUnwaitedRecords: a record Append did not wait
// for is synced on the Log's own, SyncDelay after it was written, without
// another Append or Close.
func TestBackgroundSyncFollowsUnwaitedRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s := &syncs{ended: make(chan int64, 16)}
	l := open(t, path, Options{Sync: s.sync, SyncDelay: time.Millisecond})
	mustAppend(t, l, outcome("s1", "call-1"))
	want := fileSize(t, path)
	select {
	case got := <-s.ended:
		if got != want {
			t.Errorf("background sync at size %d, want %d (after the outcome)", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no background sync after an outcome")
	}
}

// TestCloseSyncsWhatIsLeft: Close syncs the records no sync covered yet.
func TestCloseSyncsWhatIsLeft(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s := &syncs{}
	l := open(t, path, Options{Sync: s.sync, SyncDelay: never})
	mustAppend(t, l, intent("s1", "call-1"))
	mustAppend(t, l, outcome("s1", "call-1"))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := s.at(), fileSize(t, path); len(got) != 2 || got[1] != want {
		t.Errorf("syncs at sizes %v; want the intent's and then Close's at %d", got, want)
	}
}

// TestSyncCountsOnlyEarlierRecords: a sync covers the records written
// before it started; one written while it runs is still unsynced after it.
func TestSyncCountsOnlyEarlierRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	var l *Log
	var during error
	first := true
	l = open(t, path, Options{SyncDelay: never, Sync: func(f *os.File) error {
		if first { // the sync runs without the Log's lock: Appends go on
			first = false
			during = l.Append(outcome("s1", "during"))
		}
		return f.Sync()
	}})
	mustAppend(t, l, intent("s1", "call-1"))
	if during != nil {
		t.Fatalf("Append during a sync: %v", during)
	}
	l.mu.Lock()
	synced, written := l.synced, l.written
	l.mu.Unlock()
	if synced != 1 || written != 2 {
		t.Errorf("after a sync with a record written during it: synced %d of %d, want 1 of 2", synced, written)
	}
}

// TestConcurrentIntentsAreSynced: intents appended at once from many
// goroutines are each on disk when their Append returns, whichever sync
// covered them.
func TestConcurrentIntentsAreSynced(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	var mu sync.Mutex
	var done []int64 // file sizes at syncs that ended
	l := open(t, path, Options{SyncDelay: never, Sync: func(f *os.File) error {
		fi, err := f.Stat()
		if err == nil {
			err = f.Sync()
		}
		if err == nil {
			mu.Lock()
			done = append(done, fi.Size())
			mu.Unlock()
		}
		return err
	}})
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			r := intent("s1", fmt.Sprint(i))
			if err := l.Append(r); err != nil {
				errs <- err
				return
			}
			b, err := os.ReadFile(path)
			if err != nil {
				errs <- err
				return
			}
			end := int64(bytes.Index(b, []byte(r.Hash)) + hashHexLen + len(hashSuffix) + 1)
			mu.Lock()
			covered := slices.ContainsFunc(done, func(size int64) bool { return size >= end })
			mu.Unlock()
			if !covered {
				errs <- fmt.Errorf("intent %d (ending at byte %d) returned before a sync covered it; syncs ended at %v", i, end, done)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	mu.Lock()
	t.Logf("%d intents, %d syncs", n, len(done))
	mu.Unlock()
}

// TestAppendSyncFailure: when the sync of an intent fails, Append says so,
// and nothing is appended after it — no outcome can claim the call ran
// when its intent may not be on disk.
func TestAppendSyncFailure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s := &syncs{}
	l := open(t, path, Options{Sync: s.sync, SyncDelay: never})
	mustAppend(t, l, intent("s1", "call-1"))
	mustAppend(t, l, outcome("s1", "call-1"))
	s.setFail(errDisk)
	if err := l.Append(intent("s1", "call-2")); !errors.Is(err, errDisk) {
		t.Fatalf("Append with a failing sync = %v, want the sync's error", err)
	}
	s.setFail(nil)
	if err := l.Append(outcome("s1", "call-2")); err == nil || !strings.Contains(err.Error(), "earlier sync failed") {
		t.Errorf("Append after a failed sync = %v, want a refusal naming the failed sync", err)
	}
	if err := l.Append(intent("s1", "call-3")); err == nil {
		t.Errorf("an intent was appended after a failed sync")
	}
	rep := verifyFile(t, path)
	if rep.Outcomes != 1 || rep.Records != 3 {
		t.Errorf("log holds %d records, %d outcomes; want the 3 written before and at the failed sync, one outcome", rep.Records, rep.Outcomes)
	}
}

// TestBackgroundSyncFailure: a background sync that fails makes every
// later Append fail, as a failed sync of an intent does.
func TestBackgroundSyncFailure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := open(t, path, Options{SyncDelay: time.Millisecond, Sync: func(*os.File) error { return errDisk }})
	mustAppend(t, l, outcome("s1", "call-1"))
	// Every sync ends with a broadcast on l.cond, and records its failure
	// before it lets go of l.mu.
	failed := make(chan struct{})
	go func() {
		l.mu.Lock()
		for l.failed == nil {
			l.cond.Wait()
		}
		l.mu.Unlock()
		close(failed)
	}()
	select {
	case <-failed:
	case <-time.After(10 * time.Second):
		t.Fatal("no failed background sync recorded after an outcome")
	}
	r := intent("s1", "call-2")
	r.Class = ReadClass
	if err := l.Append(r); err == nil || !strings.Contains(err.Error(), "earlier sync failed") {
		t.Errorf("Append after a failed background sync = %v, want a refusal naming the failed sync", err)
	}
}

// TestAppendWriteFailure: a write that fails is an error from Append, the
// Log knows nothing was added, and the next Append chains to the last
// record that was written.
func TestAppendWriteFailure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := open(t, path, Options{NoSync: true})
	mustAppend(t, l, intent("s1", "call-1"))
	// A descriptor of the same file that cannot write: the lock and the
	// stat work, the write fails as a full or broken disk would.
	ro, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	rw := l.f
	l.f = ro
	err = l.Append(outcome("s1", "call-1"))
	l.f = rw
	if err == nil {
		t.Fatal("Append succeeded though its write failed")
	}
	mustAppend(t, l, outcome("s1", "call-1b"))
	rep := verifyFile(t, path)
	if !rep.OK() || rep.Records != 2 || rep.LastSeq != 2 {
		t.Errorf("after a failed write: %d records, last seq %d, problems %v; want 2, 2, none", rep.Records, rep.LastSeq, rep.Problems)
	}
}

// TestAppendFailsWhenTheLogShrinks: records removed from the end of the
// file while a Log has it open make the next Append fail rather than chain
// to what is left, which would hide the removal.
func TestAppendFailsWhenTheLogShrinks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	hs := &memHeads{}
	l := open(t, path, Options{NoSync: true, Heads: hs})
	for i := range 3 {
		mustAppend(t, l, intent("s1", fmt.Sprint(i)))
	}
	mine := l.Head()
	b, _ := os.ReadFile(path)
	ls := lines(b)
	if err := os.Truncate(path, int64(len(b)-len(ls[2]))); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(intent("s1", "3")); err == nil || !strings.Contains(err.Error(), "records were removed") {
		t.Fatalf("Append after the file shrank = %v, want an error saying records were removed", err)
	}
	if err := l.Append(outcome("s1", "3")); err == nil {
		t.Errorf("a later Append succeeded after the file shrank")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if h := hs.get(t, path); h != mine {
		t.Errorf("recorded head %v, want the log's own last record %v", h, mine)
	}
}

// limitedReader is a file that is never held in memory: size bytes made by
// gen, and an error once more than max bytes in all, a read longer than
// maxRead, or a read of nothing, are asked of it.
type limitedReader struct {
	size           int64
	gen            func(off int64) byte
	read, max      int64
	maxRead, large int64
}

func (r *limitedReader) ReadAt(p []byte, off int64) (int, error) {
	if len(p) == 0 {
		return 0, errors.New("a read of nothing: the reader is not making progress")
	}
	r.read += int64(len(p))
	r.large = max(r.large, int64(len(p)))
	if r.read > r.max {
		return 0, fmt.Errorf("read %d bytes in all, more than the bound %d", r.read, r.max)
	}
	if int64(len(p)) > r.maxRead {
		return 0, fmt.Errorf("one read of %d bytes, more than the bound %d", len(p), r.maxRead)
	}
	if off+int64(len(p)) > r.size {
		return 0, io.EOF
	}
	for i := range p {
		p[i] = r.gen(off + int64(i))
	}
	return len(p), nil
}

// hugeLastLine is a log of two records followed by a 200 MiB line.
func hugeLastLine(t *testing.T) (head []byte, r *limitedReader) {
	t.Helper()
	head, err := os.ReadFile(writeCalls(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	const huge = 200 << 20
	size := int64(len(head)) + huge + 1
	return head, &limitedReader{size: size, max: MaxLine + 2*scanChunk, maxRead: MaxLine + scanChunk, gen: func(off int64) byte {
		switch {
		case off < int64(len(head)):
			return head[off]
		case off == size-1:
			return '\n'
		}
		return 'A'
	}}
}

// TestLongLastLineReadBounded: a last line far longer than any record is
// reported, after reading at most MaxLine and a chunk of it, by every
// reader of the log's end: Open and Append (lastRecord), Tail, CheckHead.
func TestLongLastLineReadBounded(t *testing.T) {
	for name, read := range map[string]func(r *limitedReader) error{
		"lastRecord": func(r *limitedReader) error { _, _, _, err := lastRecord(r, r.size); return err },
		"tail": func(r *limitedReader) error {
			return scanBack(r, r.size, func([]byte, bool) bool { return true })
		},
		"checkHead": func(r *limitedReader) error {
			_, _, err := CheckHead(r, r.size, Head{Seq: 2, Hash: Genesis})
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			_, r := hugeLastLine(t)
			err := read(r)
			if !errors.Is(err, ErrLongLine) {
				t.Fatalf("err = %v, want ErrLongLine", err)
			}
			if want := fmt.Sprintf("ending at byte %d", r.size-1); !strings.Contains(err.Error(), want) {
				t.Errorf("err = %v, want it to say where the line is (%q)", err, want)
			}
			t.Logf("read %d bytes of a %d-byte file, at most %d at a time", r.read, r.size, r.large)
		})
	}
}

// TestOpenRefusesLongLastLine: Open reports the line and what to do,
// instead of loading it.
func TestOpenRefusesLongLastLine(t *testing.T) {
	path := writeCalls(t, 1)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(append(bytes.Repeat([]byte("A"), MaxLine+10), '\n')); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = Open(path, Options{NoSync: true})
	if !errors.Is(err, ErrLongLine) || !strings.Contains(err.Error(), "audit verify") {
		t.Errorf("Open = %v, want ErrLongLine and a pointer to audit verify", err)
	}
	if _, err := Tail(path, 5); !errors.Is(err, ErrLongLine) {
		t.Errorf("Tail = %v, want ErrLongLine", err)
	}
}

// TestScanBackReadsBounded: reading many lines back never reads more than
// MaxLine and a chunk at a time, however far it goes.
func TestScanBackReadsBounded(t *testing.T) {
	line := []byte(`{"v":1,"short":"line"}` + "\n")
	size := int64(3*MaxLine) / int64(len(line)) * int64(len(line))
	r := &limitedReader{size: size, max: size, maxRead: MaxLine + scanChunk, gen: func(off int64) byte {
		return line[off%int64(len(line))]
	}}
	n := 0
	if err := scanBack(r, size, func([]byte, bool) bool { n++; return true }); err != nil {
		t.Fatal(err)
	}
	if want := int(size) / len(line); n != want {
		t.Errorf("scanned %d lines, want %d", n, want)
	}
	if r.large > 2*scanChunk {
		t.Errorf("read up to %d bytes at a time for lines of %d bytes; want at most %d", r.large, len(line), 2*scanChunk)
	}
}
