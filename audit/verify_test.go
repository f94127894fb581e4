package audit

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Each way of damaging a log of six records (three calls) must be reported
// at the line where it happened, and only there.
func TestVerifyTampering(t *testing.T) {
	path := writeCalls(t, 3)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		edit    func(ls [][]byte) [][]byte // ls[i] is line i+1, newline included
		want    []at
		records int
	}{
		{"intact", nil, nil, 6},
		{"byte changed in a field", func(ls [][]byte) [][]byte {
			ls[2] = bytes.Replace(ls[2], []byte(`"tool":"delete_task"`), []byte(`"tool":"delete_tasl"`), 1)
			return ls
		}, []at{{3, ProblemEdited}}, 6},
		{"seq changed", func(ls [][]byte) [][]byte {
			ls[3] = bytes.Replace(ls[3], []byte(`"seq":4,`), []byte(`"seq":9,`), 1)
			return ls
		}, []at{{4, ProblemEdited}}, 6},
		{"prev changed", func(ls [][]byte) [][]byte {
			i := bytes.Index(ls[3], []byte(`"prev":"`)) + 8
			ls[3][i] = map[bool]byte{true: '1', false: '0'}[ls[3][i] == '0']
			return ls
		}, []at{{4, ProblemEdited}}, 6},
		{"hash changed", func(ls [][]byte) [][]byte {
			i := bytes.LastIndex(ls[1], []byte(`"}`)) - 1
			ls[1][i] ^= 1
			return ls
		}, []at{{2, ProblemEdited}}, 6},
		{"edited and re-hashed", func(ls [][]byte) [][]byte {
			ls[2] = rehash(t, bytes.Replace(ls[2], []byte(`"verdict":"allow"`), []byte(`"verdict":"deny"`), 1))
			return ls
		}, []at{{4, ProblemChain}}, 6},
		{"line removed", func(ls [][]byte) [][]byte {
			return slices.Delete(ls, 2, 3)
		}, []at{{3, ProblemMissing}}, 5},
		{"two lines removed", func(ls [][]byte) [][]byte {
			return slices.Delete(ls, 2, 4)
		}, []at{{3, ProblemMissing}}, 4},
		{"first line removed", func(ls [][]byte) [][]byte {
			return ls[1:]
		}, []at{{1, ProblemMissing}}, 5},
		{"two lines swapped", func(ls [][]byte) [][]byte {
			ls[2], ls[3] = ls[3], ls[2]
			return ls
		}, []at{{3, ProblemReordered}, {4, ProblemReordered}}, 6},
		{"line moved to the end", func(ls [][]byte) [][]byte {
			l := ls[1]
			return append(slices.Delete(ls, 1, 2), l)
		}, []at{{2, ProblemReordered}, {6, ProblemReordered}}, 6},
		{"line duplicated", func(ls [][]byte) [][]byte {
			return slices.Insert(ls, 3, ls[2])
		}, []at{{4, ProblemDuplicate}}, 7},
		{"line copied to the end", func(ls [][]byte) [][]byte {
			return append(ls, ls[1])
		}, []at{{7, ProblemReordered}}, 7},
		{"record appended by hand, hash copied", func(ls [][]byte) [][]byte {
			forged := bytes.Replace(ls[5], []byte(`"seq":6,`), []byte(`"seq":7,`), 1)
			forged = bytes.Replace(forged, []byte(`"call-3"`), []byte(`"call-4"`), 1)
			return append(ls, forged)
		}, []at{{7, ProblemEdited}}, 7},
		{"record appended by hand, no hash", func(ls [][]byte) [][]byte {
			return append(ls, []byte(`{"v":1,"seq":7,"kind":"outcome","prev":"`+Genesis+`"}`+"\n"))
		}, []at{{7, ProblemMalformed}}, 6},
		{"garbage line inserted", func(ls [][]byte) [][]byte {
			return slices.Insert(ls, 2, []byte("rm -rf /\n"))
		}, []at{{3, ProblemMalformed}}, 6},
		{"empty line inserted", func(ls [][]byte) [][]byte {
			return slices.Insert(ls, 2, []byte("\n"))
		}, []at{{3, ProblemMalformed}}, 6},
		{"two lines joined", func(ls [][]byte) [][]byte {
			ls[2] = append(bytes.TrimSuffix(ls[2], []byte("\n")), ls[3]...)
			return slices.Delete(ls, 3, 4)
		}, []at{{3, ProblemMalformed}, {4, ProblemMissing}}, 4},
		{"truncated mid-line", func(ls [][]byte) [][]byte {
			ls[5] = ls[5][:len(ls[5])/2]
			return ls
		}, []at{{6, ProblemTruncated}}, 5},
		{"truncated to a few bytes of the last line", func(ls [][]byte) [][]byte {
			ls[5] = ls[5][:3]
			return ls
		}, []at{{6, ProblemTruncated}}, 5},
		{"truncated before the last newline", func(ls [][]byte) [][]byte {
			ls[5] = bytes.TrimSuffix(ls[5], []byte("\n"))
			return ls
		}, nil, 6},
		{"middle record cut short", func(ls [][]byte) [][]byte {
			ls[2] = append(ls[2][:len(ls[2])/2], '\n')
			return ls
		}, []at{{3, ProblemTruncated}, {4, ProblemMissing}}, 5},
		{"second chain appended", func(ls [][]byte) [][]byte {
			return append(ls, ls...)
		}, []at{{7, ProblemReordered}, {8, ProblemReordered}, {9, ProblemReordered},
			{10, ProblemReordered}, {11, ProblemReordered}, {12, ProblemDuplicate}}, 12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ls := lines(bytes.Clone(orig))
			ls = ls[:len(ls)-1] // the empty string after the last newline
			for i := range ls {
				ls[i] = bytes.Clone(ls[i])
			}
			if tt.edit != nil {
				ls = tt.edit(ls)
			}
			rep := verifyBytes(t, bytes.Join(ls, nil))
			if diff := cmp.Diff(tt.want, problemsAt(rep)); diff != "" {
				t.Errorf("problems (-want +got):\n%s\n%s", diff, problemList(rep))
			}
			if rep.Records != tt.records {
				t.Errorf("Records = %d, want %d", rep.Records, tt.records)
			}
		})
	}
}

// rehash gives an edited line the hash of its new content, as someone
// covering their tracks would.
func rehash(t *testing.T, line []byte) []byte {
	t.Helper()
	line = bytes.TrimSuffix(line, []byte("\n"))
	cut := len(line) - trailerLen
	body := append(bytes.Clone(line[:cut]), '}')
	out := append(line[:cut:cut], `,"hash":"`+HashBytes(body)+`"}`+"\n"...)
	if r, computed, err := parseLine(out[:len(out)-1]); err != nil || computed != r.Hash {
		t.Fatalf("rehash: %v, hash %s, want %s", err, r.Hash, computed)
	}
	return out
}

func problemList(rep *Report) string {
	var b strings.Builder
	for _, p := range rep.Problems {
		b.WriteString(p.String() + "\n")
	}
	return b.String()
}

func TestVerifyMessages(t *testing.T) {
	path := writeCalls(t, 3)
	b, _ := os.ReadFile(path)
	ls := lines(b)
	rep := verifyBytes(t, bytes.Join(slices.Delete(ls, 2, 3), nil))
	want := "line 3: missing records: seq jumps from 2 (line 2) to 4: record 3 is missing"
	if got := rep.Problems[0].String(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestVerifyEdges(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   string
		want []at
	}{
		{"empty", "", nil},
		{"one newline", "\n", []at{{1, ProblemMalformed}}},
		{"not json", "hello", []at{{1, ProblemMalformed}}},
		{"a fragment", `{"v`, []at{{1, ProblemTruncated}}},
		{"json without record", `{"v":1}` + "\n", []at{{1, ProblemMalformed}}},
		{"long line", strings.Repeat("x", MaxLine+10) + "\n" + "y", []at{{1, ProblemMalformed}, {2, ProblemMalformed}}},
		{"long last line", `{"v":` + strings.Repeat("x", MaxLine+10), []at{{1, ProblemTruncated}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rep := verifyBytes(t, []byte(tt.in))
			if diff := cmp.Diff(tt.want, problemsAt(rep)); diff != "" {
				t.Errorf("problems (-want +got):\n%s\n%s", diff, problemList(rep))
			}
			if rep.Records != 0 || rep.LastHash != Genesis {
				t.Errorf("Records, LastHash = %d, %s; want 0, genesis", rep.Records, rep.LastHash)
			}
		})
	}
}

// A record from a newer version, with fields this version does not know,
// still verifies: the hash covers bytes, not the fields this package knows.
func TestVerifyNewerVersion(t *testing.T) {
	body := `{"v":2,"seq":1,"time":"2026-03-01T09:30:00.000000000Z","kind":"checkpoint","future":{"x":[1,2]},"prev":"` + Genesis + `"}`
	line := body[:len(body)-1] + `,"hash":"` + HashBytes([]byte(body)) + `"}` + "\n"
	rep := verifyBytes(t, []byte(line))
	if !rep.OK() || rep.Records != 1 {
		t.Errorf("Records = %d, Problems = %v; want 1, none", rep.Records, rep.Problems)
	}
	var r Record
	if err := json.Unmarshal([]byte(line), &r); err != nil || r.V != 2 {
		t.Errorf("Unmarshal = %v, v %d", err, r.V)
	}
}
