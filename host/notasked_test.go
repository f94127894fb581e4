package host

import (
	"context"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/later"
)

// noChatAtT3 is a channel policy a managed file narrowed: tier 3 only
// through `mcphost approve` or the web page, never the chat.
var noChatAtT3 = AskViaPolicy(config.AskVia{"T3": {config.ChannelApprove, config.ChannelWeb}})

// mustNotAsk is an asker that answers through channel, and fails the test
// when it is asked anything: a dialog that must not be shown.
type mustNotAsk struct {
	t       *testing.T
	channel audit.Channel
}

func (a mustNotAsk) Ask(_ context.Context, q *Question) (Answer, error) {
	a.t.Errorf("asked through %s about %s at %s, a tier whose approval it may not give", a.channel, q.Tool.Ref(), q.Decision.Tier)
	return Answer{Approve: true, Scope: decide.ScopeOnce}, nil
}
func (a mustNotAsk) Channel() audit.Channel { return a.channel }

// TestDialogThatMayNotApproveIsNotShown: when the chat's dialog may not
// approve a call's tier (askVia), the gate does not ask it — the person
// would approve in vain — but holds the call, and the refusal says where
// to approve it; approved there, the same call runs once.
func TestDialogThatMayNotApproveIsNotShown(t *testing.T) {
	var held []later.Approval
	w := newWorld(t, worldOpts{fixture: "flaky", asker: mustNotAsk{t, audit.ChannelDialog},
		later: later.New(later.Options{}), mayApprove: noChatAtT3,
		onHold: func(a later.Approval, _ *Question) error { held = append(held, a); return nil }})
	r := w.call("set_value", laterArgs)
	if r.Status != StatusBlocked || r.Held == nil || r.Decision.Tier != decide.T3 {
		t.Fatalf("a tier-3 call the chat may not approve: %s at %s held %+v, want blocked and held", r.Status, r.Decision.Tier, r.Held)
	}
	if len(held) != 1 || held[0].ID != r.Held.ID {
		t.Fatalf("OnHold saw %+v, want the one held call %s", held, r.Held.ID)
	}
	msg := r.Message()
	for _, want := range []string{"cannot be given here", "tier-T3", "with `mcphost approve`", "approval page"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "in mcphost's chat") || strings.Contains(msg, "headless") {
		t.Errorf("the refusal %q sends the person to the chat, or calls it headless", msg)
	}
	if err := w.gate.AnswerLater(r.Held.ID, Answer{Approve: true, Scope: decide.ScopeOnce, Via: audit.ChannelApprove}); err != nil {
		t.Fatal(err)
	}
	if r := w.call("set_value", laterArgs); r.Status != StatusSuccess || r.Via != audit.ChannelApprove {
		t.Fatalf("the retry after the approval: %s via %q, want run through approve", r.Status, r.Via)
	}
	if r := w.call("set_value", laterArgs); r.Status != StatusBlocked {
		t.Fatalf("a second retry after one approval: %s, want blocked", r.Status)
	}
	if n := w.count(fixtures.EventExec, "set_value"); n != 1 {
		t.Fatalf("set_value ran %d times, want once", n)
	}
	if got := strings.Join(approvalStates(t, w), ","); got != "held,approved,used,held" {
		t.Errorf("approval records %s, want held,approved,used,held", got)
	}
	// At tier 2 (the server trusted) the chat may approve, and is asked.
	w2 := newWorld(t, worldOpts{fixture: "flaky", trusted: true, mayApprove: noChatAtT3,
		asker: fixedAsker{ans: Answer{Approve: true, Scope: decide.ScopeOnce}, channel: audit.ChannelDialog}})
	if r := w2.call("set_value", laterArgs); r.Status != StatusSuccess || r.Decision.Tier != decide.T2 {
		t.Fatalf("a tier-2 call the chat may approve: %s at %s, want it asked and run", r.Status, r.Decision.Tier)
	}
}

// TestYesCountsAsTheChat: `mcphost call --yes` is the person's own
// command line, judged as the chat is: it approves a tier-3 call by
// default, and nothing where askVia takes the chat away.
func TestYesCountsAsTheChat(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "flaky", asker: YesAsker{}, mayApprove: defaultAskVia})
	if r := w.call("set_value", laterArgs); r.Status != StatusSuccess || r.Via != audit.ChannelYes {
		t.Fatalf("--yes at tier 3 by default: %s via %q, want run", r.Status, r.Via)
	}
	w = newWorld(t, worldOpts{fixture: "flaky", asker: YesAsker{}, mayApprove: noChatAtT3, later: later.New(later.Options{})})
	r := w.call("set_value", laterArgs)
	if r.Status != StatusBlocked || r.Held == nil || !strings.Contains(r.Refused, "an approval with --yes may not") {
		t.Fatalf("--yes at tier 3 where askVia takes the chat away: %s held %+v refused %q, want blocked and held", r.Status, r.Held, r.Refused)
	}
	if n := w.count(fixtures.EventExec, "set_value"); n != 0 {
		t.Fatalf("set_value ran %d times under a --yes askVia refuses", n)
	}
}
