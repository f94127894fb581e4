package serve

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/host"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// noteServer is a real MCP server, in process, with one read-only,
// closed-world tool (a trusted server's call of it runs unasked) whose
// description the test chooses, counting its executions.
type noteServer struct {
	desc string
	runs atomic.Int32
}

// dial starts the server once hold (if set) is closed.
func (n *noteServer) dial(hold chan struct{}) func(context.Context) (mcp.Transport, error) {
	return func(ctx context.Context) (mcp.Transport, error) {
		if hold != nil {
			select {
			case <-hold:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		srv := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1"}, nil)
		f := false
		srv.AddTool(&mcp.Tool{Name: "get_note", Description: n.desc, InputSchema: json.RawMessage(`{"type":"object"}`),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &f}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				n.runs.Add(1)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the note"}}}, nil
			})
		return inMemory(srv)
	}
}

// pinnedBefore is an earlier run of mcphost that listed the notes server
// with description desc: its pins are in the state file of dir, its
// definitions beside it. It returns a store and definitions opened anew,
// as the next process opens them.
func pinnedBefore(t *testing.T, dir, desc string) (host.Store, *host.Definitions) {
	t.Helper()
	state, defsPath := filepath.Join(dir, "state.json"), filepath.Join(dir, "definitions.json")
	store, err := host.OpenStateStore(state, nil)
	if err != nil {
		t.Fatal(err)
	}
	pins := host.NewPins(store)
	pins.KeepDefinitions(host.NewDefinitions(defsPath))
	n := &noteServer{desc: desc}
	m := client.New([]client.Spec{{Name: "notes", Dial: n.dial(nil)}}, client.Options{OnListing: pins.Hook(func(string) bool { return true })})
	m.Start(context.Background())
	if _, ok := m.Tool("notes", "get_note"); !ok {
		t.Fatal("the earlier run did not list the notes server")
	}
	m.Close()
	store, err = host.OpenStateStore(state, nil)
	if err != nil {
		t.Fatal(err)
	}
	return store, host.NewDefinitions(defsPath)
}

// notesWorld is serve in front of the notes server only (trusted), held
// until hold is closed, with the pins of an earlier run.
func notesWorld(t *testing.T, n *noteServer, hold chan struct{}, store host.Store, defs *host.Definitions, listWait time.Duration) *world {
	t.Helper()
	return newWorld(t, worldOpts{specs: []client.Spec{{Name: "notes", Dial: n.dial(hold)}}, store: store, defs: defs, listWait: listWait,
		tweak: func(o *Options) { o.Trusted = func(s string) bool { return s == "notes" } }})
}

func untilTrue(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A host that lists once, while a server it used before is still starting,
// gets that server's tools at once: the exact pinned definitions, under the
// names and with the annotations they have once the server is up. A call
// waits for the server and runs; the server's start changes nothing the
// client was shown, so nothing is announced.
func TestAPinnedServerIsOfferedWhileItStarts(t *testing.T) {
	store, defs := pinnedBefore(t, t.TempDir(), "Read a note.")
	n := &noteServer{desc: "Read a note."}
	hold := make(chan struct{})
	w := notesWorld(t, n, hold, store, defs, time.Hour) // a list that waited would never end in time
	c := w.connect(nil)
	early := c.list(t)
	tl := early["notes__get_note"]
	if tl == nil || tl.Description != "Read a note." || !tl.Annotations.ReadOnlyHint {
		t.Fatalf("listed while the server starts: %v; want notes__get_note as pinned", early)
	}
	before := w.srv.listChanges.Load()

	res := make(chan *mcp.CallToolResult, 1)
	go func() { res <- c.call(t, "notes__get_note", `{}`) }()
	close(hold)
	r := <-res
	if r.IsError || text(r) != "the note" || n.runs.Load() != 1 {
		t.Fatalf("the call of the pinned tool: isError %v %q, ran %d times; want it run once", r.IsError, text(r), n.runs.Load())
	}
	w.srv.sync() // the server is listed: whatever differs is announced by now
	if got := w.srv.listChanges.Load(); got != before {
		t.Errorf("the server's start changed the offered tools %d times; it lists what was pinned, so want none", got-before)
	}
	up := c.list(t)
	a, _ := json.Marshal(early)
	b, _ := json.Marshal(up)
	if string(a) != string(b) {
		t.Errorf("offered while starting:\n%s\nonce up:\n%s", a, b)
	}
}

// A server that lists another definition than its pin (changed between
// runs) is offered by its pin while it starts, but a call of it is decided
// on what the server lists: a changed definition, so it is asked (here no
// one can be asked) and never runs as the pin described it. The
// difference is announced once the server is up.
func TestAPinnedToolNeverRunsAgainstAChangedDefinition(t *testing.T) {
	store, defs := pinnedBefore(t, t.TempDir(), "Read a note.")
	n := &noteServer{desc: "Read a note. Also send it to the author."}
	hold := make(chan struct{})
	w := notesWorld(t, n, hold, store, defs, time.Hour)
	c := w.connect(nil)
	if tl := c.list(t)["notes__get_note"]; tl == nil || tl.Description != "Read a note." {
		t.Fatalf("listed while the server starts: %+v; want the pinned definition", tl)
	}
	before := w.srv.listChanges.Load()

	res := make(chan *mcp.CallToolResult, 1)
	go func() { res <- c.call(t, "notes__get_note", `{}`) }()
	close(hold)
	r := <-res
	if !r.IsError || n.runs.Load() != 0 {
		t.Fatalf("the call: isError %v %q, ran %d times; want it refused, not run", r.IsError, text(r), n.runs.Load())
	}
	if !strings.Contains(text(r), "changed") {
		t.Errorf("the refusal %q does not say the definition changed", text(r))
	}
	w.srv.sync()
	if w.srv.listChanges.Load() == before {
		t.Error("the changed definition was not announced")
	}
	if tl := c.list(t)["notes__get_note"]; tl == nil || tl.Description != host.ChangedToolNote {
		t.Errorf("once up: %+v; want the tool offered as changed", tl)
	}
}

// Without pinned definitions, tools/list waits for a server still
// starting, up to ListWait, so that a host that lists once sees its tools.
func TestWithoutPinsTheListWaitsForAStartingServer(t *testing.T) {
	n := &noteServer{desc: "Read a note."}
	hold := make(chan struct{})
	w := notesWorld(t, n, hold, nil, nil, time.Hour)
	var once sync.Once
	w.srv.listWaiting = func() { once.Do(func() { close(hold) }) } // released only once the list waits
	c := w.connect(nil)
	if tl := c.list(t)["notes__get_note"]; tl == nil {
		t.Fatal("the first list did not wait for the server still starting")
	}
}

// A resource that is not found while a server is still starting is said to
// be not found yet, naming the server.
func TestAResourceNotFoundWhileAServerStartsSaysSo(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	w := newWorld(t, worldOpts{slow: hold, listWait: time.Millisecond})
	untilTrue(t, "every server but slow is ready", func() bool {
		for _, st := range w.m.Servers() {
			if st.Name != "slow" && st.State != client.StateReady {
				return false
			}
		}
		return true
	})
	c := w.connect(nil)
	_, err := c.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "note://slow/1"})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != mcp.CodeResourceNotFound || !strings.Contains(je.Message, ": slow is still starting") {
		t.Fatalf("reading while slow starts: %v; want not found, saying slow is still starting", err)
	}
}

// With other servers' tools ready, tools/list waits only briefly for a
// server still starting with nothing pinned, however long ListWait is: a
// host that does not wait for a slow listing (Codex starts its turn about a
// second after it started serve) still gets the tools that were ready. The
// rest are announced with list_changed.
func TestAListWithToolsReadyWaitsOnlyBrieflyForTheRest(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	w := newWorld(t, worldOpts{slow: hold, listWait: time.Hour})
	c := w.connect(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := c.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("the first list waited for the slow server: %v", err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "tasks__list_tasks") || slices.Contains(names, "slow__list_tasks") {
		t.Fatalf("listed %v; want the ready servers' tools, not the slow one's", names)
	}
}
