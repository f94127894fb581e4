package chatlog

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/llm"
)

// TestRewoundMessageLeavesTheHistory: a message taken back (esc esc in the
// chat) leaves the resumed conversation with everything after it; the
// edited message sent in its place follows what came before.
func TestRewoundMessageLeavesTheHistory(t *testing.T) {
	dir := t.TempDir()
	l := newLog(t, dir, "s1")
	msgs := conversation()
	second := llm.Message{Role: llm.RoleUser, Text: "and the sizes?"}
	edited := llm.Message{Role: llm.RoleUser, Text: "and the sizes, in bytes?"}
	for _, m := range append(msgs, second, llm.Message{Role: llm.RoleAssistant, Text: "Small."}) {
		if err := l.Append(Record{Type: TypeMessage, Message: FromLLM(m)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range []Record{{Type: TypeNote, Note: NoteRewound, Message: FromLLM(second)}, {Type: TypeMessage, Message: FromLLM(edited)}} {
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Load(dir, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(append(conversation(), edited), s.History()); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
}
