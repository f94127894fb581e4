package host

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/later"
)

// TestAHeldCallNoOneCanSeeIsWithdrawn: when OnHold cannot show a newly
// held call anywhere a person would approve it, the call does not wait
// under an id no one sees: it is dropped from the store, the audit log
// says it was withdrawn after it was held, and the refusal gives no
// approval id but says why nothing waits.
func TestAHeldCallNoOneCanSeeIsWithdrawn(t *testing.T) {
	store := later.New(later.Options{})
	var told []string
	w := newWorld(t, worldOpts{fixture: "flaky", headless: true, later: store, mayApprove: defaultAskVia,
		onHold: func(a later.Approval, _ *Question) error {
			told = append(told, a.ID)
			return errors.New("the arguments are larger than an approver shows")
		}})
	for i := range 2 {
		r := w.call("set_value", laterArgs)
		if r.Status != StatusBlocked || r.Held != nil || r.HeldNote() != "" {
			t.Fatalf("call %d: %s held %+v, want blocked and not held", i+1, r.Status, r.Held)
		}
		if !strings.Contains(r.NotHeld, "larger than an approver shows") {
			t.Fatalf("call %d: NotHeld = %q, want OnHold's reason", i+1, r.NotHeld)
		}
		if msg := r.Message(); !strings.Contains(msg, "could not be held for a person's later approval (the arguments are larger than an approver shows), so nothing waits for one") {
			t.Fatalf("call %d: the refusal %q does not say why nothing waits", i+1, msg)
		}
		if len(told) != i+1 {
			t.Fatalf("call %d: OnHold told %d times, want %d", i+1, len(told), i+1)
		}
		if _, ok := store.Get(told[i]); ok {
			t.Fatalf("call %d: %s is still held after OnHold refused it", i+1, told[i])
		}
	}
	if n := len(store.Waiting()); n != 0 {
		t.Fatalf("%d calls wait, want none", n)
	}
	if got := strings.Join(approvalStates(t, w), ","); got != "held,withdrawn,held,withdrawn" {
		t.Fatalf("approval records %s, want held,withdrawn twice (each call was withdrawn as it was held)", got)
	}
	recs, err := audit.Tail(w.audit, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, rec := range recs {
		if rec.Kind == audit.Approval {
			ids = append(ids, rec.ApprovalID)
		}
	}
	if want := told[0] + "," + told[0] + "," + told[1] + "," + told[1]; strings.Join(ids, ",") != want {
		t.Fatalf("approval records name %v, want each held id held then withdrawn (%s)", ids, want)
	}
	if n := w.count(fixtures.EventExec, "set_value"); n != 0 {
		t.Fatalf("set_value ran %d times, want never", n)
	}
}

// TestAWithdrawnHoldIsNotHeldAgain: an asker that holds the call itself
// (Question.Hold, as serve's URL elicitation does) and hears it withdrawn
// leaves the call withdrawn: the gate does not hold it a second time when
// the asker then says no person answered.
func TestAWithdrawnHoldIsNotHeldAgain(t *testing.T) {
	store := later.New(later.Options{})
	told := 0
	h := holdingAsker{got: make(chan later.Approval, 2)}
	w := newWorld(t, worldOpts{fixture: "flaky", asker: h, later: store, mayApprove: defaultAskVia,
		client: &audit.Client{Name: "autopilot", Version: "1", Session: "serve-s1"},
		onHold: func(later.Approval, *Question) error {
			told++
			return errors.New("the approvers cannot be shown it")
		}})
	r := w.call("set_value", laterArgs)
	if r.Status != StatusBlocked || r.Held != nil || told != 1 {
		t.Fatalf("the call: %s held %+v, OnHold told %d times; want blocked, not held, told once", r.Status, r.Held, told)
	}
	if got := strings.Join(approvalStates(t, w), ","); got != "held,withdrawn" {
		t.Fatalf("approval records %s, want held,withdrawn once", got)
	}
}

// TestWithdrawLater: a held call its caller stops waiting for is taken
// back — no answer approves it after — and recorded withdrawn; one a
// person answered already is left as answered.
func TestWithdrawLater(t *testing.T) {
	store := later.New(later.Options{})
	w := newWorld(t, worldOpts{fixture: "flaky", headless: true, later: store, mayApprove: defaultAskVia})
	r := w.call("set_value", laterArgs)
	if r.Held == nil {
		t.Fatalf("the call was not held: %s", r.Status)
	}
	if err := w.gate.WithdrawLater(r.Held.ID); err != nil {
		t.Fatal(err)
	}
	if err := w.gate.AnswerLater(r.Held.ID, Answer{Approve: true, Via: audit.ChannelApprove}); !errors.Is(err, later.ErrUnknown) {
		t.Fatalf("an approval after the withdrawal: %v, want ErrUnknown", err)
	}
	r = w.call("set_value", `{"key":"b","value":"2"}`)
	if err := w.gate.AnswerLater(r.Held.ID, Answer{Approve: true, Via: audit.ChannelApprove}); err != nil {
		t.Fatal(err)
	}
	if err := w.gate.WithdrawLater(r.Held.ID); !errors.Is(err, later.ErrAnswered) {
		t.Fatalf("withdrawing an approved call: %v, want ErrAnswered", err)
	}
	if got := strings.Join(approvalStates(t, w), ","); got != "held,withdrawn,held,approved" {
		t.Fatalf("approval records %s, want held,withdrawn,held,approved", got)
	}
}

// answeredFirst is a held-call store where a person's approval lands
// between a withdrawal's look at the call and its drop.
type answeredFirst struct{ *later.Store }

func (s answeredFirst) Drop(id string) bool {
	_, _ = s.Answer(id, true, string(audit.ChannelApprove), "")
	return s.Store.Drop(id)
}

// TestWithdrawLaterLosesToAnAnswerInBetween: a call approved after
// WithdrawLater looked at it but before it dropped it stays approved, and
// no withdrawn record says otherwise.
func TestWithdrawLaterLosesToAnAnswerInBetween(t *testing.T) {
	store := answeredFirst{later.New(later.Options{})}
	w := newWorld(t, worldOpts{fixture: "flaky", headless: true, later: store, mayApprove: defaultAskVia})
	r := w.call("set_value", laterArgs)
	if r.Held == nil {
		t.Fatalf("the call was not held: %s", r.Status)
	}
	if err := w.gate.WithdrawLater(r.Held.ID); !errors.Is(err, later.ErrAnswered) {
		t.Fatalf("withdrawing a call approved meanwhile: %v, want ErrAnswered", err)
	}
	if got := strings.Join(approvalStates(t, w), ","); got != "held" {
		t.Fatalf("approval records %s, want held alone (no withdrawn)", got)
	}
}
