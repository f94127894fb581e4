package decide

import (
	"encoding/json"
	"strings"
)

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
//   - for ScopeAlways, the call is not tier T3;
//   - the call's tier is not above Tier, when Tier is set;
//   - for an open-world call in a tainted session, the call is a Read and
//     Tainted is set.
//
// A grant only turns Ask into Allow. It never lifts a deny rule, an ask
// rule, a protected path or invalid arguments; and of open-world calls in
// a tainted session it covers only reads, and only when the person gave
// it in that state (Tainted). Make grants with NewGrant, which fills Tier
// and Tainted from the decision the person answered.
type Grant struct {
	Scope          Scope  `json:"scope"`
	Server         string `json:"server"` // the server's Identity, not its name
	Tool           string `json:"tool"`
	DefinitionHash string `json:"definitionHash"`
	ArgsHash       string `json:"argsHash,omitempty"`
	// Tier is the tier of the call the person approved: the grant covers
	// calls of the tool at that tier or below, never a riskier one (a
	// write_file approved at T1 because it named only new paths does not
	// cover one that overwrites, at T2). T0, which no question is ever
	// asked at, means the tier was not recorded, as for an "always" grant
	// read back from the state file: such a grant is bounded by its scope
	// alone, which loses nothing, since "always" is never offered for a
	// call whose tier was lowered (AllowedScopes).
	Tier Tier `json:"tier,omitempty"`
	// Tainted reports that the person gave the grant for an open-world
	// call in a tainted session, with the taint warning in front of them:
	// an informed choice, so the grant covers the tool's later reads in
	// that state. A grant given before the taint does not.
	Tainted bool `json:"tainted,omitempty"`
	// Via is the channel (audit.Channel) of the answer that gave the
	// grant, and Call the id of the call it was given for: what a call the
	// grant lets run later records as its origin. Neither bears on what
	// the grant covers.
	Via  string `json:"via,omitempty"`
	Call string `json:"call,omitempty"`
}

// NewGrant returns the grant a person gives by approving, with scope s,
// the call that d was decided for: server is the server's Identity,
// definitionHash the hash of the definition the person was shown, and args
// the call's arguments (bound for ScopeOnce and ScopeArgs). The grant is
// bounded by d's tier, and marked Tainted when d asked because the session
// is tainted.
func NewGrant(d Decision, s Scope, server, tool, definitionHash string, args json.RawMessage) Grant {
	g := Grant{Scope: s, Server: server, Tool: tool, DefinitionHash: definitionHash, Tier: d.Tier,
		Tainted: d.Has(CodeTaintedSession)}
	if s == ScopeOnce || s == ScopeArgs {
		g.ArgsHash = ArgsHash(args)
	}
	return g
}

// findGrant returns the grant that allows the call: the one with the
// broadest scope, and of those the first in the session's order. Taking
// the broadest keeps a ScopeOnce grant unused while a wider one covers the
// call. With tainted set (an open-world read in a tainted session) only a
// grant given in that state counts.
func findGrant(in *Input, tier Tier, tainted bool) *Grant {
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
		if g.Tier != T0 && tier > g.Tier {
			continue // approved for a less risky call than this one
		}
		if tainted && !g.Tainted {
			continue // given before the person knew of the taint
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
// invalid, or a call that is not a read is open-world in a tainted
// session. ScopeAlways is never offered for tier T3, for an open-world
// read in a tainted session (the taint is this session's), nor for a call
// whose tier was lowered because it names only new paths (a saved grant
// would outlive what made its tier lower).
func AllowedScopes(d Decision) []Scope {
	if d.Verdict != Ask {
		return nil
	}
	tainted := false
	for _, r := range d.Reasons {
		switch {
		case r.Code == CodeTaintedSession:
			if d.Class != Read {
				return []Scope{ScopeOnce}
			}
			tainted = true
		case r.Code == CodeProtectedPath, r.Code == CodeInvalidArguments,
			strings.HasPrefix(r.Code, CodeRulePrefix): // under Ask, only an ask rule leaves a rule reason
			return []Scope{ScopeOnce}
		}
	}
	if d.Tier == T3 || tainted || d.Has(CodeNewPaths) || d.hasPrefix(CodePoisonedPrefix) {
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
