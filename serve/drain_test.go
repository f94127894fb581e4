package serve

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// holdingObserver holds the end of every call of tool until released, so
// that a test can see who waits for a call to end.
type holdingObserver struct {
	host.NopObserver
	tool    string
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (o *holdingObserver) CallDone(_ context.Context, r *host.Result, _ string) {
	if r.Tool != o.tool {
		return
	}
	o.once.Do(func() { close(o.entered) })
	<-o.release
}

// A parked call outlives its request: the client got the server's question
// and has not answered. Shutdown cancels it and does not return before the
// call has ended (its outcome recorded), however long that takes, so the
// audit log can be closed after it.
func TestShutdownWaitsForAParkedCall(t *testing.T) {
	obs := &holdingObserver{tool: "ask", entered: make(chan struct{}), release: make(chan struct{})}
	var released sync.Once
	release := func() { released.Do(func() { close(obs.release) }) }
	t.Cleanup(release)
	w := newWorld(t, worldOpts{serverQuestions: true, askers: true, tweak: func(o *Options) {
		o.Observer = obs
		o.AskTimeout = time.Hour // only serve's stopping ends the wait
	}})
	c := w.connectWith(&elicitor{}, connOpts{byHand: true})
	first := callArgs(t, c.cs, &mcp.CallToolParams{Name: "ask1__ask", Arguments: map[string]any{"label": label("shutdown")}})
	relayedKey(t, first, "who is there?")
	if n := len(w.outcomes("ask")); n != 0 {
		t.Fatalf("%d outcomes while the call waits for its answer, want 0", n)
	}

	// The call's end is held: a Shutdown with little time gives up, saying
	// calls still run, whenever it looks.
	short, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	err := w.srv.Shutdown(short)
	cancel()
	if err == nil {
		t.Fatal("Shutdown returned nil while the parked call had not ended")
	}
	select {
	case <-obs.entered: // the call was cancelled and is ending
	case <-time.After(20 * time.Second):
		t.Fatal("Shutdown did not cancel the parked call")
	}
	release()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := w.srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown once the call could end: %v", err)
	}
	if n := len(w.outcomes("ask")); n != 1 {
		t.Fatalf("%d outcomes once Shutdown returned, want the parked call's 1", n)
	}
	// Nothing new is taken once serve stops.
	if _, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask1__ask", Arguments: map[string]any{"label": label("late")}}); err == nil {
		t.Fatal("a call after Shutdown was taken")
	}
}
