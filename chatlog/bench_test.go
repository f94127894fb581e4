package chatlog

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/host"
)

// writeSession writes a session of n records: messages of a few hundred
// bytes and, every tenth, a call whose result is stored apart.
func writeSession(b *testing.B, dir string, n int) {
	l, err := New(dir, Header{ID: "big", Dir: "/p"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	text := strings.Repeat("a sentence of the conversation. ", 10)
	for i := range n {
		rec := Record{Type: TypeMessage, Message: &Message{Role: "user", Text: T(fmt.Sprintf("%d %s", i, text))}}
		if i%10 == 9 {
			rec = Record{Type: TypeCall, Call: NewCall(&host.CallEntry{ID: fmt.Sprint(i), Server: "fs", Tool: "read", Status: host.StatusSuccess},
				fmt.Sprintf("%d %s", i, strings.Repeat("x", 20<<10)))}
		}
		if err := l.Append(rec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoad10k reads back a 10,000-record session with its stored
// texts: the time and memory --continue spends before the chat shows.
func BenchmarkLoad10k(b *testing.B) {
	dir := b.TempDir()
	writeSession(b, dir, 10000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(dir, "big"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppend is the cost of saving one message as it happens.
func BenchmarkAppend(b *testing.B) {
	l, err := New(b.TempDir(), Header{ID: "s"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	rec := Record{Type: TypeMessage, Message: &Message{Role: "assistant", Text: T(strings.Repeat("word ", 60))}}
	b.ReportAllocs()
	for b.Loop() {
		if err := l.Append(rec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkList is mcphost sessions over 200 saved chats.
func BenchmarkList(b *testing.B) {
	dir := b.TempDir()
	for i := range 200 {
		l, _ := New(dir, Header{ID: fmt.Sprintf("s%03d", i), Dir: "/p"}, nil)
		for range 50 {
			l.Append(Record{Type: TypeMessage, Message: &Message{Role: "user", Text: T(strings.Repeat("w ", 100))}})
		}
		l.Close()
	}
	b.ReportAllocs()
	for b.Loop() {
		if list, err := List(dir); err != nil || len(list) != 200 {
			b.Fatal(len(list), err)
		}
	}
}

// BenchmarkSettle100k settles one open call of a session against an audit
// log of 100,000 records (a long-used log): what a resume after a kill
// spends reading the log. It reports the log's size.
func BenchmarkSettle100k(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	al, err := audit.Open(path, audit.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 100000 {
		kind, status := audit.Intent, audit.Status("")
		if i%2 == 1 {
			kind, status = audit.Outcome, audit.StatusSuccess
		}
		rec := &audit.Record{Kind: kind, SessionID: "s", CallID: fmt.Sprintf("s-%d", i/2), Server: "fs", Tool: "read_file",
			Class: "read", Tier: "T0", Verdict: "allow", DecidedBy: "auto", Reasons: []string{"read-only", "closed-world"}, Status: status}
		if err := al.Append(rec); err != nil {
			b.Fatal(err)
		}
	}
	al.Close()
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	l, err := New(dir, Header{ID: "open", Dir: "/p"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	e := &host.CallEntry{ID: "c", CallID: "s-49999", Server: "fs", Tool: "read_file", Class: "read"}
	if err := l.Append(Record{Type: TypeNote, Note: NoteStarted, Started: NewStarted(e)}); err != nil {
		b.Fatal(err)
	}
	l.Close()
	s, err := Load(dir, "open")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Settle(path); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(fi.Size())/(1<<20), "MiB-log")
	if s.outcomes["s-49999"] != audit.StatusSuccess {
		b.Fatalf("outcome %q", s.outcomes["s-49999"])
	}
}
