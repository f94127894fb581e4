package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Version is the record format written by this package (the "v" field).
// The envelope — one JSON object per line, "seq", "prev" and a final
// "hash" member hashed as described in the package documentation — is the
// same for every version, so Verify can check the chain of records written
// by a newer mcphost.
const Version = 1

// Genesis is the "prev" of the first record of a log.
const Genesis = "0000000000000000000000000000000000000000000000000000000000000000"

// Kind says whether a record was written before or after a call.
type Kind string

const (
	Intent  Kind = "intent"  // written before the call runs; synced first unless a read
	Outcome Kind = "outcome" // written after the call, successful or not; synced soon after
	// Approval is written when a call is held for a person's later
	// approval and at each step of that approval (ApprovalState): answered,
	// spent by the retry. It is neither an intent nor an outcome: the
	// call's own records are written when the retry runs.
	Approval Kind = "approval"
)

// The states an approval record names (Record.ApprovalState).
const (
	ApprovalHeld     = "held"     // the call waits for a person under ApprovalID
	ApprovalApproved = "approved" // a person approved it; the retry may run once
	ApprovalDenied   = "denied"   // a person denied it
	ApprovalUsed     = "used"     // the retry ran under the approval: it is spent
	// ApprovalWithdrawn: the call was withdrawn before anyone answered it:
	// as soon as it was held, because it could not be shown where a
	// person approves it (its arguments too large to show, say), and the
	// call was refused saying why; or because its caller stopped waiting
	// (Ctrl+C in mcphost call).
	ApprovalWithdrawn = "withdrawn"
)

// Status is how a call ended, in an outcome record; in an Attempt it is how
// that attempt ended.
type Status string

const (
	StatusSuccess   Status = "success"    // a result without isError
	StatusToolError Status = "tool-error" // a result with isError: true
	StatusNotSent   Status = "not-sent"   // never reached the server: not applied
	StatusRejected  Status = "rejected"   // refused by the server before running: not applied
	StatusThrottled Status = "throttled"  // HTTP 429/503: probably not applied
	StatusUnknown   Status = "unknown"    // lost in flight or timed out: may or may not have run
	StatusDenied    Status = "denied"     // refused by a rule or a person; never sent
	StatusBlocked   Status = "blocked"    // needed a person and none could be asked; never sent
)

// DecidedBy says who or what let a call run or stopped it, in the words the
// log (and mcphost's JSON output) use: "auto", "rule:<id>", "user:<scope>"
// (a person approved it), "user" (a person denied it), "headless",
// "input-schema", "stale-answer". Make one with the constants, ByRule and
// ByPerson; read it with its methods, not by its text.
type DecidedBy string

const (
	ByTier         DecidedBy = "auto"         // allowed by its tier: no rule or grant was needed
	ByHeadless     DecidedBy = "headless"     // needed a person, and none could be asked
	ByPersonDenial DecidedBy = "user"         // a person denied it
	BySchema       DecidedBy = "input-schema" // the tool's input schema rejected the arguments
	ByStaleAnswer  DecidedBy = "stale-answer" // the approvals given were for other definitions of the tool
)

// ByRule: the rule id allowed or denied the call.
func ByRule(id string) DecidedBy { return DecidedBy(rulePrefix + id) }

// ByPerson: a person approved the call this far (once, args, session,
// always).
func ByPerson(scope string) DecidedBy { return DecidedBy(personPrefix + scope) }

const rulePrefix, personPrefix = "rule:", "user:"

// Rule returns the id of the rule that decided, if a rule did.
func (d DecidedBy) Rule() (id string, ok bool) {
	if id, ok = strings.CutPrefix(string(d), rulePrefix); !ok {
		return "", false
	}
	return id, true
}

// PersonApproved reports whether a person approved the call (with some
// scope, or by a grant they gave), as opposed to a rule, the tier or a
// denial.
func (d DecidedBy) PersonApproved() bool {
	return strings.HasPrefix(string(d), personPrefix)
}

// Auto reports that the call's tier let it run: no rule, grant or person
// was needed.
func (d DecidedBy) Auto() bool { return d == ByTier }

// PersonDenied reports that a person denied the call.
func (d DecidedBy) PersonDenied() bool { return d == ByPersonDenial }

// Scope is how far a person's approval reached (once, args, session,
// always); "" when no person approved the call.
func (d DecidedBy) Scope() string {
	if s, ok := strings.CutPrefix(string(d), personPrefix); ok {
		return s
	}
	return ""
}

// String is the log's text for d; "" while nothing decided.
func (d DecidedBy) String() string { return string(d) }

// Record is one line of the log. The gate fills in the description of the
// call; Append fills in V, Seq, Time, Prev and Hash, and enforces what may
// be stored (see Options.RecordData).
//
// Strings are stored as given; they never contain a raw newline or control
// character in the file because JSON escapes them. The raw fields
// (Annotations, Args, Result) must hold valid JSON when set.
type Record struct {
	V    int       `json:"v"`
	Seq  uint64    `json:"seq"` // 1 for the first record, then +1 per record
	Time Timestamp `json:"time"`
	Kind Kind      `json:"kind"`

	SessionID string `json:"sessionId,omitempty"`
	CallID    string `json:"callId,omitempty"` // links an intent to its outcome, within a session
	// Client names the MCP client a call came from when mcphost ran it as
	// a server (`mcphost serve`): what the client said it was, bounded.
	Client *Client `json:"client,omitempty"`

	Server         string `json:"server,omitempty"`         // the server's config name
	ServerIdentity string `json:"serverIdentity,omitempty"` // hash of what identifies the server (argv/env/cwd or URL)
	Trusted        bool   `json:"trusted"`
	Tool           string `json:"tool,omitempty"`    // the raw tool name
	DefHash        string `json:"defHash,omitempty"` // the tool's definition hash
	// Annotations is the "annotations" object as the server sent it, e.g.
	// {"present":true,"readOnlyHint":true,"destructiveHint":null}.
	Annotations json.RawMessage `json:"annotations,omitempty"`

	Class     string    `json:"class,omitempty"`     // read, additive, destructive, unknown
	Tier      string    `json:"tier,omitempty"`      // T0 … T3
	Verdict   string    `json:"verdict,omitempty"`   // allow, ask, deny
	DecidedBy DecidedBy `json:"decidedBy,omitempty"` // auto, rule:<id>, user:once|session|args|always, headless
	// Via is the way the decision reached the gate (Channel): the dialog,
	// mcphost approve, the client's form, a rule, a grant, --yes …; empty
	// when nothing had to decide (auto) or for records written before it
	// was kept.
	Via Channel `json:"via,omitempty"`
	// Grant names the grant that let the call run, when Via is "grant".
	Grant   *GrantRef `json:"grant,omitempty"`
	Reasons []string  `json:"reasons,omitempty"`

	// ArgsHash is the hex SHA-256 of the call's arguments and ArgsSize their
	// length in bytes. When Args is set and these are empty, Append fills
	// them with HashBytes(Args) and len(Args).
	ArgsHash string `json:"argsHash,omitempty"`
	ArgsSize int64  `json:"argsSize,omitempty"`

	// TaskID names the MCP task the call ran as, once the server created
	// one: the task's outcome can be asked for by it.
	TaskID string `json:"taskId,omitempty"`

	// ApprovalID names the held call an approval record is about (and an
	// intent or outcome of a call that ran under it); ApprovalState is
	// one of ApprovalHeld … ApprovalWithdrawn, in approval records only.
	ApprovalID    string `json:"approvalId,omitempty"`
	ApprovalState string `json:"approvalState,omitempty"`
	// Approver is the person who answered a held call, as the issuer of
	// their login names them, when the answer came through serve's team
	// approval page; nil otherwise (the person at this machine).
	Approver *Person `json:"approver,omitempty"`

	Attempts   []Attempt `json:"attempts,omitempty"`
	Status     Status    `json:"status,omitempty"`
	DurationMS int64     `json:"durationMs,omitempty"`
	// ResultHash and ResultSize describe the result as received; Append
	// fills them from Result like ArgsHash and ArgsSize.
	ResultHash string `json:"resultHash,omitempty"`
	ResultSize int64  `json:"resultSize,omitempty"`
	Truncated  bool   `json:"truncated,omitempty"` // the result passed to the model was cut

	// Args and Result are the raw arguments and result. Append drops them
	// unless Options.RecordData is set, and then stores them redacted.
	Args   json.RawMessage `json:"args,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`

	Prev string `json:"prev"`           // Hash of the previous record, Genesis for the first
	Hash string `json:"hash,omitempty"` // see the package documentation; always the last member
}

// Client is an MCP client as it introduced itself (clientInfo), and the
// serve session it called in. The words are the client's own.
type Client struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	Session string `json:"session,omitempty"`
	// ID is the OAuth client id of the access token the call came with,
	// and Person the person it was issued to (serve --http with an
	// issuer); both empty otherwise.
	ID     string  `json:"id,omitempty"`
	Person *Person `json:"person,omitempty"`
	// Key is the person as their token names them (issuer and subject,
	// unescaped), for telling people apart: two subjects that escape alike
	// in Person are still two people. Never written to the log.
	Key string `json:"-"`
}

// Person is who called, as the issuer of their access token names them:
// issuer and subject are the identity; name and email are for display
// only (bounded, and never compared).
type Person struct {
	Issuer  string `json:"issuer"`
	Subject string `json:"subject"`
	Name    string `json:"name,omitempty"`
	Email   string `json:"email,omitempty"`
}

// Attempt is one try at sending a call to its server.
type Attempt struct {
	N          int    `json:"n"`                // 1 for the first try
	Outcome    Status `json:"outcome"`          // failure class, or success / tool-error
	Detail     string `json:"detail,omitempty"` // e.g. an error message; capped, and dropped if it looks secret
	DurationMS int64  `json:"durationMs"`
}

// Timestamp is an instant written in UTC as RFC 3339 with exactly nine
// fractional digits ("2026-03-01T09:30:00.000000000Z"), so that lines are
// fixed-width in that column and sort as text.
type Timestamp struct{ time.Time }

const stampLayout = "2006-01-02T15:04:05.000000000Z07:00"

// MarshalJSON writes t in UTC with nanoseconds.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	u := t.UTC()
	if y := u.Year(); y < 0 || y > 9999 {
		return nil, fmt.Errorf("audit: time %v outside years 0-9999", u)
	}
	b := make([]byte, 0, len(stampLayout)+2)
	b = append(b, '"')
	b = u.AppendFormat(b, stampLayout)
	return append(b, '"'), nil
}

// UnmarshalJSON reads any RFC 3339 time.
func (t *Timestamp) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("audit: time: %w", err)
	}
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return fmt.Errorf("audit: time: %w", err)
	}
	t.Time = v
	return nil
}

// HashBytes returns the hex SHA-256 of b, the form of every hash in a
// record (arguments, results, the chain).
func HashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
