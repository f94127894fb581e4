package serve

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/mcphost/mcphost/internal/pgtest"
	"github.com/mcphost/mcphost/later"
	"github.com/mcphost/mcphost/pgstore"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A call the store cannot hold (its database is gone) is not sent to the
// approval page through a URL elicitation, which would name no call: it is
// refused.
func TestNoPageForACallTheStoreCannotHold(t *testing.T) {
	s, err := pgstore.Open(context.Background(), pgtest.DB(t))
	if err != nil {
		t.Fatal(err)
	}
	link := func(id string) string { return "http://127.0.0.1:8765/approve/" + id }
	w, _, _ := laterWorld(t, link, func(o *Options) { o.Later = s.Later(later.Options{}) })
	s.Close()
	var urls atomic.Int32
	opts := &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{
			Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if req.Params.Mode == "url" {
				urls.Add(1)
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": DecisionAllowOnce, "confirm": "set_value"}}, nil
		},
	}
	c := w.connectClient(opts, "2025-11-25")
	res := c.call(t, "rogue__set_value", `{"key":"k","value":"v"}`)
	if !res.IsError || w.execs("rogue", "set_value") != 0 || urls.Load() != 0 {
		t.Fatalf("a call that could not be held: %s (%d runs, %d URL elicitations), want refused with no page opened", text(res), w.execs("rogue", "set_value"), urls.Load())
	}
}
