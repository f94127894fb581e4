package host

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/later"
)

// Later is where the gate holds calls for a person's later approval
// (GateOptions.Later): a later.Store in this process's memory, or a store
// that replicas share (pgstore), so that a call held through one process
// and approved through another runs once through whichever sees the retry.
// Its methods are those of later.Store and keep its promises across every
// process using the store: Answer answers a call once, and Take reports
// true once per approval however many retries race for it. A store that
// cannot be reached holds, finds and takes nothing: Hold then returns an
// approval without an id, and the call is refused.
type Later interface {
	Hold(c later.Call) (a later.Approval, held bool)
	Drop(id string) bool // true: it waited and is forgotten
	Answer(id string, approve bool, via, reason string) (later.Approval, error)
	Take(c later.Call) (later.Approval, bool)
	Denial(c later.Call) (later.Approval, bool)
	Get(id string) (later.Approval, bool)
}

// PersonCallPrefix begins later.Call.Client for the call of a person's
// OAuth client: the prefix, the client id, NUL, the client's name, NUL,
// and last the person's key (audit.Client.Key, which may hold anything).
const PersonCallPrefix = "person\x00"

// LaterCaller reads the person's key and the client id back from a held
// call's client (later.Call.Client) that laterCall wrote for a person's
// OAuth client; ok is false for any other.
func LaterCaller(client string) (key, clientID string, ok bool) {
	rest, ok := strings.CutPrefix(client, PersonCallPrefix)
	if !ok {
		return "", "", false
	}
	parts := strings.SplitN(rest, "\x00", 3)
	if len(parts) != 3 {
		return "", "", false
	}
	return parts[2], parts[0], true
}

// laterCall is what makes a retry the same call as the one held: the
// client, the server and its identity, the tool, its definition, the
// arguments and the tier.
func (g *Gate) laterCall(a *account) later.Call {
	client := ""
	if c := g.o.Client; c != nil {
		client = c.Name + "\x00" + c.Version + "\x00" + c.Session
		if c.Key != "" {
			// A person's OAuth client is the same whatever session or
			// replica its retry comes through: the approval follows the
			// person (as their token names them) and the client, not the
			// connection.
			client = PersonCallPrefix + c.ID + "\x00" + c.Name + "\x00" + c.Key
		}
	}
	return later.Call{Client: client, Server: a.Server, Identity: a.ident, Tool: a.tool.Name,
		Definition: a.tool.Hash, ArgsHash: decide.ArgsHash(a.Args), Tier: a.Decision.Tier.String()}
}

// takeLater spends an approval a person gave later for this very call, if
// there is one: the call then runs as approved once.
func (g *Gate) takeLater(a *account) bool {
	if g.o.Later == nil {
		return false
	}
	ap, ok := g.o.Later.Take(g.laterCall(a))
	if !ok {
		return false
	}
	a.Held = &ap
	a.DecidedBy = audit.ByPerson(decide.ScopeOnce.String())
	a.Via = knownChannel(ap.Via) // the way the later approval came
	// A failed record of its use does not stop the call: its intent
	// record, written before it runs, says a person approved it once and
	// how, and that one fails closed when the log cannot be written.
	_ = g.approvalRecord(a, ap, audit.ApprovalUsed)
	return true
}

// deniedLater reports the reason of a person who denied this very call
// while it was held; the denial is spent with the telling.
func (g *Gate) deniedLater(a *account) (reason string, ok bool) {
	if g.o.Later == nil {
		return "", false
	}
	ap, ok := g.o.Later.Denial(g.laterCall(a))
	if !ok {
		return "", false
	}
	if ap.Reason == "" {
		return "the person denied it when it was held for approval", true
	}
	return ap.Reason, true
}

// hold keeps the call for a person's later approval (GateOptions.Later),
// writes the approval record of a newly held call, and tells OnHold. A
// call OnHold cannot show anywhere is withdrawn at once, and r.NotHeld
// says why.
func (g *Gate) hold(r *Result, a *account, q *Question) *later.Approval {
	if g.o.Later == nil || r.NotHeld != "" {
		return nil // withdrawn already: an asker that held it (Question.Hold) was told why
	}
	ap, held := g.o.Later.Hold(g.laterCall(a))
	if ap.ID == "" {
		return nil // the store could not hold it
	}
	if held {
		if err := g.approvalRecord(a, ap, audit.ApprovalHeld); err != nil {
			// Held only with its record in the chain: a call the log
			// does not show waiting is not kept to be approved.
			g.o.Later.Drop(ap.ID)
			return nil
		}
		if g.o.OnHold != nil && q != nil {
			// What a later approval approves is this one call, once
			// (takeLater), whatever the question offered when it was
			// decided: decided without a person (headless), it offered
			// nothing, and an approver would have had only a denial.
			hq := *q
			hq.Scopes = []decide.Scope{decide.ScopeOnce}
			if err := g.o.OnHold(ap, &hq); err != nil {
				// Shown to no one who could approve it, it would wait
				// under an id no one sees: withdrawn, and the log says so
				// (a failed record leaves the held one, and the call
				// expires unanswered: nothing runs either way).
				g.o.Later.Drop(ap.ID)
				_ = g.approvalRecord(a, ap, audit.ApprovalWithdrawn)
				r.NotHeld = err.Error()
				return nil
			}
		}
	}
	return &ap
}

// approvalRecord writes an approval record of the call's account.
func (g *Gate) approvalRecord(a *account, ap later.Approval, state string) error {
	if g.o.Audit == nil {
		return nil
	}
	rec := g.base(a)
	rec.Kind, rec.ApprovalID, rec.ApprovalState = audit.Approval, ap.ID, state
	return g.o.Audit.Append(rec)
}

// ErrChannel is why an answer approved nothing: it came through a channel
// that may not approve a call of its tier (GateOptions.MayApprove).
var ErrChannel = errors.New("the answer came through a channel that may not approve this call")

// ErrUnrecorded is AnswerLater's error when the answer was taken but its
// audit record could not be written: the call is answered all the same.
var ErrUnrecorded = errors.New("the answer was taken, but its audit record could not be written")

// channelRefusal says why an approval through via counts for nothing at
// tier, or "" when it counts.
func (g *Gate) channelRefusal(tier decide.Tier, via audit.Channel) string {
	if g.o.MayApprove == nil || g.o.MayApprove(tier, via) {
		return ""
	}
	return fmt.Sprintf("an approval %s may not approve a tier-%s call (askVia); %s", via.Words(), tier, g.approveWhere(tier))
}

// approveWhere says where a person may approve a call of tier, as the
// channel policy (MayApprove) allows.
func (g *Gate) approveWhere(tier decide.Tier) string {
	var ways []string
	if g.o.MayApprove == nil || g.o.MayApprove(tier, audit.ChannelDialog) {
		ways = append(ways, "in mcphost's chat")
	}
	ways = append(ways, ApproveElsewhere(g.o.MayApprove, tier)...)
	switch len(ways) {
	case 0:
		return "no channel of a person may approve it: only a rule or a grant lets it run"
	case 1:
		return "approve it " + ways[0]
	}
	return "approve it " + strings.Join(ways[:len(ways)-1], ", ") + " or " + ways[len(ways)-1]
}

// unanswerable says why no answer of asker could approve a call of tier —
// it answers through one channel of a person, and that one may not — or
// "" when its answer may count. Such an asker is never asked: the chat
// does not show a dialog whose approval would be thrown away.
func (g *Gate) unanswerable(asker Asker, tier decide.Tier) string {
	c, ok := asker.(ChannelAsker)
	if !ok || !c.Channel().Person() {
		return ""
	}
	return g.channelRefusal(tier, c.Channel())
}

// AnswerLater records a person's answer to the held call id: an approval
// lets the same call, retried within the approval's lifetime, run once; a
// denial tells the retry the person's reason. The answer must come
// through a channel that may approve the call's tier. The answer is
// written to the audit log. Its error is later.ErrUnknown,
// later.ErrExpired or later.ErrAnswered when the call waits no more,
// ErrUnrecorded when the answer stands without its record, and otherwise
// (ErrChannel, say) a refusal that leaves the call waiting.
func (g *Gate) AnswerLater(id string, ans Answer) error {
	if g.o.Later == nil {
		return later.ErrUnknown
	}
	ap, ok := g.o.Later.Get(id)
	if !ok {
		return later.ErrUnknown
	}
	if ans.Approve {
		var tier decide.Tier
		if err := tier.UnmarshalText([]byte(ap.Call.Tier)); err != nil {
			return fmt.Errorf("the held call has no known tier: %w", err)
		}
		if why := g.channelRefusal(tier, ans.Via); why != "" {
			return fmt.Errorf("%w: %s", ErrChannel, why)
		}
	}
	ap, err := g.o.Later.Answer(id, ans.Approve, string(ans.Via), ans.Reason)
	if err != nil {
		return err
	}
	if g.o.Audit != nil {
		rec := g.heldRecord(ap, audit.ApprovalDenied)
		rec.DecidedBy, rec.Via, rec.Approver = audit.ByPersonDenial, knownChannel(string(ans.Via)), ans.By
		if ans.Approve {
			rec.ApprovalState, rec.DecidedBy = audit.ApprovalApproved, audit.ByPerson(decide.ScopeOnce.String())
		}
		if err := g.o.Audit.Append(rec); err != nil {
			// The answer stands (the retry's own records will say it
			// ran); the one who answered hears that its record failed.
			return fmt.Errorf("%w: %w", ErrUnrecorded, err)
		}
	}
	return nil
}

// WithdrawLater takes back the call held under id that no one has
// answered yet — the one who made it stopped waiting — so no approver can
// approve it any more, and records it withdrawn. A call already answered
// is left as it is (ErrAnswered).
func (g *Gate) WithdrawLater(id string) error {
	if g.o.Later == nil {
		return later.ErrUnknown
	}
	ap, ok := g.o.Later.Get(id)
	if !ok {
		return later.ErrUnknown
	}
	// Dropped only while it still waits: an answered call, also one
	// answered since the look above, is kept and not recorded withdrawn.
	if !g.o.Later.Drop(id) {
		return later.ErrAnswered
	}
	if g.o.Audit == nil {
		return nil
	}
	return g.o.Audit.Append(g.heldRecord(ap, audit.ApprovalWithdrawn))
}

// heldRecord is the approval record, in state, of the held call ap as the
// store keeps it.
func (g *Gate) heldRecord(ap later.Approval, state string) *audit.Record {
	c := ap.Call
	return &audit.Record{Kind: audit.Approval, SessionID: g.o.SessionID, Client: g.o.Client,
		Server: c.Server, ServerIdentity: c.Identity, Tool: c.Tool, DefHash: c.Definition, ArgsHash: c.ArgsHash,
		Tier: c.Tier, ApprovalID: ap.ID, ApprovalState: state}
}

// knownChannel is via as a channel of the audit log, or unknown when it is
// none.
func knownChannel(via string) audit.Channel {
	if c := audit.Channel(via); c.Known() {
		return c
	}
	return audit.ChannelUnknown
}
