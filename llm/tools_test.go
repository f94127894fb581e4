package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// The tools are encoded once and sent again on the next turns; a tool
// changed in place, in the same slice, is sent as it is now.
func TestToolsCachedByContent(t *testing.T) {
	for _, spec := range []string{"openai:gpt-test", "anthropic:claude-test"} {
		t.Run(spec, func(t *testing.T) {
			file := "openai/max_tokens.sse"
			if strings.HasPrefix(spec, "anthropic") {
				file = "anthropic/max_tokens.sse"
			}
			api := newFakeAPI(t, replay(t, file))
			m, err := New(spec, Options{BaseURL: api.URL(), APIKey: "k", Getenv: noEnv, MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			req := manyTools(3)
			send := func() {
				t.Helper()
				if _, err := collect(context.Background(), m, req); err != nil {
					t.Fatal(err)
				}
			}
			send()
			send()
			req.Tools[1].Description = "Changed in place."
			req.Tools[2].InputSchema = json.RawMessage(`{"type": "object", "properties": {"x": {"type": "integer"}}}`)
			send()

			got := api.requests()
			if len(got) != 3 {
				t.Fatalf("%d requests, want 3", len(got))
			}
			tools := func(i int) string {
				b, _ := json.Marshal(got[i].Body["tools"])
				return string(b)
			}
			if tools(0) != tools(1) {
				t.Errorf("second turn sent other tools:\n%s\n%s", tools(0), tools(1))
			}
			last := tools(2)
			if !strings.Contains(last, "Changed in place.") || !strings.Contains(last, `"x":{"type":"integer"}`) {
				t.Errorf("a tool changed in place was not sent as it is now: %s", last)
			}
			if n := len(got[2].Body["tools"].([]any)); n != 3 {
				t.Errorf("third turn sent %d tools, want 3", n)
			}
		})
	}
}

// A bad tool is refused on every turn, not only on the first.
func TestBadToolsNotCached(t *testing.T) {
	api := newFakeAPI(t, replay(t, "openai/max_tokens.sse"))
	m, err := New("openai:gpt-test", Options{BaseURL: api.URL(), APIKey: "k", Getenv: noEnv, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	req := manyTools(2)
	req.Tools[1].InputSchema = json.RawMessage(`[1]`)
	for range 2 {
		_, err := collect(context.Background(), m, req)
		if err == nil || !strings.Contains(err.Error(), "input schema is not a JSON object") {
			t.Fatalf("err = %v, want the schema refused", err)
		}
	}
	req.Tools[1].InputSchema = nil
	if _, err := collect(context.Background(), m, req); err != nil {
		t.Fatalf("after the fix: %v", err)
	}
	if n := len(api.requests()); n != 1 {
		t.Errorf("%d requests reached the server, want only the good one", n)
	}
}

func TestWithTools(t *testing.T) {
	for _, tt := range []struct{ body, tools, want string }{
		{`{"a":1}`, `[{"n":1}]`, `{"a":1,"tools":[{"n":1}]}`},
		{`{}`, `[]`, `{}`}, // OpenAI refuses an empty list
		{`{"a":1}`, ``, `{"a":1}`},
	} {
		var tools []byte
		if tt.tools != "" {
			tools = []byte(tt.tools)
		}
		if got := string(withTools([]byte(tt.body), tools)); got != tt.want {
			t.Errorf("withTools(%s, %s) = %s, want %s", tt.body, tt.tools, got, tt.want)
		}
	}
}

// The same tools, even in another slice, are encoded once.
func TestToolCacheHit(t *testing.T) {
	var c toolCache
	encodes := 0
	enc := func(b *bytes.Buffer, tl Tool, schema []byte) error {
		encodes++
		return encodeChatTool(b, tl, schema)
	}
	first, _, err := c.encoded(manyTools(5).Tools, ToolLimits{}, enc)
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := c.encoded(manyTools(5).Tools, ToolLimits{}, enc)
	if err != nil {
		t.Fatal(err)
	}
	if encodes != 5 || &first[0] != &again[0] {
		t.Errorf("%d tools encoded for two requests of the same 5 tools, want 5 and the same bytes", encodes)
	}
	other := manyTools(5).Tools
	other[0].Name, other[1].Name = other[1].Name, other[0].Name
	if _, _, err := c.encoded(other, ToolLimits{}, enc); err != nil {
		t.Fatal(err)
	}
	if encodes != 10 {
		t.Errorf("tools in another order were not encoded again (%d encodes)", encodes)
	}
}
