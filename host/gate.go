package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/decide/jsonscan"
	"github.com/mcphost/mcphost/later"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Catalog is what the gate needs of the client: the tools, and the one
// place a call is executed.
type Catalog interface {
	Tool(server, name string) (*client.Tool, bool)
	Spec(name string) (client.Spec, bool)
	Servers() []client.Status
	Subscribe() (<-chan client.Event, func())
	Call(ctx context.Context, server, tool string, args json.RawMessage, opts client.CallOptions) *client.CallResult
	LastChange(server, tool string) (client.Change, bool)
	// Relisting reports that the server said its tools changed and they
	// have not been listed again yet (client.Manager.Relisting); a
	// completed re-list is published to Subscribe.
	Relisting(server string) bool
}

// AuditLog receives the gate's records. Append must not return before the
// record is written where a crash of this process cannot lose it, and, for
// an intent whose Class is not audit.ReadClass, on disk (synced): the gate
// runs a call that is not a read only after its intent's Append returned
// nil. audit.Log does both.
type AuditLog interface {
	Append(r *audit.Record) error
}

// Store is the gate's durable memory: pins and "always" grants.
type Store interface {
	// Pin returns the definition hash pinned for a tool of the server with
	// this identity.
	Pin(identity, tool string) (hash string, ok bool)
	SetPin(identity, tool, hash string) error
	// PinNew pins, in one write, every tool of tools (name → hash) that
	// has no pin for this identity yet; it never moves an existing pin.
	PinNew(identity string, tools map[string]string) error
	// HasPins reports whether any tool of the server with this identity
	// is pinned.
	HasPins(identity string) bool
	// AlwaysGrants returns the persisted grants.
	AlwaysGrants() []decide.Grant
	AddAlwaysGrant(g decide.Grant, serverName string) error
}

// GateOptions configure a Gate.
type GateOptions struct {
	Catalog Catalog
	Policy  *decide.Policy
	// Trusted reports whether the person trusts the server's annotations.
	Trusted func(server string) bool
	Asker   Asker
	Mode    decide.Mode
	Audit   AuditLog // nil: no log can be written, so only reads run
	Store   Store    // nil: pins and grants last for this gate only
	// Pins is where definitions are pinned; share it with the listing
	// hook (client.Options.OnListing) so that every listed tool is pinned
	// on first sight. Nil: pins over Store.
	Pins *Pins

	SessionID string
	// Client names the program on whose behalf this gate runs calls, when
	// it is not mcphost's own chat or command line (the host behind
	// `mcphost serve`); every audit record of the gate carries it.
	Client *audit.Client
	// CanAsk, if set, is asked before each decision whether anyone could
	// answer a question now; when it returns false the call is decided as
	// in headless mode (an ask becomes a refusal with reason
	// needs-approval) and the Asker is not called. Nil: Mode alone says.
	CanAsk func() bool
	// Observer, if set, sees every call, attempt and taint change, to
	// export them; it never changes a call (observe.go).
	Observer Observer

	// Taint is what a resumed session had already taken in (a saved
	// session's Taint): the gate starts from it. Taint only grows; nothing
	// in a session clears it.
	Taint Taint
	// OnTaint, if set, is called each time the session's taint grows, with
	// the new state, before the call that caused it returns: to record it
	// in the saved session, so that a resume cannot lose it. It is called on
	// the calling goroutine, outside the gate's lock.
	OnTaint func(Taint)
	// State, if set, keeps the session's "this session" grants and its
	// taint (read before each decision, written when they change), so that
	// several gates with the same State, in one process or several, are
	// one session. Nil: they live in this gate's memory.
	State SessionState

	// CallOptions are passed to every execution (timeouts, progress).
	CallOptions client.CallOptions
	// Backoff is the longest wait before automatic retry n ≥ 1; the actual
	// wait is drawn uniformly below it (full jitter). Default 200ms·2^(n-1),
	// at most 5s.
	Backoff func(attempt int) time.Duration
	// RetryBudget is how many automatic retries one server may cause per
	// minute (default 10), so a failing server cannot turn one call into a
	// storm.
	RetryBudget int
	// ReadyWait bounds how long a call waits for a restarting server to be
	// listed again (default 30s).
	ReadyWait time.Duration
	Now       func() time.Time
	// Sleep waits d before an automatic retry, or until ctx ends (default:
	// a timer). Tests see the waits the gate asks for through it.
	Sleep func(ctx context.Context, d time.Duration) error

	// MayTrust reports whether the person may trust the server at all
	// (the managed policy's "trust"); nil: any. A call that asks only
	// because its server is untrusted says so (TrustLifts) only when the
	// server may be trusted.
	MayTrust func(server string) bool

	// MayApprove reports whether an answer that came through via may
	// approve a call of tier (the "askVia" setting); nil: every channel
	// may. An approval through a channel it refuses approves nothing: the
	// call is blocked and, with Later, held for an approval that counts.
	MayApprove func(tier decide.Tier, via audit.Channel) bool
	// Later, if set, holds a call that needed a person and was not
	// approved because no one could be asked, no answer came in time, or
	// the answer came through a channel that may not approve it: the
	// refusal names its approval id, and once a person approves it (Gate.
	// AnswerLater) the same call, retried within its lifetime, runs once.
	// Nil: such a call is refused and forgotten.
	Later Later
	// OnHold, if set, is called once for each call newly held (Later),
	// with its approval and the question about it: to show it to
	// approvers and tell the person a call waits. It is called on the
	// calling goroutine, outside the gate's locks, and must not block.
	// Its error says why the call cannot be shown anywhere a person could
	// approve it: the gate then withdraws it (it is dropped from Later and
	// an approval record says it was withdrawn), so that no call waits
	// under an id no one sees, and the call is refused with that reason
	// (Result.NotHeld) and no approval id.
	OnHold func(a later.Approval, q *Question) error
}

// Gate is the only way mcphost runs a tool: it decides, asks, executes,
// retries within the rules, and audits every attempt. It is safe for
// concurrent use.
type Gate struct {
	o GateOptions

	seq atomic.Int64

	// checks holds the input-schema check of each definition (by hash),
	// resolved once: resolving a schema per call would be costly.
	checksMu sync.Mutex
	checks   map[string]client.ArgsChecker

	mu      sync.Mutex
	grants  []decide.Grant // session and args grants, plus always grants once loaded
	sawOpen bool
	sawPriv bool
	retries map[string][]time.Time
}

// NewGate returns a gate for one session.
func NewGate(o GateOptions) *Gate {
	if o.Asker == nil {
		o.Asker = HeadlessAsker{}
	}
	if o.Trusted == nil {
		o.Trusted = func(string) bool { return false }
	}
	if s, ok := o.Later.(*later.Store); ok && s == nil {
		o.Later = nil // a nil store holds nothing, as it did before Later was an interface
	}
	if o.Backoff == nil {
		o.Backoff = func(n int) time.Duration {
			return min(200*time.Millisecond<<min(n-1, 5), 5*time.Second)
		}
	}
	if o.RetryBudget <= 0 {
		o.RetryBudget = 10
	}
	if o.ReadyWait <= 0 {
		o.ReadyWait = 30 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	if o.SessionID == "" {
		o.SessionID = strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	if o.Pins == nil {
		o.Pins = NewPins(o.Store)
	}
	g := &Gate{o: o, retries: map[string][]time.Time{}}
	g.RestoreTaint(o.Taint)
	if o.Store != nil && !liveGrants(o.Store) {
		g.grants = append(g.grants, o.Store.AlwaysGrants()...) // else read at each decision (session)
	}
	return g
}

// NewCallID returns a fresh id for a call: mcphost's own, unique across
// sessions, never the model's. The audit records of the call carry it.
func (g *Gate) NewCallID() string {
	return g.o.SessionID + "-" + strconv.FormatInt(g.seq.Add(1), 10)
}

// Call is one request to run a tool.
type Call struct {
	// ID is mcphost's id for the call (NewCallID); "" lets the gate make
	// one. A caller that records the call before it runs sets it.
	ID     string
	Server string
	Tool   string
	Args   json.RawMessage
	// Progress, if set, receives the server's progress notifications for
	// this call's executions, alongside GateOptions.CallOptions.Progress.
	// It may be called from another goroutine, and (rarely) after Call has
	// returned.
	Progress func(client.Progress)
	// OnDecision, if set, is called once the call may run — decided and,
	// if asked, approved — and before it is sent, with the decision and who
	// made it. It is called on Call's goroutine. A call that does not run
	// (denied, blocked, not found) ends without it.
	OnDecision func(d decide.Decision, decidedBy DecidedBy)
	// OnTask, if set, learns of each step of a call that runs as an MCP
	// task (created, status, result), after the gate has recorded it.
	OnTask func(client.TaskEvent)
	// NoArgsCheck sends arguments the tool's input schema rejects instead
	// of refusing them: only for a person who asked for exactly that on the
	// command line (mcphost call --no-check), never for a model's call.
	NoArgsCheck bool
	// Asker, if set, is asked about this call instead of GateOptions.Asker:
	// the asker of the one request the call came in, when a gate serves
	// several requests of a client at once (mcphost serve).
	Asker Asker
}

// askerOf returns who is asked about c: its own asker, else the gate's.
func (g *Gate) askerOf(c Call) Asker {
	if c.Asker != nil {
		return c.Asker
	}
	return g.o.Asker
}

// Status is how a call through the gate ended: one type with the audit
// log's, so that a Result's status is the one its outcome record carries.
type Status = audit.Status

const (
	StatusSuccess   = audit.StatusSuccess
	StatusToolError = audit.StatusToolError
	StatusNotSent   = audit.StatusNotSent
	StatusRejected  = audit.StatusRejected
	StatusThrottled = audit.StatusThrottled
	StatusUnknown   = audit.StatusUnknown
	StatusDenied    = audit.StatusDenied  // by a rule or a person
	StatusBlocked   = audit.StatusBlocked // needed a person, none could be asked
	// StatusError: the gate could not run it (no such tool, audit
	// unavailable). No outcome record carries it: such a call was never
	// decided, or never ran.
	StatusError Status = "error"
)

// outcomeStatus is the status of an execution that ended with o: the one
// place the client's outcomes become the gate's (and the log's) statuses,
// which name them alike.
func outcomeStatus(o client.Outcome) Status {
	switch o {
	case client.OutcomeSuccess:
		return StatusSuccess
	case client.OutcomeToolError:
		return StatusToolError
	case client.OutcomeNotSent:
		return StatusNotSent
	case client.OutcomeRejected:
		return StatusRejected
	case client.OutcomeThrottled:
		return StatusThrottled
	}
	return StatusUnknown
}

// Attempt is one execution.
type Attempt struct {
	N        int            `json:"n"`
	Outcome  client.Outcome `json:"outcome"`
	Detail   string         `json:"detail,omitempty"`
	Duration time.Duration  `json:"durationNs"`
}

// Result is the complete account of a call through the gate.
type Result struct {
	// CallID is mcphost's id for the call, as in its audit records.
	CallID       string
	Server, Tool string
	Args         json.RawMessage // the arguments that were decided on (edited ones, if the person edited them)
	Decision     decide.Decision
	// DecidedBy is who or what let the call run or stopped it: "auto",
	// "rule:<id>", "user:<scope>", "user" (a denial), "headless",
	// "input-schema", "stale-answer"; "" when the gate failed before deciding.
	DecidedBy DecidedBy
	// Via is the way the decision reached the gate (audit.Channel): the
	// channel of the person's answer, "rule", "grant", "headless"; ""
	// when nothing had to decide (auto) or the gate failed first.
	Via audit.Channel
	// Grant names the grant that let the call run, when Via is "grant".
	Grant    *audit.GrantRef
	Status   Status
	Result   *mcp.CallToolResult // the server's answer, for success and tool-error
	Attempts []Attempt
	Err      error
	// DenyReason is the person's reason for a denial, for the model.
	DenyReason string
	// ChangedFields name the parts of the tool's definition that changed
	// since it was accepted, when the decision says it changed and the
	// client saw the change in this run (client.Change.Fields); nil otherwise.
	ChangedFields []string
	// Stale reports that the server answered with the SERVER_STALE signal
	// (client.StaleCode), as a tool error or as a JSON-RPC error: it refuses
	// writes until it is restarted. Such a call is never retried.
	Stale bool
	// Task is the MCP task the call ran as, with its status history.
	Task *client.TaskInfo
	// TrustLifts reports that the call asked only because its server is
	// not trusted: the same call of the server, trusted, would run without
	// asking. A refusal then names trusting the server as a fix.
	TrustLifts bool
	// Held is the approval a blocked call waits for (GateOptions.Later),
	// nil when it is not held; for a call that ran under an approval given
	// later, the approval it spent.
	Held *later.Approval
	// Refused, for a blocked call, says why an answer approved nothing, or
	// why the asker was not asked at all because its answer could approve
	// nothing (it comes through a channel that may not approve the call's
	// tier), and where a person may approve it.
	Refused string
	// NotHeld, for a blocked call that Later would have held, says why it
	// was not: it could not be shown where a person would approve it
	// (GateOptions.OnHold's error), so it was withdrawn at once.
	NotHeld string
}

// staleAdvice says what a stale server means and how to restart it, in the
// TUI and from the command line.
func (r *Result) staleAdvice() string {
	return "the server " + r.Server + " is stale (it was rebuilt or reconfigured after it started) and refuses writes until it is restarted; " +
		"restart it: in the TUI, /servers then r on " + r.Server + "; from the command line, run the command again (mcphost call and run start their stdio servers afresh; " +
		"a server reached over HTTP is restarted where it runs); reads keep working meanwhile"
}

// HeldNote says, for a call held for a later approval, its approval id,
// until when it waits, and that the same call, made again once a person
// approved it, runs once; "" when the call is not held.
func (r *Result) HeldNote() string {
	h := r.Held
	if h == nil || r.Status != StatusBlocked {
		return ""
	}
	return "it is held for a person's approval under approval id " + h.ID + " until " + h.Expires.UTC().Format("15:04:05 UTC") +
		" (`mcphost approve` shows it): once they have approved it, make exactly the same call again (the same tool and arguments), and it runs once"
}

// notHeldNote says why a blocked call was not held for a later approval,
// or "" when nothing withdrew it.
func (r *Result) notHeldNote() string {
	if r.NotHeld == "" {
		return ""
	}
	return "; it could not be held for a person's later approval (" + r.NotHeld + "), so nothing waits for one"
}

// Message says in one sentence how the call ended, for a person or a model.
func (r *Result) Message() string {
	ref := r.Server + "/" + r.Tool
	switch r.Status {
	case StatusSuccess:
		return ref + " ran"
	case StatusToolError, StatusRejected:
		if r.Stale {
			return ref + " did not run and was not retried: " + r.staleAdvice()
		}
		if r.Status == StatusRejected {
			return ref + " was rejected by the server before running: nothing was applied"
		}
		return ref + " returned an error"
	case StatusDenied:
		if r.DenyReason != "" {
			return ref + " was denied: " + r.DenyReason
		}
		if r.Decision.Rule != "" {
			return ref + " was denied by the rule " + r.Decision.Rule
		}
		return ref + " was denied"
	case StatusBlocked:
		if r.Refused != "" {
			// A person was there, through a channel that may not approve
			// it: where one may is what the refusal says.
			return ref + " needs an approval that cannot be given here: " + r.Refused + r.notHeldNote()
		}
		// What would approve it: the allow rule that matches, or what can
		// when no rule can (see ApprovalFor).
		return r.BlockedMessage(ApproveInteractively)
	case StatusUnknown:
		msg := "the outcome of " + ref + " is unknown: it may or may not have taken effect" + r.attemptsNote() + "; check the server's state before running it again"
		if r.Stale {
			msg += "; then " + r.staleAdvice()
		}
		return msg
	case StatusNotSent:
		return ref + " was not sent: nothing was applied"
	case StatusThrottled:
		return ref + " was throttled by the server: probably nothing was applied"
	default:
		if r.Err != nil {
			return ref + ": " + r.Err.Error()
		}
		return ref + " failed"
	}
}

// attemptsNote says how many executions there were and which of them may
// have reached the server, for an unknown outcome.
func (r *Result) attemptsNote() string {
	if len(r.Attempts) <= 1 {
		return ", and it was not retried"
	}
	var may []string
	for _, a := range r.Attempts {
		if mayHaveRun(a.Outcome) {
			may = append(may, strconv.Itoa(a.N))
		}
	}
	which := "attempt " + strings.Join(may, ", ")
	if len(may) > 1 {
		which = "attempts " + strings.Join(may, ", ")
	}
	return fmt.Sprintf(": it was tried %d times, and %s may have run", len(r.Attempts), which)
}

// mayHaveRun reports whether an execution that ended so may have reached
// the server and run.
func mayHaveRun(o client.Outcome) bool {
	switch o {
	case client.OutcomeNotSent, client.OutcomeRejected, client.OutcomeThrottled:
		return false
	}
	return true
}

// settle sets the call's status from all its attempts, not only the last:
// once any attempt may have run, the call can be no better than unknown,
// whatever a later attempt reports.
func settle(r *Result) {
	switch r.Status {
	case StatusSuccess, StatusToolError, StatusUnknown:
		return
	}
	for _, a := range r.Attempts {
		if mayHaveRun(a.Outcome) {
			r.Status = StatusUnknown
			return
		}
	}
}

// errAuditUnavailable: with no durable intent record, only reads run.
var errAuditUnavailable = errors.New("the audit log cannot be written, so only read-only calls run")

// maxRedefinitions bounds how many times one call is decided again because
// the tool's definition changed while a person was being asked, so that a
// server that keeps changing it cannot hold a call (and a person) in a loop.
const maxRedefinitions = 3

// Call runs c through the gate.
//
// An approval applies only to the definition it was given for: the one in
// the question (Question.Tool.Hash), or Answer.Definition when the asker
// sets it. If the tool's definition is another one when the answer comes
// back — the server listed it anew while the person was asked, or the
// answer was given for an older question — the answer approves nothing:
// the call is decided again from the start, and the next question shows
// the definition as changed. After maxRedefinitions such rounds the call is
// refused (DecidedBy "stale-answer").
func (g *Gate) Call(ctx context.Context, c Call) *Result {
	return g.pass(ctx, &operation{call: c, listed: true,
		find:    func(ctx context.Context) (*client.Tool, error) { return g.current(ctx, c.Server, c.Tool) },
		valid:   func(json.RawMessage) bool { return true },
		badEdit: "the arguments were edited too many times; call again with the arguments you want",
		exec: func(ctx context.Context, a *account, n int) *client.CallResult {
			return g.callTool(ctx, a, n, c)
		}})
}

// maxChecks bounds the cached input-schema checks; past it the cache
// starts again, so a server that keeps changing its definitions cannot grow
// it without end.
const maxChecks = 4096

// checkArgs says why the tool's input schema rejects c's arguments, or ""
// when it accepts them, cannot be used (too large, unreadable: then only
// the server judges), or c asks to send them anyway. Arguments that are not
// a JSON object are left to the decision (invalid-arguments: a person
// confirms). The words are partly the schema's, the server's: escaped and
// bounded.
func (g *Gate) checkArgs(t *client.Tool, c Call) string {
	if k, ok := repeatedKey(c.Args); ok {
		// A person is shown one value and a model's words are checked as
		// one; the server may take the other. Even --no-check sends
		// nothing so ambiguous.
		return "the arguments give the key \"" + sanitize.Truncate(sanitize.Line(k), 100) + "\" more than once, so what was shown and checked may not be what the server reads; nothing was sent: call it again with each key once"
	}
	if c.NoArgsCheck || openSchema(t.InputSchema) {
		return ""
	}
	var obj map[string]any
	if len(c.Args) > 0 {
		if json.Unmarshal(c.Args, &obj) != nil || obj == nil {
			return ""
		}
	} else {
		obj = map[string]any{}
	}
	g.checksMu.Lock()
	ck, ok := g.checks[t.Hash]
	if !ok || t.Hash == "" { // no hash (a tool not from a listing): nothing to key it by
		if len(g.checks) >= maxChecks || g.checks == nil {
			g.checks = map[string]client.ArgsChecker{}
		}
		ck = client.NewArgsChecker(t.InputSchema)
		if t.Hash != "" {
			g.checks[t.Hash] = ck
		}
	}
	g.checksMu.Unlock()
	err := ck.Validate(obj)
	if err == nil {
		return ""
	}
	why := strings.TrimPrefix(err.Error(), "validating root: ")
	return "the arguments do not match the tool's input schema (" + sanitize.Truncate(sanitize.Line(why), 300) + "); nothing was sent: call it again with arguments the schema accepts"
}

// repeatedKey returns a key that some object of args (valid JSON, at any
// depth) gives twice, compared after unescaping ("a" and "\u0061" are one
// key). Invalid JSON has none here: the decision sees it as such.
func repeatedKey(args json.RawMessage) (string, bool) {
	if len(args) == 0 || !jsonscan.Valid(args) {
		return "", false
	}
	return repeatedIn(args, jsonscan.SkipSpace(args, 0))
}

func repeatedIn(b []byte, i int) (string, bool) {
	switch b[i] {
	case '{':
		seen := map[string]bool{}
		m := jsonscan.NewMembers(b, i)
		for {
			raw, vs, _, ok := m.Next()
			if !ok {
				return "", false
			}
			k := jsonscan.UnescapeString(raw)
			if seen[k] {
				return k, true
			}
			seen[k] = true
			if k, ok := repeatedIn(b, vs); ok {
				return k, true
			}
		}
	case '[':
		e := jsonscan.NewElements(b, i)
		for {
			vs, _, ok := e.Next()
			if !ok {
				return "", false
			}
			if k, ok := repeatedIn(b, vs); ok {
				return k, true
			}
		}
	}
	return "", false
}

// openSchema reports whether an input schema accepts every JSON object as
// it is written, so that checking against it is skipped: the common empty
// schemas, byte for byte.
func openSchema(s json.RawMessage) bool {
	switch string(s) {
	case "", "{}", `{"type":"object"}`, `{"type": "object"}`, `{"type":"object","properties":{}}`:
		return true
	}
	return false
}

// DecidedBy says who or what let a call run or stopped it (Result.DecidedBy):
// the audit log's own type (its values are audit.ByTier, audit.ByRule …),
// so that what the gate decides is what the log says, word for word. Read
// it with its methods (Auto, Rule, PersonApproved, Scope, PersonDenied),
// never by its text.
type DecidedBy = audit.DecidedBy

// Who refused a call other than a rule or a person (Result.DecidedBy).
const (
	// DecidedBySchema: the tool's input schema rejected the arguments.
	DecidedBySchema = audit.BySchema
	// DecidedByStale: approvals kept coming for definitions of the tool
	// other than the one listed.
	DecidedByStale = audit.ByStaleAnswer
)

// schemaRejected is the decision of a call whose arguments the tool's
// input schema rejects: refused before anything is decided.
var schemaRejected = decide.Decision{Verdict: decide.Deny,
	Reasons: []decide.Reason{{Code: decide.CodeSchemaRejected, Text: decide.ReasonText(decide.CodeSchemaRejected)}}}

// staleAnswer says why an approval does not apply to t, the definition the
// gate asked about, or "" when it does: the answer names another
// definition (Answer.Definition), or the catalog lists another one now. A
// stand-in's definition never changes: an answer about it always applies.
func (g *Gate) staleAnswer(ctx context.Context, op *operation, t *client.Tool, ans Answer) string {
	if !op.listed {
		return ""
	}
	c := op.call
	ref := c.Server + "/" + c.Tool
	if ans.Definition != "" && ans.Definition != t.Hash {
		return "the answer was given for another definition of " + ref + ": its definition changed since the answer was given"
	}
	now, err := g.current(ctx, c.Server, c.Tool)
	if err != nil || now.Hash != t.Hash {
		return "the definition of " + ref + " changed while the call was asked about"
	}
	return ""
}

// changedFields names what changed in t's definition when the decision
// says it changed: NewToolField for a tool held as new, else the fields
// the client saw change in this run (nil when it did not see the change).
func (g *Gate) changedFields(server string, t *client.Tool, pinned string, changed bool) []string {
	if !changed {
		return nil
	}
	switch pinned {
	case NewToolPin:
		return []string{NewToolField}
	case UnreadablePin:
		return []string{UnreadablePinField}
	}
	if ch, ok := g.o.Catalog.LastChange(server, t.Name); ok && ch.NewHash == t.Hash {
		return ch.Fields
	}
	return nil
}

func allowed(scopes []decide.Scope, s decide.Scope) bool {
	for _, x := range scopes {
		if x == s {
			return true
		}
	}
	return false
}

func (g *Gate) decide(spec client.Spec, trusted bool, t *client.Tool, pinned string, args json.RawMessage) decide.Decision {
	return g.decideFor(spec, trusted, t, pinned, args, false)
}

// decideFor is decide for a request the person made themselves (byPerson:
// decide.Input.ByPerson) or the model made (false).
func (g *Gate) decideFor(spec client.Spec, trusted bool, t *client.Tool, pinned string, args json.RawMessage, byPerson bool) decide.Decision {
	grants, taint := g.session()
	sess := decide.Session{Grants: grants, SawOpenWorldOutput: taint.OpenWorld, SawPrivateRead: taint.PrivateRead}
	bases, paths := g.argPlaces(&spec, args)
	mode := g.o.Mode
	if g.o.CanAsk != nil && !g.o.CanAsk() {
		mode = decide.Headless
	}
	in := decide.Input{
		Server:  DecideServer(&spec, trusted),
		Tool:    DecideTool(t, pinned),
		Args:    args,
		Session: sess,
		Mode:    mode,
		Bases:   bases,
		Paths:   paths,

		ByPerson: byPerson,
	}
	d := g.o.Policy.Decide(in)
	if d.Tier == decide.T2 && decide.NewPathsMatter(t.Name, d) {
		// Only then does it matter whether the arguments name what exists:
		// the file system is read for no other call.
		if in.NewPaths = newPaths(&spec, g.roots(), g.o.Policy.Home(), args); in.NewPaths {
			d = g.o.Policy.Decide(in)
		}
	}
	return d
}

// roots returns the directories the catalog offers its servers as roots.
func (g *Gate) roots() []string {
	if r, ok := g.o.Catalog.(rootLister); ok {
		return r.RootDirs()
	}
	return nil
}

// needsPerson reports whether d puts a question to a person: it asks, or,
// headless, it was refused for want of one.
func needsPerson(d decide.Decision) bool {
	return d.Verdict == decide.Ask || d.Verdict == decide.Deny && d.Has(decide.CodeNeedsApproval)
}

// mayTrustLift reports whether a call of server decided d could be asking
// only because the server is untrusted: it asks (or, headless, was
// refused for want of a person), the server is not trusted, and the person
// may trust it. The door then decides the call again as if the server were
// trusted (Result.TrustLifts).
func (g *Gate) mayTrustLift(server string, trusted bool, d decide.Decision) bool {
	if trusted || !needsPerson(d) || !d.Has(decide.CodeUntrustedServer) {
		return false
	}
	return g.o.MayTrust == nil || g.o.MayTrust(server)
}

// pin returns the hash the gate compares the tool's definition with, and
// whether the definition differs from it; a tool seen for the first time is
// pinned to its current definition.
func (g *Gate) pin(ident string, t *client.Tool, trusted bool) (pinned string, changed bool) {
	return g.o.Pins.Check(ident, t, trusted)
}

// Changed reports whether the tool's current definition differs from the
// one pinned for it, pinning a tool seen for the first time. A changed
// definition must not reach a model until a person accepts it.
func (g *Gate) Changed(t *client.Tool) bool {
	spec, ok := g.o.Catalog.Spec(t.Server)
	if !ok {
		return true
	}
	_, changed := g.pin(spec.Identity(), t, g.o.Trusted(t.Server))
	return changed
}

// Explain returns the decision the gate would make now for a call of tool
// on server with args: the same policy, trust, pins, grants, taint and mode
// as Call, and, when args are given, the same check of them against the
// tool's input schema (arguments Call would refuse are decided
// schemaRejected: Deny with the reason schema-rejected); with no args it
// decides on the tool alone, as for its effective hints. It runs nothing,
// asks no one, writes no audit record and sets no pin. It fails when the
// tool is not listed now (it does not wait for a restarting server, nor for
// a re-list).
func (g *Gate) Explain(server, tool string, args json.RawMessage) (decide.Decision, error) {
	t, ok := g.o.Catalog.Tool(server, tool)
	if !ok {
		if _, known := g.o.Catalog.Spec(server); !known {
			return decide.Decision{}, fmt.Errorf("no server named %q", server)
		}
		return decide.Decision{}, fmt.Errorf("server %q has no tool %q (or it is not ready)", server, tool)
	}
	if len(args) > 0 && g.checkArgs(t, Call{Args: args}) != "" {
		return schemaRejected, nil // as Call refuses them, before deciding
	}
	spec, _ := g.o.Catalog.Spec(server)
	trusted := g.o.Trusted(server)
	pinned, ok := g.o.Pins.Get(spec.Identity(), t.Name)
	if !ok {
		pinned = t.Hash // what the first call would pin
	}
	return g.decide(spec, trusted, t, pinned, args), nil
}

// ExplainPinned is Explain, with no arguments, for t, a tool's pinned
// definition (Pins.Pinned) that is not listed now: serve describes by it
// what it offers while the tool's server is still starting, with the
// effective hints the tool has once it is listed with that definition. It
// fails for a definition that is not the tool's pin.
func (g *Gate) ExplainPinned(t *client.Tool) (decide.Decision, error) {
	spec, ok := g.o.Catalog.Spec(t.Server)
	if !ok {
		return decide.Decision{}, fmt.Errorf("no server named %q", t.Server)
	}
	if pinned, ok := g.o.Pins.Get(spec.Identity(), t.Name); !ok || pinned != t.Hash {
		return decide.Decision{}, fmt.Errorf("%s/%s: not the pinned definition", t.Server, t.Name)
	}
	return g.explainOperation(t.Server, t, nil) // decided on t as its own pin, which it is
}

// ChangedFields names what changed in the tool's definition since a person
// accepted it, as a question about a call of it shows (Question.
// ChangedFields): NewToolField for a tool held as new, the fields the
// client saw change in this run, or nil when it did not change or the
// change happened between runs. It sets no pin.
func (g *Gate) ChangedFields(t *client.Tool) []string {
	spec, ok := g.o.Catalog.Spec(t.Server)
	if !ok {
		return nil
	}
	pinned, ok := g.o.Pins.Get(spec.Identity(), t.Name)
	return g.changedFields(t.Server, t, pinned, ok && pinned != t.Hash)
}

func (g *Gate) setPin(ident string, t *client.Tool, trusted bool) {
	g.o.Pins.Set(ident, t, trusted)
}

// grant keeps the approval a person gave, with scope, for the call decided
// d: bound to the definition they were shown and, through d, to the tier
// and taint of the question (decide.NewGrant).
//
// The grant keeps the channel of the answer that gave it and the call it
// was given for, so that a call it lets run later names them.
func (g *Gate) grant(d decide.Decision, scope decide.Scope, ident, server string, t *client.Tool, args json.RawMessage, via audit.Channel, callID string) {
	gr := decide.NewGrant(d, scope, ident, t.Name, t.Hash, args)
	gr.Via, gr.Call = string(via), callID
	switch scope {
	case decide.ScopeOnce:
		return // this call only
	case decide.ScopeAlways:
		if g.o.Store != nil && g.o.Store.AddAlwaysGrant(gr, server) == nil && liveGrants(g.o.Store) {
			return // read back from the store at each decision, so a revoke there ends it here too
		} // if it cannot be saved it still holds for this session
	default:
		g.keepSessionGrant(gr)
		return
	}
	g.mu.Lock()
	g.grants = append(g.grants, gr)
	g.mu.Unlock()
}

// current finds the tool as the server defines it now: after any re-list
// the server asked for (notifications/tools/list_changed) has completed,
// so that no call is decided on a definition the server already called
// stale.
func (g *Gate) current(ctx context.Context, server, tool string) (*client.Tool, error) {
	if err := g.waitRelisted(ctx, server); err != nil {
		return nil, err
	}
	return g.lookup(ctx, server, tool)
}

// waitRelisted waits, at most ReadyWait, while the server has a re-list
// pending (Catalog.Relisting). When it does not complete in time the call
// is not decided at all: the definition the catalog holds is one the
// server said is stale.
func (g *Gate) waitRelisted(ctx context.Context, server string) error {
	if !g.o.Catalog.Relisting(server) {
		return nil
	}
	events, unsub := g.o.Catalog.Subscribe()
	defer unsub()
	timeout := time.NewTimer(g.o.ReadyWait)
	defer timeout.Stop()
	for g.o.Catalog.Relisting(server) {
		select {
		case <-events:
		case <-timeout.C:
			return fmt.Errorf("server %q said its tools changed and they were not listed again within %s, so the call was not decided on the definition it called stale; try again", server, g.o.ReadyWait)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// lookup finds the tool, waiting for its server to be listed again if it is
// starting or restarting: after a restart nothing runs until the tools were
// listed again and compared.
func (g *Gate) lookup(ctx context.Context, server, tool string) (*client.Tool, error) {
	if t, ok := g.o.Catalog.Tool(server, tool); ok {
		return t, nil
	}
	if err := g.waitReady(ctx, server); err != nil {
		return nil, err
	}
	if t, ok := g.o.Catalog.Tool(server, tool); ok {
		return t, nil
	}
	return nil, fmt.Errorf("server %q has no tool %q", server, tool)
}

// waitReady waits until server is ready, or fails when it is failed,
// unknown, or not ready within ReadyWait.
func (g *Gate) waitReady(ctx context.Context, server string) error {
	events, unsub := g.o.Catalog.Subscribe()
	defer unsub()
	timeout := time.NewTimer(g.o.ReadyWait)
	defer timeout.Stop()
	for {
		var st *client.Status
		for _, s := range g.o.Catalog.Servers() {
			if s.Name == server {
				st = &s
				break
			}
		}
		switch {
		case st == nil:
			return fmt.Errorf("no server named %q", server)
		case st.State == client.StateReady:
			return nil
		case st.State == client.StateFailed || st.State == client.StateStopped:
			return fmt.Errorf("server %q is %s: %s", server, st.State, st.LastError)
		}
		select {
		case <-events:
		case <-timeout.C:
			return fmt.Errorf("server %q is still %s after %s", server, st.State, g.o.ReadyWait)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// callOptions are the gate's options for an execution of c, with c's
// progress receiver added to the gate's.
func (g *Gate) callOptions(c Call) client.CallOptions {
	opts := g.o.CallOptions
	if c.Progress == nil {
		return opts
	}
	if both := opts.Progress; both != nil {
		opts.Progress = func(p client.Progress) { both(p); c.Progress(p) }
	} else {
		opts.Progress = c.Progress
	}
	return opts
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// spend takes one retry from the server's budget for the last minute.
func (g *Gate) spend(server string) bool {
	now := g.o.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	keep := g.retries[server][:0]
	for _, t := range g.retries[server] {
		if now.Sub(t) < time.Minute {
			keep = append(keep, t)
		}
	}
	if len(keep) >= g.o.RetryBudget {
		g.retries[server] = keep
		return false
	}
	g.retries[server] = append(keep, now)
	return true
}

// taint notes what kind of output entered the session, and reports a
// change to OnTaint.
func (g *Gate) taint(d decide.Decision) {
	g.mu.Lock()
	before := Taint{OpenWorld: g.sawOpen, PrivateRead: g.sawPriv}
	if d.Effective.OpenWorld == decide.True {
		g.sawOpen = true
	} else if d.Class == decide.Read {
		g.sawPriv = true
	}
	after := Taint{OpenWorld: g.sawOpen, PrivateRead: g.sawPriv}
	g.mu.Unlock()
	if after != before && g.o.State != nil {
		_ = g.o.State.AddTaint(after.OpenWorld, after.PrivateRead) // if it fails, written again at the next decision (session)
	}
	if after != before && g.o.OnTaint != nil {
		g.o.OnTaint(after)
	}
	if after != before {
		g.observer().Tainted(after)
	}
}

// Taint is what kinds of output entered a session: from an open-world
// tool, and from a closed-world read. Both together mean the session holds
// private data and untrusted content at once.
type Taint struct {
	OpenWorld   bool `json:"openWorld,omitempty"`
	PrivateRead bool `json:"privateRead,omitempty"`
}

// Tainted reports both kinds at once: the state in which open-world calls
// are no longer allowed by session grants or plain allow rules.
func (t Taint) Tainted() bool { return t.OpenWorld && t.PrivateRead }

// RestoreTaint adds t to the session's taint, for a session resumed from
// its saved calls. It never clears what is there.
func (g *Gate) RestoreTaint(t Taint) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sawOpen = g.sawOpen || t.OpenWorld
	g.sawPriv = g.sawPriv || t.PrivateRead
}

// isStale reports whether a tool error carries the SERVER_STALE signal as
// data (see client.StaleResult), not merely the word in its text.
func isStale(res *mcp.CallToolResult) bool { return client.StaleResult(res) }

// Grants returns the grants in force in this session: the person's session
// and argument grants and the persisted "always" grants, oldest first.
func (g *Gate) Grants() []decide.Grant {
	grants, _ := g.session()
	return grants
}

// Revoke removes every grant equal to gr from this session and reports how
// many there were. An "always" grant is removed from the session only; the
// caller removes it from the store too. A grant the SessionState keeps is
// removed there, for every process that shares it.
func (g *Gate) Revoke(gr decide.Grant) int {
	n := 0
	if g.o.State != nil {
		n, _ = g.o.State.Revoke(gr)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	keep := g.grants[:0]
	for _, x := range g.grants {
		if x == gr {
			n++
			continue
		}
		keep = append(keep, x)
	}
	g.grants = keep
	return n
}

// Taint reports what kinds of output entered the session: from an
// open-world tool, and from a closed-world read. Both together mean the
// session holds private data and untrusted content at once.
func (g *Gate) Taint() (openWorld, privateRead bool) {
	_, t := g.session()
	return t.OpenWorld, t.PrivateRead
}

// refusedBy is how a Deny decision ends: denied by its rule, or, when it
// needed a person and none could be asked, blocked by the headless default.
func refusedBy(d decide.Decision) (Status, DecidedBy) {
	if d.Has(decide.CodeNeedsApproval) {
		return StatusBlocked, audit.ByHeadless
	}
	return StatusDenied, audit.ByRule(d.Rule)
}

// notApprovedBy says how a call ended that was asked about and not
// approved: blocked when no person could be asked, else denied by the
// person.
func notApprovedBy(err error) (Status, DecidedBy) {
	if errors.Is(err, ErrNoPerson) {
		return StatusBlocked, audit.ByHeadless
	}
	return StatusDenied, audit.ByPersonDenial
}

// allowedBy names what let an Allow decision through — a grant, a rule, or
// the tier (auto) — and the way it came: the grant with the channel of the
// answer that gave it, the rule, or none.
func allowedBy(d decide.Decision) (DecidedBy, audit.Channel, *audit.GrantRef) {
	switch {
	case d.Grant != nil:
		via := audit.Channel(d.Grant.Via)
		if !via.Known() {
			via = audit.ChannelUnknown // given before channels were kept, or read from a file
		}
		return audit.ByPerson(d.Grant.Scope.String()), audit.ChannelGrant,
			&audit.GrantRef{Scope: d.Grant.Scope.String(), Via: via, CallID: d.Grant.Call}
	case d.Rule != "":
		return audit.ByRule(d.Rule), audit.ChannelRule, nil
	default:
		return audit.ByTier, "", nil
	}
}

// refusedVia is the channel of a Deny decision: the headless default when
// no one could be asked, else its rule.
func refusedVia(by DecidedBy) audit.Channel {
	if by == audit.ByHeadless {
		return audit.ChannelHeadless
	}
	return audit.ChannelRule
}
