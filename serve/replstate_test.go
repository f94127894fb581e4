package serve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/pgtest"
	"github.com/mcphost/mcphost/pgstore"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// balancer is a load balancer in front of serve's replicas: each request
// goes to the replica the test last chose, whatever client sent it.
type balancer struct {
	to       atomic.Int32
	replicas []*url.URL
	next     http.RoundTripper
}

func (b *balancer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	u := b.replicas[b.to.Load()]
	r.URL.Scheme, r.URL.Host, r.Host = u.Scheme, u.Host, u.Host
	r.Header.Set("Authorization", "Bearer tok")
	return b.next.RoundTrip(r)
}

// replicas starts n serve replicas over HTTP, each with a pool of its own
// on the one database db, keeping the session state of stateless clients
// and the request states' key and spent nonces there.
func replicas(t *testing.T, n int, db string) ([]*world, *balancer) {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	lb := &balancer{next: tr}
	var ws []*world
	for range n {
		st, err := pgstore.Open(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		sessions := st.Sessions(pgstore.SessionOptions{})
		states, err := st.RequestStates(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// The open-world read is allowed by a rule, which a tainted session
		// sets aside: it asks.
		w := newWorld(t, worldOpts{rules: append([]string{"allow:tasks/search_context"}, defaultRules...), tweak: func(o *Options) {
			o.SessionState = func(key string) host.SessionState { return sessions.For(key) }
			o.RequestStates = states
		}})
		ts := httptest.NewServer(w.srv.Handler("tok"))
		t.Cleanup(ts.Close)
		u, _ := url.Parse(ts.URL)
		lb.replicas = append(lb.replicas, u)
		ws = append(ws, w)
	}
	return ws, lb
}

// connectVia connects a 2026-07-28 client named name through the
// balancer; with a nil e it answers input requests by hand.
func connectVia(t *testing.T, lb *balancer, name string, e *elicitor) *mcp.ClientSession {
	t.Helper()
	opts := &mcp.ClientOptions{ElicitationHandler: (&elicitor{}).handle, MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}}
	if e != nil {
		opts = &mcp.ClientOptions{ElicitationHandler: e.handle}
	}
	cl := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, opts)
	cs, err := cl.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: "http://replicas.invalid/",
		HTTPClient: &http.Client{Transport: lb}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %q, want 2026-07-28", v)
	}
	return cs
}

// A 2026-07-28 client whose requests alternate between two replicas on
// one store is one session to both: a grant "for this session" given
// through A lets the same call through B run without asking, and the
// taint taken in through each is in force through the other, so that an
// open-world read after a private read asks whichever replica it reaches.
// Another identity shares neither.
func TestAStatelessClientKeepsItsGrantsAndTaintAcrossReplicas(t *testing.T) {
	ws, lb := replicas(t, 2, pgtest.DB(t))
	a, b := ws[0], ws[1]
	e := &elicitor{answers: []*mcp.ElicitResult{accept(DecisionAllowSession, "")}}
	cs := connectVia(t, lb, "desk", e)

	lb.to.Store(0)
	if res := setValue(t, cs, "v"); res.IsError || e.count() != 1 || a.execs("flaky", "set_value") != 1 {
		t.Fatalf("through A: %s (asked %d, ran %d), want asked once and run", text(res), e.count(), a.execs("flaky", "set_value"))
	}
	lb.to.Store(1)
	if res := setValue(t, cs, "v"); res.IsError || e.count() != 1 || b.execs("flaky", "set_value") != 1 {
		t.Fatalf("through B: %s (asked %d in all, ran %d), want run on the grant given through A, unasked", text(res), e.count(), b.execs("flaky", "set_value"))
	}

	// Taint: a private read through A, open-world content through B.
	search := func() *mcp.CallToolResult {
		return callArgs(t, cs, &mcp.CallToolParams{Name: "tasks__search_context", Arguments: map[string]any{"query": "q"}})
	}
	lb.to.Store(0)
	if res := callArgs(t, cs, &mcp.CallToolParams{Name: "flaky__read_value", Arguments: map[string]any{"key": "k"}}); res.IsError {
		t.Fatalf("the private read through A: %s", text(res))
	}
	if _, priv := onlyIdent(t, b).gate.Taint(); !priv {
		t.Fatal("after a private read through A, B's gate for the client has not seen it")
	}
	lb.to.Store(1)
	if res := search(); res.IsError || e.count() != 1 {
		t.Fatalf("the first open-world read, through B: %s (asked %d in all), want it run unasked", text(res), e.count())
	}
	for i, replica := range []int32{0, 1} {
		lb.to.Store(replica)
		res := search()
		if !res.IsError || e.count() != 2+i || !strings.Contains(e.last().Message, "read private data") {
			t.Fatalf("an open-world read through replica %d in the tainted session: %s (asked %d in all), want it asked as tainted (and declined)", replica, text(res), e.count())
		}
	}
	for _, w := range ws {
		if open, priv := onlyIdent(t, w).gate.Taint(); !open || !priv {
			t.Fatalf("a replica's gate sees taint open %v private %v, want both", open, priv)
		}
	}

	// The records of both replicas name one session for the client.
	sa, sb := a.outcomes("set_value"), b.outcomes("set_value")
	if len(sa) != 1 || len(sb) != 1 || sa[0].Client.Session != sb[0].Client.Session {
		t.Fatalf("the client's outcomes name sessions %+v and %+v, want one session", sa, sb)
	}

	// Another client identity, through the same replicas: its own session.
	eo := &elicitor{}
	other := connectVia(t, lb, "other", eo)
	for _, replica := range []int32{0, 1} {
		lb.to.Store(replica)
		if res := setValue(t, other, "v"); !res.IsError || eo.count() != 1+int(replica) {
			t.Fatalf("another identity through replica %d: %s (asked %d), want asked (and declined): it has no grant", replica, text(res), eo.count())
		}
		if res := callArgs(t, other, &mcp.CallToolParams{Name: "tasks__search_context", Arguments: map[string]any{"query": "q"}}); res.IsError {
			t.Fatalf("another identity's open-world read through replica %d: %s, want it run: its session is not tainted", replica, text(res))
		}
	}
}

// last is the last question e was asked.
func (e *elicitor) last() *mcp.ElicitParams {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.asked) == 0 {
		return &mcp.ElicitParams{}
	}
	return e.asked[len(e.asked)-1]
}

// onlyIdent is the one stateless identity w keeps.
func onlyIdent(t *testing.T, w *world) *session {
	t.Helper()
	w.srv.mu.Lock()
	defer w.srv.mu.Unlock()
	for id, sess := range w.srv.idents {
		if id.name == "desk" {
			return sess
		}
	}
	t.Fatal("no session for desk")
	return nil
}

// No two identities have one key, whatever names clients declare: each
// part is length-prefixed, so moving bytes from one part to the next
// makes another key.
func TestIdentityKeysNeverCollide(t *testing.T) {
	ids := []identity{
		{person: "iss\nalice", clientID: "desk", name: "app", version: "1"},
		{person: "iss\nalic", clientID: "edesk", name: "app", version: "1"},
		{person: "iss\nalice", clientID: "desk", name: "app1", version: ""},
		{person: "iss\nalice", clientID: "desk", name: "", version: "app1"},
		{person: "", clientID: "", name: "iss\nalicedeskapp", version: "1"},
		{name: "app", version: "1"},
	}
	seen := map[string]identity{}
	for _, id := range ids {
		if other, ok := seen[id.key()]; ok {
			t.Fatalf("%+v and %+v have one key", id, other)
		}
		seen[id.key()] = id
	}
}

// A 2026-07-28 client's answer may reach another replica than its
// question: replica B opens the request state A sealed (one key for all)
// and runs the call once; the same answer replayed through A, or through
// B again, runs nothing (the nonce is spent in the store they share).
func TestARequestStateSpentThroughOneReplicaIsSpentForAll(t *testing.T) {
	ws, lb := replicas(t, 2, pgtest.DB(t))
	a, b := ws[0], ws[1]
	cs := connectVia(t, lb, "desk", nil)
	args := map[string]any{"key": "k", "value": "v"}
	lb.to.Store(0)
	first := callArgs(t, cs, &mcp.CallToolParams{Name: "flaky__set_value", Arguments: args})
	if !first.NeedsInput() || first.RequestState == "" {
		t.Fatalf("the question through A: %+v, want an input request with a request state", first)
	}
	yes := mcp.InputResponseMap{approvalInput: accept(DecisionAllowOnce, "")}
	answer := &mcp.CallToolParams{Name: "flaky__set_value", Arguments: args, InputResponses: yes, RequestState: first.RequestState}
	lb.to.Store(1)
	if res := callArgs(t, cs, answer); res.IsError || b.execs("flaky", "set_value") != 1 {
		t.Fatalf("the answer through B: %s (ran %d), want the call run once", text(res), b.execs("flaky", "set_value"))
	}
	for _, replica := range []int32{0, 1} {
		lb.to.Store(replica)
		if res := callArgs(t, cs, answer); !res.IsError || !strings.Contains(text(res), "used already") {
			t.Fatalf("the answer replayed through replica %d: %s, want it refused as used", replica, text(res))
		}
	}
	if n := a.execs("flaky", "set_value") + b.execs("flaky", "set_value"); n != 1 {
		t.Fatalf("set_value ran %d times over both replicas, want once", n)
	}
}
