package serve

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// liveFixture is a server spec whose fixture a test can reach: the one
// serving the current connection.
type liveFixture struct {
	mu sync.Mutex
	f  *fixtures.Fixture
}

func (l *liveFixture) spec(t *testing.T, name, fixture string, fo fixtures.Options, hold chan struct{}) client.Spec {
	return client.Spec{Name: name, Dial: fixtureDial(fixture, fo, hold, func(f *fixtures.Fixture) {
		l.mu.Lock()
		l.f = f
		l.mu.Unlock()
	})}
}

func (l *liveFixture) get() *fixtures.Fixture {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f
}

// resourceWorld serves tasks with its resources and then hostile with its
// wide template (HostileTemplates), so that tasks' template is offered
// first, and returns a client that sees both.
func resourceWorld(t *testing.T) (*world, *liveFixture, *conn) {
	t.Helper()
	tasks := &liveFixture{}
	hold := make(chan struct{})
	// The untrusted hostile's reads are allowed by rule, so that what is
	// tested here is where a read goes, not whether it is asked.
	w := newWorld(t, worldOpts{specs: []client.Spec{
		tasks.spec(t, "tasks", "tasks", fixtures.Options{Resources: true}, nil),
		fixtureSpec("hostile", "hostile", fixtures.Options{Hostile: fixtures.HostileNone | fixtures.HostileTemplates}, hold),
	}, rules: []string{"allow:hostile/resources/read"}})
	c := w.connect(nil)
	c.until(t, "tasks' template listed", func() bool { return c.templates(t)[fixtures.TaskTemplate] != nil })
	close(hold)
	c.until(t, "hostile's template listed", func() bool { return c.templates(t)[fixtures.HostileTemplate] != nil })
	return w, tasks, c
}

// until waits for cond, re-checking after each list_changed the client
// gets (and at least every 50ms, for what sends none).
func (c *conn) until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for !cond() {
		select {
		case <-c.changed:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatalf("%s: not within 10s", what)
		}
	}
}

func (c *conn) templates(t *testing.T) map[string]*mcp.ResourceTemplate {
	t.Helper()
	res, err := c.cs.ListResourceTemplates(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*mcp.ResourceTemplate{}
	for _, rt := range res.ResourceTemplates {
		out[rt.URITemplate] = rt
	}
	return out
}

func (c *conn) read(t *testing.T, uri string) string {
	t.Helper()
	res, err := c.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	var b strings.Builder
	for _, rc := range res.Contents {
		b.WriteString(rc.Text)
	}
	return b.String()
}

// rawText reports whether s carries what sanitizing escapes: a control
// character, a bidi override or a line break.
func rawText(s string) bool {
	return strings.ContainsAny(s, "\x1b\x07\n\r\u202e\u009b")
}

func isNotFound(err error) bool {
	var je *jsonrpc.Error
	return errors.As(err, &je) && je.Code == jsonrpc.CodeInvalidParams && strings.Contains(je.Message, "not found")
}

func TestTemplatesAreForwardedAndReadFromTheirOwner(t *testing.T) {
	_, _, c := resourceWorld(t)

	ts := c.templates(t)
	if got := ts[fixtures.TaskTemplate].Name; got != "tasks__task" {
		t.Errorf("tasks' template is named %q, want tasks__task", got)
	}
	h := ts[fixtures.HostileTemplate]
	for field, v := range map[string]string{"name": h.Name, "title": h.Title, "mimeType": h.MIMEType,
		"description": strings.ReplaceAll(h.Description, "\n", "")} { // a description may have lines
		if rawText(v) {
			t.Errorf("hostile template's %s %q is not sanitized", field, v)
		}
	}
	if !strings.HasPrefix(h.Name, "hostile__") {
		t.Errorf("hostile template is named %q, want it under hostile__", h.Name)
	}

	// Both templates match tasks://task/T-1; tasks offered first.
	if got := c.read(t, "tasks://task/T-1"); !strings.Contains(got, "Draft launch announcement") {
		t.Errorf("tasks://task/T-1 read %q, want tasks' task T-1", got)
	}
	if got := c.read(t, "tasks://other/x"); got != "hostile read tasks://other/x" {
		t.Errorf("tasks://other/x read %q, want hostile's answer (only its template matches)", got)
	}
	if got := c.read(t, fixtures.BoardURI); !strings.Contains(got, `"T-1"`) {
		t.Errorf("the board read %q, want tasks' list", got)
	}
	_, err := c.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "note://nobody/1"})
	if !isNotFound(err) {
		t.Errorf("a URI no server offers: %v, want the spec's resource-not-found error", err)
	}
}

func TestCompletionsGoToTheOwnerBounded(t *testing.T) {
	_, _, c := resourceWorld(t)
	caps := c.cs.InitializeResult().Capabilities
	if caps.Completions == nil || caps.Resources == nil || !caps.Resources.Subscribe {
		t.Fatalf("capabilities %+v: want completions and resources.subscribe declared", caps)
	}
	ctx := context.Background()
	complete := func(ref *mcp.CompleteReference, value string) (*mcp.CompleteResult, error) {
		return c.cs.Complete(ctx, &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: "id", Value: value}})
	}

	res, err := complete(&mcp.CompleteReference{Type: "ref/prompt", Name: "tasks__triage"}, "t-")
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Completion.Values; !slices.Equal(got, []string{"T-1", "T-2", "T-3", "T-4"}) {
		t.Errorf("prompt completion %q, want tasks' ids", got)
	}
	res, err = complete(&mcp.CompleteReference{Type: "ref/resource", URI: fixtures.TaskTemplate}, "T-2")
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Completion.Values; !slices.Equal(got, []string{"T-2"}) {
		t.Errorf("template completion %q, want [T-2]", got)
	}

	res, err = complete(&mcp.CompleteReference{Type: "ref/resource", URI: fixtures.HostileTemplate}, "")
	if err != nil {
		t.Fatal(err)
	}
	got := res.Completion
	if len(got.Values) != maxCompletions || !got.HasMore {
		t.Errorf("hostile completion: %d values, hasMore %v; want %d and true", len(got.Values), got.HasMore, maxCompletions)
	}
	if got.Total != 0 {
		t.Errorf("hostile completion total %d: a total below the values kept should be dropped", got.Total)
	}
	for i, v := range got.Values {
		if rawText(v) || len(v) > maxCompletionValue+32 {
			t.Fatalf("hostile completion value %d (%d bytes) %q is not one bounded line", i, len(v), v)
		}
	}

	if _, err := complete(&mcp.CompleteReference{Type: "ref/prompt", Name: "triage"}, ""); err == nil {
		t.Error("a prompt serve does not offer under that name was completed")
	}
}

func TestNoPrefixOffersRawPromptNames(t *testing.T) {
	w := newWorld(t, worldOpts{only: "tasks", specs: []client.Spec{
		fixtureSpec("tasks", "tasks", fixtures.Options{Resources: true}, nil),
	}})
	c := w.connect(nil)
	ctx := context.Background()
	var names []string
	c.until(t, "the prompt listed", func() bool {
		ps, err := c.cs.ListPrompts(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		names = names[:0]
		for _, p := range ps.Prompts {
			names = append(names, p.Name)
		}
		return len(names) > 0
	})
	if !slices.Equal(names, []string{"triage"}) {
		t.Fatalf("prompts %q, want [triage]", names)
	}
	p, err := c.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "triage", Arguments: map[string]string{"id": "T-1"}})
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := p.Messages[0].Content.(*mcp.TextContent); !ok || !strings.Contains(tc.Text, "Draft launch announcement") {
		t.Errorf("prompt message %+v, want tasks' triage of T-1", p.Messages[0].Content)
	}
	res, err := c.cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "triage"},
		Argument: mcp.CompleteParamsArgument{Name: "id", Value: "T-3"}})
	if err != nil || !slices.Equal(res.Completion.Values, []string{"T-3"}) {
		t.Errorf("completion of the raw-named prompt: %v, %+v; want [T-3]", err, res)
	}
}

func TestSubscriptionsAreForwardedRelayedAndReleased(t *testing.T) {
	// a and b are 2025-11-25 clients: a unsubscribes, b leaves without
	// unsubscribing. n, a 2026-07-28 client, holds its subscription on a
	// stream of its own, which ends when it leaves.
	w, tasks, n := resourceWorld(t)
	a := w.connectWith(nil, connOpts{version: "2025-11-25"})
	b := w.connectWith(nil, connOpts{version: "2025-11-25"})
	ctx := context.Background()
	const uri = "tasks://task/T-1"
	for _, c := range []*conn{a, b, n} {
		if err := c.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
	}
	// n's subscription is sent in the background: wait until serve holds it.
	a.until(t, "all three clients subscribed", func() bool { return w.srv.holders(uri) == 3 })
	if got := tasks.get().Subscriptions(); !slices.Equal(got, []string{uri}) {
		t.Fatalf("tasks holds subscriptions %q, want [%s]", got, uri)
	}

	// A write to T-1 updates it (and the board, which no one watches).
	r := w.m.Call(ctx, "tasks", "comment_on_task", json.RawMessage(`{"id":"T-1","body":"seen"}`), client.CallOptions{Timeout: 5 * time.Second})
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	for name, c := range map[string]*conn{"a": a, "b": b, "n": n} {
		select {
		case got := <-c.updated:
			if got != uri {
				t.Errorf("client %s was told %s changed, want %s", name, got, uri)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("client %s was not told %s changed", name, uri)
		}
	}

	// a lets go; b and n still hold it, until both leave.
	if err := a.cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	if got := tasks.get().Subscriptions(); !slices.Equal(got, []string{uri}) {
		t.Fatalf("after one of three clients unsubscribed, tasks holds %q, want [%s]", got, uri)
	}
	n.cs.Close()
	b.cs.Close()
	a.until(t, "the subscription released at tasks", func() bool { return len(tasks.get().Subscriptions()) == 0 })

	// hostile's resources can be read but not watched; nobody's cannot be
	// either. (A 2026-07-28 client subscribes in the background and sees
	// no refusal, so the 2025-11-25 one asks.)
	err := a.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "tasks://other/x"})
	if err == nil || !strings.Contains(err.Error(), "does not offer subscriptions") {
		t.Errorf("subscribe to a resource of a server without subscriptions: %v, want a refusal that says why", err)
	}
	err = a.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "note://nobody/1"})
	if !isNotFound(err) {
		t.Errorf("subscribe to a URI no server offers: %v, want resource-not-found", err)
	}
}

func TestSubscriptionsAreMadeAgainAfterARestart(t *testing.T) {
	w, tasks, _ := resourceWorld(t)
	c := w.connectWith(nil, connOpts{version: "2025-11-25"})
	ctx := context.Background()
	const uri = "tasks://task/T-2"
	if err := c.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	before := tasks.get()
	if err := w.m.Restart(ctx, "tasks"); err != nil {
		t.Fatal(err)
	}
	c.until(t, "the subscription made at the restarted tasks", func() bool {
		f := tasks.get()
		return f != before && slices.Equal(f.Subscriptions(), []string{uri})
	})
	r := w.m.Call(ctx, "tasks", "block_task", json.RawMessage(`{"id":"T-2","reason":"waiting"}`), client.CallOptions{Timeout: 5 * time.Second})
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	select {
	case got := <-c.updated:
		if got != uri {
			t.Errorf("told %s changed, want %s", got, uri)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no update of %s from the restarted server", uri)
	}
}

// The manager publishes whatever URI a server says changed; serve passes
// on only what the server the subscription was made at says.
func TestAnUpdateIsRelayedOnlyFromTheURIsServer(t *testing.T) {
	w, _, _ := resourceWorld(t)
	c := w.connectWith(nil, connOpts{version: "2025-11-25"})
	ctx := context.Background()
	for _, uri := range []string{"tasks://task/T-1", "tasks://task/T-2"} {
		if err := c.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
	}
	// One connection carries both in order: if hostile's word were passed
	// on, it would arrive first.
	w.srv.relay(ctx, "hostile", "tasks://task/T-1")
	w.srv.relay(ctx, "tasks", "tasks://task/T-2")
	select {
	case got := <-c.updated:
		if got != "tasks://task/T-2" {
			t.Errorf("the client was told %s changed, by a server that does not own it", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("tasks' own update was not relayed")
	}
}

// TestAFloodOfUpdatesIsFoldedNotLost: after one update is passed on, a
// burst of 500 more of the same URI reaches the client as at most one per
// UpdateGap, and the change is never lost: at least one more arrives.
func TestAFloodOfUpdatesIsFoldedNotLost(t *testing.T) {
	w, _, _ := resourceWorld(t)
	c := w.connectWith(nil, connOpts{version: "2025-11-25"})
	ctx := context.Background()
	const uri = "tasks://task/T-2"
	if err := c.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	var n atomic.Int32
	arrived := make(chan struct{}, 1)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-c.updated:
				n.Add(1)
				select {
				case arrived <- struct{}{}:
				default:
				}
			case <-stop:
				return
			}
		}
	}()
	defer func() { close(stop); <-done }()
	waitFor := func(want int32, what string) {
		timeout := time.After(10 * time.Second)
		for n.Load() < want {
			select {
			case <-arrived:
			case <-timeout:
				t.Fatalf("%d updates arrived, want %d: %s", n.Load(), want, what)
			}
		}
	}
	w.srv.relay(ctx, "tasks", uri)
	waitFor(1, "the first update is passed on at once")
	start := time.Now()
	for range 500 {
		w.srv.relay(ctx, "tasks", uri)
	}
	took := time.Since(start)
	waitFor(2, "the burst's change was lost")
	// The burst's last update may still be due; whatever arrives is within
	// one per gap over the burst, plus the one folded at its end.
	if most := int32(took/UpdateGap) + 3; n.Load() > most {
		t.Errorf("%d updates passed on for a burst of 500 over %v; want at most %d (one per %v)", n.Load(), took, most, UpdateGap)
	}
}

func TestListChangedReforwards(t *testing.T) {
	_, tasks, c := resourceWorld(t)
	f := tasks.get()
	f.Server.AddPrompt(&mcp.Prompt{Name: "later"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "later"}}}}, nil
	})
	f.Server.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "tasks://later/{x}", Name: "later"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "later"}}}, nil
		})
	c.until(t, "the new prompt and template forwarded", func() bool {
		ps, err := c.cs.ListPrompts(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(ps.Prompts, func(p *mcp.Prompt) bool { return p.Name == "tasks__later" }) &&
			c.templates(t)["tasks://later/{x}"] != nil
	})
}

func TestCompletionsAreCutToTheSpecsCount(t *testing.T) {
	// client.Manager already keeps 100; serve does not count on it.
	c := &mcp.CompletionResultDetails{Total: 500}
	for range 150 {
		c.Values = append(c.Values, "v")
	}
	got := completions(c)
	if len(got.Values) != maxCompletions || !got.HasMore || got.Total != 500 {
		t.Errorf("150 values cut to %d, hasMore %v, total %d; want %d, true, 500", len(got.Values), got.HasMore, got.Total, maxCompletions)
	}
}

// holders counts the client sessions that hold a subscription to uri.
func (s *Server) holders(uri string) int {
	t := &s.fx.subs
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.byURI[uri]; e != nil {
		return len(e.sessions)
	}
	return 0
}

// Over HTTP, a 2025-11-25 client (a session) and a 2026-07-28 one
// (stateless) read templates from and complete at the same owners.
func TestHTTPBothVersionsReadTemplatesAndComplete(t *testing.T) {
	w, _, _ := resourceWorld(t)
	ts := httptest.NewServer(w.srv.Handler("tok"))
	t.Cleanup(ts.Close)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	h := &httpWorld{world: w, url: ts.URL, tr: tr}
	ctx := context.Background()
	for _, version := range []string{"2025-11-25", ""} {
		cs := h.connect("c"+version, nil, connOpts{version: version})
		r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "tasks://task/T-3"})
		if err != nil || !strings.Contains(r.Contents[0].Text, "Renew TLS certificates") {
			t.Errorf("%q: read tasks://task/T-3: %v %+v, want tasks' task", version, err, r)
		}
		res, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "tasks__triage"},
			Argument: mcp.CompleteParamsArgument{Name: "id", Value: "T-4"}})
		if err != nil || !slices.Equal(res.Completion.Values, []string{"T-4"}) {
			t.Errorf("%q: complete: %v %+v, want [T-4]", version, err, res)
		}
	}
}

// pokerServer is an MCP server whose poke tool offers its tool t again as
// it was: the SDK then sends notifications/tools/list_changed, though
// nothing changed.
func pokerServer(ctx context.Context) (mcp.Transport, error) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "poker", Version: "1"}, nil)
	f := false
	read := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &f}
	t := &mcp.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: read}
	th := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "t"}}}, nil
	}
	srv.AddTool(t, th)
	srv.AddTool(&mcp.Tool{Name: "poke", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: read},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			srv.AddTool(t, th)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "poked"}}}, nil
		})
	st, ct := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		return nil, err
	}
	return ct, nil
}

// TestABareListChangedIsPassedOn: a server that says its tools changed
// when they did not still has its word passed on: the client is told to
// list the tools again, as the server asked.
func TestABareListChangedIsPassedOn(t *testing.T) {
	w := newWorld(t, worldOpts{specs: []client.Spec{{Name: "tasks", Dial: pokerServer}}})
	c := w.connectWith(nil, connOpts{version: "2025-11-25"})
	ctx := context.Background()
	c.until(t, "the poker's tools listed", func() bool {
		res, err := c.cs.ListTools(ctx, nil)
		return err == nil && len(res.Tools) == 2
	})
	for len(c.tools) > 0 {
		<-c.tools // the start's announcements
	}
	// Three times, each told: an announcement left over from the start
	// could stand in for one of them, not for three.
	for i := range 3 {
		res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "tasks__poke", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("poke: %v %v", err, res)
		}
		select {
		case <-c.tools:
		case <-time.After(10 * time.Second):
			t.Fatalf("poke %d: the server's tools/list_changed was not passed on to the client", i+1)
		}
	}
}
