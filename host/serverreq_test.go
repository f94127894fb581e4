package host

import (
	"context"
	"testing"

	"github.com/mcphost/mcphost/llm"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestElicitDefaults(t *testing.T) {
	schema := func(required ...string) map[string]any {
		return map[string]any{"type": "object", "required": required, "properties": map[string]any{
			"name":  map[string]any{"type": "string", "default": "Ada"},
			"count": map[string]any{"type": "integer", "default": 3},
			"email": map[string]any{"type": "string"},
		}}
	}
	cases := []struct {
		name   string
		params *mcp.ElicitParams
		action string
		fields int
	}{
		{"defaults cover the required", &mcp.ElicitParams{Message: "m", RequestedSchema: schema("name")}, "accept", 2},
		{"a required field without default", &mcp.ElicitParams{Message: "m", RequestedSchema: schema("email")}, "decline", 0},
		{"url mode", &mcp.ElicitParams{Mode: "url", URL: "https://example.com/x"}, "decline", 0},
	}
	for _, c := range cases {
		r := ElicitDefaults(c.params)
		if r.Action != c.action || len(r.Content) != c.fields {
			t.Errorf("%s: %s with %v, want %s with %d fields", c.name, r.Action, r.Content, c.action, c.fields)
		}
	}
}

func TestSample(t *testing.T) {
	model := llm.NewScript([]llm.ScriptTurn{{Text: "four"}})
	res, _, err := Sample(context.Background(), model, &mcp.CreateMessageParams{MaxTokens: 10,
		Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "2+2?"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := res.Content.(*mcp.TextContent); !ok || tc.Text != "four" || res.Role != "assistant" {
		t.Errorf("result %+v", res)
	}
	if _, _, err := Sample(context.Background(), nil, &mcp.CreateMessageParams{}); err == nil {
		t.Error("sampling without a model must fail")
	}
}
