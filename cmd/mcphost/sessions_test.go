package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/chatlog"
	"github.com/mcphost/mcphost/llm"
	"github.com/rogpeppe/go-internal/testscript"
)

// saveChat is the script command "chat [-model SPEC] [-demo] [-old] ID DIR
// TEXT": a chat saved as the interactive interface saves it (TEXT, then
// "answer to TEXT"; a TEXT in double quotes is a Go string), with the
// model SPEC (default script:demo), the demo servers as its server set
// with -demo (else none), and with -old a header as files had before the
// model's servers were recorded.
func saveChat(ts *testscript.TestScript, neg bool, args []string) {
	model, servers, old := "script:demo", []chatlog.Server{}, false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch {
		case args[0] == "-model" && len(args) > 1:
			model, args = args[1], args[1:]
		case args[0] == "-demo":
			st := &setup{specs: demoSpecs()}
			servers = st.serverSet()
		case args[0] == "-old":
			old = true
		default:
			ts.Fatalf("chat: unknown flag %s", args[0])
		}
		args = args[1:]
	}
	if len(args) != 3 {
		ts.Fatalf("usage: chat [-model SPEC] [-demo] [-old] ID DIR TEXT")
	}
	if q, err := strconv.Unquote(args[2]); err == nil { // a Go string: "a\nb"
		args[2] = q
	}
	dir := filepath.Join(ts.Getenv("XDG_STATE_HOME"), "mcphost", "sessions")
	h := chatlog.Header{ID: args[0], Dir: args[1], Model: model, Servers: servers}
	if old {
		h.Servers = nil
	}
	l, err := chatlog.New(dir, h, nil)
	ts.Check(err)
	ts.Check(l.Append(chatlog.Record{Type: chatlog.TypeMessage, Message: chatlog.FromLLM(llm.Message{Role: llm.RoleUser, Text: args[2]})}))
	ts.Check(l.Append(chatlog.Record{Type: chatlog.TypeMessage, Message: chatlog.FromLLM(llm.Message{Role: llm.RoleAssistant, Text: "answer to " + args[2]})}))
	ts.Check(l.Close())
	if old { // as written before the header had "servers"
		path := filepath.Join(dir, args[0]+".jsonl")
		data, err := os.ReadFile(path)
		ts.Check(err)
		ts.Check(os.WriteFile(path, []byte(strings.Replace(string(data), `,"servers":null`, "", 1)), 0o600))
	}
}

func sessionStreams(t *testing.T, wd, in string) *streams {
	state := t.TempDir()
	return &streams{In: strings.NewReader(in), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}, WorkDir: wd,
		Getenv: func(k string) string {
			if k == "XDG_STATE_HOME" {
				return state
			}
			return ""
		}}
}

func writeChat(t *testing.T, s *streams, id, wd, text string, mod time.Time) {
	t.Helper()
	l, err := chatlog.New(sessionsDir(s), chatlog.Header{ID: id, Dir: wd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append(chatlog.Record{Type: chatlog.TypeMessage, Message: chatlog.FromLLM(llm.Message{Role: llm.RoleUser, Text: text})}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	os.Chtimes(l.Path(), mod, mod)
}

// TestChatSessionResolves: without flags a new chat gets a new log with
// what it runs with; with --continue the newest chat of this directory is
// loaded and continued; --resume picks by id, or from the picker, which
// is given this directory's chats first.
func TestChatSessionResolves(t *testing.T) {
	s := sessionStreams(t, "/here", "")
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	writeChat(t, s, "20261201-100000-aaaaaa", "/here", "old here", t0)
	writeChat(t, s, "20261201-110000-bbbbbb", "/elsewhere", "elsewhere", t0.Add(time.Hour))
	writeChat(t, s, "20261201-120000-cccccc", "/here", "new here", t0.Add(2*time.Hour))
	now := func() time.Time { return t0.Add(3 * time.Hour) }
	find := func(f sessionFlags, pick func([]chatlog.Summary) (chatlog.Summary, error)) (*chatlog.Session, error) {
		return findSession(f, s, sessionsDir(s), pick)
	}

	ran := chatlog.Header{Model: "m", Servers: []chatlog.Server{{Name: "a", Identity: "1"}}}
	l, err := chatLog(s, nil, ran, now)
	if err != nil || l.Header().Dir != "/here" || l.ID() == "" || l.Header().Model != "m" || len(l.Header().Servers) != 1 {
		t.Fatalf("new chat: %+v, %v", l.Header(), err)
	}
	l.Close()

	prev, err := find(sessionFlags{Continue: true}, nil)
	if err != nil || prev.Header.ID != "20261201-120000-cccccc" {
		t.Fatalf("--continue: %v, %+v", err, prev)
	}
	if h := prev.History(); len(h) != 1 || h[0].Text != "new here" {
		t.Errorf("--continue history = %+v", h)
	}

	prev, err = find(sessionFlags{Resume: "20261201-11"}, nil)
	if err != nil || prev.Header.ID != "20261201-110000-bbbbbb" {
		t.Fatalf("--resume prefix: %v, %+v", err, prev)
	}

	var offered []chatlog.Summary
	prev, err = find(sessionFlags{Resume: pickSession}, func(list []chatlog.Summary) (chatlog.Summary, error) {
		offered = list
		return list[len(list)-1], nil
	})
	if err != nil || prev.Header.ID != "20261201-100000-aaaaaa" || len(offered) != 3 {
		t.Fatalf("--resume from the picker: %v, %+v, offered %d", err, prev, len(offered))
	}
	if _, err := find(sessionFlags{Resume: pickSession}, nil); err == nil || !strings.Contains(err.Error(), "needs a terminal") {
		t.Errorf("--resume alone without a terminal: %v", err)
	}

	empty := sessionStreams(t, "/nowhere", "")
	if _, err := findSession(sessionFlags{Continue: true}, empty, sessionsDir(empty), nil); !errors.Is(err, chatlog.ErrNotFound) || exitCode(err) != exitUsage {
		t.Errorf("--continue with no chat: %v (exit %d)", err, exitCode(err))
	}
}

// TestSavedBaseURL: a base URL is saved without user information, which
// may be a password; the rest is kept as given.
func TestSavedBaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"":                                 "",
		"http://127.0.0.1:11434/v1":        "http://127.0.0.1:11434/v1",
		"https://me:secret@llm.example/v1": "https://llm.example/v1",
		"https://token@llm.example/v1?x=1": "https://llm.example/v1?x=1",
	} {
		if got := savedBaseURL(in); got != want {
			t.Errorf("savedBaseURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestResumeHint: the exit screen names the command that continues a chat
// that was saved, and says nothing of one that left no file.
func TestResumeHint(t *testing.T) {
	s := sessionStreams(t, "/here", "")
	l, err := chatLog(s, nil, chatlog.Header{Servers: []chatlog.Server{}}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	resumeHint(s, l)
	if out := s.Out.(*bytes.Buffer).String(); out != "" {
		t.Errorf("a chat with nothing saved: %q", out)
	}
	if err := l.Append(chatlog.Record{Type: chatlog.TypeMessage, Message: chatlog.FromLLM(llm.Message{Role: llm.RoleUser, Text: "hi"})}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	resumeHint(s, l)
	if out, want := s.Out.(*bytes.Buffer).String(), "To continue this chat: mcphost --resume "+l.ID()+"\n"; out != want {
		t.Errorf("exit screen = %q, want %q", out, want)
	}
}

// TestChatLogNotesWhatAResumeRanWith: a continuation with another model or
// servers leaves a note the next resume starts from; one with the same, or
// with no model at all (a missing key, say), leaves the chat's own.
func TestChatLogNotesWhatAResumeRanWith(t *testing.T) {
	s := sessionStreams(t, "/here", "")
	srv := []chatlog.Server{{Name: "tasks", Identity: "1"}}
	l, err := chatLog(s, nil, chatlog.Header{Model: "openai:gpt-5", BaseURL: "http://127.0.0.1:9/v1", Servers: srv}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append(chatlog.Record{Type: chatlog.TypeMessage, Message: chatlog.FromLLM(llm.Message{Role: llm.RoleUser, Text: "hi"})}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	resume := func(ran chatlog.Header) chatlog.Header {
		t.Helper()
		prev, err := chatlog.Load(sessionsDir(s), l.ID())
		if err != nil {
			t.Fatal(err)
		}
		c, err := chatLog(s, prev, ran, time.Now)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		if prev, err = chatlog.Load(sessionsDir(s), l.ID()); err != nil {
			t.Fatal(err)
		}
		return prev.Ran()
	}
	if h := resume(chatlog.Header{Servers: srv}); h.Model != "openai:gpt-5" || h.BaseURL != "http://127.0.0.1:9/v1" {
		t.Errorf("after a resume without a model: %+v", h)
	}
	if h := resume(chatlog.Header{Model: "anthropic:claude-sonnet-4-5", Servers: []chatlog.Server{}}); h.Model != "anthropic:claude-sonnet-4-5" || h.BaseURL != "" || h.Servers == nil || len(h.Servers) != 0 {
		t.Errorf("after a resume with --model: %+v", h)
	}
}
