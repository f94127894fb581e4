package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "audit.jsonl")
	l := open(t, path, Options{})
	var written []Record
	for i := range 3 {
		call := fmt.Sprintf("call-%d", i+1)
		for _, r := range []*Record{intent("s1", call), outcome("s1", call)} {
			mustAppend(t, l, r)
			written = append(written, *r)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	rep := verifyFile(t, path)
	if !rep.OK() {
		t.Fatalf("Problems = %v, want none", rep.Problems)
	}
	got := [5]int{rep.Lines, rep.Records, rep.Intents, rep.Outcomes, len(rep.OpenIntents) + len(rep.OrphanOutcomes)}
	if want := [5]int{6, 6, 3, 3, 0}; got != want {
		t.Errorf("lines, records, intents, outcomes, unpaired = %v, want %v", got, want)
	}
	if rep.LastSeq != 6 || rep.LastHash != written[5].Hash {
		t.Errorf("LastSeq, LastHash = %d, %s; want 6, %s", rep.LastSeq, rep.LastHash, written[5].Hash)
	}
	for i, r := range written {
		if r.Seq != uint64(i+1) {
			t.Errorf("record %d: Seq = %d, want %d", i, r.Seq, i+1)
		}
		wantPrev := Genesis
		if i > 0 {
			wantPrev = written[i-1].Hash
		}
		if r.Prev != wantPrev {
			t.Errorf("record %d: Prev = %s, want %s", i, r.Prev, wantPrev)
		}
	}

	tail, err := Tail(path, 4)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(written[2:], tail, timeEqual); diff != "" {
		t.Errorf("Tail(4) mismatch (-want +got):\n%s", diff)
	}
	all, err := Tail(path, 100)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(written, all, timeEqual); diff != "" {
		t.Errorf("Tail(100) mismatch (-want +got):\n%s", diff)
	}
	if none, err := Tail(path, 0); err != nil || len(none) != 0 {
		t.Errorf("Tail(0) = %v, %v; want nothing", none, err)
	}
}

var timeEqual = cmp.Comparer(func(a, b Timestamp) bool { return a.Equal(b.Time) })

// The format of a line is a contract with readers outside this package.
func TestLineFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := open(t, path, Options{NoSync: true})
	mustAppend(t, l, intent("s1", "call-1"))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSuffix(string(b), "\n")
	if strings.Contains(line, "\n") {
		t.Fatalf("one record spans several lines: %q", b)
	}
	wantStart := `{"v":1,"seq":1,"time":"2026-03-01T09:30:00.001000000Z","kind":"intent","sessionId":"s1","callId":"call-1",`
	if !strings.HasPrefix(line, wantStart) {
		t.Errorf("line starts %.120s, want %s", line, wantStart)
	}
	if want := `"annotations":` + annotations + `,`; !strings.Contains(line, want) {
		t.Errorf("line %s does not keep annotations as received: want %s", line, want)
	}
	// The documented hash: SHA-256 of the line without its "hash" member.
	i := strings.LastIndex(line, `,"hash":"`)
	if i < 0 || len(line)-i != 75 {
		t.Fatalf("line does not end with a 75-byte hash member: %s", line)
	}
	if got, want := line[i+9:i+9+64], HashBytes([]byte(line[:i]+"}")); got != want {
		t.Errorf("hash = %s, want %s", got, want)
	}
	if !strings.Contains(line, `,"prev":"`+Genesis+`","hash":"`) {
		t.Errorf("prev is not the genesis value just before hash: %s", line)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("line is not JSON: %v", err)
	}
}

func TestOpenIntentIsNotAProblem(t *testing.T) {
	path := writeCalls(t, 2)
	l := open(t, path, Options{})
	crashed := intent("s2", "call-9")
	mustAppend(t, l, crashed)
	mustAppend(t, l, outcome("s1", "call-unknown")) // an outcome with no intent

	rep := verifyFile(t, path)
	if !rep.OK() {
		t.Fatalf("Problems = %v, want none", rep.Problems)
	}
	if len(rep.OpenIntents) != 1 || rep.OpenIntents[0].Line != 5 || rep.OpenIntents[0].Record.CallID != "call-9" {
		t.Errorf("OpenIntents = %+v, want the intent for call-9 on line 5", rep.OpenIntents)
	}
	if got, want := rep.OpenIntents[0].String(), "line 5: intent s2/call-9 tasks/delete_task seq 5"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if len(rep.OrphanOutcomes) != 1 || rep.OrphanOutcomes[0].Line != 6 {
		t.Errorf("OrphanOutcomes = %+v, want the outcome on line 6", rep.OrphanOutcomes)
	}
}

// A process that dies mid-write leaves a line with no newline; the next
// Append, from this Log or another, starts a fresh line and chains to the
// last whole record, and Verify reports only the cut line.
func TestPartialLineFromCrash(t *testing.T) {
	for _, sameLog := range []bool{true, false} {
		t.Run(fmt.Sprintf("sameLog=%v", sameLog), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			l := open(t, path, Options{})
			mustAppend(t, l, intent("s1", "call-1"))
			mustAppend(t, l, outcome("s1", "call-1"))

			var cut bytes.Buffer
			r := intent("s1", "call-2")
			r.Seq, r.Prev, r.V = 3, Genesis, 1
			b, _ := appendLine(nil, r)
			cut.Write(b[:len(b)/2])
			appendRaw(t, path, cut.Bytes())

			if !sameLog {
				l = open(t, path, Options{})
			}
			mustAppend(t, l, intent("s1", "call-2"))
			mustAppend(t, l, outcome("s1", "call-2"))
			rep := verifyFile(t, path)
			if diff := cmp.Diff([]at{{3, ProblemTruncated}}, problemsAt(rep)); diff != "" {
				t.Errorf("problems (-want +got):\n%s\n%v", diff, rep.Problems)
			}
			if rep.Records != 4 || rep.LastSeq != 4 || len(rep.OpenIntents) != 0 {
				t.Errorf("Records, LastSeq, open = %d, %d, %d; want 4, 4, 0", rep.Records, rep.LastSeq, len(rep.OpenIntents))
			}
		})
	}
}

// A write that stopped just before its newline left a whole record: the
// next record chains to it.
func TestRecordWithoutNewline(t *testing.T) {
	path := writeCalls(t, 1)
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, bytes.TrimSuffix(b, []byte("\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	if rep := verifyFile(t, path); !rep.OK() || rep.Records != 2 {
		t.Fatalf("before append: Records = %d, Problems = %v; want 2, none", rep.Records, rep.Problems)
	}
	l := open(t, path, Options{})
	mustAppend(t, l, intent("s1", "call-2"))
	rep := verifyFile(t, path)
	if !rep.OK() || rep.Records != 3 || rep.LastSeq != 3 {
		t.Errorf("Records = %d, LastSeq = %d, Problems = %v; want 3, 3, none", rep.Records, rep.LastSeq, rep.Problems)
	}
}

func TestOpenRefusesOtherFiles(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"text":        "hello\nworld\n",
		"json lines":  `{"a":1}` + "\n",
		"no hash":     `{"v":1,"seq":1}` + "\n",
		"binary tail": "\x00\x01\x02",
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if l, err := Open(path, Options{}); !errors.Is(err, ErrNotLog) {
			if l != nil {
				l.Close()
			}
			t.Errorf("%s: Open error = %v, want ErrNotLog", name, err)
		}
	}
	if _, err := Open(dir, Options{}); err == nil {
		t.Errorf("Open(a directory) succeeded")
	}
	// The start of a first record, cut by a crash, is a log.
	path := filepath.Join(dir, "cut")
	if err := os.WriteFile(path, []byte(`{"v":1,"seq":1,"ti`), 0o600); err != nil {
		t.Fatal(err)
	}
	l := open(t, path, Options{})
	mustAppend(t, l, intent("s1", "call-1"))
	rep := verifyFile(t, path)
	if diff := cmp.Diff([]at{{1, ProblemTruncated}}, problemsAt(rep)); diff != "" || rep.LastSeq != 1 {
		t.Errorf("LastSeq = %d, problems (-want +got):\n%s", rep.LastSeq, diff)
	}
}

func TestPermissions(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permissions")
	}
	dir := filepath.Join(t.TempDir(), "state")
	path := filepath.Join(dir, "mcphost", "audit.jsonl")
	open(t, path, Options{})
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700 | os.ModeDir, dir: 0o700 | os.ModeDir} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode()&^want != 0 {
			t.Errorf("%s: mode %v, want at most %v", filepath.Base(p), fi.Mode(), want)
		}
	}
}

func TestRecordData(t *testing.T) {
	args := json.RawMessage(`{"path":"docs/x.md","token":"tok-123456","headers":{"Authorization":"Bearer abcdefghijklmnopqrstuvwxyz012345"}}`)
	result := json.RawMessage(`{"content":[{"type":"text","text":"ok ghp_abcdefghijklmnopqrstuvwxyz0123456789"}]}`)
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprintf("RecordData=%v", keep), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			l := open(t, path, Options{RecordData: keep})
			in := intent("s1", "call-1")
			in.Args = args
			mustAppend(t, l, in)
			out := outcome("s1", "call-1")
			out.Result = result
			out.Attempts = []Attempt{
				{N: 1, Outcome: StatusUnknown, Detail: "POST failed: Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345", DurationMS: 5},
				{N: 2, Outcome: StatusSuccess, Detail: strings.Repeat("é", MaxDetail), DurationMS: 7},
			}
			mustAppend(t, l, out)

			b, _ := os.ReadFile(path)
			for _, secret := range []string{"tok-123456", "abcdefghijklmnopqrstuvwxyz012345", "ghp_abcdef"} {
				if bytes.Contains(b, []byte(secret)) {
					t.Errorf("log contains secret %q:\n%s", secret, b)
				}
			}
			if in.ArgsHash != HashBytes(args) || in.ArgsSize != int64(len(args)) {
				t.Errorf("ArgsHash, ArgsSize = %s, %d; want the hash and size of the arguments", in.ArgsHash, in.ArgsSize)
			}
			if out.ResultHash != HashBytes(result) || out.ResultSize != int64(len(result)) {
				t.Errorf("ResultHash, ResultSize = %s, %d; want the hash and size of the result", out.ResultHash, out.ResultSize)
			}
			if d := out.Attempts[1].Detail; len(d) > MaxDetail || !strings.HasSuffix(d, "…") || !json.Valid([]byte(`"`+d+`"`)) {
				t.Errorf("long detail not cut cleanly: %d bytes, ends %q", len(d), d[len(d)-8:])
			}
			recs, err := Tail(path, 2)
			if err != nil {
				t.Fatal(err)
			}
			if keep {
				want := `{"path":"docs/x.md","token":"[REDACTED]","headers":{"Authorization":"[REDACTED]"}}`
				if got := string(recs[0].Args); got != want {
					t.Errorf("stored args = %s, want %s", got, want)
				}
				if !bytes.Contains(recs[1].Result, []byte(`ok [REDACTED]`)) {
					t.Errorf("stored result = %s, want the token redacted", recs[1].Result)
				}
			} else if recs[0].Args != nil || recs[1].Result != nil || bytes.Contains(b, []byte(`"args"`)) {
				t.Errorf("raw data stored without RecordData: %s", b)
			}
			if rep := verifyFile(t, path); !rep.OK() {
				t.Errorf("Problems = %v", rep.Problems)
			}
		})
	}
}

func TestSecrets(t *testing.T) {
	const env, header = "s3cr3t-env-value", "team-header-value"
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := open(t, path, Options{RecordData: true, Secrets: []string{header, env, "abc", ""}})
	r := intent("s1", "call-1")
	r.Args = json.RawMessage(`{"cmd":"echo s3cr3t-env-value","n":12345,"abc":"abcd"}`)
	reasons := []string{"blocked: " + header}
	r.Reasons = reasons
	mustAppend(t, l, r)
	o := outcome("s1", "call-1")
	o.Attempts[0].Detail = `spawn failed: env K=s3cr3t-env-value`
	o.Result = json.RawMessage(`{"text":"{\"h\":\"team-header-value\"}"}`)
	mustAppend(t, l, o)

	b, _ := os.ReadFile(path)
	for _, secret := range []string{env, header} {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("log contains %q:\n%s", secret, b)
		}
	}
	if reasons[0] != "blocked: "+header {
		t.Errorf("Append changed the caller's Reasons slice: %q", reasons[0])
	}
	if want := `{"cmd":"echo [REDACTED]","n":12345,"abc":"abcd"}`; string(r.Args) != want {
		t.Errorf("Args = %s, want %s (short secrets ignored)", r.Args, want)
	}
	if rep := verifyFile(t, path); !rep.OK() {
		t.Errorf("Problems = %v", rep.Problems)
	}
}

func TestLimits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := open(t, path, Options{RecordData: true, NoSync: true})
	big := json.RawMessage(`"` + strings.Repeat("<", MaxData) + `"`)
	r := intent("s1", "call-1")
	r.Args = big
	r.Annotations = json.RawMessage(`{"x":"` + strings.Repeat("a", MaxAnnotations) + `"}`)
	mustAppend(t, l, r)
	if want := fmt.Sprintf(`"[omitted: %d bytes]"`, len(big)); string(r.Args) != want {
		t.Errorf("Args = %.40s, want %s", r.Args, want)
	}
	if !strings.HasPrefix(string(r.Annotations), `"[omitted: `) {
		t.Errorf("Annotations = %.40s, want omitted", r.Annotations)
	}
	// Within MaxData, but its JSON escaping would make the line too long:
	// the bulk fields are dropped rather than the record.
	r = outcome("s1", "call-1")
	r.Args = json.RawMessage(`"` + strings.Repeat("<", MaxData-100) + `"`)
	r.Result = json.RawMessage(`["` + strings.Repeat("<", MaxData-100) + `"]`)
	r.Annotations = json.RawMessage(`"` + strings.Repeat("<", MaxAnnotations-100) + `"`)
	r.Reasons = []string{strings.Repeat("&", MaxLine/8)}
	mustAppend(t, l, r)
	if !strings.HasPrefix(string(r.Result), `"[omitted: `) {
		t.Errorf("Result = %.40s, want omitted", r.Result)
	}
	// Too large whatever is dropped: refused, nothing written.
	r = outcome("s1", "call-2")
	r.Reasons = []string{strings.Repeat("x", MaxLine)}
	if err := l.Append(r); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Append(huge) = %v, want ErrTooLarge", err)
	}
	if rep := verifyFile(t, path); !rep.OK() || rep.Records != 2 {
		t.Errorf("Records = %d, Problems = %v; want 2, none", rep.Records, rep.Problems)
	}
}

func TestAppendErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := open(t, path, Options{})
	if err := l.Append(&Record{Kind: "started"}); err == nil {
		t.Errorf("Append(kind started) succeeded")
	}
	bad := intent("s1", "call-1")
	bad.Annotations = json.RawMessage(`{"readOnlyHint":`)
	if err := l.Append(bad); err == nil {
		t.Errorf("Append(invalid annotations) succeeded")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if err := l.Append(intent("s1", "call-1")); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close = %v, want ErrClosed", err)
	}
	if fi, _ := os.Stat(path); fi.Size() != 0 {
		t.Errorf("failed appends wrote %d bytes", fi.Size())
	}
}

func TestConcurrentGoroutines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := open(t, path, Options{NoSync: true})
	const workers, calls = 8, 40
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range calls {
				call := fmt.Sprintf("w%d-%d", w, i)
				if err := l.Append(intent("s1", call)); err != nil {
					t.Error(err)
				}
				if err := l.Append(outcome("s1", call)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	checkComplete(t, path, workers*calls)
}

// Two Logs on one file, as two processes would have, alternating: each
// must notice the other's records.
func TestTwoLogsOneFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a := open(t, path, Options{NoSync: true})
	b := open(t, path, Options{NoSync: true})
	for i := range 5 {
		mustAppend(t, a, intent("a", fmt.Sprint(i)))
		mustAppend(t, b, intent("b", fmt.Sprint(i)))
		mustAppend(t, b, outcome("b", fmt.Sprint(i)))
		mustAppend(t, a, outcome("a", fmt.Sprint(i)))
	}
	checkComplete(t, path, 10)

	// And at the same time, from many goroutines.
	var wg sync.WaitGroup
	for w, l := range []*Log{a, b, a, b} {
		wg.Go(func() {
			for i := range 25 {
				call := fmt.Sprintf("w%d-%d", w, i)
				if err := l.Append(intent("c", call)); err != nil {
					t.Error(err)
				}
				if err := l.Append(outcome("c", call)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	checkComplete(t, path, 10+100)
}

// checkComplete verifies that the log at path holds exactly calls complete
// calls, with a contiguous chain.
func checkComplete(t *testing.T, path string, calls int) {
	t.Helper()
	rep := verifyFile(t, path)
	if !rep.OK() {
		t.Fatalf("%d problems, the first: %v", len(rep.Problems), rep.Problems[:min(5, len(rep.Problems))])
	}
	if rep.Lines != 2*calls || rep.Records != 2*calls || rep.LastSeq != uint64(2*calls) ||
		rep.Intents != calls || len(rep.OpenIntents) != 0 || len(rep.OrphanOutcomes) != 0 {
		t.Errorf("lines %d, records %d, last seq %d, intents %d, open %d, orphans %d; want %d records, all paired",
			rep.Lines, rep.Records, rep.LastSeq, rep.Intents, len(rep.OpenIntents), len(rep.OrphanOutcomes), 2*calls)
	}
}

func TestTimestamp(t *testing.T) {
	in := time.Date(2026, 3, 1, 10, 30, 0, 5, time.FixedZone("x", 3600))
	b, err := json.Marshal(Timestamp{in})
	if err != nil {
		t.Fatal(err)
	}
	if want := `"2026-03-01T09:30:00.000000005Z"`; string(b) != want {
		t.Errorf("Marshal = %s, want %s", b, want)
	}
	var out Timestamp
	if err := json.Unmarshal(b, &out); err != nil || !out.Equal(in) {
		t.Errorf("Unmarshal = %v, %v; want %v", out, err, in)
	}
	if _, err := json.Marshal(Timestamp{time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}); err == nil {
		t.Errorf("Marshal(year 10000) succeeded")
	}
}

func appendRaw(t testing.TB, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
