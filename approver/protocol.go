package approver

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcphost/mcphost/approver/passkey"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/sanitize"
)

// Version is the protocol version this package speaks. A peer that says
// another one in its hello is refused; there is no negotiation.
const Version = 1

// Bounds of the protocol. A line longer than MaxLine is a protocol error;
// a call whose arguments exceed MaxArguments is not sent to an approver at
// all (the dialog shows arguments in full, or not at all). MaxArguments
// takes a megabyte-long value as a client's JSON usually sends it, and
// MaxLine takes arguments of valid JSON as the string a question carries
// (each byte of them at most twice, since lines leave HTML characters
// unescaped) beside the question's other bounded fields; a question whose
// line would still be longer is not shown (ErrLineTooLong).
const (
	MaxLine        = 8 << 20
	MaxArguments   = 2 << 20
	maxTitle       = 1 << 10
	maxDescription = 16 << 10 // the client's default bound of a description
	maxReasons     = 64
	maxReasonText  = 1 << 10
	maxFields      = 32
	maxFieldLen    = 64
	maxName        = 256
	maxDenyReason  = 1 << 10
	maxLabel       = 256
)

// Message types.
const (
	TypeHello     = "hello"     // both ways, first: the version
	TypeQuestion  = "question"  // serve → approver: a call waiting for a person
	TypeWithdrawn = "withdrawn" // serve → approver: a question no longer waits
	TypeAnswer    = "answer"    // approver → serve: the person's decision
	TypeRejected  = "rejected"  // serve → approver: an answer that approved nothing
	TypeError     = "error"     // serve → approver: the connection is refused or ends
)

// Hello opens a connection, from each side. The serve's hello also says who
// it is (Label, PID) for the approver's status line.
type Hello struct {
	Type    string `json:"type"`
	Version int    `json:"version"`
	Label   string `json:"label,omitempty"`
	PID     int    `json:"pid,omitempty"`
}

// Reason is one reason of the decision, as decide gives it.
type Reason struct {
	Code string `json:"code"`
	Text string `json:"text,omitempty"`
}

// Question is one call waiting for a person. Every string in it except ID
// came from an MCP server or the person's configuration: an approver
// sanitizes before it renders any of them.
type Question struct {
	Type string `json:"type"`
	// ID names the call within the serve process; an answer must repeat it.
	ID          string       `json:"id"`
	Server      string       `json:"server"`
	Tool        string       `json:"tool"`
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	Trusted     bool         `json:"trusted"`
	Tier        decide.Tier  `json:"-"` // "tier": T0 … T3 (see MarshalJSON)
	Class       decide.Class `json:"-"` // "class": read, additive, destructive, unknown
	Reasons     []Reason     `json:"reasons,omitempty"`
	// Arguments are the call's arguments exactly as the gate holds them
	// (text, not re-encoded JSON, so that ArgsHash of them is the same on
	// both sides, also when they are not valid JSON).
	Arguments     string         `json:"arguments"`
	Scopes        []decide.Scope `json:"scopes"`
	Changed       bool           `json:"changed,omitempty"`
	ChangedFields []string       `json:"changedFields,omitempty"`
	// Client names the program whose call this is, as it named itself to
	// serve (clientInfo name and version): the client's words, bounded by
	// serve and sanitized by the approver. Empty when serve could not tell.
	Client string `json:"client,omitempty"`
	// Later marks a call held for later approval: nothing waits on the
	// answer, the model retries the same call once it is approved, and the
	// approval lapses at Expires (RFC 3339).
	Later   bool   `json:"later,omitempty"`
	Expires string `json:"expires,omitempty"`
	// Definition is the hash of the tool's definition as the gate holds
	// it: part of what a passkey approval is bound to.
	Definition string `json:"definition,omitempty"`
	// Nonce (hex) is made by serve for this question alone: a passkey
	// approval signs a challenge made of the call and this nonce, and serve
	// checks the signature against it (Binding, Proof).
	Nonce string `json:"nonce,omitempty"`
	// From is the serve that asked, set by Mux on the approver's side;
	// it is never sent.
	From *Hello `json:"-"`
}

// MarshalJSON encodes q with "tier" and "class" as their names (T2,
// destructive).
func (q Question) MarshalJSON() ([]byte, error) {
	type plain Question
	b, err := marshalUnescaped(struct {
		plain
		Tier  decide.Tier  `json:"tier"`
		Class decide.Class `json:"class"`
	}{plain(q), q.Tier, q.Class})
	return bytes.TrimSuffix(b, []byte("\n")), err
}

// UnmarshalJSON decodes what MarshalJSON wrote; an unknown tier, class or
// scope is an error.
func (q *Question) UnmarshalJSON(b []byte) error {
	type plain Question
	var w struct {
		plain
		Tier  *decide.Tier  `json:"tier"`
		Class *decide.Class `json:"class"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if w.Tier == nil || w.Class == nil {
		return errors.New("a question needs a tier and a class")
	}
	*q = Question(w.plain)
	q.Tier, q.Class = *w.Tier, *w.Class
	return nil
}

// HostQuestion rebuilds the gate's question for a dialog. Strings are left
// as received: the dialog sanitizes what it draws.
func (q *Question) HostQuestion() *host.Question {
	reasons := make([]decide.Reason, len(q.Reasons))
	for i, r := range q.Reasons {
		reasons[i] = decide.Reason{Code: r.Code, Text: r.Text}
	}
	return &host.Question{
		Server:  q.Server,
		Trusted: q.Trusted,
		Tool:    &client.Tool{Server: q.Server, Name: q.Tool, Title: q.Title, Description: q.Description},
		Args:    json.RawMessage(q.Arguments),
		Decision: decide.Decision{Verdict: decide.Ask, Tier: q.Tier, Class: q.Class,
			Reasons: reasons},
		Scopes:        append([]decide.Scope(nil), q.Scopes...),
		Changed:       q.Changed,
		ChangedFields: append([]string(nil), q.ChangedFields...),
	}
}

// Withdrawn says that a question no longer waits: answered by another
// approver, or the call was cancelled. Why is a short sentence.
type Withdrawn struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Why  string `json:"why"`
}

// Answer is the person's decision about one call. It is bound to the call
// by ID and ArgsHash (ArgsHash of the question's Arguments): an answer that
// names another call, or whose hash differs, approves nothing.
type Answer struct {
	Type     string       `json:"type"`
	ID       string       `json:"id"`
	ArgsHash string       `json:"argsHash"`
	Approve  bool         `json:"approve"`
	Scope    decide.Scope `json:"scope"`
	// Reason is the person's words to the model when they deny.
	Reason string `json:"reason,omitempty"`
	// Arguments, with Approve, are edited arguments: they approve nothing
	// by themselves, the gate decides the edited call again and asks again
	// if it must.
	Arguments string `json:"arguments,omitempty"`
	// Via is the approver's word for where the person answered: "" for
	// `mcphost approve`'s screen, "web" for the approval page. It is the
	// approver's claim, recorded as such; only Passkey is checked.
	Via string `json:"via,omitempty"`
	// Passkey, with Approve, is a passkey assertion of the call, which
	// serve verifies itself: the answer then counts as the web page's with
	// a passkey. A proof that does not verify approves nothing.
	Passkey *Proof `json:"passkey,omitempty"`
}

// ViaWeb is Answer.Via of the approval page.
const ViaWeb = "web"

// Proof is a passkey assertion of one call: the browser's
// PublicKeyCredential (JSON) for the challenge made of the question's
// Binding, its Nonce and Expires (RFC 3339 with nanoseconds).
type Proof struct {
	Expires  string          `json:"expires"`
	Response json.RawMessage `json:"response"`
}

// Binding is the call a passkey approval of q is bound to: the client,
// server, tool, definition hash and the hash of the exact arguments, as
// the question carries them (the same bounded strings on both sides).
func (q *Question) Binding() passkey.Binding {
	return passkey.Binding{Client: q.Client, Server: q.Server, Tool: q.Tool, DefinitionHash: q.Definition,
		ArgsHash: ArgsHash(q.Arguments)}
}

// Rejected says that an answer approved nothing, and why.
type Rejected struct {
	Type    string `json:"type"`
	ID      string `json:"id"`
	Message string `json:"message"`
}

// Error is the serve's last word on a connection it refuses or ends.
type Error struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// ArgsHash is the hash an answer carries: hex SHA-256 of the exact
// argument text of the question.
func ArgsHash(arguments string) string {
	sum := sha256.Sum256([]byte(arguments))
	return hex.EncodeToString(sum[:])
}

// ErrLineTooLong is returned for a line longer than MaxLine.
var ErrLineTooLong = fmt.Errorf("a line is longer than the protocol's limit of %d bytes", MaxLine)

// newScanner reads lines of at most MaxLine bytes.
func newScanner(r io.Reader) *bufio.Scanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), MaxLine+1)
	return sc
}

// scanErr names a scanner's failure; nil error at the end of input is
// io.EOF.
func scanErr(sc *bufio.Scanner) error {
	switch err := sc.Err(); {
	case errors.Is(err, bufio.ErrTooLong):
		return ErrLineTooLong
	case err != nil:
		return err
	}
	return io.EOF
}

// msgType returns the "type" of one line, checking that it is one JSON
// object.
func msgType(line []byte) (string, error) {
	var head struct {
		Type *string `json:"type"`
	}
	if !json.Valid(line) || len(bytes.TrimSpace(line)) == 0 || bytes.TrimSpace(line)[0] != '{' {
		return "", errors.New("not a JSON object")
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return "", err
	}
	if head.Type == nil {
		return "", errors.New(`no "type" member`)
	}
	return *head.Type, nil
}

// decodeStrict decodes one line into v, refusing unknown members so that a
// misspelt field (an answer's "argshash") is an error, not a silent zero.
func decodeStrict(line []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value on the line")
	}
	return nil
}

// encodeLine is v as one JSON line.
func encodeLine(v any) ([]byte, error) {
	b, err := marshalUnescaped(v)
	if err != nil {
		return nil, err
	}
	if len(b) > MaxLine {
		return nil, ErrLineTooLong
	}
	return b, nil
}

// marshalUnescaped is v in JSON and a newline, with <, > and & as they
// are. A line is read by a program, never put into a page as it is (the
// page escapes what it shows), and escaping them would make a question's
// arguments up to six times longer on the line.
func marshalUnescaped(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// bound cuts s to about n bytes (sanitize.Truncate: on a rune boundary,
// with a marker saying how much was cut) and makes it valid UTF-8, so a
// hostile server's string cannot grow a line without limit.
func bound(s string, n int) string {
	return strings.ToValidUTF8(sanitize.Truncate(s, n), "\uFFFD")
}
