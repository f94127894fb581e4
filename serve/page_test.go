package serve

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	approve "github.com/mcphost/mcphost/approver"
	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/later"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pageLinkOf is the approval page's link of a held call as serve is given
// it (the shape of mcphost serve's: the page's address and the id, no
// secret).
func pageLinkOf(id string) string { return "http://127.0.0.1:8765/#" + id }

// pageClient is a 2026-07-28 client that declares form and URL
// elicitation. It fills in every form on its own (an autopilot), and
// answers every URL elicitation with action, as a host that opens pages
// on its own does; each URL elicitation is handed to the test on urls.
type pageClient struct {
	autopilot
	action string // "accept" when empty
	urls   chan *mcp.ElicitParams
}

func (p *pageClient) handle(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	if req.Params.Mode != "url" {
		return p.autopilot.handle(ctx, req)
	}
	p.urls <- req.Params
	if p.action != "" {
		return &mcp.ElicitResult{Action: p.action}, nil
	}
	return &mcp.ElicitResult{Action: "accept"}, nil
}

// connectPage connects p as a 2026-07-28 client; byHand leaves the
// rounds of a call to the test.
func (w *world) connectPage(p *pageClient, byHand bool) *conn {
	w.t.Helper()
	opts := &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{
			Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: p.handle,
	}
	if byHand {
		opts.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
	}
	return w.connectClient(opts, "2026-07-28")
}

func newPageClient(action string) *pageClient {
	return &pageClient{action: action, urls: make(chan *mcp.ElicitParams, 8)}
}

// nextURL is the next URL elicitation the client was sent.
func nextURL(t *testing.T, p *pageClient) *mcp.ElicitParams {
	t.Helper()
	select {
	case u := <-p.urls:
		return u
	case <-time.After(10 * time.Second):
		t.Fatal("no URL elicitation reached the client")
		return nil
	}
}

// callAsync makes a call whose result the test reads later.
func callAsync(t *testing.T, c *conn, name, args string) <-chan *mcp.CallToolResult {
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
		if err != nil {
			t.Errorf("call %s: %v", name, err)
			res = errorResult(err.Error())
		}
		done <- res
	}()
	return done
}

func result(t *testing.T, done <-chan *mcp.CallToolResult) *mcp.CallToolResult {
	t.Helper()
	select {
	case res := <-done:
		return res
	case <-time.After(20 * time.Second):
		t.Fatal("the call never returned")
		return nil
	}
}

// dialApprover connects an approver to serve's socket, as `mcphost
// approve` does.
func dialApprover(t *testing.T, b *approve.Broker) *approve.Conn {
	t.Helper()
	conn, err := approve.Dial(context.Background(), b.Path())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.Hello(); err != nil {
		t.Fatal(err)
	}
	return conn
}

// heldID is the approval id a URL elicitation's link names.
func heldID(t *testing.T, u *mcp.ElicitParams) string {
	t.Helper()
	_, id, ok := strings.Cut(u.URL, "#")
	if !ok || id == "" || u.URL != pageLinkOf(id) {
		t.Fatalf("the URL elicitation's link %q is not the page's link of a held call", u.URL)
	}
	return id
}

// TestA20260728ClientOpensThePageAndTheApprovedCallRunsOnce: a 2026-07-28
// client that declares URL elicitation is sent, for a tier-3 call, a URL
// elicitation of the held call's page as an input request; its retry,
// accepted, waits for the person, who approves in `mcphost approve`, and
// the same call runs once. The form is never shown, and the audit names the
// channel the approval came through.
func TestA20260728ClientOpensThePageAndTheApprovedCallRunsOnce(t *testing.T) {
	w, b, store := laterWorld(t, pageLinkOf)
	p := newPageClient("")
	c := w.connectPage(p, false)
	const args = `{"key":"k","value":"v"}`
	done := callAsync(t, c, "rogue__set_value", args)
	u := nextURL(t, p)
	id := heldID(t, u)
	if u.Mode != "url" || u.ElicitationID != "" || u.RequestedSchema != nil {
		t.Errorf("the URL elicitation %+v: want mode url, no elicitationId (2026-07-28 has none) and no schema", u)
	}
	if !strings.Contains(u.Message, "set_value") || !strings.Contains(u.Message, "rogue") {
		t.Errorf("the URL elicitation's message %q does not name the server and the tool", u.Message)
	}
	conn := dialApprover(t, b)
	q := nextQuestion(t, conn)
	if q.ID != id || !q.Later || q.Tool != "set_value" || q.Tier != decide.T3 {
		t.Fatalf("the approver was shown %+v, want the held call %s", q, id)
	}
	if w.execs("rogue", "set_value") != 0 {
		t.Fatal("the call ran before the person approved it")
	}
	if err := conn.Answer(q, host.Answer{Approve: true, Scope: decide.ScopeOnce}); err != nil {
		t.Fatal(err)
	}
	res := result(t, done)
	if res.IsError || res.NeedsInput() || w.execs("rogue", "set_value") != 1 {
		t.Fatalf("approved in mcphost approve: %s (%d runs), want it run once", text(res), w.execs("rogue", "set_value"))
	}
	if _, ok := store.Get(id); !ok {
		t.Error("the held call was forgotten before its lifetime")
	}
	if p.count() != 0 {
		t.Errorf("the host's form was shown a tier-3 call %d times, want never", p.count())
	}
	if got := strings.Join(approvalRecords(t, w), ","); got != "held,approved,used" {
		t.Errorf("approval records %s, want held,approved,used", got)
	}
	var ran []audit.Record
	for _, r := range w.outcomes("set_value") {
		if r.Status == "success" {
			ran = append(ran, r)
		}
	}
	if len(ran) != 1 || ran[0].Via != audit.ChannelApprove {
		t.Errorf("outcomes that ran %+v, want one, through %s", ran, audit.ChannelApprove)
	}
}

// TestA20260728AutopilotCannotRunTier3: a client that accepts every form
// and every URL elicitation on its own gets nothing run while no person
// has approved: its accepted retry waits for the page and, with no answer
// in time, is refused with the approval id; once the person approves, the
// same call made again runs once.
func TestA20260728AutopilotCannotRunTier3(t *testing.T) {
	w, b, store := laterWorld(t, pageLinkOf, func(o *Options) { o.AskTimeout = 300 * time.Millisecond })
	p := newPageClient("")
	c := w.connectPage(p, false)
	const args = `{"key":"k","value":"v"}`
	res := result(t, callAsync(t, c, "rogue__set_value", args))
	id := heldID(t, nextURL(t, p))
	txt := text(res)
	if !res.IsError || w.execs("rogue", "set_value") != 0 || p.count() != 0 {
		t.Fatalf("an autopilot that opens every page: %s (%d runs, %d forms), want nothing run and no form", txt, w.execs("rogue", "set_value"), p.count())
	}
	if !strings.Contains(txt, "approval id "+id) || !strings.Contains(txt, pageLinkOf(id)) || !strings.Contains(txt, "make exactly the same call again") {
		t.Fatalf("the refusal does not name the approval id %s, its page and the retry:\n%s", id, txt)
	}
	conn := dialApprover(t, b)
	q := nextQuestion(t, conn)
	if q.ID != id || !q.Later {
		t.Fatalf("the approver was shown %+v, want the held call %s", q, id)
	}
	if err := conn.Answer(q, host.Answer{Approve: true, Scope: decide.ScopeOnce}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-store.Answered(id):
	case <-time.After(10 * time.Second):
		t.Fatal("the approver's answer never reached the held call")
	}
	if res := c.call(t, "rogue__set_value", args); res.IsError || w.execs("rogue", "set_value") != 1 {
		t.Fatalf("the same call after approval: %s (%d runs), want it run once", text(res), w.execs("rogue", "set_value"))
	}
	// The approval is spent: the next call is asked about anew (the
	// approver waits now, so it asks there) and runs nothing when denied.
	again := callAsync(t, c, "rogue__set_value", args)
	q = nextQuestion(t, conn)
	if q.Later {
		t.Fatalf("the next call was shown as held: %+v", q)
	}
	if err := conn.Answer(q, host.Answer{Reason: "once was enough"}); err != nil {
		t.Fatal(err)
	}
	if res := result(t, again); !res.IsError || w.execs("rogue", "set_value") != 1 {
		t.Fatalf("the next call: %s (%d runs), want it refused and one run", text(res), w.execs("rogue", "set_value"))
	}
	if p.count() != 0 {
		t.Errorf("the host's form was shown a tier-3 call %d times, want never", p.count())
	}
}

// TestA20260728PageDenialRunsNothing: the person denies the held call in
// `mcphost approve` while the client's accepted retry waits: nothing runs
// and the client hears the person's reason.
func TestA20260728PageDenialRunsNothing(t *testing.T) {
	w, b, _ := laterWorld(t, pageLinkOf)
	p := newPageClient("")
	c := w.connectPage(p, false)
	done := callAsync(t, c, "rogue__set_value", `{"key":"k","value":"v"}`)
	id := heldID(t, nextURL(t, p))
	conn := dialApprover(t, b)
	q := nextQuestion(t, conn)
	if q.ID != id {
		t.Fatalf("the approver was shown %s, want %s", q.ID, id)
	}
	if err := conn.Answer(q, host.Answer{Reason: "not on the production table"}); err != nil {
		t.Fatal(err)
	}
	res := result(t, done)
	if !res.IsError || !strings.Contains(text(res), "not on the production table") || w.execs("rogue", "set_value") != 0 {
		t.Fatalf("denied in mcphost approve: %s (%d runs), want it refused with the reason", text(res), w.execs("rogue", "set_value"))
	}
	if got := strings.Join(approvalRecords(t, w), ","); got != "held,denied" {
		t.Errorf("approval records %s, want held,denied", got)
	}
}

// TestA20260728ClientThatDeclinesThePageRunsNothing: a client that
// declines (or cancels) the URL elicitation hears that the page was not
// opened and where the call can still be approved; nothing runs, and
// serve does not wait for a page no one opened.
func TestA20260728ClientThatDeclinesThePageRunsNothing(t *testing.T) {
	for _, action := range []string{"decline", "cancel"} {
		t.Run(action, func(t *testing.T) {
			// Were the retry to wait for the page, it would end after a
			// second, refused without the client's answer named.
			w, _, store := laterWorld(t, pageLinkOf, func(o *Options) { o.AskTimeout = time.Second })
			p := newPageClient(action)
			c := w.connectPage(p, false)
			done := callAsync(t, c, "rogue__set_value", `{"key":"k","value":"v"}`)
			id := heldID(t, nextURL(t, p))
			res := result(t, done)
			txt := text(res)
			if !res.IsError || w.execs("rogue", "set_value") != 0 {
				t.Fatalf("%s: %s (%d runs), want nothing run", action, txt, w.execs("rogue", "set_value"))
			}
			if !strings.Contains(txt, "("+action+")") || !strings.Contains(txt, pageLinkOf(id)) || !strings.Contains(txt, "approval id "+id) {
				t.Fatalf("%s: the refusal does not say the page was not opened and where to approve the call:\n%s", action, txt)
			}
			if ap, ok := store.Get(id); !ok || ap.State != later.Waiting {
				t.Errorf("%s: the held call %+v (%v), want it still waiting for a person", action, ap, ok)
			}
		})
	}
}

// TestA20260728PageRoundIsBound: the page round's request state is bound
// to the call: another call's arguments, an expired state or a state used
// once already run nothing; a retry without the answer is asked again;
// and the state of the answered page runs the call once, however often it
// is sent.
func TestA20260728PageRoundIsBound(t *testing.T) {
	// A retry that waited for the page would end after a second.
	w, _, _ := laterWorld(t, pageLinkOf, func(o *Options) { o.AskTimeout = time.Second })
	p := newPageClient("")
	c := w.connectPage(p, true)
	ctx := context.Background()
	const args = `{"key":"k","value":"v"}`
	call := func(args, state string, ans *mcp.ElicitResult) *mcp.CallToolResult {
		t.Helper()
		pr := &mcp.CallToolParams{Name: "rogue__set_value", Arguments: json.RawMessage(args), RequestState: state}
		if ans != nil {
			pr.InputResponses = mcp.InputResponseMap{pageInput: ans}
		}
		res, err := c.cs.CallTool(ctx, pr)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := call(args, "", nil)
	u, _ := first.InputRequests[pageInput].(*mcp.ElicitParams)
	if !first.NeedsInput() || u == nil || first.RequestState == "" || len(first.InputRequests) != 1 {
		t.Fatalf("first round %+v, want one URL elicitation and a request state", first)
	}
	id := heldID(t, u)
	yes := &mcp.ElicitResult{Action: "accept"}

	if res := call(`{"key":"k","value":"other"}`, first.RequestState, yes); !res.IsError || !strings.Contains(text(res), "another call") {
		t.Errorf("the state with other arguments: %s, want it refused as another call's", text(res))
	}
	st, ok := w.srv.unseal(first.RequestState)
	if !ok {
		t.Fatal("serve's own state does not unseal")
	}
	old := st
	old.Expires = time.Now().Add(-time.Minute).Unix()
	if res := call(args, w.srv.seal(old), yes); !res.IsError || !strings.Contains(text(res), "expired") {
		t.Errorf("an expired state: %s, want it refused as expired", text(res))
	}
	if res := call(args, first.RequestState, nil); !res.NeedsInput() || res.InputRequests[pageInput] == nil {
		t.Errorf("a retry without the answer: %+v, want the URL elicitation again", res)
	}
	if w.execs("rogue", "set_value") != 0 {
		t.Fatal("a call ran on a state that was not its own")
	}
	if err := w.srv.AnswerLater(id, host.Answer{Approve: true, Scope: decide.ScopeOnce, Via: audit.ChannelWeb}); err != nil {
		t.Fatal(err)
	}
	if res := call(args, first.RequestState, yes); res.IsError || w.execs("rogue", "set_value") != 1 {
		t.Fatalf("approved on the page: %s (%d runs), want it run once", text(res), w.execs("rogue", "set_value"))
	}
	if res := call(args, first.RequestState, yes); !res.IsError || !strings.Contains(text(res), "used already") || w.execs("rogue", "set_value") != 1 {
		t.Fatalf("the same state again: %s (%d runs), want it refused as used and one run", text(res), w.execs("rogue", "set_value"))
	}
	var ran []audit.Record
	for _, r := range w.outcomes("set_value") {
		if r.Status == "success" {
			ran = append(ran, r)
		}
	}
	if len(ran) != 1 || ran[0].Via != audit.ChannelWeb {
		t.Errorf("outcomes that ran %+v, want one, through %s", ran, audit.ChannelWeb)
	}
}

// TestA20260728ClientWithoutURLElicitationHearsTheLink: a 2026-07-28 client
// that declares forms only is never sent the page: its tier-3 call is
// refused with the held call's link and approval id, as a 2025-11-25
// client's is.
func TestA20260728ClientWithoutURLElicitationHearsTheLink(t *testing.T) {
	w, _, _ := laterWorld(t, pageLinkOf)
	ap := &autopilot{}
	c := w.connectClient(&mcp.ClientOptions{ElicitationHandler: ap.handle}, "2026-07-28")
	res := c.call(t, "rogue__set_value", `{"key":"k","value":"v"}`)
	txt := text(res)
	m := approvalID.FindStringSubmatch(txt)
	if !res.IsError || res.NeedsInput() || m == nil || !strings.Contains(txt, pageLinkOf(m[1])) || w.execs("rogue", "set_value") != 0 || ap.count() != 0 {
		t.Fatalf("a forms-only client: %s (%d runs, %d forms), want the refusal naming the page's link and nothing run", txt, w.execs("rogue", "set_value"), ap.count())
	}
}

// TestThePageLinkNeverCarriesASecret: a link with a query or credentials
// (a page link that carries its secret) is never handed to the client, in
// a URL elicitation or in a refusal, of either protocol version.
func TestThePageLinkNeverCarriesASecret(t *testing.T) {
	for _, leaky := range []string{"http://127.0.0.1:8765/open?k=c2VjcmV0#", "http://me:c2VjcmV0@127.0.0.1:8765/#"} {
		for _, version := range []string{"2025-11-25", "2026-07-28"} {
			t.Run(version, func(t *testing.T) {
				w, _, _ := laterWorld(t, func(id string) string { return leaky + id }, func(o *Options) { o.AskTimeout = 300 * time.Millisecond })
				p := newPageClient("")
				var mu sync.Mutex
				var sent []string
				opts := &mcp.ClientOptions{
					Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{
						Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}},
					ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						mu.Lock()
						sent = append(sent, req.Params.URL+req.Params.Message)
						mu.Unlock()
						return p.handle(ctx, req)
					},
				}
				c := w.connectClient(opts, version)
				res := c.call(t, "rogue__set_value", `{"key":"k","value":"v"}`)
				mu.Lock()
				defer mu.Unlock()
				if strings.Contains(text(res)+strings.Join(sent, " "), "c2VjcmV0") || w.execs("rogue", "set_value") != 0 {
					t.Fatalf("the secret reached the client: %s; sent %q", text(res), sent)
				}
				if !res.IsError || !strings.Contains(text(res), "approval id") {
					t.Fatalf("want the call refused and held: %s", text(res))
				}
			})
		}
	}
}

// TestThePageIsNotOfferedWhereTheWebMayNotApprove: where askVia does not
// let the approval page approve the call's tier, a 2026-07-28 client is not
// sent the page: the call is held for `mcphost approve` and refused.
func TestThePageIsNotOfferedWhereTheWebMayNotApprove(t *testing.T) {
	w, _, _ := laterWorld(t, pageLinkOf, func(o *Options) {
		o.MayApprove = func(tier decide.Tier, via audit.Channel) bool {
			return via == audit.ChannelApprove || tier != decide.T3 && via == audit.ChannelElicitation
		}
	})
	p := newPageClient("")
	c := w.connectPage(p, true)
	res := c.call(t, "rogue__set_value", `{"key":"k","value":"v"}`)
	if res.NeedsInput() || !res.IsError || !strings.Contains(text(res), "approval id") || w.execs("rogue", "set_value") != 0 {
		t.Fatalf("askVia without the page at tier 3: %+v %s, want the call held and refused, the page not offered", res, text(res))
	}
}

// TestA20260728HTTPClientOpensThePage: over streamable HTTP, where a
// 2026-07-28 client has no session and declares its capabilities on each
// request, the page round works the same: the URL elicitation names the
// held call's page, the accepted retry waits for the person's answer on
// the page, and the call runs once, recorded as approved on the page.
func TestA20260728HTTPClientOpensThePage(t *testing.T) {
	w, _, _ := laterWorld(t, pageLinkOf)
	ts := httptest.NewServer(w.srv.Handler("tok"))
	t.Cleanup(ts.Close)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	p := newPageClient("")
	opts := &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{
			Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: p.handle,
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "pages", Version: "1"}, opts).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: &http.Client{Transport: bearer{"tok", tr}}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	done := callAsync(t, &conn{cs: cs}, "rogue__set_value", `{"key":"k","value":"v"}`)
	id := heldID(t, nextURL(t, p))
	if w.execs("rogue", "set_value") != 0 {
		t.Fatal("the call ran before the person approved it")
	}
	if err := w.srv.AnswerLater(id, host.Answer{Approve: true, Scope: decide.ScopeOnce, Via: audit.ChannelWeb}); err != nil {
		t.Fatal(err)
	}
	res := result(t, done)
	if res.IsError || w.execs("rogue", "set_value") != 1 || p.count() != 0 {
		t.Fatalf("approved on the page: %s (%d runs, %d forms), want it run once and no form", text(res), w.execs("rogue", "set_value"), p.count())
	}
	var ran []audit.Record
	for _, r := range w.outcomes("set_value") {
		if r.Status == "success" {
			ran = append(ran, r)
		}
	}
	if len(ran) != 1 || ran[0].Via != audit.ChannelWeb {
		t.Errorf("outcomes that ran %+v, want one, through %s", ran, audit.ChannelWeb)
	}
}
