package llm

import (
	"cmp"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// TestLive runs one tool round trip against each real provider whose key
// or endpoint is set, so that anyone with keys can check the wire code
// against the real services. It is skipped unless MCPHOST_LIVE=1, and no CI
// sets it. Variables:
//
//	ANTHROPIC_API_KEY, MCPHOST_LIVE_ANTHROPIC_MODEL (default claude-sonnet-4-5)
//	OPENAI_API_KEY, MCPHOST_LIVE_OPENAI_MODEL (default gpt-4.1-mini)
//	MCPHOST_LIVE_OLLAMA_MODEL (an Ollama on localhost, e.g. qwen3:8b)
//	MCPHOST_LIVE_COMPAT_BASE_URL, MCPHOST_LIVE_COMPAT_MODEL, and OPENAI_API_KEY
//	  for an OpenAI-compatible server (DeepSeek, OpenRouter, Gemini, llama.cpp)
//
// The Anthropic case runs twice, the second time with thinking on, which
// is what makes the API insist that the thinking blocks come back.
func TestLive(t *testing.T) {
	if os.Getenv("MCPHOST_LIVE") != "1" {
		t.Skip("set MCPHOST_LIVE=1 (with provider keys) to run against the real services")
	}
	type live struct {
		name, spec string
		o          Options
		ready      bool
	}
	compat := os.Getenv("MCPHOST_LIVE_COMPAT_BASE_URL")
	cases := []live{
		{"anthropic", "anthropic:" + cmp.Or(os.Getenv("MCPHOST_LIVE_ANTHROPIC_MODEL"), "claude-sonnet-4-5"), Options{}, os.Getenv("ANTHROPIC_API_KEY") != ""},
		{"anthropic-thinking", "anthropic:" + cmp.Or(os.Getenv("MCPHOST_LIVE_ANTHROPIC_MODEL"), "claude-sonnet-4-5"), Options{Thinking: "2048"}, os.Getenv("ANTHROPIC_API_KEY") != ""},
		{"openai", "openai:" + cmp.Or(os.Getenv("MCPHOST_LIVE_OPENAI_MODEL"), "gpt-4.1-mini"), Options{}, os.Getenv("OPENAI_API_KEY") != ""},
		{"ollama", "ollama:" + os.Getenv("MCPHOST_LIVE_OLLAMA_MODEL"), Options{}, os.Getenv("MCPHOST_LIVE_OLLAMA_MODEL") != ""},
		{"openai-compatible", "openai-compatible:" + os.Getenv("MCPHOST_LIVE_COMPAT_MODEL"), Options{BaseURL: compat}, compat != ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !c.ready {
				t.Skip("no key or endpoint for this provider")
			}
			c.o.Getenv = os.Getenv
			m, err := New(c.spec, c.o)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			req := &Request{
				System:   "You answer weather questions by calling the weather tool.",
				Messages: []Message{{Role: RoleUser, Text: "What is the weather in Paris right now? Use the tool, then answer in one sentence."}},
				Tools: []Tool{{Name: "weather", Description: "Current weather of a city.",
					InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}},
			}
			events, err := collect(ctx, m, req)
			if err != nil {
				t.Fatalf("first turn: %v", err)
			}
			n := next(events)
			if len(n.Messages[1].ToolCalls) == 0 {
				t.Fatalf("the model called no tool: %v", events)
			}
			for i := range n.Messages[2].ToolResults {
				n.Messages[2].ToolResults[i].Content = "18 degrees Celsius and sunny"
			}
			n.System, n.Tools, n.Messages[0] = req.System, req.Tools, req.Messages[0]
			events, err = collect(ctx, m, n)
			if err != nil {
				t.Fatalf("second turn, with the first one sent back: %v", err)
			}
			var text strings.Builder
			for _, e := range events {
				if e.Kind == EventTextDelta {
					text.WriteString(e.Text)
				}
			}
			if !strings.Contains(text.String(), "18") {
				t.Errorf("answer %q does not use the tool's result", text.String())
			}
		})
	}
}
