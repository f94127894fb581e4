package chatlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/llm"
)

// TestCompareServers: a server gone, a new one, and one whose identity
// changed under the same name are each named; nil (a file that predates
// the record) differs from nothing, while an empty set is "none".
func TestCompareServers(t *testing.T) {
	saved := []Server{{"fs", "1"}, {"gone", "2"}, {"tasks", "3"}}
	now := []Server{{"tasks", "3"}, {"fs", "9"}, {"web", "4"}}
	want := ServerChanges{Missing: []string{"gone"}, Added: []string{"web"}, Changed: []string{"fs"}}
	if got := CompareServers(saved, now); !cmp.Equal(got, want) {
		t.Errorf("CompareServers = %+v, want %+v", got, want)
	}
	if c := CompareServers(saved, saved); c.Any() {
		t.Errorf("the same set differs: %+v", c)
	}
	if c := CompareServers(nil, now); c.Any() {
		t.Errorf("an unknown set differs: %+v", c)
	}
	if c := CompareServers([]Server{}, now); !cmp.Equal(c.Added, []string{"fs", "tasks", "web"}) {
		t.Errorf("from none, Added = %v", c.Added)
	}
}

// TestHeaderRunFields: the header keeps the base URL and the servers; a
// NoteResumed note moves what Ran returns; a header written before these
// fields loads, with Servers nil (unknown).
func TestHeaderRunFields(t *testing.T) {
	dir := t.TempDir()
	srv := []Server{{"tasks", "abc"}}
	l, err := New(dir, Header{ID: "s1", Dir: "/p", Model: "openai:gpt-5", BaseURL: "http://127.0.0.1:9/v1", Servers: srv}, clock())
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append(Record{Type: TypeMessage, Message: FromLLM(llm.Message{Role: llm.RoleUser, Text: "hi"})}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	s, err := Load(dir, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if h := s.Ran(); h.Model != "openai:gpt-5" || h.BaseURL != "http://127.0.0.1:9/v1" || !cmp.Equal(h.Servers, srv) {
		t.Errorf("Ran = %+v", h)
	}
	l, err = s.Continue(clock())
	if err != nil {
		t.Fatal(err)
	}
	next := s.Header
	next.Model, next.BaseURL, next.Servers = "anthropic:claude-sonnet-4-5", "", []Server{}
	if err := l.Append(Record{Type: TypeNote, Note: NoteResumed, Session: &next}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if s, err = Load(dir, "s1"); err != nil {
		t.Fatal(err)
	}
	if h := s.Ran(); h.Model != "anthropic:claude-sonnet-4-5" || h.BaseURL != "" || h.Servers == nil || len(h.Servers) != 0 {
		t.Errorf("Ran after a resumed note = %+v", h)
	}
	if s.Header.Model != "openai:gpt-5" {
		t.Errorf("the header moved: %+v", s.Header)
	}

	old := `{"type":"session","time":"2026-12-01T13:00:00Z","session":{"version":1,"id":"old1","dir":"/p","started":"2026-12-01T13:00:00Z","model":"script:demo"}}
{"type":"message","time":"2026-12-01T13:00:01Z","message":{"role":"user","text":"an old chat"}}
`
	if err := os.WriteFile(filepath.Join(dir, "old1.jsonl"), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := Load(dir, "old1")
	if err != nil {
		t.Fatal(err)
	}
	if h := o.Ran(); h.Servers != nil || h.Model != "script:demo" || len(o.History()) != 1 {
		t.Errorf("old file: %+v, %d messages", h, len(o.History()))
	}
}

// TestSummaryFirstPrompt: the list gives each chat's first prompt on one
// line, and the size of one stored apart; a call record before it is
// skipped.
func TestSummaryFirstPrompt(t *testing.T) {
	dir := t.TempDir()
	l := newLog(t, dir, "s1")
	l.InlineMax = 64
	for _, m := range []llm.Message{
		{Role: llm.RoleAssistant, Text: "hello"},
		{Role: llm.RoleUser, Text: "what\n  is\tT-1?"},
		{Role: llm.RoleUser, Text: "second"},
	} {
		if err := l.Append(Record{Type: TypeMessage, Message: FromLLM(m)}); err != nil {
			t.Fatal(err)
		}
	}
	l2 := newLog(t, dir, "s2")
	l2.InlineMax = 64
	if err := l2.Append(Record{Type: TypeMessage, Message: FromLLM(llm.Message{Role: llm.RoleUser, Text: strings.Repeat("x", 100)})}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l2.Close()
	list, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range list {
		got[s.ID] = s.First
	}
	if want := map[string]string{"s1": "what is T-1?", "s2": "[100 bytes]"}; !cmp.Equal(got, want) {
		t.Errorf("First = %v, want %v", got, want)
	}
}

// TestModelNoteMovesTheModel: a NoteModel note (/model in the chat) moves
// the model and base URL Ran returns, not the servers; a NoteResumed note
// written after it moves them again.
func TestModelNoteMovesTheModel(t *testing.T) {
	dir := t.TempDir()
	srv := []Server{{"tasks", "abc"}}
	l, err := New(dir, Header{ID: "s2", Dir: "/p", Model: "openai-compatible:local", BaseURL: "http://127.0.0.1:9/v1", Servers: srv}, clock())
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append(Record{Type: TypeNote, Note: NoteModel, Session: &Header{Model: "anthropic:claude-sonnet-4-5"}}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	s, err := Load(dir, "s2")
	if err != nil {
		t.Fatal(err)
	}
	if h := s.Ran(); h.Model != "anthropic:claude-sonnet-4-5" || h.BaseURL != "" || !cmp.Equal(h.Servers, srv) {
		t.Errorf("Ran after /model = %+v, want the new model, no base URL, the header's servers", h)
	}
	if l, err = s.Continue(clock()); err != nil {
		t.Fatal(err)
	}
	next := s.Header
	next.Model, next.BaseURL, next.Servers = "openai:gpt-5", "", []Server{}
	if err := l.Append(Record{Type: TypeNote, Note: NoteResumed, Session: &next}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if s, err = Load(dir, "s2"); err != nil {
		t.Fatal(err)
	}
	if h := s.Ran(); h.Model != "openai:gpt-5" || len(h.Servers) != 0 || h.Servers == nil {
		t.Errorf("Ran after a later resume = %+v", h)
	}
}
