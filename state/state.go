package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcphost/mcphost/decide"
)

// State is the content of the state file. The zero value is an empty state.
// A State is not safe for concurrent use.
//
// Methods that record something stamp it with the clock given to [Update]
// (time.Now for a State that did not come from Update), in UTC and to the
// second. Setting what is already recorded keeps the original time.
type State struct {
	grants   []GrantRecord // sorted by Server, then Tool
	trust    map[string]TrustRecord
	pins     map[string]map[string]pin // identity → tool → pin
	consents map[string]Consent
	audit    map[string]AuditHead       // audit log path → head, see audithead.go
	extra    map[string]json.RawMessage // unknown top-level keys, kept verbatim
	now      func() time.Time
}

// GrantRecord is an always grant as the state file keeps it.
type GrantRecord struct {
	decide.Grant           // Scope is decide.ScopeAlways; ArgsHash is empty
	Name         string    // the server's configuration name when the grant was given, for display
	GrantedAt    time.Time // zero when the file does not say
}

// TrustRecord says that a person trusted a server from inside mcphost.
type TrustRecord struct {
	Identity  string
	Name      string // the server's configuration name at the time, for display
	TrustedAt time.Time
}

// Consent is what a person chose for a server from a project-level file.
type Consent struct {
	Name     string // the key given to SetConsent
	Hash     string // the consent hash the choice was made for
	Choice   Choice
	ChosenAt time.Time
}

// PinChange is a tool whose definition differs from its pin.
type PinChange struct {
	Tool    string
	Pinned  string // the pinned definition hash
	Current string // the definition hash the server lists now
}

type pin struct {
	hash string
	at   time.Time
}

// Choice is what a person decided about a server from a project-level
// file. The zero value is ChoiceSkipped, the most restrictive.
type Choice uint8

const (
	ChoiceSkipped   Choice = iota // do not start the server
	ChoiceUntrusted               // start it, but do not believe its annotations
	ChoiceTrusted                 // start it and trust its annotations
)

var choiceNames = []string{"skipped", "untrusted", "trusted"}

// String returns "skipped", "untrusted" or "trusted".
func (c Choice) String() string {
	if int(c) < len(choiceNames) {
		return choiceNames[c]
	}
	return fmt.Sprintf("Choice(%d)", uint8(c))
}

// MarshalText encodes c as its String. It fails for a value that is not
// one of the constants.
func (c Choice) MarshalText() ([]byte, error) {
	if int(c) >= len(choiceNames) {
		return nil, fmt.Errorf("state: invalid Choice %d", uint8(c))
	}
	return []byte(choiceNames[c]), nil
}

// UnmarshalText decodes the String form of a Choice.
func (c *Choice) UnmarshalText(b []byte) error {
	i := slices.Index(choiceNames, string(b))
	if i < 0 {
		return fmt.Errorf("%q is not a choice (want %s)", b, strings.Join(choiceNames, ", "))
	}
	*c = Choice(i)
	return nil
}

func (s *State) stamp() time.Time {
	now := s.now
	if now == nil {
		now = time.Now
	}
	return now().UTC().Truncate(time.Second)
}

// Grants returns the always grants, ready for decide.Session.Grants, sorted
// by server identity and tool name.
func (s *State) Grants() []decide.Grant {
	gs := make([]decide.Grant, len(s.grants))
	for i, r := range s.grants {
		gs[i] = r.Grant
	}
	return gs
}

// GrantRecords returns the always grants with their names and times, in
// the order of Grants.
func (s *State) GrantRecords() []GrantRecord {
	return slices.Clone(s.grants)
}

// AddGrant records an always grant for the server with configuration name
// name. It replaces any grant for the same server identity and tool, so a
// tool has at most one always grant, bound to one definition hash. It
// refuses a grant whose scope is not decide.ScopeAlways, that has an
// ArgsHash, or whose Server, Tool or DefinitionHash is empty.
func (s *State) AddGrant(g decide.Grant, name string) error {
	if err := CheckGrant(g); err != nil {
		return fmt.Errorf("state: grant %s/%s: %s", g.Server, g.Tool, err)
	}
	r := GrantRecord{Grant: g, Name: name}
	i, found := s.findGrant(g.Server, g.Tool)
	switch {
	case found && s.grants[i].Grant == g:
		s.grants[i].Name = name
	case found:
		r.GrantedAt = s.stamp()
		s.grants[i] = r
	default:
		r.GrantedAt = s.stamp()
		s.grants = slices.Insert(s.grants, i, r)
	}
	return nil
}

// CheckGrant reports what makes g no grant to keep as an "always" grant,
// as AddGrant refuses it: for every store of always grants, so that all
// keep the same ones. It is CheckGrantOf(g, decide.ScopeAlways).
func CheckGrant(g decide.Grant) error { return CheckGrantOf(g, decide.ScopeAlways) }

// CheckGrantOf reports what makes g no grant that a store keeping grants of
// the scopes given may keep, as a gate gives one (decide.NewGrant): of one
// of those scopes; bound to a server identity, a tool and a definition;
// a once or args grant to the hash of its arguments, a session or always
// grant (which covers every argument) to none. Every store of grants
// checks with it, so that what one keeps another would keep too.
func CheckGrantOf(g decide.Grant, scopes ...decide.Scope) error {
	switch {
	case !slices.Contains(scopes, g.Scope):
		return fmt.Errorf("scope is %s; only %s grants are kept", g.Scope, scopeList(scopes))
	case g.Server == "":
		return errors.New("server identity is empty")
	case g.Tool == "":
		return errors.New("tool is empty")
	case g.DefinitionHash == "":
		return errors.New("definition hash is empty")
	case (g.Scope == decide.ScopeOnce || g.Scope == decide.ScopeArgs) && g.ArgsHash == "":
		return fmt.Errorf("a grant of scope %s without argsHash", g.Scope)
	case (g.Scope == decide.ScopeSession || g.Scope == decide.ScopeAlways) && g.ArgsHash != "":
		return fmt.Errorf("a grant of scope %s covers every argument and has no argsHash", g.Scope)
	}
	return nil
}

// scopeList names scopes for a message: "always", "session and args".
func scopeList(scopes []decide.Scope) string {
	names := make([]string, len(scopes))
	for i, s := range scopes {
		names[i] = s.String()
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// findGrant returns the index of the grant for identity and tool (there is
// at most one), or where one would be inserted.
func (s *State) findGrant(identity, tool string) (int, bool) {
	return slices.BinarySearchFunc(s.grants, [2]string{identity, tool}, func(r GrantRecord, k [2]string) int {
		if c := strings.Compare(r.Server, k[0]); c != 0 {
			return c
		}
		return strings.Compare(r.Tool, k[1])
	})
}

// RevokeGrants removes the always grants for a server identity and tool and
// returns how many it removed. An empty tool matches every tool of the
// server; an empty identity matches every server.
func (s *State) RevokeGrants(identity, tool string) int {
	n := len(s.grants)
	s.grants = slices.DeleteFunc(s.grants, func(r GrantRecord) bool {
		return (identity == "" || r.Server == identity) && (tool == "" || r.Tool == tool)
	})
	return n - len(s.grants)
}

// Trusted reports whether a person trusted the server with this identity
// from inside mcphost.
func (s *State) Trusted(identity string) bool {
	_, ok := s.trust[identity]
	return ok && identity != ""
}

// SetTrust records (on) or withdraws (!on) a person's trust in the server
// with this identity; name is its configuration name, for display. An
// empty identity changes nothing.
func (s *State) SetTrust(identity, name string, on bool) {
	if identity == "" {
		return
	}
	if !on {
		delete(s.trust, identity)
		return
	}
	r, ok := s.trust[identity]
	if !ok {
		r = TrustRecord{Identity: identity, TrustedAt: s.stamp()}
	}
	r.Name = name
	if s.trust == nil {
		s.trust = make(map[string]TrustRecord)
	}
	s.trust[identity] = r
}

// TrustRecords returns the servers a person trusted, sorted by identity.
func (s *State) TrustRecords() []TrustRecord {
	rs := make([]TrustRecord, 0, len(s.trust))
	for _, id := range sortedKeys(s.trust) {
		rs = append(rs, s.trust[id])
	}
	return rs
}

// Pin returns the definition hash pinned for a tool of the server with this
// identity; ok is false when the tool was never pinned. The hash is what
// decide.Tool.PinnedHash wants.
func (s *State) Pin(identity, tool string) (hash string, ok bool) {
	p, ok := s.pins[identity][tool]
	return p.hash, ok
}

// HasPins reports whether any tool of the server with this identity is
// pinned.
func (s *State) HasPins(identity string) bool {
	return len(s.pins[identity]) > 0
}

// SetPin pins a tool to a definition hash, replacing any earlier pin. Call
// it when a person accepts a changed definition. An empty identity, tool or
// hash changes nothing: a pin is never removed, so a definition that
// changes while its tool is gone is still noticed when it returns.
func (s *State) SetPin(identity, tool, hash string) {
	if identity == "" || tool == "" || hash == "" {
		return
	}
	if p, ok := s.pins[identity][tool]; ok && p.hash == hash {
		return
	}
	if s.pins == nil {
		s.pins = make(map[string]map[string]pin)
	}
	if s.pins[identity] == nil {
		s.pins[identity] = make(map[string]pin)
	}
	s.pins[identity][tool] = pin{hash: hash, at: s.stamp()}
}

// PinNew takes a server's current tools (name → definition hash), pins every
// tool seen for the first time, and returns the tools whose definition
// differs from their pin, sorted by name. It never changes an existing pin:
// that takes a person, through SetPin. Entries with an empty name or hash
// are skipped, and an empty identity changes nothing.
//
// The design pins first sight only on trusted servers; the caller decides
// whether to call PinNew for a server that is not trusted.
func (s *State) PinNew(identity string, tools map[string]string) []PinChange {
	if identity == "" {
		return nil
	}
	var changed []PinChange
	for _, name := range sortedKeys(tools) {
		hash := tools[name]
		if name == "" || hash == "" {
			continue
		}
		old, ok := s.Pin(identity, name)
		switch {
		case !ok:
			s.SetPin(identity, name, hash)
		case old != hash:
			changed = append(changed, PinChange{Tool: name, Pinned: old, Current: hash})
		}
	}
	return changed
}

// Consent returns what a person chose for the project server recorded
// under name. ok is true only when the choice was made for this consent
// hash; a choice made for another hash (the entry changed) no longer
// applies, and Consent returns it with ok false so that a prompt can say
// that it changed.
func (s *State) Consent(name, hash string) (c Consent, ok bool) {
	c, found := s.consents[name]
	return c, found && hash != "" && c.Hash == hash
}

// SetConsent records a person's choice for the project server recorded
// under name, made for the given consent hash. It replaces any earlier
// choice for name. The name is the caller's key (mcphost uses the project
// file's path and the server's name). An empty name or hash changes
// nothing.
func (s *State) SetConsent(name, hash string, choice Choice) {
	if name == "" || hash == "" {
		return
	}
	if c, ok := s.consents[name]; ok && c.Hash == hash && c.Choice == choice {
		return
	}
	if s.consents == nil {
		s.consents = make(map[string]Consent)
	}
	s.consents[name] = Consent{Name: name, Hash: hash, Choice: choice, ChosenAt: s.stamp()}
}

// Untrust withdraws what a person gave a server: the trust remembered for
// its identity or under its configuration name (a command it no longer
// has), and, when consentKey is set, a trusting consent to the project
// server recorded under it, which becomes one without trust (the server
// still starts). It reports how many trust records it removed and whether
// a consent lost its trust.
func (s *State) Untrust(identity, name, consentKey string) (forgot int, consent bool) {
	for _, id := range sortedKeys(s.trust) {
		if r := s.trust[id]; id != "" && (id == identity || name != "" && r.Name == name) {
			delete(s.trust, id)
			forgot++
		}
	}
	if c, ok := s.consents[consentKey]; ok && consentKey != "" && c.Choice == ChoiceTrusted {
		c.Choice, c.ChosenAt = ChoiceUntrusted, s.stamp()
		s.consents[consentKey] = c
		consent = true
	}
	return forgot, consent
}

// ForgetConsent removes the choice recorded under name, so that the
// project server asks for consent again; it reports whether there was one.
func (s *State) ForgetConsent(name string) bool {
	if _, ok := s.consents[name]; !ok {
		return false
	}
	delete(s.consents, name)
	return true
}

// ConsentRecords returns every recorded choice for project servers, sorted
// by name.
func (s *State) ConsentRecords() []Consent {
	cs := make([]Consent, 0, len(s.consents))
	for _, name := range sortedKeys(s.consents) {
		cs = append(cs, s.consents[name])
	}
	return cs
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
