package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/chatlog"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/llm"
)

// TestResumeWarningBesideContinuing: on a resume, the warning that the
// servers changed stands next to "continuing the chat", at the bottom of
// the screen where the person looks, not above the old transcript.
func TestResumeWarningBesideContinuing(t *testing.T) {
	dir := t.TempDir()
	log, err := chatlog.New(dir, chatlog.Header{ID: "s1", Dir: "/p", Model: "script:demo"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		role, text := llm.RoleUser, fmt.Sprintf("question %d", i)
		if i%2 == 1 {
			role, text = llm.RoleAssistant, fmt.Sprintf("answer %d", i)
		}
		if err := log.Append(chatlog.Record{Type: chatlog.TypeMessage, Message: chatlog.FromLLM(llm.Message{Role: role, Text: text})}); err != nil {
			t.Fatal(err)
		}
	}
	log.Close()
	prev, err := chatlog.Load(dir, "s1")
	if err != nil {
		t.Fatal(err)
	}
	log2, err := prev.Continue(nil)
	if err != nil {
		t.Fatal(err)
	}
	const warning = "the chat s1 ran with other servers (missing now: bare); its history may name tools that are not offered now"
	h := newHarness(t, Config{Session: log2, Resumed: prev, Dark: dark(true), Warnings: []string{warning},
		Gate: host.GateOptions{Policy: policy(t), Audit: &memAudit{}}})
	h.send(teaSize(120, 30))
	lines := strings.Split(h.screen(), "\n")
	cont, warn := -1, -1
	for i, l := range lines {
		switch {
		case strings.Contains(l, "continuing the chat s1"):
			cont = i
		case strings.Contains(l, "ran with other servers"):
			warn = i
		}
	}
	if cont < 0 || warn < 0 {
		t.Fatalf("the screen lacks the continuing line (%d) or the warning (%d):\n%s", cont, warn, h.screen())
	}
	// The continuing notice takes two lines at this width; the warning
	// follows it with at most a blank line between.
	if warn < cont || warn-cont > 4 {
		t.Fatalf("the warning (line %d) is not beside the continuing line (%d):\n%s", warn, cont, h.screen())
	}
	if !strings.Contains(h.screen(), "answer 29") {
		t.Fatalf("the end of the old transcript is not on the screen:\n%s", h.screen())
	}
}
