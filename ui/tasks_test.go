package ui

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host"
)

// TestCardShowsTaskStatus: a call that runs as an MCP task shows the
// task's latest status and message on its card while it runs, escaped.
func TestCardShowsTaskStatus(t *testing.T) {
	cfg, _ := tasksConfig(t, "tasks")
	h := newHarness(t, cfg)
	h.ready()
	ev := func(k host.LoopEventKind, c *host.CallEntry, tr *host.TaskReport) {
		h.send(inboxMsg{loopEventMsg{run: 1, ev: host.LoopEvent{Kind: k, Call: c, Task: tr}}})
	}
	call := &host.CallEntry{ID: "c1", Server: "tasks", Tool: "list_tasks", Args: json.RawMessage(`{}`)}
	ev(host.EvToolCall, call, nil)
	ev(host.EvTask, call, &host.TaskReport{Event: "created", ID: "t-1", Status: "working", Message: "started"})
	ev(host.EvTask, call, &host.TaskReport{Event: "status", ID: "t-1", Status: "input_required", Message: "which\x1b[2J\ntide?"})
	s := h.screen()
	if !strings.Contains(s, "task input_required · which") || strings.Contains(s, "started") {
		t.Fatalf("running card:\n%s", s)
	}
	if strings.Contains(h.m.View().Content, "\x1b[2J") {
		t.Fatal("the task's status message reached the terminal unsanitized")
	}
}
