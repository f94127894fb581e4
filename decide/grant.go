package decide

import "strings"

// Scope is how far a person's approval reaches. The zero value is
// ScopeOnce, the narrowest.
type Scope uint8

const (
	ScopeOnce    Scope = iota // this one call; the host removes the grant after use
	ScopeArgs                 // every call with exactly these arguments
	ScopeSession              // every call to the tool until the session ends
	ScopeAlways               // every call to the tool, remembered across sessions
)

var scopeNames = []string{"once", "args", "session", "always"}

// String returns "once", "args", "session" or "always".
func (s Scope) String() string { return enumString(scopeNames, "Scope", uint8(s)) }

// MarshalText encodes s as its String.
func (s Scope) MarshalText() ([]byte, error) { return enumMarshal(scopeNames, "Scope", uint8(s)) }

// UnmarshalText decodes the String form of a Scope.
func (s *Scope) UnmarshalText(b []byte) error {
	return enumUnmarshal(scopeNames, "scope", (*uint8)(s), b)
}

// Grant is an approval a person gave. A grant applies to a call only when
// all of these hold:
//   - Server equals the server's Identity and Tool the tool's Name,
//     both non-empty;
//   - DefinitionHash is non-empty and equals the tool's current
//     DefinitionHash, and the tool's definition matches its pin;
//   - for ScopeOnce and ScopeArgs, ArgsHash is non-empty and equals
//     ArgsHash of the call's arguments;
//   - for ScopeAlways, the call is not tier T3.
//
// A grant only turns Ask into Allow. It never lifts a deny rule, an ask
// rule, a protected path, invalid arguments, or an open-world call in a
// tainted session.
type Grant struct {
	Scope          Scope  `json:"scope"`
	Server         string `json:"server"` // the server's Identity, not its name
	Tool           string `json:"tool"`
	DefinitionHash string `json:"definitionHash"`
	ArgsHash       string `json:"argsHash,omitempty"`
}

// findGrant returns the grant that allows the call: the one with the
// broadest scope, and of those the first in the session's order. Taking
// the broadest keeps a ScopeOnce grant unused while a wider one covers the
// call.
func findGrant(in *Input, tier Tier) *Grant {
	gs := in.Session.Grants
	best := -1
	var argsHash string
	hashed := false
	for i := range gs {
		g := &gs[i]
		if g.Scope > ScopeAlways || g.Server == "" || g.Server != in.Server.Identity ||
			g.Tool == "" || g.Tool != in.Tool.Name ||
			g.DefinitionHash == "" || g.DefinitionHash != in.Tool.DefinitionHash {
			continue
		}
		if best >= 0 && g.Scope <= gs[best].Scope {
			continue
		}
		switch g.Scope {
		case ScopeAlways:
			if tier == T3 {
				continue
			}
		case ScopeOnce, ScopeArgs:
			if g.ArgsHash == "" {
				continue
			}
			if !hashed {
				// Hashing allocates, so it happens only when a grant
				// bound to arguments could apply.
				argsHash, hashed = ArgsHash(in.Args), true
			}
			if g.ArgsHash != argsHash {
				continue
			}
		}
		best = i
	}
	if best < 0 {
		return nil
	}
	return &gs[best]
}

// AllowedScopes returns the scopes a confirmation dialog may offer for a
// decision, narrowest first. It returns nil unless the verdict is Ask.
// Only ScopeOnce is offered when no grant could apply to the call later:
// an ask rule matched, the arguments refer to a protected path or are
// invalid, or an open-world call is in a tainted session. ScopeAlways is
// never offered for tier T3.
func AllowedScopes(d Decision) []Scope {
	if d.Verdict != Ask {
		return nil
	}
	for _, r := range d.Reasons {
		switch {
		case r.Code == CodeProtectedPath, r.Code == CodeInvalidArguments, r.Code == CodeTaintedSession,
			strings.HasPrefix(r.Code, CodeRulePrefix): // under Ask, only an ask rule leaves a rule reason
			return []Scope{ScopeOnce}
		}
	}
	if d.Tier == T3 || d.hasPrefix(CodePoisonedPrefix) {
		// No "always" for a description flagged as poisoned either: the
		// person's approval is for this session's reading of it.
		return []Scope{ScopeOnce, ScopeArgs, ScopeSession}
	}
	return []Scope{ScopeOnce, ScopeArgs, ScopeSession, ScopeAlways}
}

// hasPrefix reports whether a reason's code starts with prefix.
func (d Decision) hasPrefix(prefix string) bool {
	for _, r := range d.Reasons {
		if strings.HasPrefix(r.Code, prefix) {
			return true
		}
	}
	return false
}
