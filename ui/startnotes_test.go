package ui

import (
	"strings"
	"testing"
)

// TestMissingKeyNamedOnceAndWarningsShown: a model that is set but has no
// key says which variable is missing, not that no model is configured; the
// help is shown once, at the start, and a message written without a model
// gets a one-line answer; configuration warnings are on the screen.
func TestMissingKeyNamedOnceAndWarningsShown(t *testing.T) {
	cfg, _ := tasksConfig(t, "tasks")
	cfg.NoModel = "anthropic: ANTHROPIC_API_KEY is not set; export it or choose another --model"
	cfg.Warnings = []string{`.mcp.json:3:5: server "x": unknown field "comand"`}
	h := newHarness(t, cfg)
	h.send(teaSize(140, 40))
	h.ready()
	for range 3 {
		h.typeText("hello")
		h.key("enter")
	}
	s := strings.Join(strings.Fields(h.screen()), " ")
	if strings.Contains(s, "No model is configured") {
		t.Errorf("says no model is configured although one is set:\n%s", h.screen())
	}
	for _, want := range []string{"The model cannot be used: anthropic: ANTHROPIC_API_KEY is not set", `unknown field "comand"`} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q:\n%s", want, h.screen())
		}
	}
	if n := strings.Count(s, "Until that is fixed there is no chat"); n != 1 {
		t.Errorf("the help is shown %d times, want once:\n%s", n, h.screen())
	}
	if n := strings.Count(s, noModelShort); n != 3 {
		t.Errorf("%d short answers for 3 messages:\n%s", n, h.screen())
	}
}
