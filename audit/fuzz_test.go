package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"unicode/utf8"

	"pgregory.net/rapid"
)

// FuzzVerify reads arbitrary bytes as a log: Verify never panics and its
// report is consistent. The same bytes then become the fields of records
// appended to a real log, which must always verify, and which, cut at any
// byte, reports at most one truncated last line.
func FuzzVerify(f *testing.F) {
	seedLog, err := os.ReadFile(writeCalls(f, 2))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range [][]byte{
		nil, []byte("\n"), []byte("{}\n"), seedLog, seedLog[:len(seedLog)-20],
		append(bytes.Clone(seedLog), seedLog...),
		[]byte(`{"v":1,"seq":1,"kind":"intent","prev":"` + Genesis + `","hash":"` + Genesis + `"}` + "\n"),
		[]byte(`{"token":"x","args":[1,2,"Bearer abcdefghijklmnop1234"]}`),
	} {
		f.Add(s)
	}
	path := filepath.Join(f.TempDir(), "audit.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFuzzInput(t, path, data)
	})
}

func checkFuzzInput(t testing.TB, path string, data []byte) {
	{
		rep, err := Verify(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("Verify: %v", err)
		}
		checkReport(t, rep)

		// One file for all inputs: creating files is slow on some systems.
		if err := os.Truncate(path, 0); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		l, err := Open(path, Options{Now: clock(), NoSync: true, RecordData: len(data)%2 == 0})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		parts := bytes.SplitN(data, []byte{0}, 4)
		for i, p := range parts {
			r := intent(string(p), fmt.Sprint(i))
			r.Tool, r.Reasons = string(p), []string{string(p)}
			if json.Valid(p) {
				r.Annotations, r.Args = p, p
			}
			if err := l.Append(r); err != nil {
				t.Fatalf("Append: %v", err)
			}
			o := outcome(string(p), fmt.Sprint(i))
			o.Attempts[0].Detail = string(p)
			o.Result = json.RawMessage(fmt.Sprintf("%q", p))
			if err := l.Append(o); err != nil {
				t.Fatalf("Append: %v", err)
			}
		}
		written, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rep = verifyBytes(t, written)
		if !rep.OK() || rep.Records != 2*len(parts) || len(rep.OpenIntents) != 0 {
			t.Fatalf("appended log: %d records, problems %v, open %d; want %d records, none, 0\n%s",
				rep.Records, rep.Problems, len(rep.OpenIntents), 2*len(parts), written)
		}
		cut := len(data) % (len(written) + 1)
		checkCut(t, written, cut)
	}
}

// checkReport checks what holds for the report of any input.
func checkReport(t testing.TB, rep *Report) {
	t.Helper()
	if rep.Records > rep.Lines || rep.Intents+rep.Outcomes > rep.Records {
		t.Fatalf("lines %d, records %d, intents %d, outcomes %d", rep.Lines, rep.Records, rep.Intents, rep.Outcomes)
	}
	for i, p := range rep.Problems {
		if p.Line < 1 || p.Line > rep.Lines || (i > 0 && p.Line < rep.Problems[i-1].Line) || p.Kind == "" || p.Msg == "" {
			t.Fatalf("problem %d out of place: %v (lines %d)", i, p, rep.Lines)
		}
		if !utf8.ValidString(p.Msg) {
			t.Fatalf("problem message is not UTF-8: %q", p.Msg)
		}
	}
	if len(rep.LastHash) != 64 {
		t.Fatalf("LastHash %q", rep.LastHash)
	}
}

// checkCut checks that a log produced by Append, cut after n bytes, reports
// nothing when cut at the end of a record, and otherwise one truncated
// record on its last line.
func checkCut(t testing.TB, log []byte, n int) {
	t.Helper()
	cut := log[:n]
	rep := verifyBytes(t, cut)
	whole := n == 0 || cut[n-1] == '\n' || (n < len(log) && log[n] == '\n')
	var want []at
	if !whole {
		want = []at{{bytes.Count(cut, []byte("\n")) + 1, ProblemTruncated}}
	}
	if got := problemsAt(rep); !slices.Equal(got, want) {
		t.Fatalf("log cut at %d of %d: problems %v, want %v", n, len(log), rep.Problems, want)
	}
}

// Any single changed byte is reported, on the line where it is.
func TestPropertyAnyByteChanged(t *testing.T) {
	log, err := os.ReadFile(writeCalls(t, 3))
	if err != nil {
		t.Fatal(err)
	}
	rapid.Check(t, func(t *rapid.T) {
		i := rapid.IntRange(0, len(log)-1).Draw(t, "offset")
		x := rapid.ByteRange(1, 255).Draw(t, "xor")
		b := bytes.Clone(log)
		b[i] ^= x
		rep, err := Verify(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		line := bytes.Count(log[:i], []byte("\n")) + 1
		if len(rep.Problems) == 0 || rep.Problems[0].Line != line {
			t.Fatalf("byte %d (line %d) changed from %q to %q: problems %v", i, line, log[i], b[i], rep.Problems)
		}
	})
}

// Removing any line but the last is reported at the line that took its
// place; removing the last shows only in LastSeq and LastHash, which is why
// those are worth keeping elsewhere.
func TestPropertyLineRemoved(t *testing.T) {
	log, err := os.ReadFile(writeCalls(t, 4))
	if err != nil {
		t.Fatal(err)
	}
	ls := lines(log)
	ls = ls[:len(ls)-1]
	full := verifyBytes(t, log)
	rapid.Check(t, func(t *rapid.T) {
		k := rapid.IntRange(0, len(ls)-1).Draw(t, "line")
		rep, err := Verify(bytes.NewReader(bytes.Join(slices.Delete(slices.Clone(ls), k, k+1), nil)))
		if err != nil {
			t.Fatal(err)
		}
		var want []at
		if k < len(ls)-1 {
			want = []at{{k + 1, ProblemMissing}}
		}
		if got := problemsAt(rep); !slices.Equal(got, want) {
			t.Fatalf("line %d removed: problems %v, want %v", k+1, rep.Problems, want)
		}
		if k == len(ls)-1 && (rep.LastSeq != full.LastSeq-1 || rep.LastHash == full.LastHash) {
			t.Fatalf("last line removed: LastSeq %d, want %d", rep.LastSeq, full.LastSeq-1)
		}
	})
}

// Appends interleaved with crashes (a random prefix of a line written
// without its end) give a log whose only problems are the cut lines.
func TestPropertyCrashes(t *testing.T) {
	dir, runs := t.TempDir(), 0
	rapid.Check(t, func(t *rapid.T) {
		runs++
		path := filepath.Join(dir, fmt.Sprintf("audit-%d.jsonl", runs))
		l, err := Open(path, Options{Now: clock(), NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		var want []at
		line, records, cutShort := 0, 0, false
		for i := range rapid.IntRange(1, 12).Draw(t, "steps") {
			r := intent("s", fmt.Sprint(i))
			if rapid.Bool().Draw(t, "crash") {
				// What a writer that died mid-write leaves: the start of its
				// line, after a newline if the file did not end with one.
				r.V, r.Seq, r.Prev = 1, 99, Genesis
				var b []byte
				if cutShort {
					b = []byte("\n")
				}
				start := len(b)
				b, _ = appendLine(b, r)
				n := rapid.IntRange(start+1, len(b)-2).Draw(t, "cut")
				cutShort = true
				f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.Write(b[:n])
				f.Close()
				line++
				want = append(want, at{line, ProblemTruncated})
				continue
			}
			if err := l.Append(r); err != nil {
				t.Fatal(err)
			}
			line++
			records++
			cutShort = false
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Verify(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if got := problemsAt(rep); !slices.Equal(got, want) || rep.Records != records || rep.LastSeq != uint64(records) {
			t.Fatalf("problems %v, want %v; records %d, last seq %d, want %d\n%s", rep.Problems, want, rep.Records, rep.LastSeq, records, b)
		}
	})
}
