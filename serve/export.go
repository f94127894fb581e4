package serve

import (
	"encoding/json"
	"strings"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxDescription bounds a description passed on to a client, in bytes.
const MaxDescription = 8 << 10

// PoisonedNote replaces a description that gives the model orders.
const PoisonedNote = "mcphost withheld this tool's description: it gives the model orders (%s). " +
	"Calling the tool always asks the person first."

// objectSchema is the schema of a tool whose own is withheld or unusable.
var objectSchema = json.RawMessage(`{"type":"object"}`)

// definition is what a client is shown of t under name: the effective
// annotations, and the server's words only where the chat would show them
// to a model.
func (s *Server) definition(name string, t *client.Tool) *mcp.Tool {
	d, err := s.explain.Explain(t.Server, t.Name, nil)
	if err != nil {
		d, err = s.explain.ExplainPinned(t) // offered while its server starts (early.go)
	}
	if err != nil {
		d = decide.Decision{Effective: worst}
	}
	ann := annotations(d.Effective)
	if s.explain.Changed(t) {
		// As the loop offers a rug pull to a model: by name only.
		return &mcp.Tool{Name: name, Description: host.ChangedToolNote, InputSchema: objectSchema, Annotations: ann}
	}
	title := bound(t.Title, 200)
	desc := sanitize.Truncate(sanitize.Text(t.Description), MaxDescription)
	if flags := decide.PoisonFlags(t.Description); flags != nil {
		desc = strings.Replace(PoisonedNote, "%s", strings.Join(flags, ", "), 1)
	}
	ann.Title = title
	def := &mcp.Tool{Name: name, Title: title, Description: desc, InputSchema: inputSchema(t.InputSchema), Annotations: ann}
	if isObject(t.OutputSchema) {
		def.OutputSchema = t.OutputSchema
	}
	return def
}

// worst is what a tool counts as when nothing about it can be believed.
var worst = decide.Hints{ReadOnly: decide.False, Destructive: decide.True, Idempotent: decide.False, OpenWorld: decide.True}

// annotations are the effective hints as MCP annotations, every hint set.
func annotations(h decide.Hints) *mcp.ToolAnnotations {
	destructive, openWorld := h.Destructive != decide.False, h.OpenWorld != decide.False
	return &mcp.ToolAnnotations{
		ReadOnlyHint:    h.ReadOnly == decide.True,
		DestructiveHint: &destructive,
		IdempotentHint:  h.Idempotent == decide.True,
		OpenWorldHint:   &openWorld,
	}
}

// inputSchema passes a server's schema on when it is a JSON object of type
// "object" (the SDK refuses anything else); otherwise an empty object
// schema stands in, and the server judges the arguments it gets.
func inputSchema(raw json.RawMessage) json.RawMessage {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil || m["type"] != "object" {
		return objectSchema
	}
	return raw
}

func isObject(raw json.RawMessage) bool {
	var m map[string]any
	return len(raw) > 0 && json.Unmarshal(raw, &m) == nil && m != nil
}
