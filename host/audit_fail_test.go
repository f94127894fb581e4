package host

import (
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/fixtures"
)

// withAuditLog replaces w's gate by one that writes to a real audit log at
// w.audit with opts, trusting the server and deciding by the default
// policy (reads and additive writes run without asking).
func withAuditLog(t *testing.T, w *world, opts audit.Options) {
	t.Helper()
	l, err := audit.Open(w.audit, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	auto, err := decide.ParseAutoApprove("")
	if err != nil {
		t.Fatal(err)
	}
	p, err := decide.Compile(nil, decide.Options{AutoApprove: auto})
	if err != nil {
		t.Fatal(err)
	}
	w.gate = NewGate(GateOptions{
		Catalog: w.m, Policy: p, Trusted: func(string) bool { return true }, Asker: NewScriptAsker(t), Mode: decide.Interactive, Audit: l,
		CallOptions: client.CallOptions{Timeout: 5 * time.Second},
		Backoff:     func(int) time.Duration { return time.Millisecond },
	})
}

// TestIntentNotWrittenBlocksNonRead: when the intent record cannot be made
// durable (its sync fails), a call that is not a read never runs, and no
// outcome in the log claims it ran; a read still runs.
func TestIntentNotWrittenBlocksNonRead(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "flaky", trusted: true, noAudit: true})
	failed := errors.New("injected: the disk refuses to sync")
	withAuditLog(t, w, audit.Options{Sync: func(*os.File) error { return failed }})

	r := w.call("write_record", `{"key":"k","value":"v"}`)
	if r.Status != StatusError || !errors.Is(r.Err, errAuditUnavailable) {
		t.Errorf("write with a failing audit sync: %s (%v), want an error saying the audit log cannot be written", r.Status, r.Err)
	}
	if n := w.count(fixtures.EventExec, "write_record"); n != 0 {
		t.Errorf("write_record ran %d times though its intent was not durable", n)
	}
	if r := w.call("read_value", `{"key":"k"}`); r.Status != StatusSuccess {
		t.Errorf("read with a failing audit log: %s (%v), want it to run", r.Status, r.Err)
	}
	f, err := os.Open(w.audit)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := audit.Verify(f)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcomes != 0 {
		t.Errorf("the log holds %d outcomes after its sync failed; want none", rep.Outcomes)
	}
}

// TestIntentSyncedBeforeNonRead: a non-read call runs only after its
// intent record was synced to disk.
func TestIntentSyncedBeforeNonRead(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "flaky", trusted: true, noAudit: true})
	var execsAtSync []int
	withAuditLog(t, w, audit.Options{SyncDelay: time.Hour, Sync: func(f *os.File) error {
		execsAtSync = append(execsAtSync, w.count(fixtures.EventExec, "write_record"))
		return f.Sync()
	}})
	if r := w.call("write_record", `{"key":"k","value":"v"}`); r.Status != StatusSuccess {
		t.Fatalf("write_record: %s (%v)", r.Status, r.Err)
	}
	if len(execsAtSync) == 0 || execsAtSync[0] != 0 {
		t.Errorf("executions seen at each audit sync: %v; want a sync before the call ran", execsAtSync)
	}
}

// TestReadRecordsWrittenBeforeResult: a read does not wait for the disk
// (the gate runs it even when its intent cannot be written), but its
// intent and its outcome are in the audit file when its result is
// returned, so a crash of mcphost loses neither; of a write, only the
// intent waits for the disk, and its outcome too is in the file when its
// result is returned.
func TestReadRecordsWrittenBeforeResult(t *testing.T) {
	if decide.Read.String() != audit.ReadClass {
		t.Fatalf("the gate records reads as class %q, the audit log knows them as %q", decide.Read.String(), audit.ReadClass)
	}
	w := newWorld(t, worldOpts{fixture: "flaky", trusted: true, noAudit: true})
	var mu sync.Mutex
	syncs := 0
	withAuditLog(t, w, audit.Options{SyncDelay: time.Hour, Sync: func(f *os.File) error {
		mu.Lock()
		syncs++
		mu.Unlock()
		return f.Sync()
	}})
	r := w.call("read_value", `{"key":"k"}`)
	if r.Status != StatusSuccess {
		t.Fatalf("read_value: %s (%v)", r.Status, r.Err)
	}
	recs, err := audit.Tail(w.audit, 10)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []audit.Kind
	for _, rec := range recs {
		if rec.Tool == "read_value" {
			kinds = append(kinds, rec.Kind)
			if rec.Class != audit.ReadClass {
				t.Errorf("%s record of a read has class %q, want %q", rec.Kind, rec.Class, audit.ReadClass)
			}
		}
	}
	if len(kinds) != 2 || kinds[0] != audit.Intent || kinds[1] != audit.Outcome {
		t.Errorf("records of the read in the file when its result came back: %v, want its intent and outcome", kinds)
	}
	mu.Lock()
	if syncs != 0 {
		t.Errorf("a read waited for %d syncs; want none", syncs)
	}
	mu.Unlock()

	// A write's outcome is not waited for either, but is in the file when
	// the result comes back; only its intent waited for the disk.
	if r := w.call("write_record", `{"key":"k","value":"v"}`); r.Status != StatusSuccess {
		t.Fatalf("write_record: %s (%v)", r.Status, r.Err)
	}
	recs, err = audit.Tail(w.audit, 10)
	if err != nil {
		t.Fatal(err)
	}
	if last := recs[len(recs)-1]; last.Tool != "write_record" || last.Kind != audit.Outcome {
		t.Errorf("last record when the write's result came back: %s of %s, want the write's outcome", last.Kind, last.Tool)
	}
	mu.Lock()
	defer mu.Unlock()
	if syncs != 1 {
		t.Errorf("a write waited for %d syncs; want one, its intent's", syncs)
	}
}
