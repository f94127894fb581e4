package host

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/internal/pgtest"
	"github.com/mcphost/mcphost/later"
	"github.com/mcphost/mcphost/pgstore"
)

// Two gates on one PostgreSQL store are one gate for a held call: a call
// held by replica A and approved through replica B runs once, through
// whichever replica the racing retries reach first, and never twice.
func TestHeldCallCrossesReplicasThroughTheStore(t *testing.T) {
	url := pgtest.DB(t)
	client := &audit.Client{Name: "autopilot", Version: "1", Session: "serve-s1"}
	replica := func() *world {
		s, err := pgstore.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return newWorld(t, worldOpts{fixture: "flaky", headless: true, later: s.Later(later.Options{}), mayApprove: defaultAskVia, client: client})
	}
	a, b := replica(), replica()
	r := a.call("set_value", laterArgs)
	if r.Status != StatusBlocked || r.Held == nil || r.Held.ID == "" {
		t.Fatalf("first call through A: %s held %+v, want blocked and held", r.Status, r.Held)
	}
	if r2 := b.call("set_value", laterArgs); r2.Status != StatusBlocked || r2.Held == nil || r2.Held.ID != r.Held.ID {
		t.Fatalf("the same call through B before an answer: %s held %+v, want blocked under A's id %s", r2.Status, r2.Held, r.Held.ID)
	}
	if err := b.gate.AnswerLater(r.Held.ID, Answer{Approve: true, Scope: decide.ScopeOnce, Via: audit.ChannelApprove}); err != nil {
		t.Fatalf("approving A's held call through B: %v", err)
	}
	var ran atomic.Int32
	var wg sync.WaitGroup
	for i := range 8 {
		w := []*world{a, b}[i%2]
		wg.Go(func() {
			if res := w.gate.Call(context.Background(), Call{Server: "f", Tool: "set_value", Args: []byte(laterArgs)}); res.Status == StatusSuccess {
				ran.Add(1)
				if res.DecidedBy != "user:once" || res.Via != audit.ChannelApprove {
					t.Errorf("the retry ran by %s via %s, want user:once via approve", res.DecidedBy, res.Via)
				}
			}
		})
	}
	wg.Wait()
	if n, execs := ran.Load(), a.count(fixtures.EventExec, "set_value")+b.count(fixtures.EventExec, "set_value"); n != 1 || execs != 1 {
		t.Fatalf("after one approval the retries ran %d times (%d executions over both replicas), want once", n, execs)
	}
}

// A call the store cannot hold (the database is gone) is refused without
// an approval id: nothing is said to wait that no one can approve.
func TestCallTheStoreCannotHoldIsRefusedUnheld(t *testing.T) {
	s, err := pgstore.Open(context.Background(), pgtest.DB(t))
	if err != nil {
		t.Fatal(err)
	}
	var held []later.Approval
	w := newWorld(t, worldOpts{fixture: "flaky", headless: true, later: s.Later(later.Options{}), mayApprove: defaultAskVia,
		client: &audit.Client{Name: "autopilot", Version: "1", Session: "serve-s1"},
		onHold: func(a later.Approval, q *Question) error { held = append(held, a); return nil }})
	s.Close()
	r := w.call("set_value", laterArgs)
	if r.Status != StatusBlocked || r.Held != nil || len(held) != 0 {
		t.Fatalf("a call the store could not hold: %s held %+v (%d told), want blocked and not held", r.Status, r.Held, len(held))
	}
	if n := w.count(fixtures.EventExec, "set_value"); n != 0 {
		t.Fatalf("set_value ran %d times, want never", n)
	}
}

// holdingAsker sends the person elsewhere, as serve's URL elicitation
// does: it holds the call through Question.Hold, and no answer comes.
type holdingAsker struct{ got chan later.Approval }

func (h holdingAsker) Ask(ctx context.Context, q *Question) (Answer, error) {
	h.got <- q.Hold()
	return Answer{}, ErrNoPerson
}

// An asker that holds the call when the store cannot hold it gets an
// approval with no id (which names nothing to approve), not a crash.
func TestAskerHoldingWhereTheStoreCannotHold(t *testing.T) {
	s, err := pgstore.Open(context.Background(), pgtest.DB(t))
	if err != nil {
		t.Fatal(err)
	}
	h := holdingAsker{got: make(chan later.Approval, 1)}
	w := newWorld(t, worldOpts{fixture: "flaky", asker: h, later: s.Later(later.Options{}), mayApprove: defaultAskVia,
		client: &audit.Client{Name: "autopilot", Version: "1", Session: "serve-s1"}})
	s.Close()
	r := w.call("set_value", laterArgs)
	if ap := <-h.got; ap.ID != "" {
		t.Fatalf("Question.Hold gave %+v, want no approval", ap)
	}
	if r.Status != StatusBlocked || r.Held != nil {
		t.Fatalf("the call: %s held %+v, want blocked and not held", r.Status, r.Held)
	}
}

// A definition pinned through one replica is what every replica compares
// with: a rug pull replica B sees after replica A pinned the tool is a
// change there too, and first sight through B never moves A's pin.
func TestPinsCrossReplicasThroughTheStore(t *testing.T) {
	url := pgtest.DB(t)
	replica := func() *Pins {
		s, err := pgstore.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return NewPins(SharedPins{Pins: s.Pins(), Grants: nil})
	}
	a, b := replica(), replica()
	honest := &client.Tool{Name: "read_file", Hash: "def-honest"}
	rug := &client.Tool{Name: "read_file", Hash: "def-rug"}
	a.Listed("ident-1", true, []*client.Tool{honest})
	b.Listed("ident-1", true, []*client.Tool{rug})
	if pinned, changed := b.Check("ident-1", rug, true); pinned != "def-honest" || !changed {
		t.Fatalf("replica B compares the rug pull with %q (changed %v), want A's pin def-honest and a change", pinned, changed)
	}
	if pinned, changed := a.Check("ident-1", honest, true); pinned != "def-honest" || changed {
		t.Fatalf("replica A: pin %q changed %v after B's listing, want its own pin unchanged", pinned, changed)
	}
	// A person accepts the new definition through B: A compares with it.
	b.Set("ident-1", rug, true)
	if pinned, changed := a.Check("ident-1", rug, true); pinned != "def-rug" || changed {
		t.Fatalf("after the pin moved through B, A has %q (changed %v), want def-rug", pinned, changed)
	}
}

// A replica whose store cannot be read compares a definition with no pin
// it has: a rug pull it sees then counts as changed, never as first seen
// (which would pin it and run it unasked), and its listing pins nothing.
// A definition a person accepts then holds in memory, and once the store
// can be read its pins are the store's again.
func TestAnUnreadableStoreMakesEveryDefinitionChanged(t *testing.T) {
	url := pgtest.DB(t)
	open := func() *pgstore.Store {
		s, err := pgstore.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	a := NewPins(SharedPins{Pins: open().Pins()})
	honest := &client.Tool{Name: "read_file", Hash: "def-honest"}
	a.Listed("ident-1", true, []*client.Tool{honest})

	down := open()
	b := NewPins(SharedPins{Pins: down.Pins()})
	down.Close()
	rug := &client.Tool{Name: "read_file", Hash: "def-rug"}
	fresh := &client.Tool{Name: "write_file", Hash: "def-write"}
	b.Listed("ident-1", true, []*client.Tool{rug, fresh})
	for _, tool := range []*client.Tool{rug, fresh} {
		if pinned, changed := b.Check("ident-1", tool, true); pinned != UnreadablePin || !changed {
			t.Fatalf("with the store down, %s compares with %q (changed %v), want %q and a change", tool.Name, pinned, changed, UnreadablePin)
		}
	}
	if h, ok := a.Get("ident-1", "write_file"); ok {
		t.Fatalf("a listing taken with the store down pinned write_file to %q", h)
	}
	b.Set("ident-1", rug, true) // a person accepts it; the store cannot keep it
	if pinned, changed := b.Check("ident-1", rug, true); pinned != "def-rug" || changed {
		t.Fatalf("after a person accepted it with the store down: %q (changed %v), want def-rug held in memory", pinned, changed)
	}
	if pinned, changed := a.Check("ident-1", rug, true); pinned != "def-honest" || !changed {
		t.Fatalf("replica A, whose store is up: %q (changed %v), want its pin def-honest and a change", pinned, changed)
	}
}

// A person's held call follows the person, not the connection: held
// through replica A in one session, approved through replica B, it runs
// once when the same person's same client retries it through B in
// another session; the same call from another person, or from the same
// person's other client, takes nothing.
func TestAPersonsHeldCallFollowsThemAcrossReplicas(t *testing.T) {
	url := pgtest.DB(t)
	alice := &audit.Person{Issuer: "https://login.example", Subject: "alice"}
	replica := func(c *audit.Client) *world {
		s, err := pgstore.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return newWorld(t, worldOpts{fixture: "flaky", headless: true, later: s.Later(later.Options{}), mayApprove: defaultAskVia, client: c})
	}
	const aliceKey = "https://login.example\nalice"
	a := replica(&audit.Client{Name: "ide", Version: "1", Session: "serve-a1", ID: "ide-client", Person: alice, Key: aliceKey})
	b := replica(&audit.Client{Name: "ide", Version: "1", Session: "serve-b7", ID: "ide-client", Person: alice, Key: aliceKey})
	// Bob's subject escapes like Alice's in the record: he is still not her.
	bob := replica(&audit.Client{Name: "ide", Version: "1", Session: "serve-b8", ID: "ide-client", Person: alice, Key: "https://login.example\nalice\u200b"})
	other := replica(&audit.Client{Name: "ide", Version: "1", Session: "serve-b9", ID: "script-client", Person: alice, Key: aliceKey})
	r := a.call("set_value", laterArgs)
	if r.Status != StatusBlocked || r.Held == nil || r.Held.ID == "" {
		t.Fatalf("the call through A: %s held %+v, want held", r.Status, r.Held)
	}
	if err := b.gate.AnswerLater(r.Held.ID, Answer{Approve: true, Scope: decide.ScopeOnce, Via: audit.ChannelWeb}); err != nil {
		t.Fatal(err)
	}
	for name, w := range map[string]*world{"another person": bob, "the person's other client": other} {
		if res := w.call("set_value", laterArgs); res.Status == StatusSuccess {
			t.Fatalf("%s's same call ran on Alice's approval", name)
		}
	}
	if res := b.call("set_value", laterArgs); res.Status != StatusSuccess || res.Via != audit.ChannelWeb {
		t.Fatalf("Alice's retry through B in another session: %s via %s, want success via web", res.Status, res.Via)
	}
	if res := b.call("set_value", laterArgs); res.Status == StatusSuccess {
		t.Fatal("a second retry ran on the same approval")
	}
	if n := a.count(fixtures.EventExec, "set_value") + b.count(fixtures.EventExec, "set_value") + bob.count(fixtures.EventExec, "set_value") + other.count(fixtures.EventExec, "set_value"); n != 1 {
		t.Fatalf("set_value ran %d times over the replicas, want once", n)
	}
}
