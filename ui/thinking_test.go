package ui

import (
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host"
)

// The model's thinking is folded to one line per stretch and its text never
// shown; the provider's warnings are shown, sanitized.
func TestThinkingFoldedAndWarningsShown(t *testing.T) {
	cfg, _ := tasksConfig(t, "tasks")
	h := newHarness(t, cfg)
	h.ready()
	ev := func(k host.LoopEventKind, text string) {
		h.send(inboxMsg{loopEventMsg{run: 1, ev: host.LoopEvent{Kind: k, Text: text}}})
	}
	ev(host.EvTurnStart, "")
	ev(host.EvThinking, "secret plan A. ")
	ev(host.EvThinking, "secret plan B.")
	ev(host.EvTextDelta, "Here you are.")
	ev(host.EvThinking, "secret plan C.")
	ev(host.EvWarning, "tool x is not offered\x1b[2J: bad schema")
	s := h.screen()
	if strings.Contains(s, "secret plan") {
		t.Errorf("thinking text shown:\n%s", s)
	}
	if n := strings.Count(s, thinkingNote); n != 2 {
		t.Errorf("%d folded thinking lines, want 2 (one per stretch):\n%s", n, s)
	}
	if !strings.Contains(s, "tool x is not offered") || strings.Contains(h.m.View().Content, "\x1b[2J") {
		t.Errorf("warning missing or unsanitized:\n%s", s)
	}
}
