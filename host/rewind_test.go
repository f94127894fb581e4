package host

import (
	"context"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/llm"
)

// TestRewindTakesBackTheLastTurn: the person's last message and all that
// followed (calls and results included) leave the conversation; the
// loop's own user messages and tool results are never taken for it.
func TestRewindTakesBackTheLastTurn(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "tasks", trusted: true, headless: true})
	l := newLoop(w, []llm.ScriptTurn{
		{Text: "One."},
		{ToolCalls: []llm.ScriptCall{call("f__get_task", `{"id":"T-1"}`)}},
		{Text: "T-1 is the launch."},
		{ExpectHistory: &llm.ResultExpectation{Contains: "One."}, Text: "Edited answer."},
	}, LoopOptions{})
	for _, msg := range []string{"first", "second\n\n[attached file]"} {
		if _, err := l.Run(context.Background(), msg); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := l.Rewind(func(s string) bool { return s == "nowhere" }); ok {
		t.Fatal("Rewind matched a message that was never sent")
	}
	taken, ok := l.Rewind(func(s string) bool { return strings.HasPrefix(s, "second") })
	if !ok || taken.Text != "second\n\n[attached file]" {
		t.Fatalf("Rewind took back %q, %v", taken.Text, ok)
	}
	var got []string
	for _, m := range l.Messages() {
		got = append(got, string(m.Role)+":"+m.Text)
	}
	if strings.Join(got, "|") != "user:first|assistant:One." {
		t.Fatalf("after Rewind: %q", got)
	}
	if n := len(l.Transcript); n == 0 || l.Transcript[n-1].Text == "second\n\n[attached file]" {
		t.Fatalf("the transcript keeps the taken-back message: %+v", l.Transcript)
	}
	out, err := l.Run(context.Background(), "second, edited")
	if err != nil || out.Text != "Edited answer." {
		t.Fatalf("run after Rewind: %+v, %v", out, err)
	}
}
