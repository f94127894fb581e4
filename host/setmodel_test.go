package host

import (
	"context"
	"testing"

	"github.com/mcphost/mcphost/llm"
)

// After SetModel the next Run goes to the new model, with the whole
// conversation so far, and the window is the new one.
func TestSetModelKeepsTheConversation(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "tasks", trusted: true, headless: true})
	l, first := recordedLoop(w, []llm.ScriptTurn{{Text: "Hello from the first."}}, LoopOptions{ContextWindow: 50000})
	if _, err := l.Run(context.Background(), "hi"); err != nil {
		t.Fatal(err)
	}
	second := &turnRecorder{Model: llm.NewScript([]llm.ScriptTurn{{Text: "Hello from the second."}})}
	l.SetModel(second, 9000)
	out, err := l.Run(context.Background(), "again")
	if err != nil {
		t.Fatal(err)
	}
	if len(first.reqs) != 1 || len(second.reqs) != 1 {
		t.Fatalf("the first model had %d requests and the second %d, want 1 and 1", len(first.reqs), len(second.reqs))
	}
	msgs := second.reqs[0].Messages
	if len(msgs) != 3 || msgs[0].Text != "hi" || msgs[1].Text != "Hello from the first." || msgs[2].Text != "again" {
		t.Errorf("the second model was sent %+v, want the conversation so far", msgs)
	}
	if out.Text != "Hello from the second." {
		t.Errorf("the answer is %q", out.Text)
	}
	if got := l.window(); got != 9000 {
		t.Errorf("window after SetModel = %d, want 9000", got)
	}
}
