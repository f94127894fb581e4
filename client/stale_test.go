package client

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The stale signal is data, not a word: each form that carries it, and the
// near misses that do not.
func TestStaleSignal(t *testing.T) {
	obj := `{"error":"SERVER_STALE","changed":["the build was rebuilt"],"hint":"restart"}`
	rpc := []struct {
		msg, data string
		want      bool
	}{
		{"SERVER_STALE", "", true},
		{"SERVER_STALE: restart the server", "", true},
		{" SERVER_STALE restart", "", true},
		{obj, "", true},
		{"stale", obj, true},
		{"stale", `"SERVER_STALE"`, true},
		{"SERVER_STALENESS", "", false},
		{"the word SERVER_STALE in passing", "", false},
		{"stale", `{"error":"SCHEMA_OUT_OF_DATE"}`, false},
		{"stale", `{"error":{"code":"SERVER_STALE"}}`, false},
		{"stale", `["SERVER_STALE"]`, false},
		{"internal error", "", false},
	}
	for _, c := range rpc {
		e := &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: c.msg}
		if c.data != "" {
			e.Data = json.RawMessage(c.data)
		}
		if got := staleRPC(e); got != c.want {
			t.Errorf("staleRPC(message %q, data %s) = %v, want %v", c.msg, c.data, got, c.want)
		}
	}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	results := []struct {
		name string
		res  *mcp.CallToolResult
		want bool
	}{
		{"text object", text(obj), true},
		{"text object with space", text("\n " + obj + "\n"), true},
		{"structured", &mcp.CallToolResult{IsError: true, StructuredContent: map[string]any{"error": "SERVER_STALE"}}, true},
		{"word in text", text("Error: SERVER_STALE, restart"), false},
		{"quoted in other JSON", text(`{"message":"SERVER_STALE"}`), false},
		{"other error code", text(`{"error":"SCHEMA_OUT_OF_DATE"}`), false},
		{"nil", nil, false},
	}
	for _, c := range results {
		if got := StaleResult(c.res); got != c.want {
			t.Errorf("%s: StaleResult = %v, want %v", c.name, got, c.want)
		}
	}
}
