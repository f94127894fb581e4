package host

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcphost/mcphost/decide"
)

// What would have let a call that was blocked for approval run: the allow
// rule that matches it, when a rule can lift the block at all, and what can
// when none can. A refusal that says so saves the person a trip to the
// documentation, and keeps them from writing a rule that cannot work.

// Approval is what would let a call blocked for approval run
// (Result.Approval). Its JSON form is stable: fields may be added, their
// meaning never changes.
type Approval struct {
	// ByRule reports whether an allow rule can let the call run with no
	// person asked.
	ByRule bool `json:"byRule"`
	// Rule is that allow rule as an entry of permissions.allow in the
	// person's config: a string with the server's and the tool's raw
	// names ("tasks/delete_task"), or an object when the rule needs more
	// ({"tool": ..., "evenWhenTainted": true}). Characters outside ASCII
	// are \u escapes, so a look-alike letter shows. Empty unless ByRule.
	Rule json.RawMessage `json:"rule,omitempty"`
	// Flag is Rule as a command-line flag, quoted for a POSIX shell:
	// --allow 'tasks/delete_task'; a name with characters outside
	// printable ASCII is written $'…' with escapes (d\u0435lete).
	Flag string `json:"flag,omitempty"`
	// Broad reports that the tool's name holds characters a rule pattern
	// cannot write exactly ('*', '?', '[', ']', '{', '}', '\', control
	// characters), each written '?': the rule then also matches other
	// names.
	Broad bool `json:"broad,omitempty"`
	// Blockers are the reason codes of the decision that no allow rule
	// lifts: definition-changed, protected-path, poisoned-description:…,
	// invalid-arguments, or rule:ID for the ask rule that matched.
	Blockers []string `json:"blockers,omitempty"`
	// Fix lists what lets the call run, most direct first, each a step a
	// person can take.
	Fix []string `json:"fix"`

	text string // the clause for Result.Message
}

// Ways a person approves one blocked call, for Result.Approval: with no
// --yes to hand, interactively; from mcphost call, with --yes.
const (
	ApproveInteractively = "run it interactively (mcphost) and approve it"
	ApproveWithYes       = "run it again with --yes to approve this one call"
)

// String is the approval as the clause of a refusal that follows "needs
// approval and no one could be asked (headless)".
func (a *Approval) String() string { return a.text }

// Approval returns what would let r run, or nil unless r was blocked for
// approval. once is how a person approves this one call from where it was
// made: ApproveInteractively or ApproveWithYes.
func (r *Result) Approval(once string) *Approval {
	if r.Status != StatusBlocked {
		return nil
	}
	a := ApprovalFor(r.Server, r.Tool, r.Decision, r.ChangedFields, once)
	if r.TrustLifts {
		// The real fix comes first: every call of the server asks for
		// this reason, and a rule or --yes would only answer this one.
		fix := TrustFix(r.Server)
		a.Fix = append([]string{fix}, a.Fix...)
		a.text = "it asks only because " + r.Server + " is not trusted: " + fix + "; or " + a.text
	}
	return a
}

// TrustFix is the step that trusts server, for a call that asks only
// because the server is not trusted (Result.TrustLifts).
func TrustFix(server string) string {
	w := shellWord(server)
	return "if you believe its annotations, trust it with mcphost mcp trust " + w + " (in the chat: /trust " + w + "; for one run: --trust " + w + ")"
}

// BlockedMessage is Message for a call blocked for approval, with once
// (ApproveInteractively, ApproveWithYes) as the way to approve the one
// call where it was made, and why it was not held for a later approval
// when it could not be (NotHeld).
func (r *Result) BlockedMessage(once string) string {
	return r.Server + "/" + r.Tool + " needs approval and no one could be asked (headless): " + r.Approval(once).String() + r.notHeldNote()
}

// ApprovalFor returns what would let a call of server/tool that was
// decided d run without a person: the allow rule that matches it, unless
// the decision holds a reason no allow rule lifts (then what can: accepting
// a changed definition, a person's approval, valid arguments). fields are
// the changed parts of the tool's definition, as for ChangeNote. once is
// how a person approves this one call (ApproveInteractively,
// ApproveWithYes). The names are the raw ones; the texts are unsanitized
// and must be escaped before they reach a terminal.
func ApprovalFor(server, tool string, d decide.Decision, fields []string, once string) *Approval {
	a := &Approval{}
	ref := server + "/" + tool
	var why []string
	changed, askRule := false, ""
	for _, rs := range d.Reasons {
		switch c := rs.Code; {
		case c == decide.CodeDefinitionChanged:
			changed = true
		case c == decide.CodeProtectedPath:
			why = append(why, "its arguments lead to mcphost's own files")
		case strings.HasPrefix(c, decide.CodePoisonedPrefix):
			if !hasPoisonBlocker(a.Blockers) {
				why = append(why, "the tool's description gives the model orders")
			}
		case c == decide.CodeInvalidArguments:
			why = append(why, "its arguments are not a valid JSON object")
		case strings.HasPrefix(c, decide.CodeRulePrefix):
			// A blocked call's rule reason is the ask rule that matched:
			// a deny rule's call is denied, not blocked.
			askRule = strings.TrimPrefix(c, decide.CodeRulePrefix)
		default:
			continue
		}
		a.Blockers = append(a.Blockers, rs.Code)
	}

	if len(a.Blockers) > 0 {
		var clauses []string
		if changed {
			clauses = append(clauses, ChangeNote(server, tool, fields))
			a.Fix = append(a.Fix, "accept the new definition: mcphost pin accept "+shellWord(ref))
			if once == ApproveWithYes && len(why) == 0 {
				clauses = append(clauses, once+", which accepts it too")
			}
		}
		if askRule != "" {
			clauses = append(clauses, "the ask rule "+askRule+" matches it, and no allow rule lifts an ask rule: "+once+", or remove or narrow that rule")
			a.Fix = append(a.Fix, "remove or narrow the ask rule "+askRule)
		}
		if len(why) > 0 {
			// A person's approval lifts every one of these.
			clauses = append(clauses, "no allow rule lifts this ("+strings.Join(why, "; ")+"): "+once)
			if slices.Contains(a.Blockers, decide.CodeInvalidArguments) {
				a.Fix = append(a.Fix, "pass the arguments as a JSON object")
			}
		}
		a.Fix = append(a.Fix, once)
		a.text = strings.Join(clauses, "; ")
		return a
	}

	a.ByRule = true
	pat, broad := rulePattern(server, tool)
	a.Broad = broad
	var flag string
	if d.Has(decide.CodeTaintedSession) {
		a.Rule = asciiJSON(struct {
			Tool            string `json:"tool"`
			EvenWhenTainted bool   `json:"evenWhenTainted"`
		}{pat, true})
		flag = "--allow " + shellQuote(string(a.Rule))
	} else {
		a.Rule = asciiJSON(pat)
		flag = "--allow " + shellQuote(pat)
	}
	a.Flag = flag
	rule := "allow it with a rule (" + flag + ")"
	if a.Rule[0] == '{' {
		rule = "allow it with a rule that also applies in a tainted session (" + flag + ")"
	}
	if broad {
		rule += ", which also matches other names: the name has characters a rule cannot write exactly"
	}
	if once == ApproveWithYes {
		a.Fix = append(a.Fix, once, rule)
		a.text = once + ", or " + rule
	} else {
		a.Fix = append(a.Fix, rule, once)
		a.text = rule + ", or " + once
	}
	return a
}

func hasPoisonBlocker(codes []string) bool {
	for _, c := range codes {
		if strings.HasPrefix(c, decide.CodePoisonedPrefix) {
			return true
		}
	}
	return false
}

// rulePattern is the tool pattern SERVER/TOOL that matches exactly these
// names, and whether it had to be broader. A pattern treats '*' and '?' as
// wildcards and rejects '[', ']', '{', '}', '\' and control characters, so
// each of them in the tool's name is written '?', which matches it (and
// any other single character). The server's name is a config name
// (letters, digits, '-', '_', '.'), written as it is: a rule must name an
// untrusted server exactly to apply to it.
func rulePattern(server, tool string) (string, bool) {
	broad := false
	tool = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(`*?[]{}\`, r) {
			broad = true
			return '?'
		}
		return r
	}, tool)
	return server + "/" + tool, broad
}

// asciiJSON encodes v as JSON with every character outside ASCII written
// as a \u escape: the same value, but a look-alike letter is visible.
func asciiJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v) // strings and bools only: cannot fail
	var out strings.Builder
	for _, r := range string(b) {
		if r < utf8.RuneSelf {
			out.WriteRune(r)
			continue
		}
		for _, u := range utf16.Encode([]rune{r}) {
			out.WriteString(`\u`)
			out.WriteString(hex4(int(u)))
		}
	}
	return json.RawMessage(out.String())
}

func hex4(n int) string {
	s := strconv.FormatInt(int64(n), 16)
	return strings.Repeat("0", 4-len(s)) + s
}

// shellQuote quotes s as one word for a POSIX shell. Printable ASCII goes
// in single quotes (a quote in it ends them, is escaped, and reopens them);
// anything else is written in the $'…' form
// of bash, zsh and ksh, with every character outside printable ASCII as an
// escape (\u0435, \x1b), so that it can be pasted and read for what it is.
func shellQuote(s string) string {
	plain := true
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			plain = false
			break
		}
	}
	if plain {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1, r < 0x20, r == 0x7f:
			b.WriteString(`\x`)
			b.WriteString(hex4(int(s[i]))[2:])
		case r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x7f:
			b.WriteRune(r)
		case r <= 0xffff:
			b.WriteString(`\u`)
			b.WriteString(hex4(int(r)))
		default:
			b.WriteString(`\U`)
			b.WriteString(strings.Repeat("0", 8-len(strconv.FormatInt(int64(r), 16))) + strconv.FormatInt(int64(r), 16))
		}
		i += size
	}
	b.WriteByte('\'')
	return b.String()
}
