package pgstore

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/internal/pgtest"
)

// Trust remembered through one replica is in force through another, until
// it is taken back through any, by identity or by the server's name; an
// empty identity is never trusted and changes nothing.
func TestTrustIsSharedAndRevokedForEveryReplica(t *testing.T) {
	url := pgtest.DB(t)
	a, b := open(t, url).Trust(), open(t, url).Trust()
	if b.Trusted("ident-fs") {
		t.Fatal("a new database trusts a server")
	}
	for _, s := range []*Trust{a, b} { // trusting twice, through both, is one record
		if err := s.SetTrust("ident-fs", "fs", true); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.SetTrust("", "x", true); err != nil || b.Trusted("") {
		t.Fatalf("an empty identity: %v, trusted %v; want nothing kept", err, b.Trusted(""))
	}
	if !b.Trusted("ident-fs") || b.Trusted("ident-other") {
		t.Fatal("trust remembered through A is not in force through B, or covers another server")
	}
	if err := b.SetTrust("ident-fs", "fs", false); err != nil || a.Trusted("ident-fs") {
		t.Fatalf("after B withdrew trust (%v), A still trusts the server", err)
	}
	// Untrust by name finds trust remembered for an identity the server no
	// longer has (its command changed).
	if err := a.SetTrust("ident-old", "fs", true); err != nil {
		t.Fatal(err)
	}
	if err := a.SetTrust("ident-db", "db", true); err != nil {
		t.Fatal(err)
	}
	if n, err := b.Untrust("ident-new", "fs"); err != nil || n != 1 || a.Trusted("ident-old") || !a.Trusted("ident-db") {
		t.Fatalf("untrust by name removed %d (%v); old trusted %v, db trusted %v; want the one record of fs", n, err, a.Trusted("ident-old"), a.Trusted("ident-db"))
	}
	if n, err := b.Untrust("", ""); err != nil || n != 0 || !a.Trusted("ident-db") {
		t.Fatalf("untrust with neither identity nor name removed %d (%v), want none", n, err)
	}
}

// An always grant given through one replica is in force through another;
// a second grant for the same tool replaces the first, also when two
// replicas grant at once; a revoke through any ends it for all; and what
// the state file refuses to keep the store refuses too.
func TestAlwaysGrantsAreSharedReplacedAndRevoked(t *testing.T) {
	url := pgtest.DB(t)
	a, b := open(t, url).Grants(), open(t, url).Grants()
	g1 := decide.Grant{Scope: decide.ScopeAlways, Server: "id1", Tool: "write", DefinitionHash: "h1", Tier: decide.T2, Via: "dialog", Call: "c1"}
	g2 := g1
	g2.DefinitionHash, g2.Call = "h2", "c2"
	other := decide.Grant{Scope: decide.ScopeAlways, Server: "id1", Tool: "append", DefinitionHash: "h", Tier: decide.T1}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, x := range []struct {
		s *Grants
		g decide.Grant
	}{{a, g1}, {b, g2}} {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- x.s.AddAlwaysGrant(x.g, "fs") }()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("two replicas granting one tool at once: %v", err)
		}
	}
	if got := b.AlwaysGrants(); len(got) != 1 || got[0] != g1 && got[0] != g2 {
		t.Fatalf("after two grants of one tool: %+v, want one of them", got)
	}
	if err := b.AddAlwaysGrant(other, "fs"); err != nil {
		t.Fatal(err)
	}
	if err := a.AddAlwaysGrant(g2, "fs"); err != nil {
		t.Fatal(err)
	}
	if got := b.AlwaysGrants(); len(got) != 2 || got[0] != other || got[1] != g2 {
		t.Fatalf("grants through B: %+v, want append's and write's latest, by tool", got)
	}
	for _, bad := range []decide.Grant{
		{Scope: decide.ScopeSession, Server: "id1", Tool: "x", DefinitionHash: "h"},
		{Scope: decide.ScopeAlways, Server: "id1", Tool: "x", DefinitionHash: "h", ArgsHash: "a"},
		{Scope: decide.ScopeAlways, Server: "", Tool: "x", DefinitionHash: "h"},
		{Scope: decide.ScopeAlways, Server: "id1", Tool: "x"},
	} {
		if err := a.AddAlwaysGrant(bad, "fs"); err == nil {
			t.Errorf("kept %+v, which the state file refuses", bad)
		}
	}
	if n, err := a.RevokeGrants("id1", "write"); err != nil || n != 1 {
		t.Fatalf("revoke write through A: %d (%v), want 1", n, err)
	}
	if got := b.AlwaysGrants(); len(got) != 1 || got[0] != other {
		t.Fatalf("through B after A revoked write: %+v, want append's only", got)
	}
	if n, err := b.RevokeGrants("id1", ""); err != nil || n != 1 || len(a.AlwaysGrants()) != 0 {
		t.Fatalf("revoke every tool of id1 through B: %d (%v), A still has %+v", n, err, a.AlwaysGrants())
	}
}

// A store that cannot be read lends no trust and no grant: calls ask more,
// never less.
func TestTrustAndGrantsFailClosed(t *testing.T) {
	url := pgtest.DB(t)
	s := open(t, url)
	if err := s.Trust().SetTrust("ident-fs", "fs", true); err != nil {
		t.Fatal(err)
	}
	if err := s.Grants().AddAlwaysGrant(decide.Grant{Scope: decide.ScopeAlways, Server: "id1", Tool: "write", DefinitionHash: "h"}, "fs"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s.Trust().Trusted("ident-fs") || len(s.Grants().AlwaysGrants()) != 0 {
		t.Fatal("a closed store still trusts, or still grants")
	}
}

// An always grant row that is not one the state file keeps, written into
// the table by hand (or by another program), is never handed out: not
// with another scope, bound to arguments, without a server, tool or
// definition, with a field this mcphost does not know (one that may narrow
// the grant, written by a newer mcphost) or data after it, nor when it is
// not a grant at all; the rows beside it that are grants still are.
func TestStoredAlwaysGrantsTheStateFileRefusesAreNotHandedOut(t *testing.T) {
	url := pgtest.DB(t)
	s := open(t, url)
	good := decide.Grant{Scope: decide.ScopeAlways, Server: "id1", Tool: "write", DefinitionHash: "h", Tier: decide.T2}
	if err := s.Grants().AddAlwaysGrant(good, "fs"); err != nil {
		t.Fatal(err)
	}
	for i, raw := range []string{
		`{"scope":"session","server":"id1","tool":"t1","definitionHash":"h"}`,
		`{"scope":"once","server":"id1","tool":"t2","definitionHash":"h","argsHash":"a"}`,
		`{"scope":"always","server":"id1","tool":"t3","definitionHash":"h","argsHash":"a"}`,
		`{"scope":"always","server":"","tool":"t4","definitionHash":"h"}`,
		`{"scope":"always","server":"id1","tool":"","definitionHash":"h"}`,
		`{"scope":"always","server":"id1","tool":"t6","definitionHash":""}`,
		`{"scope":"forever","server":"id1","tool":"t7","definitionHash":"h"}`,
		`{"scope":"always","server":"id1","tool":"t8","definitionHash":"h","onlyIf":"title=t"}`,
		`{"scope":"always","server":"id1","tool":"t9","definitionHash":"h"} {"scope":"always"}`,
		`not a grant`,
	} {
		if _, err := s.pool.Exec(context.Background(), `INSERT INTO mcphost_always_grants (identity, tool, name, grant_json) VALUES ('id1', $1, 'fs', $2)`,
			[]byte(fmt.Sprint("bad-", i)), []byte(raw)); err != nil {
			t.Fatal(err)
		}
	}
	if got := open(t, url).Grants().AlwaysGrants(); len(got) != 1 || got[0] != good {
		t.Fatalf("always grants read back: %+v, want the one good grant alone", got)
	}
}
