package serve

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/host"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// filesServer is a real MCP server, in process, that reads any file under
// a file:// template, as a file-system server's resources do; reads counts
// what it served.
func filesServer(reads *atomic.Int64) func(context.Context) (mcp.Transport, error) {
	return func(context.Context) (mcp.Transport, error) {
		srv := mcp.NewServer(&mcp.Implementation{Name: "files", Version: "1"}, nil)
		srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "file:///{+path}", Name: "file"},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				reads.Add(1)
				path := strings.TrimPrefix(req.Params.URI, "file://")
				data, err := os.ReadFile(path)
				if err != nil {
					return nil, mcp.ResourceNotFoundError(req.Params.URI)
				}
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: string(data)}}}, nil
			})
		return inMemory(srv)
	}
}

// waitForward waits until the client is offered uri (listed) or the
// template ut.
func (c *conn) waitForward(t *testing.T, uri, ut string) {
	t.Helper()
	c.until(t, "forwarded "+uri+ut, func() bool {
		if ut != "" {
			return c.templates(t)[ut] != nil
		}
		rs, err := c.cs.ListResources(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs.Resources {
			if r.URI == uri {
				return true
			}
		}
		return false
	})
}

// onlySession returns the one client session serve knows.
func (w *world) onlySession() *session {
	w.t.Helper()
	w.srv.mu.Lock()
	defer w.srv.mu.Unlock()
	if len(w.srv.sessions) != 1 {
		w.t.Fatalf("%d sessions, want 1", len(w.srv.sessions))
	}
	for _, sess := range w.srv.sessions {
		return sess
	}
	return nil
}

// onlyGate returns the gate of the one client session serve knows.
func (w *world) onlyGate() *host.Gate { return w.onlySession().gate }

// TestAReadThroughServePassesTheClientsGate: a resources/read or
// prompts/get through serve is decided by the client's gate as the chat's
// and `mcphost read`'s are: a deny rule refuses it and the refusal is
// audited; an untrusted server's read is asked (through the client's form,
// or, for a 2026-07-28 client, which cannot be asked within a read, through
// a waiting approver, else refused saying how to approve it).
func TestAReadThroughServePassesTheClientsGate(t *testing.T) {
	ctx := context.Background()
	const uri = "note://poison/1"
	only := []client.Spec{{Name: "poison", Dial: poisonServer}}

	t.Run("denied by rule", func(t *testing.T) {
		w := newWorld(t, worldOpts{specs: only, rules: []string{"deny:poison/resources/read", "deny:poison/prompts/get"}})
		c := w.connect(accepting())
		c.waitForward(t, uri, "")
		if _, err := c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil || !strings.Contains(err.Error(), "denied by the rule") {
			t.Fatalf("a read denied by rule: %v, want it denied by the rule", err)
		}
		if _, err := c.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "poison__review", Arguments: map[string]string{"topic": "x"}}); err == nil {
			t.Fatal("a prompts/get denied by rule was answered")
		}
		recs := w.outcomes(host.ResourceReadTool)
		if len(recs) != 1 || recs[0].Status != audit.StatusDenied || recs[0].Server != "poison" {
			t.Fatalf("read outcomes %+v, want one denied", recs)
		}
		if recs := w.outcomes(host.PromptGetTool); len(recs) != 1 || recs[0].Status != audit.StatusDenied {
			t.Fatalf("prompts/get outcomes %+v, want one denied", recs)
		}
	})

	t.Run("untrusted is asked", func(t *testing.T) {
		w := newWorld(t, worldOpts{specs: only, rules: []string{}})
		e := &elicitor{answers: []*mcp.ElicitResult{accept(DecisionAllowOnce, "resources/read")}}
		c := w.connectWith(e, connOpts{version: "2025-11-25"})
		c.waitForward(t, uri, "")
		if got := c.read(t, uri); got != "note body" {
			t.Fatalf("read %q after the person allowed it", got)
		}
		if e.count() != 1 || !strings.Contains(e.asked[0].Message, "resources/read") || !strings.Contains(e.asked[0].Message, uri) {
			t.Fatalf("asked %d times (%+v), want once about the read of %s", e.count(), e.asked, uri)
		}
		if _, err := c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil {
			t.Fatal("a second read ran on an allow-once answer (the elicitor declines now)")
		}
		if recs := w.outcomes(host.ResourceReadTool); len(recs) != 2 || recs[0].Status != audit.StatusSuccess || recs[1].Status != audit.StatusDenied {
			t.Fatalf("read outcomes %+v, want success then denied", recs)
		}
	})

	t.Run("a 2026-07-28 client is asked in a round of its own", func(t *testing.T) {
		w := newWorld(t, worldOpts{specs: only, rules: []string{}})
		e := &elicitor{answers: []*mcp.ElicitResult{accept(DecisionAllowOnce, "resources/read"), accept(DecisionAllowOnce, "prompts/get")}}
		c := w.connect(e)
		c.waitForward(t, uri, "")
		if got := c.read(t, uri); got != "note body" {
			t.Fatalf("read %q after the person allowed it in the round", got)
		}
		p, err := c.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "poison__review", Arguments: map[string]string{"topic": "gates"}})
		if err != nil {
			t.Fatal(err)
		}
		if tc, _ := p.Messages[0].Content.(*mcp.TextContent); tc == nil || tc.Text != "Review gates" {
			t.Fatalf("prompt %+v after the person allowed it", p.Messages[0].Content)
		}
		if e.count() != 2 || !strings.Contains(e.asked[0].Message, uri) || !strings.Contains(e.asked[1].Message, "prompts/get") {
			t.Fatalf("asked %d times, want once about the read and once about the prompt", e.count())
		}
	})

	t.Run("a round's answer is bound to its read", func(t *testing.T) {
		w := newWorld(t, worldOpts{specs: only, rules: []string{}})
		c := w.connectWith(&elicitor{}, connOpts{byHand: true})
		c.waitForward(t, uri, "")
		first, err := c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil || !first.NeedsInput() || first.RequestState == "" || len(first.Contents) != 0 {
			t.Fatalf("first round: %v %+v, want mcphost's question and no contents", err, first)
		}
		yes := mcp.InputResponseMap{approvalInput: accept(DecisionAllowSession, "resources/read")}
		other := callState{Kind: stateApprove, Session: w.onlySession().client.Session, Server: "poison", Tool: host.ResourceReadTool,
			ArgsHash: decide.ArgsHash(host.ReadArgs("note://poison/2")), Def: "resources/read@1", Expires: time.Now().Add(time.Minute).Unix(), Nonce: "n"}
		for name, state := range map[string]string{"forged": first.RequestState + "x", "another read's": w.srv.seal(other)} {
			res, err := c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri, RequestState: state, InputResponses: yes})
			if err == nil && res != nil && len(res.Contents) > 0 {
				t.Fatalf("a %s state read the resource", name)
			}
		}
		res, err := c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri, RequestState: first.RequestState, InputResponses: yes})
		if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != "note body" {
			t.Fatalf("the answer to this read: %v %+v, want the note", err, res)
		}
	})

	t.Run("a 2026-07-28 client's subscription goes to the approver", func(t *testing.T) {
		ap := &approver{waiting: true}
		board := &liveFixture{}
		w := newWorld(t, worldOpts{specs: []client.Spec{board.spec(t, "board", "tasks", fixtures.Options{Resources: true}, nil)}, rules: []string{}, approver: ap})
		c := w.connect(accepting())
		c.waitForward(t, fixtures.BoardURI, "")
		if err := c.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: fixtures.BoardURI}); err != nil {
			t.Fatal(err)
		}
		c.until(t, "the subscription made once the approver allowed it", func() bool {
			ap.mu.Lock()
			defer ap.mu.Unlock()
			return ap.asked == 1 && w.srv.holders(fixtures.BoardURI) == 1
		})
	})
}

// accepting is an elicitor that would allow anything, to show that a
// refusal is not the person's.
func accepting() *elicitor {
	return &elicitor{answers: []*mcp.ElicitResult{accept(DecisionAllowSession, "resources/read"), accept(DecisionAllowSession, "prompts/get")}}
}

// TestATemplateReadOfMcphostsOwnFilesIsNotReturnedUnasked: through a
// server's file:// template, a read of mcphost's configuration is asked at
// tier 3 like a tool argument naming it, even from a trusted server that an
// allow rule covers; no one to ask, it is refused and the server never
// sees it. Another file of the same server is read.
func TestATemplateReadOfMcphostsOwnFilesIsNotReturnedUnasked(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config", "mcphost")
	if err := os.MkdirAll(cfg, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{filepath.Join(cfg, "config.json"): "SECRET-CONFIG", filepath.Join(dir, "notes.txt"): "plain notes"} {
		if err := os.WriteFile(name, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var reads atomic.Int64
	w := newWorld(t, worldOpts{specs: []client.Spec{{Name: "files", Dial: filesServer(&reads)}},
		rules: []string{"allow:files/*"}, home: dir, protected: []string{cfg}})
	c := w.connect(nil)
	c.waitForward(t, "", "file:///{+path}")
	if got := c.read(t, "file://"+filepath.Join(dir, "notes.txt")); got != "plain notes" {
		t.Fatalf("an ordinary file read %q", got)
	}
	res, err := c.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "file://" + filepath.Join(cfg, "config.json")})
	if err == nil || (res != nil && len(res.Contents) > 0) || reads.Load() != 1 {
		t.Fatalf("mcphost's config read through a template: %v %+v (%d reads served), want refused before the server", err, res, reads.Load())
	}
	if !strings.Contains(err.Error(), "T3") {
		t.Errorf("refusal %q, want it asked at tier 3", err)
	}
}

// TestAReadThroughServeTaintsTheSession: what a read returns adds to the
// client's taint, as a call's output does: a trusted server's resource is
// a private read, an untrusted one's open-world content.
func TestAReadThroughServeTaintsTheSession(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("plain notes"), 0o600); err != nil {
		t.Fatal(err)
	}
	var reads atomic.Int64
	w := newWorld(t, worldOpts{specs: []client.Spec{{Name: "files", Dial: filesServer(&reads)}, {Name: "poison", Dial: poisonServer}}})
	c := w.connect(nil)
	c.waitForward(t, "", "file:///{+path}")
	c.waitForward(t, "note://poison/1", "")
	c.read(t, "file://"+filepath.Join(dir, "notes.txt"))
	g := w.onlyGate() // made by the first request
	if open, priv := g.Taint(); open || !priv {
		t.Fatalf("after a trusted read: open %v private %v, want a private read", open, priv)
	}
	c.read(t, "note://poison/1")
	if open, _ := g.Taint(); !open {
		t.Fatal("after an untrusted server's read the session has seen no open-world content")
	}
}

// TestSubscriptionsAndCompletionsFollowTheReadDecision: a client may not
// watch what it may not read (the subscription is never made at the
// server), and a completion is sent only for a prompt or template the
// client may use unasked.
func TestSubscriptionsAndCompletionsFollowTheReadDecision(t *testing.T) {
	tasks := &liveFixture{}
	w := newWorld(t, worldOpts{specs: []client.Spec{tasks.spec(t, "tasks", "tasks", fixtures.Options{Resources: true}, nil)},
		rules: []string{"deny:tasks/resources/read", "deny:tasks/prompts/get"}})
	c := w.connectWith(nil, connOpts{version: "2025-11-25"})
	c.waitForward(t, fixtures.BoardURI, "")
	ctx := context.Background()
	if err := c.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: fixtures.BoardURI}); err == nil {
		t.Fatal("a subscription to a resource the client may not read was made")
	}
	if got := tasks.get().Subscriptions(); len(got) != 0 || w.srv.holders(fixtures.BoardURI) != 0 {
		t.Fatalf("tasks holds %q, serve %d holders: want none", got, w.srv.holders(fixtures.BoardURI))
	}
	for _, ref := range []*mcp.CompleteReference{{Type: "ref/prompt", Name: "tasks__triage"}, {Type: "ref/resource", URI: fixtures.TaskTemplate}} {
		res, err := c.cs.Complete(ctx, &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: "id", Value: "T-"}})
		if err != nil || len(res.Completion.Values) != 0 {
			t.Fatalf("completion of %s %s: %v %+v, want no values", ref.Type, ref.Name+ref.URI, err, res)
		}
	}
	if recs := w.outcomes(host.ResourceReadTool); len(recs) != 1 || recs[0].Status != audit.StatusDenied {
		t.Fatalf("outcomes %+v, want the subscription's refusal audited", recs)
	}
}

// inMemory connects srv, in process, and returns the transport to reach
// it by.
func inMemory(srv *mcp.Server) (mcp.Transport, error) {
	st, ct := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(context.Background(), st, nil); err != nil {
		return nil, err
	}
	return ct, nil
}

// heldBy is dial once hold is closed: a server that starts late.
func heldBy(hold <-chan struct{}, dial func(context.Context) (mcp.Transport, error)) func(context.Context) (mcp.Transport, error) {
	return func(ctx context.Context) (mcp.Transport, error) {
		select {
		case <-hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return dial(ctx)
	}
}

// promptServer is a real MCP server, in process, with one prompt.
func promptServer(prompt, desc, body string) func(context.Context) (mcp.Transport, error) {
	return func(context.Context) (mcp.Transport, error) {
		srv := mcp.NewServer(&mcp.Implementation{Name: "prompts", Version: "1"}, nil)
		get := func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: body}}}}, nil
		}
		srv.AddPrompt(&mcp.Prompt{Name: prompt, Title: desc, Description: desc, Arguments: []*mcp.PromptArgument{{Name: "topic", Title: desc, Description: desc}}}, get)
		srv.AddPrompt(&mcp.Prompt{Name: "bad\x1b[2Jname", Description: "unsafe name"}, get)
		return inMemory(srv)
	}
}

// TestAPromptCannotTakeAnotherServersName: the untrusted files__x's prompt
// review and the trusted files' prompt x__review would both be
// files__x__review; the untrusted one, though it starts first, does not
// take the name: each is offered under a name of its own, and getting the
// trusted one's reaches the trusted server.
func TestAPromptCannotTakeAnotherServersName(t *testing.T) {
	hold := make(chan struct{})
	w := newWorld(t, worldOpts{specs: []client.Spec{
		{Name: "files__x", Dial: promptServer("review", "the squatter", "squatter's text")},
		{Name: "files", Dial: heldBy(hold, promptServer("x__review", "the trusted review", "trusted text"))},
	}})
	c := w.connect(nil)
	ctx := context.Background()
	prompts := func() []*mcp.Prompt {
		res, err := c.cs.ListPrompts(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.Prompts
	}
	c.until(t, "the squatter's prompt", func() bool { return len(prompts()) == 1 })
	close(hold)
	c.until(t, "both prompts", func() bool { return len(prompts()) == 2 }) // a name that is no identifier is not offered
	var name string
	for _, p := range prompts() {
		if p.Description == "the trusted review" {
			name = p.Name
		}
	}
	if name == "" {
		t.Fatalf("prompts %+v: the trusted one is not offered", prompts())
	}
	res, err := c.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	if tc, _ := res.Messages[0].Content.(*mcp.TextContent); tc == nil || tc.Text != "trusted text" {
		t.Fatalf("the trusted prompt %s got %+v, want the trusted server's", name, res.Messages[0].Content)
	}
}

// TestListsAreCachedPrivately: a 2026-07-28 client is told that serve's
// tool list (which differs per client) and a read (which passed its gate)
// may be cached by it alone.
func TestListsAreCachedPrivately(t *testing.T) {
	w := newWorld(t, worldOpts{specs: []client.Spec{{Name: "poison", Dial: poisonServer}}})
	c := w.connect(nil)
	ctx := context.Background()
	tools, err := c.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tools.CacheScope != "private" {
		t.Errorf("tools/list cacheScope %q, want private", tools.CacheScope)
	}
	c.waitForward(t, "note://poison/1", "")
	res, err := c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "note://poison/1"})
	if err != nil {
		t.Fatal(err)
	}
	if res.CacheScope != "private" {
		t.Errorf("resources/read cacheScope %q, want private", res.CacheScope)
	}
}

// resourceServer is a real MCP server, in process, that lists each of
// uris and answers its read with body.
func resourceServer(body string, uris ...string) func(context.Context) (mcp.Transport, error) {
	return func(context.Context) (mcp.Transport, error) {
		srv := mcp.NewServer(&mcp.Implementation{Name: "res", Version: "1"}, nil)
		for _, uri := range uris {
			srv.AddResource(&mcp.Resource{URI: uri, Name: "r"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: body}}}, nil
			})
		}
		return inMemory(srv)
	}
}

// TestTheServerThatOfferedAURIFirstKeepsIt: a server that starts later
// and lists a URI another server offers does not take its reads.
func TestTheServerThatOfferedAURIFirstKeepsIt(t *testing.T) {
	hold := make(chan struct{})
	w := newWorld(t, worldOpts{specs: []client.Spec{
		{Name: "files", Dial: resourceServer("the first server's", "note://shared/1")},
		{Name: "tasks", Dial: heldBy(hold, resourceServer("the later server's", "note://shared/1", "note://later/2"))},
	}})
	c := w.connect(nil)
	c.waitForward(t, "note://shared/1", "")
	close(hold)
	c.waitForward(t, "note://later/2", "")
	if got := c.read(t, "note://shared/1"); got != "the first server's" {
		t.Fatalf("the shared URI read %q, want the first server's", got)
	}
}

// TestAForwardedPromptIsEscaped: a prompt's title and description and its
// arguments' reach the client escaped, and a prompt whose name is no
// identifier (an escape in it) is not offered at all.
func TestAForwardedPromptIsEscaped(t *testing.T) {
	hostile := "Review\x1b[2J\u202e now\u009b"
	w := newWorld(t, worldOpts{specs: []client.Spec{{Name: "files", Dial: promptServer("review", hostile, "x")}}})
	c := w.connect(nil)
	var got []*mcp.Prompt
	c.until(t, "the prompt", func() bool {
		res, err := c.cs.ListPrompts(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		got = res.Prompts
		return len(got) > 0
	})
	if len(got) != 1 || got[0].Name != "files__review" || len(got[0].Arguments) != 1 {
		t.Fatalf("prompts %+v, want files__review alone, with its argument", got)
	}
	p, a := got[0], got[0].Arguments[0]
	for field, v := range map[string]string{"title": p.Title, "description": p.Description, "argument title": a.Title, "argument description": a.Description} {
		if strings.ContainsAny(v, "\x1b\u202e\u009b") || !strings.Contains(v, "Review") {
			t.Errorf("%s %q, want the server's words escaped", field, v)
		}
	}
}

// TestAResourcesTextIsEscaped: a listed resource's name, title,
// description and MIME type reach the client escaped.
func TestAResourcesTextIsEscaped(t *testing.T) {
	hostile := "Notes\x1b[2J\u202e now\u009b"
	dial := func(context.Context) (mcp.Transport, error) {
		srv := mcp.NewServer(&mcp.Implementation{Name: "res", Version: "1"}, nil)
		srv.AddResource(&mcp.Resource{URI: "note://files/1", Name: hostile, Title: hostile, Description: hostile, MIMEType: "text/plain\x1b[2J"},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "x"}}}, nil
			})
		return inMemory(srv)
	}
	w := newWorld(t, worldOpts{specs: []client.Spec{{Name: "files", Dial: dial}}})
	c := w.connect(nil)
	c.waitForward(t, "note://files/1", "")
	res, err := c.cs.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Resources[0]
	for field, v := range map[string]string{"name": r.Name, "title": r.Title, "description": r.Description, "mimeType": r.MIMEType} {
		if strings.ContainsAny(v, "\x1b\u202e\u009b") {
			t.Errorf("%s %q, want the server's words escaped", field, v)
		}
	}
}

// TestAServersURLQuestionIsNeverSentToTheClient: a server's URL-mode
// question (open this address) is answered by the headless rule, even
// with one client connected that answers forms: a client is shown only
// questions it can answer in the form.
func TestAServersURLQuestionIsNeverSentToTheClient(t *testing.T) {
	w := newWorld(t, worldOpts{})
	e := &elicitor{answers: []*mcp.ElicitResult{{Action: "accept"}, {Action: "accept"}}}
	w.connectWith(e, connOpts{version: "2025-11-25"})
	headless := &mcp.ElicitResult{Action: "decline"}
	fallback := func(context.Context, string, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return headless, nil }
	for _, p := range []*mcp.ElicitParams{
		{Mode: "url", URL: "https://example.invalid/login", ElicitationID: "1", Message: "log in"},
		{URL: "https://example.invalid/login", ElicitationID: "2", Message: "log in"},
	} {
		res, err := w.srv.ServerElicitation(fallback)(context.Background(), "flaky", &mcp.ElicitRequest{Params: p})
		if err != nil || res != headless {
			t.Fatalf("a URL question (mode %q): %+v %v, want the headless answer", p.Mode, res, err)
		}
	}
	if e.count() != 0 {
		t.Fatalf("the client was sent %d URL questions", e.count())
	}
}

// TestAServersQuestionGoesOnlyWhereItCanBeAnswered: with no call running
// on the server, its question (or sampling request) goes to the one
// connected client only if that client declared the capability, and to no
// client when two are connected (it could be either's): the headless rule
// answers it then.
func TestAServersQuestionGoesOnlyWhereItCanBeAnswered(t *testing.T) {
	q := &mcp.ElicitRequest{Params: &mcp.ElicitParams{Message: "may I?", RequestedSchema: map[string]any{"type": "object"}}}
	s := &mcp.CreateMessageRequest{Params: &mcp.CreateMessageParams{MaxTokens: 5, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}}}
	headless := &mcp.ElicitResult{Action: "decline"}
	noModel := &mcp.CreateMessageResult{Model: "headless"}
	elicitFallback := func(context.Context, string, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return headless, nil }
	sampleFallback := func(context.Context, string, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		return noModel, nil
	}
	ctx := context.Background()

	w := newWorld(t, worldOpts{})
	w.connectWith(nil, connOpts{version: "2025-11-25"}) // declares neither
	if res, err := w.srv.ServerElicitation(elicitFallback)(ctx, "flaky", q); err != nil || res != headless {
		t.Fatalf("a question for a client that cannot answer forms: %+v %v, want the headless answer", res, err)
	}
	if res, err := w.srv.ServerSampling(sampleFallback)(ctx, "flaky", s); err != nil || res != noModel {
		t.Fatalf("a sampling request for a client that offers no sampling: %+v %v, want the headless answer", res, err)
	}

	w2 := newWorld(t, worldOpts{})
	a, b := &elicitor{answers: []*mcp.ElicitResult{{Action: "accept"}}}, &elicitor{answers: []*mcp.ElicitResult{{Action: "accept"}}}
	w2.connectWith(a, connOpts{version: "2025-11-25"})
	w2.connectWith(b, connOpts{version: "2025-11-25"})
	if res, err := w2.srv.ServerElicitation(elicitFallback)(ctx, "flaky", q); err != nil || res != headless || a.count()+b.count() != 0 {
		t.Fatalf("a question with two clients and no call: %+v %v, asked %d and %d; want the headless answer and neither asked", res, err, a.count(), b.count())
	}
}

// TestAServersReadErrorIsPassedOnEscaped: a server's own error for a read
// keeps its code and reaches the client escaped and bounded.
func TestAServersReadErrorIsPassedOnEscaped(t *testing.T) {
	dial := func(context.Context) (mcp.Transport, error) {
		srv := mcp.NewServer(&mcp.Implementation{Name: "res", Version: "1"}, nil)
		srv.AddResource(&mcp.Resource{URI: "note://files/gone", Name: "gone"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return nil, &jsonrpc.Error{Code: -32002, Message: "gone\x1b[2J\u202e" + strings.Repeat("x", 4096)}
		})
		return inMemory(srv)
	}
	w := newWorld(t, worldOpts{specs: []client.Spec{{Name: "files", Dial: dial}}})
	c := w.connect(nil)
	c.waitForward(t, "note://files/gone", "")
	_, err := c.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "note://files/gone"})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != -32002 || !strings.Contains(je.Message, "gone") {
		t.Fatalf("a server's read error: %v, want its code and words", err)
	}
	if strings.ContainsAny(je.Message, "\x1b\u202e") || len(je.Message) > 1024 {
		t.Fatalf("a server's read error (%d bytes) %q is not escaped and bounded", len(je.Message), bound(je.Message, 80))
	}
}
