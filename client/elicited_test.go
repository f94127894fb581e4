package client

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// elicitingServer has a tool that asks a question (its form's fields
// written in the order zeta, alpha, mid) and then refuses the answer with a
// JSON-RPC error, and one that refuses the same way without asking.
func elicitingServer(t *testing.T) Spec {
	refuse := &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "age must be at least 18"}
	build := func() *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "asks", Version: "1"}, nil)
		obj := map[string]any{"type": "object"}
		schema := json.RawMessage(`{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"integer"},"mid":{"type":"boolean"}}}`)
		s.AddTool(&mcp.Tool{Name: "ask", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if _, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "age?", RequestedSchema: schema}); err != nil {
				return nil, err
			}
			return nil, refuse
		})
		s.AddTool(&mcp.Tool{Name: "refuse", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, refuse
		})
		return s
	}
	return Spec{Name: "s", Dial: func(ctx context.Context) (mcp.Transport, error) {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := build().Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}}
}

// TestRefusalAfterQuestionIsNotRejectedBeforeRunning: a call that asked
// the person something and then failed ran: it ends as a tool error with
// the server's message, not as "rejected before running". The same error
// from a call that asked nothing stays a rejection. The handler gets the
// form's fields in the server's order.
func TestRefusalAfterQuestionIsNotRejectedBeforeRunning(t *testing.T) {
	var order []string
	m := startManager(t, []Spec{elicitingServer(t)}, Options{
		Elicitation: func(_ context.Context, _ string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			order = FormOrder(req)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"zeta": "z", "alpha": 3, "mid": true}}, nil
		},
	})
	r := m.Call(context.Background(), "s", "ask", nil, CallOptions{})
	if r.Outcome != OutcomeToolError || r.Result == nil || !r.Result.IsError {
		t.Fatalf("after a question: %s (%v), want a tool error", r.Outcome, r.Err)
	}
	if text := r.Result.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "age must be at least 18") || !strings.Contains(text, "ran and asked") {
		t.Errorf("result text %q", text)
	}
	if diff := cmp.Diff([]string{"zeta", "alpha", "mid"}, order); diff != "" {
		t.Errorf("form order (-want +got):\n%s", diff)
	}
	if r := m.Call(context.Background(), "s", "refuse", nil, CallOptions{}); r.Outcome != OutcomeRejected {
		t.Errorf("without a question: %s, want rejected", r.Outcome)
	}
}

// TestFormOrderReplacesServersOwn: a server cannot pass its own value off
// as the order; a request that is not an elicitation is untouched.
func TestFormOrderReplacesServersOwn(t *testing.T) {
	id, _ := jsonrpc.MakeID(int64(1))
	in := &jsonrpc.Request{ID: id, Method: "elicitation/create", Params: json.RawMessage(
		`{"_meta":{"mcphost/propertyOrder":["evil"],"x":1},"message":"m","requestedSchema":{"type":"object","properties":{"b":{},"a":{}}}}`)}
	out := keepFormOrder(in).(*jsonrpc.Request)
	var p struct {
		Meta map[string]any `json:"_meta"`
	}
	if err := json.Unmarshal(out.Params, &p); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"mcphost/propertyOrder": []any{"b", "a"}, "x": float64(1)}, p.Meta); diff != "" {
		t.Errorf("meta (-want +got):\n%s", diff)
	}
	other := &jsonrpc.Request{ID: id, Method: "sampling/createMessage", Params: json.RawMessage(`{"a":1}`)}
	if got := keepFormOrder(other); got != other {
		t.Errorf("a sampling request was rewritten")
	}
}
