package host

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/decide"
)

// fixedAsker answers every question with ans and says it answers through
// channel: the shape of the dialog's and the approver's askers.
type fixedAsker struct {
	ans     Answer
	channel audit.Channel
}

func (a fixedAsker) Ask(context.Context, *Question) (Answer, error) { return a.ans, nil }
func (a fixedAsker) Channel() audit.Channel                         { return a.channel }

// claimAsker answers with ans and has no channel of its own: the answer's
// Via is all the gate has.
type claimAsker struct{ ans Answer }

func (a claimAsker) Ask(context.Context, *Question) (Answer, error) { return a.ans, nil }

// noPersonAsker finds no one to ask, yet names a channel (as serve's asker
// does when the approver cannot be shown the call).
type noPersonAsker struct{ via audit.Channel }

func (a noPersonAsker) Ask(context.Context, *Question) (Answer, error) {
	return Answer{Via: a.via}, ErrNoPerson
}

// TestAnswerChannelIsTheAskers: every answer's channel is recorded — in
// the Result and in both audit records of the call — and it is the
// asker's own when the asker has one, whatever the answer claims; an
// answer with no channel, or one that is not a channel, is unknown.
func TestAnswerChannelIsTheAskers(t *testing.T) {
	approve := Answer{Approve: true, Scope: decide.ScopeOnce}
	claims := func(a Answer, via audit.Channel) Answer { a.Via = via; return a }
	for _, c := range []struct {
		name  string
		asker Asker
		want  audit.Channel
		by    DecidedBy
	}{
		{"the dialog", fixedAsker{ans: approve, channel: audit.ChannelDialog}, audit.ChannelDialog, "user:once"},
		{"the dialog, its answer claiming a passkey", fixedAsker{ans: claims(approve, audit.ChannelWebPasskey), channel: audit.ChannelDialog}, audit.ChannelDialog, "user:once"},
		{"the approver, denying", fixedAsker{ans: Answer{Reason: "no"}, channel: audit.ChannelApprove}, audit.ChannelApprove, "user"},
		{"--yes", YesAsker{}, audit.ChannelYes, "user:once"},
		{"an asker that names the form", claimAsker{claims(approve, audit.ChannelElicitation)}, audit.ChannelElicitation, "user:once"},
		{"an asker that names nothing", claimAsker{approve}, audit.ChannelUnknown, "user:once"},
		{"an asker that names no channel", claimAsker{claims(approve, "passkey, honest")}, audit.ChannelUnknown, "user:once"},
		{"the script", NewScriptAsker(t, ScriptedAnswer{Tool: "f/set_value", Answer: approve}), audit.ChannelScript, "user:once"},
		{"no one", HeadlessAsker{}, audit.ChannelHeadless, "headless"},
		{"no one, through an asker that names a channel", noPersonAsker{audit.ChannelApprove}, audit.ChannelHeadless, "headless"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, worldOpts{fixture: "flaky", trusted: true, asker: c.asker, auto: "reads"})
			r := w.call("set_value", `{"key":"a","value":"1"}`)
			if r.Via != c.want || r.DecidedBy != c.by || r.Grant != nil {
				t.Errorf("Result: via %q by %q grant %+v; want via %q by %q, no grant", r.Via, r.DecidedBy, r.Grant, c.want, c.by)
			}
			intents, outcomes := w.records("set_value")
			for _, rec := range append(intents, outcomes...) {
				if rec.Via != c.want {
					t.Errorf("%s record: via %q, want %q", rec.Kind, rec.Via, c.want)
				}
			}
			if len(outcomes) != 1 {
				t.Errorf("%d outcome records, want 1", len(outcomes))
			}
		})
	}
}

// TestGrantCarriesItsChannel: a session grant keeps the channel of the
// answer that gave it and the call it was given for; a call it lets run
// later records "grant" with both, in its Result, its audit records and
// the grant itself.
func TestGrantCarriesItsChannel(t *testing.T) {
	asker := NewScriptAsker(t, ScriptedAnswer{Tool: "f/set_value", Answer: Answer{Approve: true, Scope: decide.ScopeSession, Via: audit.ChannelApprove}})
	w := newWorld(t, worldOpts{fixture: "flaky", trusted: true, asker: asker, auto: "reads"})
	first := w.call("set_value", `{"key":"a","value":"1"}`)
	if first.Status != StatusSuccess || first.Via != audit.ChannelApprove {
		t.Fatalf("first call: %s via %q, want success via approve", first.Status, first.Via)
	}
	second := w.call("set_value", `{"key":"b","value":"2"}`)
	want := &audit.GrantRef{Scope: "session", Via: audit.ChannelApprove, CallID: first.CallID}
	if second.Status != StatusSuccess || second.DecidedBy != "user:session" || second.Via != audit.ChannelGrant {
		t.Fatalf("second call: %s by %q via %q, want success by user:session via grant", second.Status, second.DecidedBy, second.Via)
	}
	if d := cmp.Diff(want, second.Grant); d != "" {
		t.Errorf("the grant the second call names (-want +got):\n%s", d)
	}
	intents, outcomes := w.records("set_value")
	var byGrant []audit.Record
	for _, rec := range append(intents, outcomes...) {
		if rec.CallID == second.CallID {
			byGrant = append(byGrant, rec)
		}
	}
	if len(byGrant) != 2 {
		t.Fatalf("%d records of the second call, want an intent and an outcome", len(byGrant))
	}
	for _, rec := range byGrant {
		if rec.Via != audit.ChannelGrant || !cmp.Equal(rec.Grant, want) {
			t.Errorf("%s record: via %q grant %+v; want grant %+v", rec.Kind, rec.Via, rec.Grant, want)
		}
	}
	gs := w.gate.Grants()
	if len(gs) != 1 || gs[0].Via != string(audit.ChannelApprove) || gs[0].Call != first.CallID {
		t.Errorf("grants %+v; want one given via approve for call %s", gs, first.CallID)
	}
	asker.Done()
}

// TestGrantFromUnknownChannel: a grant that names no channel (an always
// grant read back from the state file of an older mcphost) is recorded as
// given through an unknown channel, not guessed.
func TestGrantFromUnknownChannel(t *testing.T) {
	d := decide.Decision{Verdict: decide.Allow, Grant: &decide.Grant{Scope: decide.ScopeAlways}}
	by, via, g := allowedBy(d)
	if by != "user:always" || via != audit.ChannelGrant || g == nil || g.Via != audit.ChannelUnknown || g.Scope != "always" {
		t.Errorf("allowedBy: %q via %q grant %+v; want user:always via grant, given through unknown", by, via, g)
	}
}

// TestRuleChannel: a call an allow or deny rule decided records "rule",
// and one its tier allowed records no channel.
func TestRuleChannel(t *testing.T) {
	allow := decide.RuleSpec{Effect: decide.Allow, Source: "test", Raw: json.RawMessage(`"f/set_*"`)}
	deny := decide.RuleSpec{Effect: decide.Deny, Source: "test", Raw: json.RawMessage(`"f/write_*"`)}
	w := newWorld(t, worldOpts{fixture: "flaky", trusted: true, headless: true, auto: "reads", rules: []decide.RuleSpec{allow, deny}})
	for _, c := range []struct {
		tool, args string
		status     Status
		via        audit.Channel
	}{
		{"set_value", `{"key":"a","value":"1"}`, StatusSuccess, audit.ChannelRule},
		{"write_record", `{"key":"a","value":"1"}`, StatusDenied, audit.ChannelRule},
		{"read_value", `{"key":"a"}`, StatusSuccess, ""},
	} {
		r := w.call(c.tool, c.args)
		if r.Status != c.status || r.Via != c.via {
			t.Errorf("%s: %s via %q, want %s via %q", c.tool, r.Status, r.Via, c.status, c.via)
		}
		_, outcomes := w.records(c.tool)
		if len(outcomes) != 1 || outcomes[0].Via != c.via {
			t.Errorf("%s: outcome records %+v, want one via %q", c.tool, outcomes, c.via)
		}
	}
}
