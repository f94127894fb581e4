package audit

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// memHeads is a HeadStore in memory.
type memHeads struct {
	mu    sync.Mutex
	heads map[string]Head
}

func (m *memHeads) UpdateHead(key string, fn func(Head, bool) (Head, bool)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.heads[key]
	if h, change := fn(old, ok); change {
		if m.heads == nil {
			m.heads = map[string]Head{}
		}
		m.heads[key] = h
	}
	return nil
}

func (m *memHeads) get(t *testing.T, path string) Head {
	t.Helper()
	key, err := HeadKey(path)
	if err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	h, ok := m.heads[key]
	if !ok {
		t.Fatalf("no head recorded for %s", key)
	}
	return h
}

// writeLog appends n intents to the log at path through a Log that
// records its head in hs on Close, and returns that head.
func writeLog(t *testing.T, path string, hs HeadStore, n int) Head {
	t.Helper()
	l, err := Open(path, Options{NoSync: true, Now: clock(), Heads: hs})
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		mustAppend(t, l, intent("s1", "c"))
	}
	h := l.Head()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return h
}

func checkFile(t *testing.T, path string, want Head) (Head, *Problem) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	end, p, err := CheckHead(f, fi.Size(), want)
	if err != nil {
		t.Fatal(err)
	}
	return end, p
}

// cut leaves the first n bytes of the file.
func cut(t *testing.T, path string, n int) {
	t.Helper()
	if err := os.Truncate(path, int64(n)); err != nil {
		t.Fatal(err)
	}
}

// TestCloseRecordsHead: Close records the log's last record, under the
// log's absolute path.
func TestCloseRecordsHead(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	hs := &memHeads{}
	h := writeLog(t, "audit.jsonl", hs, 3)
	if h.Seq != 3 {
		t.Fatalf("head %v, want seq 3", h)
	}
	if got := hs.get(t, filepath.Join(dir, "audit.jsonl")); got != h {
		t.Errorf("recorded %v, want %v", got, h)
	}
	if end, p := checkFile(t, "audit.jsonl", h); p != nil || end != h {
		t.Errorf("CheckHead of the untouched log = %v, %v; want end %v, no problem", end, p, h)
	}
}

// TestCheckHeadDetectsRemovedEnd: records removed from the end of the log,
// however it is done, leave a log that does not hold its recorded head.
func TestCheckHeadDetectsRemovedEnd(t *testing.T) {
	for name, tamper := range map[string]func(t *testing.T, path string, b []byte, ls [][]byte){
		"last two records removed": func(t *testing.T, path string, b []byte, ls [][]byte) {
			cut(t, path, len(b)-len(ls[4])-len(ls[3]))
		},
		"last record cut in half": func(t *testing.T, path string, b []byte, ls [][]byte) {
			cut(t, path, len(b)-len(ls[4])/2)
		},
		"every record removed": func(t *testing.T, path string, b []byte, ls [][]byte) {
			cut(t, path, 0)
		},
		"end replaced by as many new records": func(t *testing.T, path string, b []byte, ls [][]byte) {
			cut(t, path, len(b)-len(ls[4])-len(ls[3]))
			l := open(t, path, Options{NoSync: true})
			mustAppend(t, l, outcome("s9", "forged"))
			mustAppend(t, l, outcome("s9", "forged"))
		},
		"end replaced by more new records": func(t *testing.T, path string, b []byte, ls [][]byte) {
			cut(t, path, len(b)-len(ls[4])-len(ls[3]))
			l := open(t, path, Options{NoSync: true})
			for range 4 {
				mustAppend(t, l, outcome("s9", "forged"))
			}
		},
		"record at the head's seq edited": func(t *testing.T, path string, b []byte, ls [][]byte) {
			i := bytes.LastIndex(b, []byte(`"tool":"`)) + len(`"tool":"`)
			b[i] ^= 0x20
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			hs := &memHeads{}
			h := writeLog(t, path, hs, 5)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			tamper(t, path, b, lines(b))
			_, p := checkFile(t, path, hs.get(t, path))
			if p == nil || p.Kind != ProblemTail {
				t.Fatalf("CheckHead after tampering = %v, want a %q problem", p, ProblemTail)
			}
			t.Log(p)
			// With the hash alone, as a person would keep it.
			if _, p := checkFile(t, path, Head{Hash: h.Hash}); p == nil {
				t.Errorf("CheckHead by hash alone found %.12s… in the tampered log", h.Hash)
			}
		})
	}
}

// TestCheckHeadAcceptsAppends: a log that went on after its recorded head
// holds it.
func TestCheckHeadAcceptsAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	hs := &memHeads{}
	h := writeLog(t, path, hs, 3)
	writeLog(t, path, nil, 4)
	end, p := checkFile(t, path, h)
	if p != nil || end.Seq != 7 {
		t.Errorf("CheckHead = end %v, %v; want end seq 7 and no problem", end, p)
	}
	if _, p := checkFile(t, path, Head{Hash: h.Hash}); p != nil {
		t.Errorf("CheckHead by hash alone: %v", p)
	}
}

// TestSaveHeadNeverBlessesARemovedEnd: a log cut back and written again
// leaves the recorded head as it was, so the cut stays visible however
// many records are written after it.
func TestSaveHeadNeverBlessesARemovedEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	hs := &memHeads{}
	h := writeLog(t, path, hs, 5)
	b, _ := os.ReadFile(path)
	ls := lines(b)
	cut(t, path, len(b)-len(ls[4])-len(ls[3]))
	writeLog(t, path, hs, 6)
	if got := hs.get(t, path); got != h {
		t.Errorf("recorded head %v after the log was cut and written past it; want it kept at %v", got, h)
	}
	if _, p := checkFile(t, path, hs.get(t, path)); p == nil {
		t.Error("the cut log passes CheckHead")
	}
}

// TestSaveHeadNeverGoesBack: a Log that closes with an older view of the
// file (another process appended since) does not move the head back.
func TestSaveHeadNeverGoesBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	hs := &memHeads{}
	writeLog(t, path, hs, 2)
	stale, err := Open(path, Options{NoSync: true, Heads: hs})
	if err != nil {
		t.Fatal(err)
	}
	h := writeLog(t, path, hs, 3)
	if err := stale.Close(); err != nil {
		t.Fatal(err)
	}
	if got := hs.get(t, path); got != h {
		t.Errorf("recorded head %v, want %v, the furthest any writer got", got, h)
	}
}

// TestResetHead records the log's current end whatever was recorded.
func TestResetHead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	hs := &memHeads{}
	writeLog(t, path, hs, 4)
	cut(t, path, 0)
	want := writeLog(t, path, hs, 1)
	got, err := ResetHead(hs, path)
	if err != nil || got != want || hs.get(t, path) != want {
		t.Errorf("ResetHead = %v, %v, recorded %v; want %v", got, err, hs.get(t, path), want)
	}
}

// TestSaveHeadKeepsTheFurthestHead: a Log that closes after records were
// cut from under it, including its own last one, does not replace a
// further head another writer recorded.
func TestSaveHeadKeepsTheFurthestHead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	hs := &memHeads{}
	writeLog(t, path, hs, 2)
	stale, err := Open(path, Options{NoSync: true, Heads: hs})
	if err != nil {
		t.Fatal(err)
	}
	h := writeLog(t, path, hs, 3)
	b, _ := os.ReadFile(path)
	cut(t, path, len(lines(b)[0]))
	if err := stale.Close(); err != nil {
		t.Fatal(err)
	}
	if got := hs.get(t, path); got != h {
		t.Errorf("recorded head %v, want %v, the furthest any writer got", got, h)
	}
}
