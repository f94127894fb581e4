package client

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// StaleCode is the signal a server sends when it must be restarted before
// it runs writes again: it was rebuilt or reconfigured while running and
// still serves the tool definitions it started with. Such a server refuses
// writes and keeps answering reads.
const StaleCode = "SERVER_STALE"

// maxStaleJSON bounds the text parsed when looking for the signal: the
// signal is a small object, and a large text is something else.
const maxStaleJSON = 64 << 10

// StaleResult reports whether a tool result carries the stale signal as
// data: a JSON object with "error": "SERVER_STALE", as the whole of a text
// content or as the structured content. The word inside other text (a
// file that mentions it, a log line) is not the signal.
func StaleResult(res *mcp.CallToolResult) bool {
	if res == nil {
		return false
	}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok && staleObject([]byte(tc.Text)) {
			return true
		}
	}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil && staleObject(b) {
			return true
		}
	}
	return false
}

// staleRPC reports whether a JSON-RPC error carries the stale signal: its
// message is the code (alone, or followed by a colon or a space and more
// words) or a JSON object with "error": "SERVER_STALE", or its data is the
// code as a JSON string or such an object.
func staleRPC(e *jsonrpc.Error) bool {
	msg := strings.TrimSpace(e.Message)
	if rest, ok := strings.CutPrefix(msg, StaleCode); ok && (rest == "" || rest[0] == ':' || rest[0] == ' ') {
		return true
	}
	if staleObject([]byte(msg)) {
		return true
	}
	var s string
	if json.Unmarshal(e.Data, &s) == nil && s == StaleCode {
		return true
	}
	return staleObject(e.Data)
}

// staleObject reports whether b is a JSON object whose "error" member is
// the string "SERVER_STALE".
func staleObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || len(b) > maxStaleJSON || b[0] != '{' {
		return false
	}
	var v struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(b, &v) != nil {
		return false
	}
	var code string
	return json.Unmarshal(v.Error, &code) == nil && code == StaleCode
}
