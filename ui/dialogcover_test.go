package ui

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/llm"
)

// TestDialogCoversTheTranscript: a dialog drawn over the chat leaves no
// fragment of the transcript around it, at the sizes where the box is
// smaller than the screen.
func TestDialogCoversTheTranscript(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{120, 40}, {100, 30}, {80, 24}} {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			cfg, _ := tasksConfig(t, "tasks")
			cfg.Model = llm.NewScript([]llm.ScriptTurn{
				{Text: "Deleting T-1.", ToolCalls: []llm.ScriptCall{{Name: "tasks__delete_task", Args: json.RawMessage(`{"id":"T-1"}`)}}},
				{Text: "Done."},
			})
			h := newHarness(t, cfg)
			h.send(teaSize(sz.w, sz.h))
			h.ready()
			for i := range 60 {
				h.m.notice(levelInfo, fmt.Sprintf("FRAGMENT%02d %s", i, strings.Repeat("#", sz.w)))
			}
			h.typeText("delete T-1")
			h.key("enter")
			h.until("the dialog opens", func() bool { return shown[*confirmDialog](h.m) != nil })
			s := h.screen()
			if !strings.Contains(s, "tasks/delete_task") {
				t.Fatalf("no dialog on the screen:\n%s", s)
			}
			if strings.Contains(s, "FRAGMENT") || strings.Contains(s, "###") {
				t.Fatalf("the transcript shows around the dialog:\n%s", s)
			}
		})
	}
}
