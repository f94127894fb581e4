package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/internal/pgtest"
)

var _ audit.Chain = (*Store)(nil)

// open opens a store on url, closed when the test ends: one replica.
func open(t testing.TB, url string) *Store {
	t.Helper()
	s, err := Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func intent(call string) *audit.Record {
	return &audit.Record{Kind: audit.Intent, SessionID: "s1", CallID: call, Server: "fs", Tool: "write_file", Class: "additive",
		Args: []byte(`{"path":"notes/x.md"}`)}
}

// Two replicas (two pools on one database) appending at once make one
// chain: every record once, each prev the hash of the record before.
func TestConcurrentAppendsFromTwoReplicasMakeOneChain(t *testing.T) {
	url := pgtest.DB(t)
	logs := []*audit.ChainLog{audit.OpenChain(open(t, url), audit.Options{}), audit.OpenChain(open(t, url), audit.Options{})}
	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			if err := logs[i%2].Append(intent(fmt.Sprintf("call-%d", i))); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("append: %v", err)
	}
	s := open(t, url)
	rep, err := s.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("the chain does not verify: %v", rep.Problems)
	}
	if rep.Records != n || rep.LastSeq != n {
		t.Fatalf("got %d records ending at seq %d, want %d", rep.Records, rep.LastSeq, n)
	}
	seen := map[string]int{}
	for _, e := range rep.OpenIntents {
		seen[e.Record.CallID]++
	}
	for i := range n {
		if c := seen[fmt.Sprintf("call-%d", i)]; c != 1 {
			t.Errorf("call-%d is in the chain %d times, want once", i, c)
		}
	}
}

// The lines in the store are the lines a file log writes: exported, they
// verify as a file, and tail and show read them back.
func TestChainExportsAsAFileAndReadsBack(t *testing.T) {
	url := pgtest.DB(t)
	s := open(t, url)
	secret := "hunter2-token"
	l := audit.OpenChain(s, audit.Options{Secrets: []string{secret}, RecordData: true})
	r := intent("c1")
	r.Args = []byte(`{"token":"` + secret + `"}`)
	if err := l.Append(r); err != nil {
		t.Fatal(err)
	}
	if r.Seq != 1 || r.Prev != audit.Genesis || r.Hash == "" {
		t.Fatalf("the appended record is seq %d prev %.8s hash %q, want seq 1 after the genesis", r.Seq, r.Prev, r.Hash)
	}
	if err := l.Append(&audit.Record{Kind: audit.Outcome, SessionID: "s1", CallID: "c1", Status: audit.StatusSuccess}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := s.Export(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), secret) {
		t.Fatalf("the store holds a secret:\n%s", buf.String())
	}
	rep, err := audit.Verify(&buf)
	if err != nil || !rep.OK() || rep.Records != 2 || len(rep.OpenIntents) != 0 {
		t.Fatalf("the export verifies as %+v, %v; want 2 records, no problem, no open intent", rep, err)
	}
	tail, err := s.Tail(context.Background(), 1)
	if err != nil || len(tail) != 1 || tail[0].Kind != audit.Outcome {
		t.Fatalf("Tail(1) = %+v, %v; want the outcome", tail, err)
	}
	recs, err := s.CallRecords(context.Background(), "c1")
	if err != nil || len(recs) != 2 || recs[0].Kind != audit.Intent || recs[0].Hash != r.Hash {
		t.Fatalf("CallRecords(c1) = %+v, %v; want its intent and outcome", recs, err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(intent("c2")); !errors.Is(err, audit.ErrClosed) {
		t.Fatalf("Append after Close: %v, want ErrClosed", err)
	}
}

// Verify reads the chain as a file's: an edited record, and records
// removed from its end (which leave a chain that is whole), are reported.
func TestVerifyFindsEditedAndRemovedRecords(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, sql string
		want      audit.ProblemKind
	}{
		{"edited", `UPDATE mcphost_audit SET line = convert_to(replace(convert_from(line, 'UTF8'), 'write_file', 'read_file'), 'UTF8') WHERE seq = 2`, audit.ProblemEdited},
		{"cut at the end", `DELETE FROM mcphost_audit WHERE seq = 3`, audit.ProblemMissing},
		{"removed in the middle", `DELETE FROM mcphost_audit WHERE seq = 2`, audit.ProblemMissing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t, pgtest.DB(t))
			l := audit.OpenChain(s, audit.Options{})
			for i := range 3 {
				if err := l.Append(intent(fmt.Sprint(i))); err != nil {
					t.Fatal(err)
				}
			}
			if rep, err := s.Verify(ctx); err != nil || !rep.OK() {
				t.Fatalf("before: %+v, %v; want a chain that verifies", rep, err)
			}
			if _, err := s.pool.Exec(ctx, tc.sql); err != nil {
				t.Fatal(err)
			}
			rep, err := s.Verify(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Problems) == 0 || rep.Problems[0].Kind != tc.want {
				t.Fatalf("after %s: problems %v, want first %q", tc.name, rep.Problems, tc.want)
			}
		})
	}
}

// A replica whose connection dies in the middle of an append (killed, or
// its network gone) while it holds the chain's lock costs that record
// alone: the lock is released, the others append, and the chain verifies.
func TestKilledConnectionMidAppendLeavesAChainThatVerifies(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	a, b := open(t, url), open(t, url)
	la, lb := audit.OpenChain(a, audit.Options{}), audit.OpenChain(b, audit.Options{})
	if err := la.Append(intent("before")); err != nil {
		t.Fatal(err)
	}
	// Kill the backend holding the head's row lock from the other replica,
	// while the append is between reading the head and writing the record.
	err := a.Append(ctx, func(head audit.Head) (audit.Link, error) {
		var killed int
		err := b.pool.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_locks
			WHERE locktype = 'relation' AND relation = 'mcphost_audit_head'::regclass AND mode = 'RowShareLock'
			AND pid <> pg_backend_pid()`).Scan(&killed)
		if err != nil || killed != 1 {
			t.Errorf("killed %d backends (%v), want the appender's", killed, err)
		}
		return encodeAfter(intent("killed"), head)
	})
	if err == nil {
		t.Fatal("the append whose connection was killed reported success")
	}
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			if err := []*audit.ChainLog{la, lb}[i%2].Append(intent(fmt.Sprint("after-", i))); err != nil {
				t.Errorf("append after the kill: %v", err)
			}
		})
	}
	wg.Wait()
	rep, err := b.Verify(ctx)
	if err != nil || !rep.OK() || rep.Records != 11 {
		t.Fatalf("after the kill: %d records, problems %v (%v); want 11 and none", rep.Records, rep.Problems, err)
	}
	for _, e := range rep.OpenIntents {
		if e.Record.CallID == "killed" {
			t.Fatal("the record of the killed append is in the chain")
		}
	}
}

// encodeAfter builds the link of r after head, as a ChainLog does.
func encodeAfter(r *audit.Record, head audit.Head) (audit.Link, error) {
	var link audit.Link
	cl := audit.OpenChain(chainFunc(func(ctx context.Context, next func(audit.Head) (audit.Link, error)) error {
		var err error
		link, err = next(head)
		return err
	}), audit.Options{})
	err := cl.Append(r)
	return link, err
}

type chainFunc func(ctx context.Context, next func(audit.Head) (audit.Link, error)) error

func (f chainFunc) Append(ctx context.Context, next func(audit.Head) (audit.Link, error)) error {
	return f(ctx, next)
}

// Migrations run on every start: a second run, and two replicas starting
// at once on a new database, apply each one once.
func TestMigrationsRunOnceWhoeverStarts(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 8 {
		wg.Go(func() {
			<-start
			s, err := Open(ctx, url)
			if err != nil {
				t.Errorf("a replica starting with the others: %v", err)
				return
			}
			s.Close()
		})
	}
	close(start)
	wg.Wait()
	s := open(t, url)
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate again: %v", err)
	}
	var rows, heads int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM mcphost_schema`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM mcphost_audit_head`).Scan(&heads); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Version(ctx); err != nil || v != len(migrations) || rows != len(migrations) || heads != 1 {
		t.Fatalf("version %d (%v), %d schema rows, %d head rows; want %d, %d, 1", v, err, rows, heads, len(migrations), len(migrations))
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO mcphost_schema (version) VALUES ($1)`, len(migrations)+1); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, url); !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("a database of a newer mcphost opened with %v, want ErrNewerSchema", err)
	}
}

// A store's address is checked before anything connects, and its
// password is in no message.
func TestURLCheckedAndPasswordNeverShown(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"mysql://u:s3cretpw@db/x", "want a postgres:// URL"},
		{"postgres://u:s3cretpw@db:notaport/x", "the store postgres://u:xxxxx@db:notaport/x is not a URL (invalid port"},
		{"postgres://u@db/x?password=s3cretpw&sslmode=bogus", "sslmode"},
		{"postgres://u:s3cret pw@db/x\x7f", "not a URL"},
	} {
		err := CheckURL(tc.url)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckURL(%q) = %v, want an error saying %q", tc.url, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("CheckURL(%q) shows the password: %v", tc.url, err)
		}
	}
	if err := CheckURL("postgres://mcphost:pw@db.internal:5432/mcphost?sslmode=require"); err != nil {
		t.Errorf("a good URL: %v", err)
	}
	if got, want := Redact("postgres://u:s3cret@db/x?password=s3cret"), "postgres://u:xxxxx@db/x?password=xxxxx"; got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
	// A database that cannot be reached is named without its password.
	_, err := Open(context.Background(), "postgres://u:s3cretpw@/x?host="+filepath.Join(t.TempDir(), "none")+"&connect_timeout=1")
	if err == nil || strings.Contains(err.Error(), "s3cretpw") {
		t.Fatalf("Open of an unreachable store: %v; want an error without the password", err)
	}
}

// A database at an older schema version gets the migrations after it on
// the next start, and keeps what it holds.
func TestMigrationUpgradesAnOlderDatabase(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	s := open(t, url)
	if err := audit.OpenChain(s, audit.Options{}).Append(intent("kept")); err != nil {
		t.Fatal(err)
	}
	// Back to version 1, as a database of the first release is.
	if _, err := s.pool.Exec(ctx, `DROP TABLE mcphost_pins, mcphost_session_taint, mcphost_session_grants, mcphost_secrets, mcphost_spent, mcphost_trust, mcphost_always_grants, mcphost_team; ALTER TABLE mcphost_later DROP COLUMN shown; DELETE FROM mcphost_schema WHERE version > 1`); err != nil {
		t.Fatal(err)
	}
	s2 := open(t, url)
	if v, err := s2.Version(ctx); err != nil || v != len(migrations) {
		t.Fatalf("after the upgrade: version %d (%v), want %d", v, err, len(migrations))
	}
	if err := s2.Pins().SetPin("ident", "tool", "h1"); err != nil {
		t.Fatalf("the upgraded database has no pins: %v", err)
	}
	if err := s2.Sessions(SessionOptions{}).For("k").AddTaint(true, false); err != nil {
		t.Fatalf("the upgraded database keeps no session state: %v", err)
	}
	if err := s2.Trust().SetTrust("ident", "fs", true); err != nil || !s2.Trust().Trusted("ident") {
		t.Fatalf("the upgraded database keeps no remembered trust: %v", err)
	}
	if rep, err := s2.Verify(ctx); err != nil || !rep.OK() || rep.Records != 1 {
		t.Fatalf("the chain after the upgrade: %+v (%v), want its one record", rep, err)
	}
}

// An append whose record is not the one after the chain's head is refused
// and leaves the chain as it was: a record built on a head read before
// another replica appended, one built on the head of another chain of the
// same length (its prev is not this chain's last hash), and one that
// skips a seq. Without the check the first would fail on its seq alone,
// and the others would be stored as a broken chain.
func TestAnAppendThatDoesNotFollowTheHeadIsRefused(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	a, b := open(t, url), open(t, pgtest.DB(t))
	for _, s := range []*Store{a, b} {
		if err := audit.OpenChain(s, audit.Options{}).Append(intent("first")); err != nil {
			t.Fatal(err)
		}
	}
	stale, err := a.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := audit.OpenChain(open(t, url), audit.Options{}).Append(intent("second")); err != nil {
		t.Fatal(err)
	}
	other, err := b.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		build func(head audit.Head) (audit.Link, error)
	}{
		{"built on a stale head", func(audit.Head) (audit.Link, error) { return encodeAfter(intent("stale"), stale) }},
		{"built on another chain's head", func(head audit.Head) (audit.Link, error) {
			return encodeAfter(intent("other"), audit.Head{Seq: head.Seq, Hash: other.Hash})
		}},
		{"skipping a seq", func(head audit.Head) (audit.Link, error) {
			l, err := encodeAfter(intent("skip"), head)
			l.Seq++
			return l, err
		}},
	} {
		before, err := a.Head(ctx)
		if err != nil {
			t.Fatal(err)
		}
		err = a.Append(ctx, c.build)
		if err == nil || !strings.Contains(err.Error(), "does not follow the head") {
			t.Errorf("an append %s: %v, want it refused as not following the head", c.name, err)
		}
		after, err := a.Head(ctx)
		if err != nil || after != before {
			t.Errorf("after the append %s the head is %s (%v), want %s", c.name, after, err, before)
		}
		rep, err := a.Verify(ctx)
		if err != nil || !rep.OK() || rep.Records != 2 {
			t.Errorf("after the append %s: %d records, problems %v (%v); want the 2 before it and none", c.name, rep.Records, rep.Problems, err)
		}
	}
}

// Migration 7, which adds when each session's taint was last seen, does
// not rewrite the taint table (a rewrite holds an exclusive lock for as
// long as the table takes to copy: every replica's calls would wait on
// it), and the taint there before the upgrade counts as seen at the
// upgrade, so none of it is deleted as unseen.
func TestTaintSeenMigrationDoesNotRewriteTheTable(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	s := open(t, url)
	if err := s.Sessions(SessionOptions{}).For("old").AddTaint(true, false); err != nil {
		t.Fatal(err)
	}
	// Back to version 6, as a database of the release before is.
	if _, err := s.pool.Exec(ctx, `DROP INDEX mcphost_session_taint_seen; ALTER TABLE mcphost_session_taint DROP COLUMN seen; ALTER TABLE mcphost_later DROP COLUMN shown; DELETE FROM mcphost_schema WHERE version > 6`); err != nil {
		t.Fatal(err)
	}
	var before, after uint32
	if err := s.pool.QueryRow(ctx, `SELECT pg_relation_filenode('mcphost_session_taint')`).Scan(&before); err != nil {
		t.Fatal(err)
	}
	s2 := open(t, url)
	if v, err := s2.Version(ctx); err != nil || v != len(migrations) {
		t.Fatalf("after the upgrade: version %d (%v), want %d", v, err, len(migrations))
	}
	if err := s2.pool.QueryRow(ctx, `SELECT pg_relation_filenode('mcphost_session_taint')`).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("migration 7 rewrote the taint table (file node %d, now %d); want it altered in place", before, after)
	}
	var stale bool
	if err := s2.pool.QueryRow(ctx, `SELECT seen < clock_timestamp() - interval '1 minute' FROM mcphost_session_taint WHERE session = 'old'`).Scan(&stale); err != nil || stale {
		t.Fatalf("the old session's taint after the upgrade: stale %v (%v), want it kept and seen at the upgrade", stale, err)
	}
	if err := s2.Sessions(SessionOptions{}).For("new").AddTaint(false, true); err != nil {
		t.Fatal(err)
	}
	_, openWorld, _, err := s2.Sessions(SessionOptions{}).For("old").Load()
	if err != nil || !openWorld {
		t.Fatalf("the old session's taint after a later write: open world %v (%v), want it kept", openWorld, err)
	}
}

// ApprovalRecords reads back every record of one approval id, in the
// chain's order, and no record of another whose id it contains, nor one
// whose recorded arguments name it. No id reads no records: not the
// records of no approval (which hold no approvalId), nor one whose
// arguments name an empty approvalId, which the search for the id would
// find and no approval id would tell apart.
func TestApprovalRecordsReadOneApproval(t *testing.T) {
	s := open(t, pgtest.DB(t))
	l := audit.OpenChain(s, audit.Options{RecordData: true})
	for _, r := range []*audit.Record{
		{Kind: audit.Approval, ApprovalID: "ap-1", ApprovalState: audit.ApprovalHeld},
		{Kind: audit.Approval, ApprovalID: "ap-10", ApprovalState: audit.ApprovalHeld},
		{Kind: audit.Intent, CallID: "c1", SessionID: "s1", ApprovalID: "ap-1"},
		{Kind: audit.Approval, ApprovalID: "ap-1", ApprovalState: audit.ApprovalUsed},
		{Kind: audit.Intent, CallID: "c2", SessionID: "s1", Args: []byte(`{"approvalId":"ap-1"}`)},
		{Kind: audit.Intent, CallID: "c3", SessionID: "s1", Args: []byte(`{"approvalId":""}`)},
	} {
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := s.ApprovalRecords(context.Background(), "ap-1")
	if err != nil {
		t.Fatal(err)
	}
	var seqs []uint64
	for _, r := range recs {
		seqs = append(seqs, r.Seq)
	}
	if len(seqs) != 3 || seqs[0] != 1 || seqs[1] != 3 || seqs[2] != 4 {
		t.Fatalf("ApprovalRecords(ap-1) read records %v, want 1, 3 and 4", seqs)
	}
	if recs, err := s.ApprovalRecords(context.Background(), ""); err != nil || len(recs) != 0 {
		t.Fatalf("ApprovalRecords of no id: %+v %v, want none", recs, err)
	}
}
