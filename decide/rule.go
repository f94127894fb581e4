package decide

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/mcphost/mcphost/decide/jsonscan"
)

// RuleSpec is one rule as the user wrote it, before compiling.
type RuleSpec struct {
	// Effect is what the rule does when it matches: Deny, Ask or Allow.
	// Because Deny is the zero value, a spec whose effect was never set
	// refuses.
	Effect Verdict
	// Source says where the rule came from, for error messages and
	// reasons: a config file path, or "--deny flag".
	Source string
	// Index is the rule's position in its list at Source; it names the
	// rule in errors and in derived ids.
	Index int
	// Raw is the rule as JSON: a string or an object (see the package
	// documentation for the syntax).
	Raw json.RawMessage
	// Prefix starts the rule's id, explicit or derived, so that rules of
	// different sources keep apart in reasons and the audit log: the
	// managed policy's rules use "managed:", which no "id" can start
	// with (an id has no ':').
	Prefix string
}

// AutoApprove is how much runs without asking when no rule or grant
// decides. The zero value is ApproveNone, the most restrictive; the
// configuration default is ApproveAdditive, which ParseAutoApprove("")
// returns.
type AutoApprove uint8

const (
	ApproveNone     AutoApprove = iota // every call asks: tier T0 becomes T1
	ApproveReads                       // reads in a closed world run; additive writes become T1
	ApproveAdditive                    // the tier table as designed: closed-world reads and additive writes run
)

var autoApproveNames = []string{"none", "reads", "additive"}

// String returns "none", "reads" or "additive".
func (a AutoApprove) String() string { return enumString(autoApproveNames, "AutoApprove", uint8(a)) }

// MarshalText encodes a as its String.
func (a AutoApprove) MarshalText() ([]byte, error) {
	return enumMarshal(autoApproveNames, "AutoApprove", uint8(a))
}

// UnmarshalText decodes the String form of an AutoApprove level.
func (a *AutoApprove) UnmarshalText(b []byte) error {
	return enumUnmarshal(autoApproveNames, "autoApprove level", (*uint8)(a), b)
}

// ParseAutoApprove parses the configuration value of "autoApprove":
// "additive", "reads" or "none". The empty string means the default,
// ApproveAdditive.
func ParseAutoApprove(s string) (AutoApprove, error) {
	if s == "" {
		return ApproveAdditive, nil
	}
	var a AutoApprove
	if err := a.UnmarshalText([]byte(s)); err != nil {
		return ApproveNone, err
	}
	return a, nil
}

// Options are the settings of a Policy besides its rules.
type Options struct {
	AutoApprove AutoApprove
	// ProtectedPaths are the host's own configuration, state and audit
	// files or directories. A call whose arguments refer to one of them
	// always asks at T3; so does one that is not a read and refers to a
	// directory containing one (see the package documentation).
	// Each must be absolute, or start with "~/" when Home is set.
	ProtectedPaths []string
	// Home is the user's home directory, used to expand "~", "$HOME" and
	// "${HOME}" in protected paths and in arguments. Empty means no
	// expansion.
	Home string
}

// RuleError reports a rule that does not compile.
type RuleError struct {
	Source string
	Index  int
	Effect Verdict
	Err    error
}

func (e *RuleError) Error() string {
	if e.Source == "" {
		return fmt.Sprintf("%s rule %d: %v", e.Effect, e.Index, e.Err)
	}
	return fmt.Sprintf("%s: %s rule %d: %v", e.Source, e.Effect, e.Index, e.Err)
}

func (e *RuleError) Unwrap() error { return e.Err }

// Policy is a compiled set of rules and options. It is immutable and safe
// for concurrent use; compile it once and call Decide for every call.
type Policy struct {
	rules    []rule
	byServer map[string]*[3][]int32 // rules whose server part is a literal name, by effect
	wild     [3][]int32             // rules whose server part has wildcards, by effect
	auto     AutoApprove
	prot     []string // cleaned, slash-separated, without drive letters
	home     string
}

// zeroPolicy is what a nil *Policy decides with.
var zeroPolicy = &Policy{}

type rule struct {
	id        string
	effect    Verdict
	reason    Reason
	server    pattern
	serverLit bool // the server part names one server exactly
	tool      pattern
	hints     Hints // required effective hints; Absent means no condition
	class     Class
	hasClass  bool
	args      []argCond
	// toolSkel is tool over skeletons; deny and ask rules also match it.
	toolSkel pattern
	// tainted is set on an allow rule that also applies to an open-world
	// call in a tainted session ("evenWhenTainted": true).
	tainted bool
}

// Compile checks and compiles rules. Within one effect, rules keep the
// order of specs. A rule that does not compile yields a *RuleError naming
// its source, effect, index and what is wrong; a bad protected path or
// Home yields a plain error.
func Compile(specs []RuleSpec, opts Options) (*Policy, error) {
	p := &Policy{byServer: map[string]*[3][]int32{}, auto: opts.AutoApprove}
	if opts.AutoApprove > ApproveAdditive {
		return nil, fmt.Errorf("decide: invalid AutoApprove %d", opts.AutoApprove)
	}
	if opts.Home != "" {
		h, ok := absPath(opts.Home)
		if !ok {
			return nil, fmt.Errorf("decide: home directory %q is not absolute", opts.Home)
		}
		p.home = h
	}
	for i, pp := range opts.ProtectedPaths {
		s := strings.TrimSpace(pp)
		if s == "" {
			return nil, fmt.Errorf("decide: protected path %d is empty", i)
		}
		if s == "~" || strings.HasPrefix(s, "~/") {
			if p.home == "" {
				return nil, fmt.Errorf("decide: protected path %q starts with ~ but no home directory is set", pp)
			}
			s = p.home + s[1:]
		}
		c, ok := absPath(s)
		if !ok {
			return nil, fmt.Errorf("decide: protected path %q is not absolute", pp)
		}
		p.prot = append(p.prot, c)
	}

	explicit := map[string]int{}
	derived := map[string]int{}
	for i, sp := range specs {
		r, err := parseRule(sp)
		if err != nil {
			return nil, &RuleError{Source: sp.Source, Index: sp.Index, Effect: sp.Effect, Err: err}
		}
		if r.id != "" {
			r.id = sp.Prefix + r.id
			if j, dup := explicit[r.id]; dup {
				o := specs[j]
				return nil, &RuleError{Source: sp.Source, Index: sp.Index, Effect: sp.Effect,
					Err: fmt.Errorf("id %q is already used by %s rule %d%s", r.id, o.Effect, o.Index, fromSource(o.Source))}
			}
			explicit[r.id] = i
		} else {
			derived[derivedID(sp)]++
		}
		p.rules = append(p.rules, r)
	}
	seen := map[string]int{}
	for i := range p.rules {
		r := &p.rules[i]
		sp := specs[i]
		if r.id == "" {
			r.id = derivedID(sp)
			if derived[r.id] > 1 {
				r.id = sp.Source + ":" + r.id
			}
			if _, dup := seen[r.id]; dup {
				return nil, &RuleError{Source: sp.Source, Index: sp.Index, Effect: sp.Effect,
					Err: fmt.Errorf("another %s rule%s has the same index %d; give one of them an \"id\"", sp.Effect, fromSource(sp.Source), sp.Index)}
			}
			seen[r.id] = i
		}
		r.reason = ruleReason(r.effect, r.id, sp.Source)
		list := &p.wild
		if r.serverLit {
			list = p.byServer[r.server.lit]
			if list == nil {
				list = new([3][]int32)
				p.byServer[r.server.lit] = list
			}
		}
		list[r.effect] = append(list[r.effect], int32(i))
	}
	return p, nil
}

func derivedID(sp RuleSpec) string {
	return sp.Prefix + sp.Effect.String() + "[" + strconv.Itoa(sp.Index) + "]"
}

func fromSource(src string) string {
	if src == "" {
		return ""
	}
	return " from " + src
}

func ruleReason(eff Verdict, id, src string) Reason {
	var what string
	switch eff {
	case Deny:
		what = "so it is refused"
	case Ask:
		what = "so a person must confirm it"
	default:
		what = "so it runs without asking"
	}
	return Reason{
		Code: CodeRulePrefix + id,
		Text: fmt.Sprintf("The %s rule %q%s matches this call, %s.", eff, id, fromSource(src), what),
	}
}

// absPath cleans a path to slash-separated absolute form without a drive
// letter; ok is false when the path is not absolute.
func absPath(s string) (string, bool) {
	s = strings.ReplaceAll(s, `\`, "/")
	if len(s) >= 2 && isLetter(s[0]) && s[1] == ':' {
		s = s[2:]
	}
	if !strings.HasPrefix(s, "/") {
		return "", false
	}
	return path.Clean(s), true
}

func isLetter(c byte) bool { return isUpper(c) || isLower(c) }

var ruleFields = []string{"id", "tool", "args", "hints", "class", "evenWhenTainted"}

func parseRule(sp RuleSpec) (rule, error) {
	r := rule{effect: sp.Effect}
	if sp.Effect > Allow {
		return r, fmt.Errorf("invalid effect %d", sp.Effect)
	}
	raw := bytes.TrimSpace(sp.Raw)
	if len(raw) == 0 {
		return r, errors.New("the rule is empty")
	}
	if !jsonscan.Valid(raw) {
		return r, errors.New("the rule is not valid JSON")
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return r, err
		}
		return r, r.setTool(s)
	case '{':
	default:
		return r, errors.New(`a rule must be a string such as "server/tool_*" or an object with a "tool" field`)
	}
	haveTool := false
	twice := func(key string) error { return fmt.Errorf("field %q appears twice", key) }
	err := ruleMembers(raw, twice, func(key string, val []byte) error {
		var err error
		switch key {
		case "id":
			err = r.setID(val)
		case "tool":
			var s string
			if err = unmarshalField(val, &s, key, "a string"); err == nil {
				err = r.setTool(s)
			}
			haveTool = true
		case "args":
			err = r.setArgs(val)
		case "hints":
			err = r.setHints(val)
		case "class":
			err = r.setClass(val)
		case "evenWhenTainted":
			err = r.setTainted(val)
		default:
			err = fmt.Errorf("unknown field %q (a rule object has the fields %s)", key, quoteList(ruleFields))
		}
		return err
	})
	if err != nil {
		return r, err
	}
	if !haveTool {
		return r, errors.New(`missing field "tool" (for example "tool": "server/tool_*")`)
	}
	return r, nil
}

func unmarshalField(val []byte, dst any, field, want string) error {
	if err := json.Unmarshal(val, dst); err != nil {
		return fmt.Errorf("%q must be %s, not %s", field, want, val)
	}
	return nil
}

func (r *rule) setID(val []byte) error {
	var id string
	if err := unmarshalField(val, &id, "id", "a string"); err != nil {
		return err
	}
	if id == "" || len(id) > 64 {
		return errors.New(`"id" must be 1 to 64 characters`)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !isLetter(c) && !isDigit(c) && c != '-' && c != '_' && c != '.' {
			return fmt.Errorf(`"id" %q may only contain letters, digits, '-', '_' and '.'`, id)
		}
	}
	r.id = id
	return nil
}

func (r *rule) setTool(s string) error {
	if s == "" {
		return errors.New(`the tool pattern is empty; write "server/tool", "server/tool_*" or "server"`)
	}
	for _, c := range s {
		if c < 0x20 || c == 0x7f {
			return fmt.Errorf("the tool pattern %q contains a control character", s)
		}
	}
	if err := checkGlob(s, fmt.Sprintf("the tool pattern %q", s)); err != nil {
		return err
	}
	server, tool, found := strings.Cut(s, "/")
	if !found {
		tool = "*"
	}
	if server == "" {
		return fmt.Errorf(`the tool pattern %q has no server before '/'; use "*/..." for any server`, s)
	}
	if tool == "" {
		return fmt.Errorf(`the tool pattern %q has no tool after '/'; use "%s/*" or just "%s" for every tool`, s, server, server)
	}
	r.server = compilePattern(server)
	r.serverLit = r.server.kind == patExact
	r.tool = compilePattern(tool)
	r.toolSkel = compilePattern(skeletonPattern(tool))
	return nil
}

var hintFields = []string{"readOnly", "destructive", "idempotent", "openWorld"}

// setHints reads a hints condition. Each hint may only be required on the
// side that keeps rules monotone: an allow rule may require the safer
// value and a deny or ask rule the riskier one. Otherwise a server could
// loosen a decision by dropping a hint, since a dropped hint defaults to
// the riskier value.
func (r *rule) setHints(val []byte) error {
	if len(val) == 0 || val[0] != '{' {
		return fmt.Errorf(`"hints" must be an object such as {"readOnly": true}, not %s`, val)
	}
	it := jsonscan.NewMembers(val, 0)
	n := 0
	for {
		k, vs, ve, ok := it.Next()
		if !ok {
			break
		}
		key := jsonscan.UnescapeString(k)
		var b bool
		if err := unmarshalField(val[vs:ve], &b, "hints."+key, "true or false"); err != nil {
			return err
		}
		var dst *Hint
		var safe bool // the safer value of this hint
		switch key {
		case "readOnly":
			dst, safe = &r.hints.ReadOnly, true
		case "destructive":
			dst, safe = &r.hints.Destructive, false
		case "idempotent":
			dst, safe = &r.hints.Idempotent, true
		case "openWorld":
			dst, safe = &r.hints.OpenWorld, false
		default:
			return fmt.Errorf(`unknown hint %q in "hints" (known: %s)`, key, quoteList(hintFields))
		}
		if *dst != Absent {
			return fmt.Errorf("hint %q appears twice", key)
		}
		if (r.effect == Allow) != (b == safe) {
			if r.effect == Allow {
				return fmt.Errorf(`an allow rule may only require "%s": %v; a tool that drops the hint would count as %v and slip through, so use an ask or deny rule instead`, key, safe, b)
			}
			article := "a"
			if r.effect == Ask {
				article = "an"
			}
			return fmt.Errorf(`%s %s rule may only require "%s": %v; a tool that drops the hint would count as %v and escape the rule, so use an allow rule or no hint condition`, article, r.effect, key, !safe, !safe)
		}
		*dst = HintOf(b)
		n++
	}
	if n == 0 {
		return errors.New(`"hints" is empty`)
	}
	return nil
}

// setClass reads a class condition. For an allow rule the class is a
// ceiling (this class or a safer one); for deny and ask rules a floor
// (this class or a riskier one), from read to additive, destructive,
// unknown.
func (r *rule) setClass(val []byte) error {
	var s string
	if err := unmarshalField(val, &s, "class", `one of "read", "additive", "destructive", "unknown"`); err != nil {
		return err
	}
	if err := r.class.UnmarshalText([]byte(s)); err != nil {
		return fmt.Errorf(`"class" must be one of "read", "additive", "destructive", "unknown", not %q`, s)
	}
	r.hasClass = true
	return nil
}

// setTainted reads "evenWhenTainted". Only an allow rule takes it: deny
// and ask rules apply in every session anyway. false is the default and
// allowed, so a generated configuration can spell it out.
func (r *rule) setTainted(val []byte) error {
	var b bool
	if err := unmarshalField(val, &b, "evenWhenTainted", "true or false"); err != nil {
		return err
	}
	if r.effect != Allow {
		return fmt.Errorf(`"evenWhenTainted" belongs on allow rules only; a %s rule applies whether or not the session is tainted`, r.effect)
	}
	r.tainted = b
	return nil
}

// ruleMembers calls fn for each member of the object val, in document
// order, with its key decoded. A key met twice stops the walk with
// twice(key): a rule whose field has two readings is refused rather than
// read one way.
func ruleMembers(val []byte, twice func(key string) error, fn func(key string, v []byte) error) error {
	seen := map[string]bool{}
	it := jsonscan.NewMembers(val, 0)
	for {
		k, vs, ve, ok := it.Next()
		if !ok {
			return nil
		}
		key := jsonscan.UnescapeString(k)
		if seen[key] {
			return twice(key)
		}
		seen[key] = true
		if err := fn(key, val[vs:ve]); err != nil {
			return err
		}
	}
}
