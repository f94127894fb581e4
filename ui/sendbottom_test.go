package ui

import (
	"fmt"
	"testing"

	"github.com/mcphost/mcphost/llm"
)

// TestSendJumpsToTheBottom: whatever the person sends while scrolled up
// (a message, a command, a message without a model), the transcript jumps
// to the bottom, where its answer appears.
func TestSendJumpsToTheBottom(t *testing.T) {
	for _, tc := range []struct {
		name  string
		model llm.Model
		send  string
	}{
		{"message", llm.NewScript([]llm.ScriptTurn{{Text: "Hello back."}}), "hello"},
		{"command", nil, "/explain tasks/list_tasks"},
		{"unknown command", nil, "/nosuch"},
		{"message without a model", nil, "hello"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _ := tasksConfig(t, "tasks")
			cfg.Model = tc.model
			h := newHarness(t, cfg)
			h.send(teaSize(100, 20))
			h.ready()
			for i := range 40 {
				h.m.notice(levelInfo, fmt.Sprintf("line %d", i))
			}
			h.key("pgup")
			h.key("pgup")
			if _, _, following := h.m.tr.position(); following {
				t.Fatal("pgup did not scroll up")
			}
			h.typeText(tc.send)
			h.key("enter")
			if bot, total, following := h.m.tr.position(); !following || bot != total {
				t.Fatalf("after sending %q: at %d of %d, following %v; want the bottom", tc.send, bot, total, following)
			}
		})
	}
}
