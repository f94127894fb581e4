package client

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestTraceMeta: a call's trace context goes into params._meta beside the
// progress token, and never replaces a member already there.
func TestTraceMeta(t *testing.T) {
	p := &mcp.CallToolParams{Name: "t"}
	p.SetProgressToken("tok")
	addTraceMeta(context.Background(), p)
	if len(p.Meta) != 1 {
		t.Fatalf("no trace context, yet _meta = %v", p.Meta)
	}
	ctx := WithTraceContext(context.Background(), map[string]string{
		"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "tracestate": "k=v", "baggage": "secret=1"})
	addTraceMeta(ctx, p)
	if p.Meta["traceparent"] != "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" || p.Meta["tracestate"] != "k=v" || p.Meta["progressToken"] != "tok" {
		t.Errorf("_meta = %v", p.Meta)
	}
	if _, ok := p.Meta["baggage"]; ok {
		t.Errorf("_meta carries baggage: %v", p.Meta)
	}
	q := &mcp.CallToolParams{Name: "t", Meta: mcp.Meta{"traceparent": "server-chosen"}}
	addTraceMeta(ctx, q)
	if q.Meta["traceparent"] != "server-chosen" {
		t.Errorf("an existing traceparent was replaced: %v", q.Meta)
	}
}
