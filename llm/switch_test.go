package llm

import (
	"strings"
	"testing"
)

// TestSwitchedModelSendsNoThinking: a conversation that continues on
// another provider, or on the same provider at another endpoint, carries
// none of the thinking or reasoning the first one sent (nor its
// signatures): each assistant message is rebuilt from its text and calls.
// This is what keeps /model safe.
func TestSwitchedModelSendsNoThinking(t *testing.T) {
	tests := []struct {
		name, fromFile, fromSpec, toSpec string
		toReply                          string
		leaks                            []string // what the first provider sent that must not be sent on
	}{
		{"anthropic to openai", "anthropic/thinking_tool.sse", "anthropic:claude-test", "openai:gpt-test", "openai/max_tokens.sse",
			[]string{"thinking", "signature", "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds", "The user wants the weather"}},
		{"anthropic to anthropic elsewhere", "anthropic/thinking_tool.sse", "anthropic:claude-test", "anthropic:claude-other", "anthropic/max_tokens.sse",
			[]string{"thinking", "signature", "The user wants the weather"}},
		{"openrouter to openai", "openai/openrouter_reasoning.sse", "openai-compatible:anthropic/claude-test", "openai:gpt-test", "openai/max_tokens.sse",
			[]string{"reasoning_details", "ErcBCkgIBxAC", "Look up the stock."}},
		{"deepseek to anthropic", "openai/deepseek_reasoning.sse", "openai-compatible:deepseek-test", "anthropic:claude-test", "anthropic/max_tokens.sse",
			[]string{"reasoning_content", "Need the date."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from := newFakeAPI(t, replay(t, tt.fromFile))
			events, done := turnOf(t, model(t, tt.fromSpec, from, Options{}), hello())
			if len(done.Raw) == 0 {
				t.Fatalf("the first turn kept no raw content to test with")
			}
			to := newFakeAPI(t, replay(t, tt.toReply))
			turnOf(t, model(t, tt.toSpec, to, Options{}), next(events))
			body := string(to.requests()[0].Raw)
			for _, l := range tt.leaks {
				if strings.Contains(body, l) {
					t.Errorf("the request to %s carries %q from %s:\n%s", tt.toSpec, l, tt.fromSpec, body)
				}
			}
			// The call's name is carried only by the assistant's own call (a
			// result names its call by id): it must survive the rebuild.
			var call *ToolCall
			for _, e := range events {
				if e.Kind == EventToolCall {
					call = e.Call
					break
				}
			}
			if call == nil {
				t.Fatalf("the first turn of %s called no tool to test with", tt.fromFile)
			}
			if !strings.Contains(body, `"`+call.Name+`"`) {
				t.Errorf("the request lost the first turn's call of %s:\n%s", call.Name, body)
			}
		})
	}
}
