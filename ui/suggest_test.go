package ui

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/llm"
)

// TestUnknownCommandSuggests: a peer's command (/mcp) names ours
// (/servers), a misspelt one the nearest, and a word near nothing only
// /help.
func TestUnknownCommandSuggests(t *testing.T) {
	for _, tc := range []struct{ typed, want string }{
		{"/mcp", "unknown command /mcp: did you mean /servers?"},
		{"/permissions", "did you mean /grants?"},
		{"/hlep", "unknown command /hlep: did you mean /help?"},
		{"/servrs", "did you mean /servers?"},
		{"/exprot", "did you mean /export?"},
		{"/zzzzzzzz", "unknown command /zzzzzzzz: /help lists the commands"},
	} {
		h := newHarness(t, Config{Dark: dark(true)})
		h.send(teaSize(140, 30))
		h.typeText(tc.typed)
		h.key("enter")
		if s := strings.Join(strings.Fields(h.screen()), " "); !strings.Contains(s, tc.want) {
			t.Errorf("%s: the screen lacks %q:\n%s", tc.typed, tc.want, h.screen())
		}
	}
}

// TestModelMistakeSuggests: /model with a model but no provider, or with a
// misspelt provider, says the command that was probably meant.
func TestModelMistakeSuggests(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"gpt-4o", "did you mean /model openai:gpt-4o?"},
		{"claude-sonnet-4", "did you mean /model anthropic:claude-sonnet-4?"},
		{"anthropc:claude-sonnet-4", "did you mean /model anthropic:claude-sonnet-4?"},
		{"llama3", "write it as /model PROVIDER:llama3, the provider one of " + strings.Join(llm.Providers(), ", ")},
	} {
		h := newHarness(t, Config{Model: llm.NewScript(nil), Dark: dark(true),
			SwitchModel: func(spec string) (ModelChoice, error) {
				return ModelChoice{}, errors.New(`model "` + spec + `": want provider:model`)
			}})
		h.send(teaSize(160, 30))
		h.typeText("/model " + tc.spec)
		h.key("enter")
		if s := strings.Join(strings.Fields(h.screen()), " "); !strings.Contains(s, tc.want) {
			t.Errorf("/model %s: the screen lacks %q:\n%s", tc.spec, tc.want, h.screen())
		}
	}
	if hint := modelHint("openai:gpt-4o"); hint != "" {
		t.Errorf("a spec in the right form got the hint %q", hint)
	}
}
