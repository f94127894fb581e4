package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/later"
)

// operation is one request that reaches a server, as the gate's door
// (pass) takes it: a tool call (Gate.Call), or a request that is not one (a
// resource read, a prompts/get, a subscription), decided on a stand-in tool.
// What differs between them is here, as fields; the steps are pass's alone.
type operation struct {
	// call names the server, the tool decided on and the arguments, and
	// carries a tool call's hooks (OnDecision, OnTask, Progress).
	call Call
	// find returns the definition the call is decided on: the tool as the
	// server lists it now, or the stand-in. It is asked again before a
	// retry and after a person answers.
	find func(ctx context.Context) (*client.Tool, error)
	// listed: find returns the server's own definition, so it is pinned,
	// its input schema checks the arguments, and an answer must have been
	// given for the definition listed when it comes back. A stand-in's
	// definition never changes: none of that applies.
	listed bool
	// once: made at most once, never retried (a request that is not a tool
	// call: its outcome says only whether the server answered).
	once bool
	// valid reports whether arguments a person edited may be decided again;
	// badEdit is the denial when they may not, or after too many edits.
	valid   func(json.RawMessage) bool
	badEdit string
	// exec makes execution n with the arguments finally approved.
	exec func(ctx context.Context, a *account, n int) *client.CallResult
	// noTaint: what the request returns is not the server's text (a
	// subscription), so it adds nothing to the session's taint.
	noTaint bool
	// byPerson: the person asked for this request themselves (a resource
	// they mentioned), so it is decided as their own action
	// (decide.Input.ByPerson).
	byPerson bool
}

// account is the gate's one record of a call: what was asked for (the
// intent: server, tool, arguments), the definition it was decided on, the
// decision, who or what approved it, and how it ended (the Result). The
// door makes it when it has found the definition (anew, when a call is
// decided again), and writes every audit record of the call from it.
type account struct {
	*Result
	tool    *client.Tool // the definition decided on
	ident   string       // the server's identity
	trusted bool
}

// pass is the gate's one door: every operation that reaches a server — a
// tool call, a resource read, a prompts/get, a subscription — goes through
// it, and nothing reaches a server another way. Its steps, in order: find
// the definition (after any re-list the server announced), check the
// arguments against it, decide, ask a person when the decision says so,
// bind the answer to the definition it was given for, grant, write the
// intent, execute (retrying only as the design allows), write the outcome,
// and note the session's taint. Every step that ends the call writes its
// outcome record from the call's account, and the Result says who or what
// decided (DecidedBy) and how it ended (Status).
func (g *Gate) pass(ctx context.Context, op *operation) *Result {
	c := op.call
	callID := c.ID
	if callID == "" {
		callID = g.NewCallID()
	}
	r := &Result{CallID: callID, Server: c.Server, Tool: c.Tool, Args: c.Args}
	obs, def := g.observer(), ""
	ctx = obs.CallStarted(ctx, callID, c.Server, c.Tool, c.Args)
	defer func() { obs.CallDone(ctx, r, def) }()
	edits, redefined := 0, 0
	for {
		t, err := op.find(ctx)
		if err != nil {
			r.Status, r.Err = StatusError, err
			return r
		}
		def = t.Hash
		spec, _ := g.o.Catalog.Spec(c.Server)
		a := &account{Result: r, tool: t, ident: spec.Identity(), trusted: g.o.Trusted(c.Server)}
		r.Args = c.Args
		r.Via, r.Grant = "", nil                        // of this round's decision alone
		pinned, changed, decidedOn := "", false, t.Hash // a stand-in is never pinned
		if op.listed {
			if why := g.checkArgs(t, c); why != "" {
				r.Decision = schemaRejected
				r.Status, r.DecidedBy, r.DenyReason = StatusDenied, DecidedBySchema, why
				g.record(a, nil)
				return r
			}
			pinned, changed = g.pin(a.ident, t, a.trusted)
			decidedOn = pinned
		}
		d := g.decideFor(spec, a.trusted, t, decidedOn, c.Args, op.byPerson)
		r.Decision = d
		r.ChangedFields = g.changedFields(c.Server, t, pinned, changed)
		// Trusting the server, and nothing else, would let it run: a
		// refusal and the dialog name that fix.
		r.TrustLifts = g.mayTrustLift(c.Server, a.trusted, d) && g.decide(spec, true, t, decidedOn, c.Args).Verdict == decide.Allow

		var q *Question
		if needsPerson(d) {
			q = &Question{Server: c.Server, Trusted: a.trusted, Tool: t, Args: c.Args, Decision: d,
				Scopes: decide.AllowedScopes(d), Changed: changed, PinnedHash: pinned, ChangedFields: r.ChangedFields,
				TrustLifts: r.TrustLifts, Client: g.o.Client}
			// A call that needs a person: one a person approved while it
			// was held runs now, once; one they denied hears why.
			if g.takeLater(a) {
				r.Decision.Verdict = decide.Ask // it asked; the answer came later
				g.runApproved(ctx, op, spec, a, changed)
				return r
			}
			if why, ok := g.deniedLater(a); ok {
				r.Status, r.DecidedBy, r.DenyReason = StatusDenied, audit.ByPersonDenial, why
				g.record(a, nil)
				return r
			}
		}

		switch d.Verdict {
		case decide.Deny:
			r.Status, r.DecidedBy = refusedBy(d)
			r.Via = refusedVia(r.DecidedBy)
			if r.Status == StatusBlocked {
				r.Held = g.hold(r, a, q)
			}
			g.record(a, nil)
			return r
		case decide.Allow:
			r.DecidedBy, r.Via, r.Grant = allowedBy(d)
		case decide.Ask:
			if g.o.Later != nil {
				q.Hold = func() later.Approval {
					if ap := g.hold(r, a, q); ap != nil {
						return *ap
					}
					return later.Approval{} // not held: no id to name
				}
			}
			var ans Answer
			var err error
			if why := g.unanswerable(g.askerOf(op.call), d.Tier); why != "" {
				// Not asked at all: a question whose answer could approve
				// nothing would have the person approve in vain.
				err, r.Refused = fmt.Errorf("%w: %w: %s", ErrNoPerson, ErrChannel, why), why
			} else {
				asked := time.Now()
				ans, err = g.askerOf(op.call).Ask(ctx, q)
				ans.Via = channelOf(g.askerOf(op.call), ans) // the asker's way, not the answer's claim
				r.Via = ans.Via
				obs.Asked(ctx, q, ans, err, time.Since(asked))
			}
			if ans.Approve && err == nil {
				if why := g.channelRefusal(d.Tier, ans.Via); why != "" {
					// Enforced here, not only by not asking: an answer
					// through a channel that may not approve this tier
					// approves nothing.
					ans, err = Answer{}, fmt.Errorf("%w: %w: %s", ErrNoPerson, ErrChannel, why)
					r.Refused = why
				}
			}
			if err != nil || !ans.Approve {
				if g.takeLater(a) {
					// Approved where the call was held while this question
					// waited (the page a URL elicitation opened).
					g.runApproved(ctx, op, spec, a, changed)
					return r
				}
				if why, ok := g.deniedLater(a); ok {
					r.Status, r.DecidedBy, r.DenyReason = StatusDenied, audit.ByPersonDenial, why
					g.record(a, nil)
					return r
				}
				r.Status, r.DecidedBy = notApprovedBy(err)
				if r.DecidedBy == audit.ByHeadless {
					r.Via = audit.ChannelHeadless
				}
				r.DenyReason = ans.Reason
				if r.Status == StatusBlocked || errors.Is(err, ErrNoAnswer) {
					r.Held = g.hold(r, a, q)
				}
				g.record(a, nil)
				return r
			}
			if stale := g.staleAnswer(ctx, op, t, ans); stale != "" {
				if redefined >= maxRedefinitions {
					r.Status, r.DecidedBy = StatusDenied, DecidedByStale
					r.DenyReason = stale + "; after " + strconv.Itoa(redefined+1) + " answers that did not apply to the definition listed, the call was refused: call it again"
					g.record(a, nil)
					return r
				}
				redefined++ // the answer approves nothing: decide again on what is listed now
				continue
			}
			if ans.Args != nil {
				// Never run arguments other than the ones just shown: an
				// edited call is a new call, decided again.
				if edits >= 3 || !op.valid(ans.Args) {
					r.Status, r.DecidedBy = StatusDenied, audit.ByPersonDenial
					r.DenyReason = op.badEdit
					g.record(a, nil)
					return r
				}
				edits++
				c.Args = ans.Args
				continue
			}
			if !allowed(q.Scopes, ans.Scope) {
				ans.Scope = decide.ScopeOnce
			}
			r.DecidedBy = audit.ByPerson(ans.Scope.String())
			if changed {
				g.setPin(a.ident, t, a.trusted) // approving the call accepts the new definition
			}
			g.grant(d, ans.Scope, a.ident, c.Server, t, c.Args, r.Via, callID)
		}
		if c.OnDecision != nil {
			c.OnDecision(r.Decision, r.DecidedBy)
		}
		g.execute(ctx, op, spec, a)
		return r
	}
}

// runApproved runs a call a person approved while it was held: the
// approval was given for the definition it shows (a changed one is
// accepted with it) and reaches this one call.
func (g *Gate) runApproved(ctx context.Context, op *operation, spec client.Spec, a *account, changed bool) {
	if changed {
		g.setPin(a.ident, a.tool, a.trusted)
	}
	if op.call.OnDecision != nil {
		op.call.OnDecision(a.Decision, a.DecidedBy)
	}
	g.execute(ctx, op, spec, a)
}

// execute runs the operation, retrying only as the design allows, with an
// intent record before every execution and an outcome record after it.
func (g *Gate) execute(ctx context.Context, op *operation, spec client.Spec, a *account) {
	r, t, c := a.Result, a.tool, op.call
	d := r.Decision
	unknownLimit := 0 // automatic retries after an unknown outcome or throttling
	switch {
	case op.once:
	case d.Class == decide.Read && d.Retry:
		unknownLimit = 2
	case d.Retry:
		unknownLimit = 1 // an idempotent write: at most one automatic retry
	}
	var unknownRetries int
	notSentRetried := false
	for n := 1; ; n++ {
		if n > 1 {
			// Before a retry: the same definition, and no rule that now denies.
			t2, err := op.find(ctx) // after any re-list the server announced
			if err != nil {
				r.Err = err
				return
			}
			if t2.Hash != t.Hash {
				r.Err = errors.New("the tool's definition changed before the retry; not retried")
				return
			}
			if d2 := g.decide(spec, a.trusted, t2, t.Hash, r.Args); d2.Verdict == decide.Deny {
				r.Err = errors.New("a rule now denies the call; not retried")
				return
			}
		}
		if err := g.intent(a, n); err != nil && d.Class != decide.Read {
			r.Status, r.Err = StatusError, fmt.Errorf("%w: %v", errAuditUnavailable, err)
			settle(r) // a retry that cannot go ahead must not hide an earlier attempt
			return
		}
		cr := op.exec(ctx, a, n)
		r.Attempts = append(r.Attempts, Attempt{N: n, Outcome: cr.Outcome, Detail: cr.Detail, Duration: cr.Duration})
		r.Status, r.Result, r.Err, r.Task = outcomeStatus(cr.Outcome), cr.Result, cr.Err, cr.Task
		r.Stale = cr.Stale || cr.Outcome == client.OutcomeToolError && isStale(cr.Result)
		settle(r)
		g.record(a, cr)

		switch cr.Outcome {
		case client.OutcomeSuccess:
			if !op.noTaint {
				g.taint(d)
			}
			return
		case client.OutcomeToolError:
			g.taint(d)
			return
		case client.OutcomeNotSent:
			if notSentRetried || ctx.Err() != nil {
				return
			}
			notSentRetried = true // nothing was applied: once, after the server is back
			if !g.spend(c.Server) || g.waitReady(ctx, c.Server) != nil {
				return
			}
		case client.OutcomeThrottled, client.OutcomeUnknown:
			if cr.Detail == "cancelled" || ctx.Err() != nil || unknownRetries >= unknownLimit || g.mayHaveCreatedTask(cr, spec, t) || !g.spend(c.Server) {
				return
			}
			unknownRetries++
			wait := time.Duration(rand.Int64N(int64(g.o.Backoff(unknownRetries)) + 1))
			wait = max(wait, cr.RetryAfter)
			if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
				return // no time left for another attempt
			}
			if g.o.Sleep(ctx, wait) != nil {
				return
			}
			if cr.Outcome == client.OutcomeUnknown && g.waitReady(ctx, c.Server) != nil {
				return
			}
		default: // rejected: never retried
			return
		}
	}
}

// callTool is a tool call's execution n: sent through the catalog with the
// call's progress and task receivers, observed as an attempt.
func (g *Gate) callTool(ctx context.Context, a *account, n int, c Call) *client.CallResult {
	opts := g.callOptions(c)
	opts.OnTask = g.taskHook(a, n, c.OnTask)
	actx := g.observer().AttemptStarted(ctx, n)
	cr := g.o.Catalog.Call(actx, c.Server, c.Tool, a.Args, opts)
	g.observer().AttemptDone(actx, Attempt{N: n, Outcome: cr.Outcome, Detail: cr.Detail, Duration: cr.Duration}, cr)
	return cr
}

// base is what every audit record of the call says: the intent, the
// definition and the decision, from the call's account.
func (g *Gate) base(a *account) *audit.Record {
	t, d := a.tool, a.Decision
	ann, _ := json.Marshal(t.Annotations)
	rec := &audit.Record{
		SessionID: g.o.SessionID, CallID: a.CallID, Client: g.o.Client,
		Server: a.Server, ServerIdentity: a.ident, Trusted: a.trusted,
		Tool: t.Name, DefHash: t.Hash, Annotations: ann,
		Class: d.Class.String(), Tier: d.Tier.String(), Verdict: d.Verdict.String(), DecidedBy: a.DecidedBy,
		Via: a.Via, Grant: a.Grant,
		Args: a.Args,
	}
	for _, rs := range d.Reasons {
		rec.Reasons = append(rec.Reasons, rs.Code)
	}
	if len(a.Args) == 0 {
		rec.Args = json.RawMessage("{}")
	}
	return rec
}

// intent writes the record that must be written before execution n runs,
// and for a call that is not a read durable: its Class says which.
func (g *Gate) intent(a *account, n int) error {
	if g.o.Audit == nil {
		return errors.New("no audit log")
	}
	rec := g.base(a)
	rec.Kind = audit.Intent
	rec.Attempts = []audit.Attempt{{N: n}}
	return g.o.Audit.Append(rec)
}

// record writes an outcome: after the execution that returned cr, or (cr
// nil) of a call that never ran because it was denied or blocked.
func (g *Gate) record(a *account, cr *client.CallResult) {
	if g.o.Audit == nil {
		return
	}
	rec := g.base(a)
	rec.Kind = audit.Outcome
	rec.Status = a.Status
	if cr != nil {
		rec.DurationMS = cr.Duration.Milliseconds()
	}
	for _, at := range a.Attempts {
		rec.Attempts = append(rec.Attempts, audit.Attempt{N: at.N, Outcome: outcomeStatus(at.Outcome), Detail: at.Detail, DurationMS: at.Duration.Milliseconds()})
	}
	if cr != nil && cr.Task != nil {
		rec.TaskID = cr.Task.ID
	}
	if cr != nil && cr.Result != nil {
		if b, err := json.Marshal(cr.Result); err == nil {
			rec.Result = b
		}
	}
	// An outcome that cannot be written leaves an intent without an outcome,
	// which verify reports; the call itself already happened.
	_ = g.o.Audit.Append(rec)
}
