package host

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/llm"
)

// An elided result invites the model to call the tool again only for a
// read or an idempotent write; a write that is not idempotent is marked
// "do not repeat". The calls run on the task tracker as a subprocess.
func TestElisionMarkerSaysWhetherToRepeat(t *testing.T) {
	for _, c := range []struct {
		name          string
		writeID, read string // call ids; "" is the script's own
		readAgain     bool
	}{
		{"distinct ids", "", "", true},
		// A model may reuse an id: the read under it must not make the
		// write's marker invite a repeat.
		{"one id reused", "dup", "dup", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := procManager(t, procServer{"tasks", "tasks"})
			title := "Long " + strings.Repeat("abcdefghij", 150)
			rec := &turnRecorder{Model: llm.NewScript([]llm.ScriptTurn{
				{ToolCalls: []llm.ScriptCall{{ID: c.writeID, Name: "tasks__create_task", Args: []byte(fmt.Sprintf(`{"title":%q}`, title))}}}, // additive: not idempotent
				{ToolCalls: []llm.ScriptCall{{ID: c.read, Name: "tasks__list_tasks", Args: []byte(`{}`)}}},                                   // a read
				{ToolCalls: []llm.ScriptCall{call("tasks__get_digest", `{}`)}},
				{ToolCalls: []llm.ScriptCall{call("tasks__get_digest", `{}`)}},
				{ToolCalls: []llm.ScriptCall{call("tasks__get_digest", `{}`)}},
				{Text: "done"},
			})}
			load := map[string]bool{"create_task": true, "list_tasks": true, "get_digest": true}
			l := NewLoop(LoopOptions{Model: rec, Gate: procGate(t, m, "tasks"), Tools: m.Tools(), ToolSearch: SearchAlways,
				AlwaysLoad: func(t *client.Tool) bool { return load[t.Name] }, ContextWindow: 2000, Summarizer: &summarizer{}})
			if _, err := l.Run(context.Background(), "make a task"); err != nil {
				t.Fatal(err)
			}
			var markers []string
			for _, m := range rec.reqs[len(rec.reqs)-1].Messages {
				for _, r := range m.ToolResults {
					if strings.HasPrefix(r.Content, "[mcphost: removed the output") {
						markers = append(markers, r.Content)
					}
				}
			}
			if len(markers) != 2 {
				t.Fatalf("the last request holds %d elision markers, want 2: %q", len(markers), markers)
			}
			const again, never = "; call the tool again if you need it]", "; do not repeat: it changed something]"
			// Which tool a marker names under a reused id is the call
			// record's business; here only what it invites counts.
			write, read := markers[0], markers[1]
			if (c.readAgain && !strings.Contains(write, "⟦tasks/create_task⟧")) || !strings.HasSuffix(write, never) {
				t.Errorf("the elided create_task reads %q, want it not to be repeated", write)
			}
			want := never
			if c.readAgain {
				want = again
			}
			if (c.readAgain && !strings.Contains(read, "⟦tasks/list_tasks⟧")) || !strings.HasSuffix(read, want) {
				t.Errorf("the elided list_tasks reads %q, want it to end %q", read, want)
			}
		})
	}
}
