package audit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var errDisk = errors.New("injected: disk failed")

// TestIntentSyncedBeforeAppendReturns: an intent is on disk before Append
// returns — the sync runs after the write of its line, and Append waits
// for it.
func TestIntentSyncedBeforeAppendReturns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	var synced []int64 // file size at each sync
	l := open(t, path, Options{Sync: func(f *os.File) error {
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		synced = append(synced, fi.Size())
		return f.Sync()
	}})
	mustAppend(t, l, intent("s1", "call-1"))
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(synced) != 1 || synced[0] != fi.Size() {
		t.Fatalf("syncs at sizes %v before Append returned; want one, after the intent's %d bytes were written", synced, fi.Size())
	}
	mustAppend(t, l, outcome("s1", "call-1"))
	if len(synced) != 1 {
		t.Errorf("an outcome was synced on its own (%d syncs); only intents wait for the disk", len(synced))
	}
}

// TestAppendSyncFailure: when the sync of an intent fails, Append says so,
// and nothing is appended after it — no outcome can claim the call ran
// when its intent may not be on disk.
func TestAppendSyncFailure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	fail := false
	l := open(t, path, Options{Sync: func(f *os.File) error {
		if fail {
			return errDisk
		}
		return f.Sync()
	}})
	mustAppend(t, l, intent("s1", "call-1"))
	mustAppend(t, l, outcome("s1", "call-1"))
	fail = true
	if err := l.Append(intent("s1", "call-2")); !errors.Is(err, errDisk) {
		t.Fatalf("Append with a failing sync = %v, want the sync's error", err)
	}
	fail = false
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
