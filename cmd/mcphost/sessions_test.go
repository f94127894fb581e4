package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/chatlog"
	"github.com/mcphost/mcphost/llm"
	"github.com/rogpeppe/go-internal/testscript"
)

// saveChat writes a saved chat as the interactive interface does: a
// message from the person and the model's answer.
//
//	chat ID DIR TEXT
func saveChat(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: chat ID DIR TEXT")
	}
	dir := filepath.Join(ts.Getenv("XDG_STATE_HOME"), "mcphost", "sessions")
	l, err := chatlog.New(dir, chatlog.Header{ID: args[0], Dir: args[1], Model: "script:demo"}, nil)
	ts.Check(err)
	ts.Check(l.Append(chatlog.Record{Type: chatlog.TypeMessage, Message: chatlog.FromLLM(llm.Message{Role: llm.RoleUser, Text: args[2]})}))
	ts.Check(l.Append(chatlog.Record{Type: chatlog.TypeMessage, Message: chatlog.FromLLM(llm.Message{Role: llm.RoleAssistant, Text: "answer to " + args[2]})}))
	ts.Check(l.Close())
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

// TestChatSessionResolves: without flags a new chat gets a new log; with
// --continue the newest chat of this directory is loaded and continued;
// --resume picks by id, or from a list read from the terminal.
func TestChatSessionResolves(t *testing.T) {
	s := sessionStreams(t, "/here", "2\n")
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	writeChat(t, s, "20261201-100000-aaaaaa", "/here", "old here", t0)
	writeChat(t, s, "20261201-110000-bbbbbb", "/elsewhere", "elsewhere", t0.Add(time.Hour))
	writeChat(t, s, "20261201-120000-cccccc", "/here", "new here", t0.Add(2*time.Hour))
	now := func() time.Time { return t0.Add(3 * time.Hour) }

	l, prev, err := chatSession(&globalOptions{}, s, "m", now)
	if err != nil || prev != nil || l.Header().Dir != "/here" || l.ID() == "" {
		t.Fatalf("new chat: %v, %v, %v", l, prev, err)
	}
	l.Close()

	l, prev, err = chatSession(&globalOptions{Session: sessionFlags{Continue: true}}, s, "m", now)
	if err != nil || prev.Header.ID != "20261201-120000-cccccc" || l.ID() != prev.Header.ID {
		t.Fatalf("--continue: %v, %+v", err, prev)
	}
	if h := prev.History(); len(h) != 1 || h[0].Text != "new here" {
		t.Errorf("--continue history = %+v", h)
	}
	l.Close()

	_, prev, err = chatSession(&globalOptions{Session: sessionFlags{Resume: "20261201-11"}}, s, "m", now)
	if err != nil || prev.Header.ID != "20261201-110000-bbbbbb" {
		t.Fatalf("--resume prefix: %v, %+v", err, prev)
	}

	// The list shows this directory's chats first: 2 is the older one here.
	_, prev, err = chatSession(&globalOptions{Session: sessionFlags{Resume: pickSession}}, s, "m", now)
	if err != nil || prev.Header.ID != "20261201-100000-aaaaaa" {
		t.Fatalf("--resume from the list: %v, %+v", err, prev)
	}
	out := s.Out.(*bytes.Buffer).String()
	if !strings.Contains(out, "1  ") || strings.Index(out, "old here") > strings.Index(out, "elsewhere") {
		t.Errorf("list:\n%s", out)
	}

	empty := sessionStreams(t, "/nowhere", "")
	if _, _, err := chatSession(&globalOptions{Session: sessionFlags{Continue: true}}, empty, "m", now); !errors.Is(err, chatlog.ErrNotFound) || exitCode(err) != exitUsage {
		t.Errorf("--continue with no chat: %v (exit %d)", err, exitCode(err))
	}
}

// TestChooseRejectsOutOfRange: a pick that is not in the list is an
// error, not the nearest chat.
func TestChooseRejectsOutOfRange(t *testing.T) {
	list := []chatlog.Summary{{Header: chatlog.Header{ID: "a", Dir: "/x"}}}
	for _, in := range []string{"0\n", "2\n", "\n", "", "b\n"} {
		if s, err := choose(strings.NewReader(in), &bytes.Buffer{}, list, "/x"); err == nil {
			t.Errorf("choose(%q) = %s, want an error", in, s.ID)
		}
	}
	if s, err := choose(strings.NewReader("a\n"), &bytes.Buffer{}, list, "/x"); err != nil || s.ID != "a" {
		t.Errorf("choose by id: %v, %v", s.ID, err)
	}
}
