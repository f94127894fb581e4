package host

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/later"
	"github.com/mcphost/mcphost/llm"
)

// defaultAskVia is the default channel policy: a host's form may approve
// tiers 1–2, tier 3 needs a channel the host cannot answer.
var defaultAskVia = AskViaPolicy(config.DefaultAskVia())

type laterClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *laterClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *laterClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// laterWorld is a headless gate over the flaky fixture (untrusted, so
// set_value asks at T3) that holds what it cannot ask about.
func laterWorld(t *testing.T, asker Asker, held *[]later.Approval) (*world, *laterClock) {
	t.Helper()
	c := &laterClock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	var mu sync.Mutex
	w := newWorld(t, worldOpts{fixture: "flaky", asker: asker, headless: asker == nil,
		later:      later.New(later.Options{Now: c.now}),
		mayApprove: defaultAskVia,
		client:     &audit.Client{Name: "autopilot", Version: "1", Session: "serve-s1"},
		onHold: func(a later.Approval, q *Question) error {
			mu.Lock()
			defer mu.Unlock()
			if held != nil {
				*held = append(*held, a)
			}
			return nil
		}})
	return w, c
}

const laterArgs = `{"key":"a","value":"1"}`

func TestHeldCallApprovedLaterRunsOnce(t *testing.T) {
	var held []later.Approval
	w, _ := laterWorld(t, nil, &held)
	r := w.call("set_value", laterArgs)
	if r.Status != StatusBlocked || r.Held == nil || r.Held.ID == "" {
		t.Fatalf("first call: %s held %+v, want blocked and held", r.Status, r.Held)
	}
	if r.Decision.Tier != decide.T3 {
		t.Fatalf("set_value of an untrusted server is at %s, want T3", r.Decision.Tier)
	}
	if msg := r.HeldNote(); !strings.Contains(msg, "approval id "+r.Held.ID) || !strings.Contains(msg, "make exactly the same call again") {
		t.Fatalf("the refusal %q does not name the approval id and the retry", msg)
	}
	if len(held) != 1 || held[0].ID != r.Held.ID {
		t.Fatalf("OnHold saw %+v, want the one held call", held)
	}
	// Retried before anyone answered: held under the same id, not run.
	if r2 := w.call("set_value", laterArgs); r2.Status != StatusBlocked || r2.Held == nil || r2.Held.ID != r.Held.ID || len(held) != 1 {
		t.Fatalf("retry before an answer: %s held %+v (%d held), want blocked under the same id", r2.Status, r2.Held, len(held))
	}
	if err := w.gate.AnswerLater(r.Held.ID, Answer{Approve: true, Scope: decide.ScopeOnce, Via: audit.ChannelApprove}); err != nil {
		t.Fatal(err)
	}
	r = w.call("set_value", laterArgs)
	if r.Status != StatusSuccess || r.DecidedBy != "user:once" || r.Held == nil {
		t.Fatalf("retry after approval: %s by %s held %+v, want it run once by the person", r.Status, r.DecidedBy, r.Held)
	}
	if r.Via != audit.ChannelApprove {
		t.Errorf("the retry approved later records via %q, want the way the approval came (approve)", r.Via)
	}
	if r = w.call("set_value", laterArgs); r.Status != StatusBlocked || r.Held == nil {
		t.Fatalf("second retry after one approval: %s, want blocked and held anew", r.Status)
	}
	if n := w.count(fixtures.EventExec, "set_value"); n != 1 {
		t.Fatalf("set_value ran %d times, want once", n)
	}
	states := approvalStates(t, w)
	if got := strings.Join(states, ","); got != "held,approved,used,held" {
		t.Errorf("approval records %s, want held,approved,used,held", got)
	}
	recs, err := audit.Tail(w.audit, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		if rec.Kind == audit.Approval && rec.ApprovalState == audit.ApprovalApproved && rec.Via != audit.ChannelApprove {
			t.Errorf("the approval's record names via %q, want approve", rec.Via)
		}
	}
}

func TestHeldCallDeniedLaterTellsTheReason(t *testing.T) {
	w, _ := laterWorld(t, nil, nil)
	r := w.call("set_value", laterArgs)
	if err := w.gate.AnswerLater(r.Held.ID, Answer{Reason: "not this key", Via: audit.ChannelApprove}); err != nil {
		t.Fatal(err)
	}
	r = w.call("set_value", laterArgs)
	if r.Status != StatusDenied || r.DenyReason != "not this key" {
		t.Fatalf("retry after a denial: %s %q, want denied with the person's reason", r.Status, r.DenyReason)
	}
	if n := w.count(fixtures.EventExec, "set_value"); n != 0 {
		t.Fatalf("a denied call ran %d times", n)
	}
}

func TestLaterApprovalRefusesForeignExpiredForgedAndWrongChannel(t *testing.T) {
	w, clock := laterWorld(t, nil, nil)
	r := w.call("set_value", laterArgs)
	id := r.Held.ID
	if err := w.gate.AnswerLater("forged", Answer{Approve: true, Via: audit.ChannelApprove}); !errors.Is(err, later.ErrUnknown) {
		t.Errorf("forged id: %v, want ErrUnknown", err)
	}
	if err := w.gate.AnswerLater(id, Answer{Approve: true, Via: audit.ChannelElicitation}); !errors.Is(err, ErrChannel) {
		t.Errorf("a tier-3 approval through the host's form: %v, want ErrChannel", err)
	}
	if err := w.gate.AnswerLater(id, Answer{Approve: true, Via: audit.ChannelWeb}); err != nil {
		t.Fatal(err)
	}
	// Other arguments: another call.
	if r := w.call("set_value", `{"key":"b","value":"1"}`); r.Status != StatusBlocked {
		t.Fatalf("other arguments: %s, want blocked", r.Status)
	}
	clock.add(later.DefaultLifetime)
	if r := w.call("set_value", laterArgs); r.Status != StatusBlocked {
		t.Fatalf("retry after the lifetime: %s, want blocked", r.Status)
	}
	if n := w.count(fixtures.EventExec, "set_value"); n != 0 {
		t.Fatalf("set_value ran %d times under a foreign or expired approval", n)
	}
}

func TestLaterApprovalIsTheClientsOwn(t *testing.T) {
	store := later.New(later.Options{})
	w := newWorld(t, worldOpts{fixture: "flaky", headless: true, later: store, mayApprove: defaultAskVia,
		client: &audit.Client{Name: "autopilot", Version: "1", Session: "serve-s1"}})
	r := w.call("set_value", laterArgs)
	if err := w.gate.AnswerLater(r.Held.ID, Answer{Approve: true, Via: audit.ChannelApprove}); err != nil {
		t.Fatal(err)
	}
	// Another client session's gate over the same servers and store.
	other := newWorld(t, worldOpts{fixture: "flaky", headless: true, later: store, mayApprove: defaultAskVia,
		client: &audit.Client{Name: "autopilot", Version: "1", Session: "serve-s2"}})
	other.gate.o.Catalog = w.m
	if r := other.gate.Call(context.Background(), Call{Server: "f", Tool: "set_value", Args: json.RawMessage(laterArgs)}); r.Status != StatusBlocked {
		t.Fatalf("another client's retry: %s, want blocked", r.Status)
	}
	if n := w.count(fixtures.EventExec, "set_value"); n != 0 {
		t.Fatalf("another client's retry ran set_value %d times", n)
	}
	if r := w.call("set_value", laterArgs); r.Status != StatusSuccess {
		t.Fatalf("the client's own retry: %s, want success", r.Status)
	}
}

// formAsker approves every question at once, as a host that answers its
// forms itself does, through the host's form.
type formAsker struct{}

func (formAsker) Ask(context.Context, *Question) (Answer, error) {
	return Answer{Approve: true, Scope: decide.ScopeOnce, Via: audit.ChannelElicitation}, nil
}

func TestFormCannotApproveTier3(t *testing.T) {
	w, _ := laterWorld(t, formAsker{}, nil)
	r := w.call("set_value", laterArgs)
	if r.Status != StatusBlocked || r.Held == nil || !strings.Contains(r.Refused, "tier-T3") {
		t.Fatalf("a tier-3 call the form approved: %s held %+v refused %q, want blocked and held", r.Status, r.Held, r.Refused)
	}
	if n := w.count(fixtures.EventExec, "set_value"); n != 0 {
		t.Fatalf("the form's approval ran a tier-3 call %d times", n)
	}
	// The channel checked is the asker's, not the one its answer claims.
	claimed := Answer{Approve: true, Scope: decide.ScopeOnce, Via: audit.ChannelDialog}
	w1, _ := laterWorld(t, fixedAsker{ans: claimed, channel: audit.ChannelElicitation}, nil)
	if r := w1.call("set_value", laterArgs); r.Status != StatusBlocked || !strings.Contains(r.Refused, "tier-T3") {
		t.Fatalf("a tier-3 call the form approved claiming the dialog: %s refused %q, want blocked", r.Status, r.Refused)
	}
	if n := w1.count(fixtures.EventExec, "set_value"); n != 0 {
		t.Fatalf("the form's approval claiming the dialog ran a tier-3 call %d times", n)
	}
	// And the other way: the dialog's approval counts at tier 3 even when
	// its answer claims the host's form.
	formClaim := Answer{Approve: true, Scope: decide.ScopeOnce, Via: audit.ChannelElicitation}
	wd, _ := laterWorld(t, fixedAsker{ans: formClaim, channel: audit.ChannelDialog}, nil)
	if r := wd.call("set_value", laterArgs); r.Status != StatusSuccess || r.Via != audit.ChannelDialog {
		t.Fatalf("a tier-3 call the dialog approved, its answer claiming the form: %s via %q refused %q, want it run through the dialog", r.Status, r.Via, r.Refused)
	}
	// At tier 2 (the server trusted) the form's approval counts.
	w2 := newWorld(t, worldOpts{fixture: "flaky", trusted: true, asker: formAsker{}, mayApprove: defaultAskVia})
	if r := w2.call("set_value", laterArgs); r.Status != StatusSuccess || r.Decision.Tier != decide.T2 {
		t.Fatalf("a tier-2 call the form approved: %s at %s, want success", r.Status, r.Decision.Tier)
	}
}

func TestChangedDefinitionVoidsLaterApproval(t *testing.T) {
	w, _ := laterWorld(t, nil, nil)
	r := w.call("set_value", laterArgs)
	if err := w.gate.AnswerLater(r.Held.ID, Answer{Approve: true, Via: audit.ChannelApprove}); err != nil {
		t.Fatal(err)
	}
	// The same call under another definition: what the approval was
	// given for is no longer what would run.
	a := &account{Result: &Result{Server: "f", Args: json.RawMessage(laterArgs), Decision: r.Decision}, ident: ""}
	spec, _ := w.gate.o.Catalog.Spec("f")
	a.ident = spec.Identity()
	tool, ok := w.gate.o.Catalog.Tool("f", "set_value")
	if !ok {
		t.Fatal("set_value is not listed")
	}
	changed := *tool
	changed.Hash = "another-definition"
	a.tool = &changed
	if w.gate.takeLater(a) {
		t.Fatal("an approval given for one definition was taken for another")
	}
	a.tool = tool
	if !w.gate.takeLater(a) {
		t.Fatal("the approval was not found for its own definition")
	}
}

func TestSimultaneousRetriesRunOnce(t *testing.T) {
	w, _ := laterWorld(t, nil, nil)
	r := w.call("set_value", laterArgs)
	if err := w.gate.AnswerLater(r.Held.ID, Answer{Approve: true, Via: audit.ChannelApprove}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	results := make([]*Result, 4)
	for i := range results {
		wg.Go(func() {
			results[i] = w.gate.Call(context.Background(), Call{Server: "f", Tool: "set_value", Args: json.RawMessage(laterArgs)})
		})
	}
	wg.Wait()
	ran := 0
	for _, r := range results {
		if r.Status == StatusSuccess {
			ran++
		}
	}
	if n := w.count(fixtures.EventExec, "set_value"); n != 1 || ran != 1 {
		t.Fatalf("4 simultaneous retries: %d ran, the server saw %d; want 1", ran, n)
	}
}

// approvalStates are the approval records of the log, in order; the log
// verifies.
func approvalStates(t *testing.T, w *world) []string {
	t.Helper()
	f, err := os.Open(w.audit)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := audit.Verify(f)
	if err != nil || len(rep.Problems) > 0 || len(rep.OpenIntents) > 0 {
		t.Fatalf("audit log does not verify: %v %+v", err, rep)
	}
	recs, err := audit.Tail(w.audit, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		if r.Kind == audit.Approval {
			out = append(out, r.ApprovalState)
		}
	}
	if len(out) != rep.Approvals {
		t.Fatalf("Verify counted %d approvals, the log holds %d", rep.Approvals, len(out))
	}
	return out
}

// The model is told the approval id of a held call and, once the person
// approved it, its retry of the same call runs once.
func TestLoopToldTheHeldCallAndItsRetryRuns(t *testing.T) {
	var w *world
	w = newWorld(t, worldOpts{fixture: "tasks", trusted: true, headless: true, later: later.New(later.Options{}),
		onHold: func(a later.Approval, q *Question) error {
			// The person answers at once, in `mcphost approve`.
			if err := w.gate.AnswerLater(a.ID, Answer{Approve: true, Via: audit.ChannelApprove}); err != nil {
				t.Errorf("AnswerLater: %v", err)
			}
			return nil
		}})
	l := newLoop(w, []llm.ScriptTurn{
		{ToolCalls: []llm.ScriptCall{call("f__delete_task", `{"id":"T-1"}`)}},
		{ExpectError: bptr(true), ExpectResult: &llm.ResultExpectation{Contains: "make exactly the same call again"},
			ToolCalls: []llm.ScriptCall{call("f__delete_task", `{"id":"T-1"}`)}},
		{ExpectError: bptr(false), Text: "Deleted."},
	}, LoopOptions{})
	out, err := l.Run(context.Background(), "Delete T-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Calls) != 2 || out.Calls[0].Status != StatusBlocked || out.Calls[0].ApprovalID == "" || out.Calls[1].Status != StatusSuccess {
		t.Fatalf("calls %+v, want one held and its retry run", out.Calls)
	}
}

// approvalsFail is an audit log that refuses approval records and takes
// every other.
type approvalsFail struct{ AuditLog }

func (l approvalsFail) Append(r *audit.Record) error {
	if r.Kind == audit.Approval {
		return errors.New("injected: the approval record cannot be written")
	}
	return l.AuditLog.Append(r)
}

// A call is held for a later approval only once its record is in the
// chain: when it cannot be written, the refusal names no approval id, no
// approver is told, and the store keeps nothing to approve.
func TestNoHoldWithoutItsRecord(t *testing.T) {
	var held []later.Approval
	w, _ := laterWorld(t, nil, &held)
	w.gate.o.Audit = approvalsFail{w.gate.o.Audit}
	r := w.call("set_value", laterArgs)
	if r.Status != StatusBlocked {
		t.Fatalf("first call: %s, want blocked", r.Status)
	}
	if r.Held != nil || len(held) != 0 {
		t.Fatalf("the call was held (%+v, %d told) though its record was not written", r.Held, len(held))
	}
	if waiting := w.gate.o.Later.(*later.Store).Waiting(); len(waiting) != 0 {
		t.Fatalf("the store keeps %d held calls no record shows", len(waiting))
	}
}

// TestLaterAnswerNamesItsApprover: an answer given by a person known by
// their own login (serve's team page) names them in its approval record.
func TestLaterAnswerNamesItsApprover(t *testing.T) {
	w, _ := laterWorld(t, nil, nil)
	r := w.call("set_value", laterArgs)
	bob := &audit.Person{Issuer: "https://login.example", Subject: "bob", Name: "Bob"}
	if err := w.gate.AnswerLater(r.Held.ID, Answer{Approve: true, Scope: decide.ScopeOnce, Via: audit.ChannelWeb, By: bob}); err != nil {
		t.Fatal(err)
	}
	recs, err := audit.Tail(w.audit, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, rec := range recs {
		if rec.Kind == audit.Approval && rec.ApprovalState == audit.ApprovalApproved {
			found = true
			if rec.Approver == nil || *rec.Approver != *bob || rec.Via != audit.ChannelWeb {
				t.Errorf("the approval record names approver %+v via %q, want %+v via web", rec.Approver, rec.Via, bob)
			}
		}
	}
	if !found {
		t.Fatal("no approval record was written")
	}
	f, err := os.Open(w.audit)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if rep, err := audit.Verify(f); err != nil || !rep.OK() {
		t.Fatalf("the chain with an approver does not verify: %v %+v", err, rep)
	}
}
