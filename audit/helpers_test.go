package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// clock returns a fake clock that moves one millisecond per reading.
func clock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Millisecond)
		return t
	}
}

const annotations = `{"present":true,"readOnlyHint":false,"destructiveHint":true,"idempotentHint":null,"openWorldHint":false}`

func intent(session, call string) *Record {
	return &Record{
		Kind: Intent, SessionID: session, CallID: call,
		Server: "tasks", ServerIdentity: HashBytes([]byte("tasks-server --db x.db")), Trusted: true,
		Tool: "delete_task", DefHash: HashBytes([]byte("delete_task v1")),
		Annotations: json.RawMessage(annotations),
		Class:       "destructive", Tier: "T2", Verdict: "allow", DecidedBy: "user:once",
		Reasons: []string{"destructive"},
		Args:    json.RawMessage(`{"id":"t-42"}`),
	}
}

func outcome(session, call string) *Record {
	return &Record{
		Kind: Outcome, SessionID: session, CallID: call,
		Server: "tasks", Trusted: true, Tool: "delete_task",
		Attempts:   []Attempt{{N: 1, Outcome: StatusSuccess, DurationMS: 12}},
		Status:     StatusSuccess,
		DurationMS: 12,
		Result:     json.RawMessage(`{"content":[{"type":"text","text":"deleted t-42"}]}`),
	}
}

func open(t testing.TB, path string, opts Options) *Log {
	t.Helper()
	if opts.Now == nil {
		opts.Now = clock()
	}
	l, err := Open(path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func mustAppend(t testing.TB, l *Log, r *Record) {
	t.Helper()
	if err := l.Append(r); err != nil {
		t.Fatalf("Append(%s %s): %v", r.Kind, r.CallID, err)
	}
}

// writeCalls writes an intent and an outcome for each of n calls to a new
// log and returns its path.
func writeCalls(t testing.TB, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state", "audit.jsonl")
	l := open(t, path, Options{NoSync: true})
	for i := range n {
		call := fmt.Sprintf("call-%d", i+1)
		mustAppend(t, l, intent("s1", call))
		mustAppend(t, l, outcome("s1", call))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func verifyBytes(t testing.TB, b []byte) *Report {
	t.Helper()
	rep, err := Verify(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	return rep
}

func verifyFile(t testing.TB, path string) *Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return verifyBytes(t, b)
}

// lines splits a file into lines, each with its newline.
func lines(b []byte) [][]byte {
	return bytes.SplitAfter(b, []byte("\n"))
}

// at is a problem reduced to where and what, for comparisons.
type at struct {
	Line int
	Kind ProblemKind
}

func problemsAt(rep *Report) []at {
	var out []at
	for _, p := range rep.Problems {
		out = append(out, at{p.Line, p.Kind})
	}
	return out
}
