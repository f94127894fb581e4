package client

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/fixtures"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSubscriptionUpdatesAndListChangesArePublished: a subscribed URI's
// update and a server's prompts/resources list_changed each reach the
// Manager's subscribers as events naming the server.
func TestSubscriptionUpdatesAndListChangesArePublished(t *testing.T) {
	var mu sync.Mutex
	var f *fixtures.Fixture
	spec := Spec{Name: "tasks", Dial: func(ctx context.Context) (mcp.Transport, error) {
		fx, err := fixtures.New("tasks", fixtures.Options{Resources: true})
		if err != nil {
			return nil, err
		}
		mu.Lock()
		f = fx
		mu.Unlock()
		return fx.InMemory(ctx)
	}}
	m := startManager(t, []Spec{spec}, Options{})
	events, unsub := m.Subscribe()
	defer unsub()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if !m.CanSubscribe("tasks") || !m.CanComplete("tasks") {
		t.Fatal("tasks offers subscriptions and completions; the manager says not")
	}
	const uri = "tasks://task/T-1"
	if err := m.SubscribeResource(ctx, "tasks", uri); err != nil {
		t.Fatal(err)
	}
	if r := m.Call(ctx, "tasks", "comment_on_task", json.RawMessage(`{"id":"T-1","body":"x"}`), CallOptions{}); r.Err != nil {
		t.Fatal(r.Err)
	}
	waitFor(t, events, func(e Event) bool { return e.Kind == EventResourceUpdated && e.Server == "tasks" && e.URI == uri })
	if err := m.UnsubscribeResource(ctx, "tasks", uri); err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	srv := f.Server
	mu.Unlock()
	srv.AddPrompt(&mcp.Prompt{Name: "later"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	})
	waitFor(t, events, func(e Event) bool { return e.Kind == EventPrompts && e.Server == "tasks" })
	srv.RemoveResources(fixtures.BoardURI)
	waitFor(t, events, func(e Event) bool { return e.Kind == EventResources && e.Server == "tasks" })
}
