package ui

import (
	"strings"
	"testing"

	"github.com/mcphost/mcphost/decide"
)

// TestManagedTrustRefusal: when the managed policy lets no one trust a
// server, neither the configuration's trust nor /trust makes its
// annotations count.
func TestManagedTrustRefusal(t *testing.T) {
	cfg, _ := tasksConfig(t, "tasks") // trusted by the configuration
	cfg.MayTrust = func(string) bool { return false }
	h := newHarness(t, cfg)
	h.ready()
	d, _, _ := h.m.explain("tasks", "list_tasks", nil)
	if d.Verdict != decide.Ask || d.Class != decide.Unknown {
		t.Fatalf("list_tasks of a server the managed policy keeps untrusted: %s %s, want ask unknown", d.Verdict, d.Class)
	}
	h.typeText("/trust tasks")
	h.key("enter")
	if !strings.Contains(h.screen(), "managed policy") {
		t.Errorf("/trust does not say the managed policy refuses it:\n%s", h.screen())
	}
	if d, _, _ := h.m.explain("tasks", "list_tasks", nil); d.Verdict != decide.Ask {
		t.Errorf("after /trust: %s, want ask", d.Verdict)
	}
}
