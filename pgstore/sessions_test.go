package pgstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/internal/pgtest"
)

// Two replicas adding taint to one session at once keep the union of
// both, however the writes interleave; another session's taint is its own.
func TestSessionTaintIsTheUnionOfEveryReplicas(t *testing.T) {
	url := pgtest.DB(t)
	for round := range 8 {
		key := "alice\x00desk\x00" + string(rune('a'+round))
		a, b := open(t, url).Sessions(SessionOptions{}).For(key), open(t, url).Sessions(SessionOptions{}).For(key)
		var wg sync.WaitGroup
		errs := make(chan error, 2)
		wg.Add(2)
		go func() { defer wg.Done(); errs <- a.AddTaint(true, false) }()
		go func() { defer wg.Done(); errs <- b.AddTaint(false, true) }()
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := a.AddTaint(false, false); err != nil {
			t.Fatal(err)
		}
		if _, open, priv, err := b.Load(); err != nil || !open || !priv {
			t.Fatalf("round %d: taint open %v private %v (%v), want both: a replica's write undid another's", round, open, priv, err)
		}
	}
	if _, open, priv, err := open(t, url).Sessions(SessionOptions{}).For("bob\x00desk\x00a").Load(); err != nil || open || priv {
		t.Fatalf("another session's taint: open %v private %v (%v), want none", open, priv, err)
	}
}

// A grant given through one replica is in force through another, in the
// order given, until it is revoked (through any replica) or expires; it is
// the session's only, and one equal grant revoked leaves the others.
func TestSessionGrantsAreSharedRevokedAndExpire(t *testing.T) {
	url := pgtest.DB(t)
	a, b := open(t, url).Sessions(SessionOptions{}), open(t, url).Sessions(SessionOptions{})
	g1 := decide.Grant{Scope: decide.ScopeSession, Server: "id1", Tool: "set_value", DefinitionHash: "h", Tier: decide.T2, Via: "elicitation", Call: "c1"}
	g2 := decide.Grant{Scope: decide.ScopeArgs, Server: "id1", Tool: "set_value", DefinitionHash: "h", ArgsHash: "x", Tier: decide.T2}
	for _, g := range []decide.Grant{g1, g2, g1} {
		if err := a.For("alice").AddGrant(g); err != nil {
			t.Fatal(err)
		}
	}
	got, _, _, err := b.For("alice").Load()
	if err != nil || len(got) != 3 || got[0] != g1 || got[1] != g2 || got[2] != g1 {
		t.Fatalf("alice's grants through B: %+v (%v), want g1, g2, g1", got, err)
	}
	if other, _, _, _ := b.For("alice\x00").Load(); len(other) != 0 {
		t.Fatalf("another session has alice's grants: %+v", other)
	}
	if n, err := b.For("alice").Revoke(g1); err != nil || n != 2 {
		t.Fatalf("revoking g1 through B: %d (%v), want 2", n, err)
	}
	if got, _, _, _ := a.For("alice").Load(); len(got) != 1 || got[0] != g2 {
		t.Fatalf("after the revoke, A reads %+v, want g2 alone", got)
	}

	short := open(t, url).Sessions(SessionOptions{GrantLifetime: time.Hour})
	if err := short.For("carol").AddGrant(g1); err != nil {
		t.Fatal(err)
	}
	s := open(t, url)
	ctx := context.Background()
	var left time.Duration
	if err := s.pool.QueryRow(ctx, `SELECT expires - clock_timestamp() FROM mcphost_session_grants WHERE session = 'carol'`).Scan(&left); err != nil || left <= 59*time.Minute || left > time.Hour {
		t.Fatalf("carol's grant expires in %v (%v), want the hour of its lifetime", left, err)
	}
	// The hour passes (on the database's clock, which the lifetime is
	// counted on).
	if _, err := s.pool.Exec(ctx, `UPDATE mcphost_session_grants SET expires = expires - interval '1 hour' WHERE session = 'carol'`); err != nil {
		t.Fatal(err)
	}
	if got, _, _, _ := short.For("carol").Load(); len(got) != 0 {
		t.Fatalf("an expired grant is in force: %+v", got)
	}
	if err := short.For("dave").AddGrant(g2); err != nil {
		t.Fatal(err)
	}
	var rows int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM mcphost_session_grants WHERE session = 'carol'`).Scan(&rows); err != nil || rows != 0 {
		t.Fatalf("carol's expired grant is still a row (%d, %v): the table would grow without end", rows, err)
	}
}

// A row of a session's grants that is not a grant "for this session" as a
// gate gives one — written into the table by something else, or by a
// newer mcphost with a field this one does not know — is never handed to
// the gate: not with another scope, without a server, tool or definition,
// an args grant without its arguments' hash or a session grant with one,
// a field unknown, a tier unknown, nor what is not a grant at all. The
// good grants beside them still are, in order, and AddGrant refuses what
// Load would skip.
func TestStoredSessionGrantsThatAreNotSessionGrantsAreNotHandedOut(t *testing.T) {
	url := pgtest.DB(t)
	ss := open(t, url).Sessions(SessionOptions{})
	good1 := decide.Grant{Scope: decide.ScopeSession, Server: "id1", Tool: "set_value", DefinitionHash: "h", Tier: decide.T2, Via: "dialog", Call: "c1"}
	good2 := decide.Grant{Scope: decide.ScopeArgs, Server: "id1", Tool: "set_value", DefinitionHash: "h", ArgsHash: "x", Tier: decide.T3, Tainted: true}
	if err := ss.For("alice").AddGrant(good1); err != nil {
		t.Fatal(err)
	}
	bad := []string{
		`{"scope":"once","server":"id1","tool":"set_value","definitionHash":"h","argsHash":"x"}`,
		`{"scope":"always","server":"id1","tool":"set_value","definitionHash":"h"}`,
		`{"scope":"session","server":"","tool":"set_value","definitionHash":"h"}`,
		`{"scope":"session","server":"id1","tool":"","definitionHash":"h"}`,
		`{"scope":"session","server":"id1","tool":"set_value","definitionHash":""}`,
		`{"scope":"args","server":"id1","tool":"set_value","definitionHash":"h"}`,
		`{"scope":"session","server":"id1","tool":"set_value","definitionHash":"h","argsHash":"x"}`,
		`{"scope":"session","server":"id1","tool":"set_value","definitionHash":"h","onlyIf":"path=notes/*"}`,
		`{"scope":"session","server":"id1","tool":"set_value","definitionHash":"h","tier":"T9"}`,
		`{"scope":"session","server":"id1","tool":"set_value","definitionHash":"h"} {"scope":"session"}`,
		`{"scope":"session","server":"id1","tool":"set_value","definitionHash":"h"}}`,
		`{"scope":"forever","server":"id1","tool":"set_value","definitionHash":"h"}`,
		`not a grant`,
	}
	s := open(t, url)
	for _, raw := range bad {
		if _, err := s.pool.Exec(context.Background(), `INSERT INTO mcphost_session_grants (session, grant_json, expires)
			VALUES ('alice', $1, clock_timestamp() + interval '1 hour')`, []byte(raw)); err != nil {
			t.Fatal(err)
		}
	}
	if err := ss.For("alice").AddGrant(good2); err != nil {
		t.Fatal(err)
	}
	got, _, _, err := open(t, url).Sessions(SessionOptions{}).For("alice").Load()
	if err != nil || len(got) != 2 || got[0] != good1 || got[1] != good2 {
		t.Fatalf("alice's grants read back: %+v (%v), want the two good ones alone, in order", got, err)
	}
	for _, g := range []decide.Grant{
		{Scope: decide.ScopeOnce, Server: "id1", Tool: "set_value", DefinitionHash: "h", ArgsHash: "x"},
		{Scope: decide.ScopeAlways, Server: "id1", Tool: "set_value", DefinitionHash: "h"},
		{Scope: decide.ScopeSession, Tool: "set_value", DefinitionHash: "h"},
		{Scope: decide.ScopeSession, Server: "id1", DefinitionHash: "h"},
		{Scope: decide.ScopeSession, Server: "id1", Tool: "set_value"},
		{Scope: decide.ScopeArgs, Server: "id1", Tool: "set_value", DefinitionHash: "h"},
		{Scope: decide.ScopeSession, Server: "id1", Tool: "set_value", DefinitionHash: "h", ArgsHash: "x"},
	} {
		if err := ss.For("bob").AddGrant(g); err == nil {
			t.Errorf("kept %+v for a session", g)
		}
	}
	if got, _, _, _ := ss.For("bob").Load(); len(got) != 0 {
		t.Fatalf("bob's grants: %+v, want none kept", got)
	}
}

// The taint of a session no replica has read or written for TaintIdle is
// deleted at a later write of taint, a bounded batch at a time; a session
// read since (a call decided for it) keeps its taint however long ago the
// taint was taken in, and so does one unseen for less than TaintIdle, or
// one whose own taint is being written. TaintIdle outlasts every grant.
func TestTaintOfSessionsUnseenForLongIsDeleted(t *testing.T) {
	url := pgtest.DB(t)
	ctx := context.Background()
	s := open(t, url)
	ss := open(t, url).Sessions(SessionOptions{})
	if ss.taintIdle < 30*DefaultGrantLifetime || open(t, url).Sessions(SessionOptions{GrantLifetime: 40 * 24 * time.Hour}).taintIdle < 30*40*24*time.Hour {
		t.Fatalf("taint is kept %v unseen, want at least thirty grant lifetimes", ss.taintIdle)
	}
	for _, key := range []string{"gone", "read", "recent", "self"} {
		if err := ss.For(key).AddTaint(true, false); err != nil {
			t.Fatal(err)
		}
	}
	// Time passes on the database's clock: every row was taken in long
	// ago, "recent" was last seen just within the bound.
	age := func(key string, d time.Duration) {
		t.Helper()
		if _, err := s.pool.Exec(ctx, `UPDATE mcphost_session_taint SET updated = clock_timestamp() - $2::interval, seen = clock_timestamp() - $2::interval WHERE session = $1`, []byte(key), d); err != nil {
			t.Fatal(err)
		}
	}
	for _, key := range []string{"gone", "read", "self"} {
		age(key, TaintIdle+time.Hour)
	}
	age("recent", TaintIdle-time.Hour)
	// "read" has a call decided for it through another replica.
	if _, open, _, err := open(t, url).Sessions(SessionOptions{}).For("read").Load(); err != nil || !open {
		t.Fatalf("the session read: open %v (%v), want its taint", open, err)
	}
	if err := ss.For("self").AddTaint(false, true); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string][2]bool{"gone": {false, false}, "read": {true, false}, "recent": {true, false}, "self": {true, true}} {
		if _, open, priv, err := ss.For(key).Load(); err != nil || open != want[0] || priv != want[1] {
			t.Errorf("session %q: taint open %v private %v (%v), want %v", key, open, priv, err, want)
		}
	}

	// A backlog is deleted a batch per write.
	if _, err := s.pool.Exec(ctx, `INSERT INTO mcphost_session_taint (session, open_world, seen)
		SELECT convert_to('old-' || i, 'UTF8'), true, clock_timestamp() - $1::interval FROM generate_series(1, $2) i`, TaintIdle+time.Hour, pruneBatch+100); err != nil {
		t.Fatal(err)
	}
	left := func() int {
		t.Helper()
		var n int
		if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM mcphost_session_taint WHERE substring(session from 1 for 4) = 'old-'::bytea`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for i, want := range []int{100, 0} {
		if err := ss.For("writer").AddTaint(true, false); err != nil {
			t.Fatal(err)
		}
		if n := left(); n != want {
			t.Fatalf("after write %d, %d rows of the backlog left, want %d", i+1, n, want)
		}
	}
}
