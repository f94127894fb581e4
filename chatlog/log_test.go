package chatlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/llm"
)

var t0 = time.Date(2026, 12, 1, 13, 0, 0, 0, time.UTC)

func clock() func() time.Time {
	var mu sync.Mutex
	n := 0
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		n++
		return t0.Add(time.Duration(n) * time.Second)
	}
}

func newLog(t *testing.T, dir, id string) *Log {
	t.Helper()
	l, err := New(dir, Header{ID: id, Dir: "/project", Model: "script:demo"}, clock())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func conversation() []llm.Message {
	return []llm.Message{
		{Role: llm.RoleUser, Text: "list the files"},
		{Role: llm.RoleAssistant, Text: "Let me look.", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "fs__list", Args: json.RawMessage(`{"path":"."}`)}}},
		{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "c1", Content: "a.txt\nb.txt"}}},
		{Role: llm.RoleAssistant, Text: "Two files: a.txt and b.txt."},
	}
}

// TestRoundTrip: what is appended reads back as the same conversation and
// the same calls.
func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	l := newLog(t, dir, "s1")
	msgs := conversation()
	for _, m := range msgs[:3] {
		if err := l.Append(Record{Type: TypeMessage, Message: FromLLM(m)}); err != nil {
			t.Fatal(err)
		}
	}
	call := &host.CallEntry{ID: "c1", Server: "fs", Tool: "list", Args: json.RawMessage(`{"path":"."}`),
		Verdict: "allow", Tier: 0, DecidedBy: "policy", Status: host.StatusSuccess}
	if err := l.Append(Record{Type: TypeCall, Call: NewCall(call, "a.txt\nb.txt")}); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(Record{Type: TypeMessage, Message: FromLLM(msgs[3])}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Load(dir, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if s.Header.Dir != "/project" || s.Header.Model != "script:demo" || s.Header.Version != Version || !s.Header.Started.Equal(t0.Add(time.Second)) {
		t.Errorf("header = %+v", s.Header)
	}
	if diff := cmp.Diff(msgs, s.History()); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	var got *host.CallEntry
	for _, r := range s.Records {
		if r.Type == TypeCall {
			got = r.Call.CallEntry()
			if r.Call.Result.S != "a.txt\nb.txt" {
				t.Errorf("result = %q", r.Call.Result.S)
			}
		}
	}
	if diff := cmp.Diff(call, got); diff != "" {
		t.Errorf("call (-want +got):\n%s", diff)
	}
	// Continuing appends after what is there.
	l2, err := s.Continue(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l2.Append(Record{Type: TypeNote, Note: "resumed"}); err != nil {
		t.Fatal(err)
	}
	l2.Close()
	s2, err := Load(dir, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(s2.Records); n != len(s.Records)+1 || s2.Records[n-1].Note != "resumed" {
		t.Errorf("after continuing: %d records, last %+v", n, s2.Records[n-1])
	}
}

// TestNothingSaidNoFile: a chat in which nothing was said leaves no file.
func TestNothingSaidNoFile(t *testing.T) {
	dir := t.TempDir()
	l := newLog(t, dir, "s1")
	l.Close()
	if _, err := os.Stat(l.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stat %s: %v, want no file", l.Path(), err)
	}
}

// TestCorruptLeftAsIs: a damaged file is reported with its line and cannot
// be continued; its bytes never change.
func TestCorruptLeftAsIs(t *testing.T) {
	for _, tc := range []struct {
		name, edit string
		line       int
	}{
		{"garbage line", "append:{not json\n", 4},
		{"cut last line", "cut", 3},
		{"last line without its newline", "cutnl", 3},
		{"record without content", `append:{"type":"message","time":"2026-12-01T13:00:00Z"}` + "\n", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			l := newLog(t, dir, "s1")
			for _, m := range conversation()[:2] {
				if err := l.Append(Record{Type: TypeMessage, Message: FromLLM(m)}); err != nil {
					t.Fatal(err)
				}
			}
			l.Close()
			data, _ := os.ReadFile(l.Path())
			switch {
			case tc.edit == "cut":
				data = data[:len(data)-5]
			case tc.edit == "cutnl": // every byte of the record but its end
				data = data[:len(data)-1]
			default:
				data = append(data, strings.TrimPrefix(tc.edit, "append:")...)
			}
			if err := os.WriteFile(l.Path(), data, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Load(dir, "s1")
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.Line != tc.line {
				t.Fatalf("Load: %v, want a CorruptError at line %d", err, tc.line)
			}
			if !strings.Contains(err.Error(), "left as it is") {
				t.Errorf("error %q does not say the file is left alone", err)
			}
			// A new session never takes over the damaged file's name.
			l2 := newLog(t, dir, "s1")
			if err := l2.Append(Record{Type: TypeNote, Note: "x"}); err == nil {
				t.Errorf("a new log with the id of an existing file appended to it")
			}
			after, _ := os.ReadFile(l.Path())
			if !bytes.Equal(after, data) {
				t.Errorf("the damaged file changed:\n%s\nwas\n%s", after, data)
			}
			list, err := List(dir)
			if err != nil || len(list) != 1 {
				t.Fatalf("List: %v, %v", list, err)
			}
		})
	}
}

// TestConcurrentAppend: appends from many goroutines each land whole, on
// a line of their own.
func TestConcurrentAppend(t *testing.T) {
	dir := t.TempDir()
	l := newLog(t, dir, "s1")
	l.InlineMax = 512
	const goroutines, each = 8, 50
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				text := fmt.Sprintf("g%d-%d ", g, i) + strings.Repeat("x", (g*each+i)%1000)
				if err := l.Append(Record{Type: TypeMessage, Message: &Message{Role: "user", Text: T(text)}}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	l.Close()
	s, err := Load(dir, "s1")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range s.Records {
		k, _, _ := strings.Cut(r.Message.Text.S, " ")
		if seen[k] {
			t.Errorf("%s twice", k)
		}
		seen[k] = true
	}
	if len(seen) != goroutines*each {
		t.Errorf("%d records read back, want %d", len(seen), goroutines*each)
	}
}

// TestLargeByReference: a long result is stored apart, the line keeps a
// reference, and reading resolves it.
func TestLargeByReference(t *testing.T) {
	dir := t.TempDir()
	l := newLog(t, dir, "s1")
	big := strings.Repeat("0123456789abcdef", 8<<10) // 128 KiB
	msg := llm.Message{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "c1", Content: big}}}
	if err := l.Append(Record{Type: TypeMessage, Message: FromLLM(msg)}); err != nil {
		t.Fatal(err)
	}
	call := &host.CallEntry{ID: "c1", Server: "fs", Tool: "read", Status: host.StatusSuccess}
	if err := l.Append(Record{Type: TypeCall, Call: NewCall(call, big)}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	data, _ := os.ReadFile(l.Path())
	if len(data) > 4<<10 || bytes.Contains(data, []byte("0123456789abcdef")) {
		t.Errorf("the session file holds the long text (%d bytes)", len(data))
	}
	if !bytes.Contains(data, []byte(`"bytes":131072`)) {
		t.Errorf("no reference with the size in:\n%s", data)
	}
	blobs, _ := filepath.Glob(filepath.Join(dir, "s1.d", "*"))
	if len(blobs) != 1 {
		t.Errorf("texts stored apart: %v, want one (the same text twice)", blobs)
	}
	s, err := Load(dir, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Records[0].Message.ToolResults[0].Content.S; got != big {
		t.Errorf("result read back: %d bytes, want %d", len(got), len(big))
	}
	if got := s.Records[1].Call.Result.S; got != big {
		t.Errorf("call result read back: %d bytes", len(got))
	}
	// A text changed on disk is not passed off as the saved one.
	if err := os.WriteFile(blobs[0], []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, _ = Load(dir, "s1")
	if got := s.Records[1].Call.Result.S; !strings.Contains(got, "changed after it was saved") {
		t.Errorf("changed text read back as %q", got)
	}
}

// TestLongLineRefused: reading never takes in a line over MaxLine.
func TestLongLineRefused(t *testing.T) {
	dir := t.TempDir()
	l := newLog(t, dir, "s1")
	if err := l.Append(Record{Type: TypeNote, Note: "hello"}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	f, _ := os.OpenFile(l.Path(), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"type":"note","note":"` + strings.Repeat("x", MaxLine+10) + "\"}\n")
	f.Close()
	var ce *CorruptError
	if _, err := Load(dir, "s1"); !errors.As(err, &ce) || ce.Line != 3 {
		t.Errorf("Load: %v, want damaged at line 3", err)
	}
}

// TestHistoryClosesUnansweredCalls: a session that ended in the middle of
// a call continues with that call answered as not run.
func TestHistoryClosesUnansweredCalls(t *testing.T) {
	dir := t.TempDir()
	l := newLog(t, dir, "s1")
	for _, m := range conversation()[:2] {
		l.Append(Record{Type: TypeMessage, Message: FromLLM(m)})
	}
	l.Close()
	s, err := Load(dir, "s1")
	if err != nil {
		t.Fatal(err)
	}
	h := s.History()
	if len(h) != 3 || h[2].Role != llm.RoleTool || h[2].ToolResults[0].CallID != "c1" || !h[2].ToolResults[0].IsError {
		t.Errorf("history = %+v", h)
	}
}

// TestListLatestFind: listing reads headers and last messages; --continue
// picks the newest of the directory; ids resolve by unique prefix.
func TestListLatestFind(t *testing.T) {
	dir := t.TempDir()
	mk := func(id, wd, last string, mod time.Time) {
		l, _ := New(dir, Header{ID: id, Dir: wd, Model: "m"}, clock())
		l.Append(Record{Type: TypeMessage, Message: &Message{Role: "user", Text: T(last)}})
		l.Close()
		os.Chtimes(l.Path(), mod, mod)
	}
	mk("20261201-100000-aaaaaa", "/a", "first in a", t0)
	mk("20261201-110000-bbbbbb", "/b", "only in b", t0.Add(time.Hour))
	mk("20261201-120000-cccccc", "/a", "second\nin a", t0.Add(2*time.Hour))
	list, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range list {
		ids = append(ids, s.ID+" "+s.Last)
	}
	want := []string{"20261201-120000-cccccc second in a", "20261201-110000-bbbbbb only in b", "20261201-100000-aaaaaa first in a"}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	if s, err := Latest(dir, "/a"); err != nil || s.ID != "20261201-120000-cccccc" {
		t.Errorf("Latest(/a) = %v, %v", s.ID, err)
	}
	if _, err := Latest(dir, "/c"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Latest(/c): %v, want ErrNotFound", err)
	}
	if s, err := Find(dir, "20261201-11"); err != nil || s.ID != "20261201-110000-bbbbbb" {
		t.Errorf("Find by prefix = %v, %v", s.ID, err)
	}
	if _, err := Find(dir, "20261201"); err == nil || !strings.Contains(err.Error(), "3 sessions") {
		t.Errorf("ambiguous prefix: %v", err)
	}
	if _, err := Load(dir, "../etc/passwd"); err == nil {
		t.Errorf("Load accepted a path as an id")
	}
}

// TestLongResultReadInPart: a call's result over MaxResultPreview is read
// back in part, on a character boundary, saying where the rest is; the
// model's copy in the conversation is read whole.
func TestLongResultReadInPart(t *testing.T) {
	dir := t.TempDir()
	l := newLog(t, dir, "s1")
	long := strings.Repeat("é", MaxResultPreview) // twice the preview, in bytes
	call := &host.CallEntry{ID: "c1", Server: "fs", Tool: "read", Status: host.StatusSuccess}
	if err := l.Append(Record{Type: TypeCall, Call: NewCall(call, long)}); err != nil {
		t.Fatal(err)
	}
	msg := llm.Message{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "c1", Content: long}}}
	if err := l.Append(Record{Type: TypeMessage, Message: FromLLM(msg)}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	s, err := Load(dir, "s1")
	if err != nil {
		t.Fatal(err)
	}
	got := s.Records[0].Call.Result.S
	head, note, ok := strings.Cut(got, "\n[… ")
	if !ok || !utf8.ValidString(head) || len(head) > MaxResultPreview || len(head) < MaxResultPreview-2 {
		t.Fatalf("preview of %d bytes, valid %v, note %q", len(head), utf8.ValidString(head), note)
	}
	if want := fmt.Sprintf("%d more bytes, in ", len(long)-len(head)); !strings.HasPrefix(note, want) {
		t.Errorf("note %q, want it to start with %q", note, want)
	}
	if c := s.Records[1].Message.ToolResults[0].Content.S; c != long {
		t.Errorf("the model's copy read back as %d bytes, want %d", len(c), len(long))
	}
}
