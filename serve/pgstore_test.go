package serve

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
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

// Two serve replicas over HTTP on one PostgreSQL store, with clients spread
// over both and calling at once, write one audit chain: every intent and
// outcome once, none lost, the chain whole.
func TestTwoReplicasOverHTTPKeepOneChain(t *testing.T) {
	const clients, calls = 200, 2 // the 200 concurrent clients
	url := pgtest.DB(t)
	var urls []string
	var stores []*pgstore.Store
	for range 2 {
		s, err := pgstore.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		stores = append(stores, s)
		w := newWorld(t, worldOpts{tweak: func(o *Options) { o.Audit = audit.OpenChain(s, audit.Options{}) }})
		ts := httptest.NewServer(w.srv.Handler("tok"))
		t.Cleanup(ts.Close)
		urls = append(urls, ts.URL)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	t.Cleanup(tr.CloseIdleConnections)
	loadHTTP(t, urls, tr, clients, calls)
	rep, err := stores[0].Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Intents != clients*calls || rep.Outcomes != clients*calls || len(rep.OpenIntents) != 0 || len(rep.OrphanOutcomes) != 0 {
		t.Fatalf("the chain of both replicas: %d intents, %d outcomes, %d open, %d orphaned, problems %v; want %d paired and none",
			rep.Intents, rep.Outcomes, len(rep.OpenIntents), len(rep.OrphanOutcomes), rep.Problems, clients*calls)
	}
}

// A call held by one replica is answered through another: replica B has
// no gate of its own for it, but the store holds it and the chain is
// shared, so B's AnswerLater (as its page would) approves it, and the
// retry runs once. An id no replica held approves nothing.
func TestAReplicaAnswersACallAnotherHeld(t *testing.T) {
	url := pgtest.DB(t)
	replica := func() *world {
		s, err := pgstore.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		w, _, _ := laterWorld(t, nil, func(o *Options) {
			o.Later = s.Later(later.Options{})
			o.Audit = audit.OpenChain(s, audit.Options{})
		})
		return w
	}
	a, b := replica(), replica()
	c := a.connectAutopilot(&autopilot{})
	const args = `{"key":"k","value":"v"}`
	res := c.call(t, "rogue__set_value", args)
	m := approvalID.FindStringSubmatch(text(res))
	if !res.IsError || m == nil {
		t.Fatalf("the tier-3 call through A: %s; want it held with an approval id", text(res))
	}
	if err := b.srv.AnswerLater("0123456789abcdef0123456789abcdef", host.Answer{Approve: true, Scope: decide.ScopeOnce, Via: audit.ChannelWeb}); err == nil {
		t.Fatal("B approved an id no replica held")
	}
	if err := b.srv.AnswerLater(m[1], host.Answer{Approve: true, Scope: decide.ScopeOnce, Via: audit.ChannelWeb}); err != nil {
		t.Fatalf("B answering the call A held: %v", err)
	}
	if res := c.call(t, "rogue__set_value", args); res.IsError || a.execs("rogue", "set_value") != 1 {
		t.Fatalf("the retry through A after B's approval: %s (%d runs), want it run once", text(res), a.execs("rogue", "set_value"))
	}
	if res := c.call(t, "rogue__set_value", args); !res.IsError || a.execs("rogue", "set_value") != 1 {
		t.Fatalf("a second retry: %s (%d runs), want nothing run", text(res), a.execs("rogue", "set_value"))
	}
}

// A call the managed policy routes to a group is not answered through the
// fallback of a replica that did not hold it: the route is read from what
// the store keeps of the call, as every replica's policy is the same.
func TestAReplicaKeepsTheRouteOfACallAnotherHeld(t *testing.T) {
	url := pgtest.DB(t)
	route := func(o *Options) {
		o.Route = func(server, tool string, tier decide.Tier) *Route {
			if tool == "set_value" {
				return &Route{Group: "owners"}
			}
			return nil
		}
	}
	replica := func(more ...func(*Options)) *world {
		s, err := pgstore.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		w, _, _ := laterWorld(t, nil, append([]func(*Options){func(o *Options) {
			o.Later = s.Later(later.Options{})
			o.Audit = audit.OpenChain(s, audit.Options{})
		}}, more...)...)
		return w
	}
	a, b := replica(), replica(route)
	c := a.connectAutopilot(&autopilot{})
	res := c.call(t, "rogue__set_value", `{"key":"k","value":"v"}`)
	m := approvalID.FindStringSubmatch(text(res))
	if m == nil {
		t.Fatalf("the call through A was not held: %s", text(res))
	}
	if err := b.srv.AnswerLater(m[1], host.Answer{Approve: true, Scope: decide.ScopeOnce, Via: audit.ChannelWeb}); !errors.Is(err, ErrRouted) {
		t.Fatalf("B answering a routed call A held: %v, want ErrRouted", err)
	}
}
