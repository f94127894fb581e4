package decide

import (
	"encoding/json"
	"fmt"
)

// Hint is one tool annotation as the server sent it: absent, false or true.
// The zero value is Absent, so a Hints value that was never filled in
// reads as "the server said nothing", which the engine treats pessimistically.
type Hint uint8

const (
	Absent Hint = iota // the server did not send this hint
	False              // the server sent false
	True               // the server sent true
)

// HintOf converts a boolean the server sent into a Hint.
func HintOf(b bool) Hint {
	if b {
		return True
	}
	return False
}

var hintNames = []string{"absent", "false", "true"}

// String returns "absent", "false" or "true".
func (h Hint) String() string { return enumString(hintNames, "Hint", uint8(h)) }

// MarshalText encodes h as its String.
func (h Hint) MarshalText() ([]byte, error) { return enumMarshal(hintNames, "Hint", uint8(h)) }

// UnmarshalText decodes the String form of a Hint.
func (h *Hint) UnmarshalText(b []byte) error { return enumUnmarshal(hintNames, "hint", (*uint8)(h), b) }

// Hints holds the four risk annotations of a tool. In Tool.Declared each
// field is what the server sent; in Decision.Effective each field is False or
// True, never Absent.
type Hints struct {
	ReadOnly    Hint // readOnlyHint
	Destructive Hint // destructiveHint
	Idempotent  Hint // idempotentHint
	OpenWorld   Hint // openWorldHint
}

// Verdict is what happens to a call. The zero value is Deny, the most
// restrictive, so a Decision that was never filled in refuses the call.
type Verdict uint8

const (
	Deny  Verdict = iota // the call is refused
	Ask                  // a person must confirm the call
	Allow                // the call runs without asking
)

var verdictNames = []string{"deny", "ask", "allow"}

// String returns "deny", "ask" or "allow".
func (v Verdict) String() string { return enumString(verdictNames, "Verdict", uint8(v)) }

// MarshalText encodes v as its String.
func (v Verdict) MarshalText() ([]byte, error) { return enumMarshal(verdictNames, "Verdict", uint8(v)) }

// UnmarshalText decodes the String form of a Verdict.
func (v *Verdict) UnmarshalText(b []byte) error {
	return enumUnmarshal(verdictNames, "verdict", (*uint8)(v), b)
}

// Tier is the risk tier of a call, from T0 (runs without asking) to T3
// (elevated). The tier shapes the confirmation dialog; the Verdict alone
// says whether the call runs.
type Tier uint8

const (
	T0 Tier = iota // read or additive, closed world: allowed by default
	T1             // read or additive, open world: plain confirmation
	T2             // destructive, closed world: confirmation with focus on deny
	T3             // destructive open world, or unknown: deliberate confirmation, no "always"
)

var tierNames = []string{"T0", "T1", "T2", "T3"}

// String returns "T0" to "T3".
func (t Tier) String() string { return enumString(tierNames, "Tier", uint8(t)) }

// MarshalText encodes t as its String.
func (t Tier) MarshalText() ([]byte, error) { return enumMarshal(tierNames, "Tier", uint8(t)) }

// UnmarshalText decodes the String form of a Tier.
func (t *Tier) UnmarshalText(b []byte) error { return enumUnmarshal(tierNames, "tier", (*uint8)(t), b) }

// Class is what a call does to state. The zero value is Unknown, the
// riskiest class: nothing the server said can be relied on.
type Class uint8

const (
	Unknown     Class = iota // untrusted, unannotated, malformed or changed since pinned
	Read                     // reads only
	Additive                 // writes but never deletes or overwrites
	Destructive              // may delete or overwrite state
)

var classNames = []string{"unknown", "read", "additive", "destructive"}

// String returns "unknown", "read", "additive" or "destructive".
func (c Class) String() string { return enumString(classNames, "Class", uint8(c)) }

// MarshalText encodes c as its String.
func (c Class) MarshalText() ([]byte, error) { return enumMarshal(classNames, "Class", uint8(c)) }

// UnmarshalText decodes the String form of a Class.
func (c *Class) UnmarshalText(b []byte) error {
	return enumUnmarshal(classNames, "class", (*uint8)(c), b)
}

// risk orders classes from the safest (0) to the riskiest (3).
func (c Class) risk() int {
	switch c {
	case Read:
		return 0
	case Additive:
		return 1
	case Destructive:
		return 2
	}
	return 3
}

// Mode says whether a person can be asked. The zero value is Headless, the
// more restrictive mode: a caller that forgets to set it gets refusals
// instead of prompts.
type Mode uint8

const (
	Headless    Mode = iota // nobody can be asked: Ask becomes Deny
	Interactive             // a person can confirm calls
)

var modeNames = []string{"headless", "interactive"}

// String returns "headless" or "interactive".
func (m Mode) String() string { return enumString(modeNames, "Mode", uint8(m)) }

// MarshalText encodes m as its String.
func (m Mode) MarshalText() ([]byte, error) { return enumMarshal(modeNames, "Mode", uint8(m)) }

// UnmarshalText decodes the String form of a Mode.
func (m *Mode) UnmarshalText(b []byte) error { return enumUnmarshal(modeNames, "mode", (*uint8)(m), b) }

// Server describes the server that offers the tool.
type Server struct {
	// Name is the server's name in the user's configuration. Rules match it.
	Name string
	// Identity is the stable identity grants and pins are bound to (for
	// example a hash of the launch command or URL). An empty Identity
	// matches no grant.
	Identity string
	// Trusted is true only when the user marked the server trusted in
	// their own configuration or on the command line. Annotations from a
	// server that is not trusted are ignored.
	Trusted bool
}

// Tool describes the tool as the server listed it.
type Tool struct {
	// Name is the raw tool name. Rules and grants match it; Title never
	// takes part in a decision.
	Name  string
	Title string
	// Description is the tool's description as the server sent it (cut
	// to a bounded size). Only PoisonFlags reads it: a description that
	// gives the model orders makes the call ask.
	Description string
	// Present is true when the tool's "annotations" object exists.
	Present bool
	// Declared holds each hint as the server sent it. It is ignored when
	// Present is false or Malformed is true.
	Declared Hints
	// Malformed is true when the client could not read the annotations
	// (for example "readOnlyHint": "yes"); the tool is treated as unannotated.
	Malformed bool
	// DefinitionHash is the hash of the tool's current definition.
	DefinitionHash string
	// PinnedHash is the definition hash remembered for this tool; "" means
	// it was never pinned. A non-empty pin that differs from
	// DefinitionHash makes the tool count as unannotated.
	PinnedHash string
}

// Session is what the engine needs to know about the conversation so far.
type Session struct {
	// Grants are the approvals a person gave; see Grant for how one matches.
	Grants []Grant
	// SawOpenWorldOutput is true once output from an open-world tool
	// entered the session.
	SawOpenWorldOutput bool
	// SawPrivateRead is true once output from a closed-world read entered
	// the session.
	SawPrivateRead bool
}

// Tainted reports whether the session holds both private data and content
// from outside systems, in which case grants no longer allow open-world calls.
func (s Session) Tainted() bool { return s.SawOpenWorldOutput && s.SawPrivateRead }

// Input is everything one decision depends on. Decide reads it and never
// modifies it.
type Input struct {
	Server  Server
	Tool    Tool
	Args    json.RawMessage // the call's arguments; empty or null means none
	Session Session
	Mode    Mode
	// ByPerson is true when the person asked for the call themselves, not
	// the model: a resource they mentioned as @server:uri in a message they
	// typed. The call runs without asking, at whatever tier
	// (an untrusted server's read is still class Unknown), except that
	// deny rules refuse it, ask rules ask, and invalid arguments or a
	// protected path make it ask (at T3 for a path) as for any call. The
	// host sets it only for requests a person typed or chose.
	ByPerson bool

	// Bases are the directories the server may resolve a relative path in
	// the arguments against: its working directory, directories on its
	// command line, the roots it was offered, the home directory. Each is
	// absolute; others are ignored. Decide joins argument strings with
	// them lexically, to compare with the protected paths.
	Bases []string
	// Paths are the places the arguments lead on the file system once
	// symbolic links are followed, as the host found them: absolute
	// paths, compared with the protected paths like an argument naming
	// them. Decide does no file system access of its own.
	Paths []string
	// NewPaths reports that the host looked and found that the arguments
	// name at least one path on the file system the server writes to, and
	// that nothing they name (any string, or any word of one, resolved
	// against every base) exists yet. It only matters when NewPathsMatter
	// holds; a host that cannot tell leaves it false.
	NewPaths bool
}

// Reason is one stable code with a sentence a person understands. See
// ReasonCodes for the full list.
type Reason struct {
	Code string
	Text string
}

// Decision is the engine's answer for one call. The zero value denies.
type Decision struct {
	Verdict Verdict
	Tier    Tier
	Class   Class
	// Retry reports whether the call, if it runs and its outcome is
	// unknown, may be sent again automatically: a read, or a write whose
	// effective idempotentHint is true, from a trusted server whose
	// definition is unchanged. It does not depend on the Verdict.
	Retry bool
	// Effective holds the hints the decision used, after worst-case
	// substitution and defaults; every field is False or True. For a read
	// Destructive is False and Idempotent is True.
	Effective Hints
	// Reasons explain the decision, in a fixed order: why the hints were
	// or were not believed, the class and world, then what rules, grants,
	// taint and mode did. Decide returns a fresh slice each time.
	Reasons []Reason
	// Rule is the id of the rule that set the verdict, if one did.
	Rule string
	// Grant is the grant that allowed the call, if one did. It points into
	// Input.Session.Grants.
	Grant *Grant
}

// Has reports whether the decision carries a reason with the given code.
func (d Decision) Has(code string) bool {
	for _, r := range d.Reasons {
		if r.Code == code {
			return true
		}
	}
	return false
}

func enumString(names []string, typ string, v uint8) string {
	if int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", typ, v)
}

func enumMarshal(names []string, typ string, v uint8) ([]byte, error) {
	if int(v) < len(names) {
		return []byte(names[v]), nil
	}
	return nil, fmt.Errorf("decide: invalid %s %d", typ, v)
}

func enumUnmarshal(names []string, what string, dst *uint8, b []byte) error {
	for i, n := range names {
		if string(b) == n {
			*dst = uint8(i)
			return nil
		}
	}
	return fmt.Errorf("decide: unknown %s %q (want one of %s)", what, b, quoteList(names))
}

func quoteList(names []string) string {
	s := ""
	for i, n := range names {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%q", n)
	}
	return s
}
