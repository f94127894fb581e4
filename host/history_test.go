package host

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/llm"
)

// seeing records the conversation each turn is sent.
type seeing struct {
	llm.Model
	sent [][]llm.Message
}

func (s *seeing) Stream(ctx context.Context, req *llm.Request, emit func(llm.Event)) error {
	s.sent = append(s.sent, append([]llm.Message(nil), req.Messages...))
	return s.Model.Stream(ctx, req, emit)
}

// TestLoopContinuesHistoryAndReportsMessages: a loop seeded with a saved
// conversation sends it before the new message, and OnMessage sees every
// message the conversation gains, in order.
func TestLoopContinuesHistoryAndReportsMessages(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "tasks", trusted: true, headless: true})
	history := []llm.Message{
		{Role: llm.RoleUser, Text: "earlier question"},
		{Role: llm.RoleAssistant, Text: "earlier answer"},
	}
	m := &seeing{Model: llm.NewScript([]llm.ScriptTurn{
		{ToolCalls: []llm.ScriptCall{call("f__get_task", `{"id":"T-1"}`)}},
		{Text: "done"},
	})}
	var got []llm.Message
	l := NewLoop(LoopOptions{Model: m, Gate: w.gate, Tools: w.m.Tools(), History: history,
		OnMessage: func(msg llm.Message) { got = append(got, msg) }})
	if _, err := l.Run(context.Background(), "new question"); err != nil {
		t.Fatal(err)
	}
	if len(m.sent) == 0 || len(m.sent[0]) != 3 || m.sent[0][0].Text != "earlier question" || m.sent[0][2].Text != "new question" {
		t.Fatalf("first turn was sent %+v", m.sent)
	}
	var roles []llm.Role
	for _, msg := range got {
		roles = append(roles, msg.Role)
	}
	want := []llm.Role{llm.RoleUser, llm.RoleAssistant, llm.RoleTool, llm.RoleAssistant}
	if diff := cmp.Diff(want, roles); diff != "" {
		t.Errorf("OnMessage roles (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(l.messages[2:], got); diff != "" {
		t.Errorf("OnMessage differs from the conversation (-want +got):\n%s", diff)
	}
}
