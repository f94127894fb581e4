package ui

import (
	"strings"
	"testing"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/llm"
)

// /compact summarises the conversation with the model and shows the
// compaction on the transcript; the status line shows the tokens used.
func TestCompactCommand(t *testing.T) {
	tasks, _ := fixtureSpec(t, "tasks", fixtures.Options{})
	model := llm.NewScript([]llm.ScriptTurn{
		{Text: "Reading.", ToolCalls: []llm.ScriptCall{{Name: "tasks__list_tasks"}}},
		{Text: "There are tasks."},
		{Text: "Sure."},
		{Text: "Summary: the person listed the tasks."}, // the summary /compact asks for
	})
	h := newHarness(t, Config{
		Servers: []client.Spec{tasks}, Model: model,
		Gate: host.GateOptions{Policy: policy(t), Trusted: trusted("tasks"), Audit: &memAudit{}},
		Now:  newClock().Now, Dark: dark(true),
	})
	h.ready()
	// The first message is long enough that a summary shrinks what it replaces.
	for _, msg := range []string{"list" + strings.Repeat(", every task with its id and title", 8), "thanks"} {
		h.typeText(msg)
		h.key("enter")
		h.until("the run ends", func() bool { return h.m.run == nil && h.m.loop != nil })
	}
	u := llm.Usage{InputTokens: 12345, OutputTokens: 67, CacheReadTokens: 9000}
	h.m.usage = usageMeter{}
	h.m.usage.add(u, false)
	h.m.ctxView.usage = u
	if s := h.screen(); !strings.Contains(s, "tokens 12.4k (9.0k cached)") {
		t.Errorf("the status line lacks the token figure:\n%s", s)
	}
	h.typeText("/compact")
	h.key("enter")
	h.until("the compaction ends", func() bool { return h.m.run == nil && strings.Contains(h.screen(), "context compacted") })
	if s := h.screen(); !strings.Contains(s, "earlier message(s) summarised") {
		t.Errorf("the transcript does not show the summary:\n%s", s)
	}
}
