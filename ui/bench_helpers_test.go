package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/client"
)

// catalogServers builds servers in-process MCP servers of perServer tools
// each, with titles, descriptions, a three-property input schema and all
// four annotations, and returns a spec per server that dials it in memory.
// The servers are built once; each dial opens a new session.
func catalogServers(tb testing.TB, servers, perServer int) []client.Spec {
	tb.Helper()
	verbs := []string{"list", "get", "create", "update", "delete"}
	nouns := []string{"issue", "ticket", "invoice", "customer", "deployment", "bucket", "report", "user"}
	handler := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "{}"}}}, nil
	}
	specs := make([]client.Spec, servers)
	for s := range servers {
		name := fmt.Sprintf("svc%02d", s)
		srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1.0.0"}, nil)
		for i := range perServer {
			verb, noun := verbs[i%len(verbs)], nouns[(i/len(verbs))%len(nouns)]
			schema := json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
				`"id":{"type":"string","description":"%s id, such as %s-%d"},`+
				`"limit":{"type":"integer","minimum":1,"maximum":100,"description":"how many records to return"},`+
				`"cursor":{"type":"string","description":"cursor from the previous call"}},`+
				`"required":["id"],"additionalProperties":false}`, noun, noun[:2], i))
			destructive, openWorld := verb == "delete", i%7 == 0
			srv.AddTool(&mcp.Tool{
				Name:  fmt.Sprintf("%s_%s_%04d", verb, noun, i),
				Title: fmt.Sprintf("%s %s (%d)", verb, noun, i),
				Description: fmt.Sprintf("%ss one %s record (variant %d) in the connected workspace of %s; "+
					"returns the affected records as JSON, at most one hundred per call, and a cursor for the next ones.", verb, noun, i, name),
				InputSchema: schema,
				Annotations: &mcp.ToolAnnotations{
					Title:           fmt.Sprintf("%s %s", verb, noun),
					ReadOnlyHint:    verb == "list" || verb == "get",
					DestructiveHint: &destructive,
					IdempotentHint:  verb != "create",
					OpenWorldHint:   &openWorld,
				},
			}, handler)
		}
		specs[s] = client.Spec{Name: name, Dial: func(ctx context.Context) (mcp.Transport, error) {
			ct, st := mcp.NewInMemoryTransports()
			if _, err := srv.Connect(context.Background(), st, nil); err != nil {
				return nil, err
			}
			return ct, nil
		}}
	}
	return specs
}
