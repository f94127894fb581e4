package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// breakpoints lists where a Messages body asks for cache breakpoints: "tools"
// for the last tool, "system", and "m<i>.<j>" for block j of message i.
func breakpoints(t *testing.T, raw []byte) []string {
	t.Helper()
	var body struct {
		System   []map[string]any `json:"system"`
		Messages []struct {
			Content []map[string]any `json:"content"`
		} `json:"messages"`
		Tools []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range body.System {
		if b["cache_control"] != nil {
			out = append(out, "system")
		}
	}
	for i, m := range body.Messages {
		for j, b := range m.Content {
			if b["cache_control"] != nil {
				out = append(out, fmt.Sprintf("m%d.%d", i, j))
			}
		}
	}
	for i, tl := range body.Tools {
		if tl["cache_control"] != nil {
			if i != len(body.Tools)-1 {
				t.Errorf("a breakpoint on tool %d of %d, want it on the last", i, len(body.Tools))
			}
			out = append(out, "tools")
		}
	}
	return out
}

// The Anthropic body caches the tools and the system prompt, and the
// conversation at its end and where the previous turn's end was; an
// assistant message sent back raw keeps its bytes.
func TestAnthropicCacheBreakpoints(t *testing.T) {
	f := newFakeAPI(t, replay(t, "anthropic/max_tokens.sse"))
	m := model(t, "anthropic:claude-test", f, Options{})
	tools := []Tool{{Name: "a", Description: "A."}, {Name: "b", Description: "B."}}
	first := &Request{System: "Be brief.", Tools: tools, Messages: []Message{{Role: RoleUser, Text: "hi"}}}
	turnOf(t, m, first)
	raw := json.RawMessage(`[{"type":"thinking","thinking":"t","signature":"s"},{"type":"tool_use","id":"c1","name":"a","input":{}}]`)
	second := &Request{System: "Be brief.", Tools: tools, Messages: []Message{
		{Role: RoleUser, Text: "hi"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "a"}}, Raw: raw, RawFrom: m.(*anthropicModel).rawKey},
		{Role: RoleTool, ToolResults: []ToolResult{{CallID: "c1", Content: "one"}}},
	}}
	turnOf(t, m, second)
	third := &Request{System: "Be brief.", Tools: tools, Messages: append(second.Messages,
		Message{Role: RoleAssistant, Text: "Done."}, Message{Role: RoleUser, Text: "again"})}
	turnOf(t, m, third)

	reqs := f.requests()
	want := [][]string{
		{"system", "m0.0", "tools"},
		{"system", "m0.0", "m2.0", "tools"},
		{"system", "m2.0", "m4.0", "tools"},
	}
	for i, r := range reqs {
		got := breakpoints(t, r.Raw)
		if strings.Join(got, " ") != strings.Join(want[i], " ") {
			t.Errorf("request %d: breakpoints %v, want %v", i+1, got, want[i])
		}
		if len(got) > 4 {
			t.Errorf("request %d: %d breakpoints; the API allows 4", i+1, len(got))
		}
	}
	if !bytes.Contains(reqs[1].Raw, raw) {
		t.Errorf("the raw assistant content was changed:\n%s", reqs[1].Raw)
	}
}

// Cached prompt tokens are reported: Anthropic's reads and writes, and
// OpenAI's prompt_tokens_details.cached_tokens.
func TestCachedTokensReported(t *testing.T) {
	f := newFakeAPI(t, replay(t, "anthropic/text_and_tool.sse"))
	events, _ := turnOf(t, model(t, "anthropic:claude-test", f, Options{}), hello())
	if u := usageOf(events); u.CacheReadTokens != 100 || u.InputTokens != 572 {
		t.Errorf("anthropic usage %+v, want 100 of 572 input tokens read from the cache", u)
	}

	data, err := os.ReadFile(filepath.Join("testdata", "openai/max_tokens.sse"))
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Replace(data, []byte(`"cached_tokens":0`), []byte(`"cached_tokens":8`), 1)
	o := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(data)
	})
	events, _ = turnOf(t, model(t, "openai:gpt-test", o, Options{}), hello())
	if u := usageOf(events); u.CacheReadTokens != 8 || u.InputTokens != 12 {
		t.Errorf("openai usage %+v, want 8 of 12 prompt tokens cached", u)
	}
}

func usageOf(events []Event) Usage {
	for _, e := range events {
		if e.Kind == EventUsage {
			return e.Usage
		}
	}
	return Usage{}
}

// An OpenAI-compatible server caches a prefix automatically when it is
// byte-identical: the tools, and the messages of the previous turn, are
// sent the same way on the next.
func TestOpenAIPrefixByteIdentical(t *testing.T) {
	f := newFakeAPI(t, replay(t, "openai/max_tokens.sse"))
	m := model(t, "openai-compatible:local", f, Options{BaseURL: f.URL()})
	tools := []Tool{{Name: "a", Description: "A.", InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}}}`)}}
	msgs := []Message{{Role: RoleUser, Text: "hi"}}
	turnOf(t, m, &Request{System: "Be brief.", Tools: tools, Messages: msgs})
	msgs = append(msgs, Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "a", Args: json.RawMessage(`{"x":"1"}`)}}},
		Message{Role: RoleTool, ToolResults: []ToolResult{{CallID: "c1", Content: "one"}}})
	turnOf(t, m, &Request{System: "Be brief.", Tools: tools, Messages: msgs})
	reqs := f.requests()
	part := func(raw []byte, key string) string {
		var body map[string]json.RawMessage
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Fatal(err)
		}
		return string(body[key])
	}
	if a, b := part(reqs[0].Raw, "tools"), part(reqs[1].Raw, "tools"); a != b {
		t.Errorf("the tools changed between turns:\n%s\n%s", a, b)
	}
	a, b := part(reqs[0].Raw, "messages"), part(reqs[1].Raw, "messages")
	if !strings.HasPrefix(b, strings.TrimSuffix(a, "]")) {
		t.Errorf("the second turn's messages do not begin with the first's:\n%s\n%s", a, b)
	}
}
