package host

import (
	"context"
	"testing"

	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/internal/pgtest"
	"github.com/mcphost/mcphost/pgstore"
)

// sharedGrants returns a gate world whose always grants (and pins) are
// kept in the store at url, through a pool of its own, as serve's are with
// a store: one replica.
func sharedGrants(t *testing.T, url string, o worldOpts) (*world, *pgstore.Store) {
	t.Helper()
	s, err := pgstore.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	o.store = SharedPins{Pins: s.Pins(), Grants: s.Grants()}
	return newWorld(t, o), s
}

// Two gates on one store are one gate for "always" grants: a grant given
// through replica A lets the call run unasked through replica B, made
// before the grant was given, and a revoke through B ends it for A at its
// next call, with no restart.
func TestAlwaysGrantsCrossReplicasThroughTheStore(t *testing.T) {
	url := pgtest.DB(t)
	asker := &answersAsker{answers: []Answer{{Approve: true, Scope: decide.ScopeAlways}}}
	o := worldOpts{fixture: "tasks", trusted: true, auto: "none"}
	o.asker = asker
	a, _ := sharedGrants(t, url, o)
	o.asker = HeadlessAsker{}
	b, sb := sharedGrants(t, url, o)
	const args = `{"title":"t"}`
	if r := a.call("create_task", args); r.Status != StatusSuccess || asker.count() != 1 {
		t.Fatalf("through A: %s after %d questions, want run on the person's approval", r.Status, asker.count())
	}
	if r := b.call("create_task", args); r.Status != StatusSuccess || r.DecidedBy != "user:always" {
		t.Fatalf("through B: %s by %s, want run unasked on the always grant given through A", r.Status, r.DecidedBy)
	}
	grants := b.gate.Grants()
	if len(grants) != 1 || grants[0].Scope != decide.ScopeAlways || grants[0].Tool != "create_task" {
		t.Fatalf("B's grants: %+v, want the one always grant", grants)
	}
	if n, err := sb.Grants().RevokeGrants(grants[0].Server, "create_task"); err != nil || n != 1 {
		t.Fatalf("revoking through B's store removed %d (%v), want 1", n, err)
	}
	if r := a.call("create_task", args); r.Status == StatusSuccess || asker.count() != 2 {
		t.Fatalf("through A after B revoked the grant: %s, %d questions; want it asked again (and refused)", r.Status, asker.count())
	}
	if g := a.gate.Grants(); len(g) != 0 {
		t.Fatalf("A's grants after the revoke: %+v, want none", g)
	}
}

// An always grant that cannot be written to the store still holds for the
// gate it was given in (the person approved it), and only there; a store
// that cannot be read lends no grant. With the store down the tool's pin
// cannot be read either, so the first call is asked as a changed
// definition; approving it pins the definition in memory, and the next
// call is asked as usual, and approved for always.
func TestAnAlwaysGrantTheStoreCannotKeepHoldsInItsGateOnly(t *testing.T) {
	url := pgtest.DB(t)
	asker := &answersAsker{answers: []Answer{{Approve: true, Scope: decide.ScopeOnce}, {Approve: true, Scope: decide.ScopeAlways}}}
	w, s := sharedGrants(t, url, worldOpts{fixture: "tasks", trusted: true, auto: "none", asker: asker})
	s.Close()
	const args = `{"title":"t"}`
	if r := w.call("create_task", args); r.Status != StatusSuccess || asker.count() != 1 || !r.Decision.Has(decide.CodeDefinitionChanged) {
		t.Fatalf("the first call: %s after %d questions (%v), want it asked as a changed definition and approved", r.Status, asker.count(), r.Decision.Reasons)
	}
	for i := range 2 {
		if r := w.call("create_task", args); r.Status != StatusSuccess || asker.count() != 2 {
			t.Fatalf("call %d: %s after %d questions, want the first approved and the second run on the grant kept in memory", i, r.Status, asker.count())
		}
	}
}
