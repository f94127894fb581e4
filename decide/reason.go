package decide

import "strings"

// Reason codes. They are stable: tools and scripts may match on them, and
// their meaning never changes. Codes that carry a value ("rule:<id>",
// "grant:<scope>", "hint-default:<hint>") are listed by their prefix.
const (
	CodeUntrustedServer      = "untrusted-server"
	CodeNoAnnotations        = "no-annotations"
	CodeMalformedAnnotations = "malformed-annotations"
	CodeDefinitionChanged    = "definition-changed"
	CodeContradiction        = "contradiction"
	CodeNameSuggestsWrite    = "name-suggests-write"
	CodeHintDefaultPrefix    = "hint-default:" // followed by readOnlyHint, destructiveHint, idempotentHint or openWorldHint
	CodeReadOnly             = "read-only"
	CodeAdditive             = "additive"
	CodeDestructive          = "destructive"
	CodeIdempotent           = "idempotent"
	CodeOpenWorld            = "open-world"
	CodeClosedWorld          = "closed-world"
	CodeNewPaths             = "new-paths"
	CodePoisonedPrefix       = "poisoned-description:" // followed by a PoisonFlags heuristic: other-tool, secrets, conceal or instruction-block
	CodeAutoApprove          = "auto-approve"
	CodeInvalidArguments     = "invalid-arguments"
	CodeSchemaRejected       = "schema-rejected" // never from Decide: the host refuses such a call before deciding
	CodeProtectedPath        = "protected-path"
	CodeRulePrefix           = "rule:" // followed by the rule's id
	CodeAllowNeedsServerName = "allow-needs-server-name"
	CodeTaintedSession       = "tainted-session"
	CodeGrantPrefix          = "grant:" // followed by once, args, session or always
	CodeNeedsApproval        = "needs-approval"
	CodeByPerson             = "by-person"
)

// reasonRow is one reason code, its sentence, and whether it is a fact in
// the call's favour (see Decision.InFavour) rather than a reason to ask.
type reasonRow struct {
	Reason
	favour bool
}

// reasonTable lists every code in the order Decide emits them, with the
// sentence shown to people. A row whose favour is true is a fact that
// lowers the call's risk: the dialog, explain and refusals list those
// apart from the reasons to ask.
var reasonTable = []reasonRow{
	{Reason{CodeUntrustedServer, "This server is not trusted, so its annotations are ignored and the tool is treated as the riskiest kind."}, false},
	{Reason{CodeNoAnnotations, "The tool declares no annotations, so it is treated as the riskiest kind."}, false},
	{Reason{CodeMalformedAnnotations, "The tool's annotations could not be read, so they are ignored and the tool is treated as the riskiest kind."}, false},
	{Reason{CodeDefinitionChanged, "The tool's definition changed since it was approved, so its annotations, grants and allow rules do not count until a person accepts the change."}, false},
	{Reason{CodeContradiction, "The tool claims to be both read-only and destructive, so the riskier reading, destructive, is used."}, false},
	{Reason{CodeNameSuggestsWrite, "The tool's name says it changes something, so its read-only claim is not believed."}, false},
	{Reason{CodeHintDefaultPrefix + "readOnlyHint", "The tool does not say whether it only reads, so it is treated as one that writes."}, false},
	{Reason{CodeHintDefaultPrefix + "destructiveHint", "The tool does not say whether it can delete or overwrite data, so it is treated as destructive."}, false},
	{Reason{CodeHintDefaultPrefix + "idempotentHint", "The tool does not say whether repeating a call is harmless, so it is never retried automatically."}, false},
	{Reason{CodeHintDefaultPrefix + "openWorldHint", "The tool does not say whether it reaches outside systems, so it is treated as open-world."}, false},
	{Reason{CodeReadOnly, "The tool only reads."}, true},
	{Reason{CodeAdditive, "The tool writes, but does not delete or overwrite anything."}, false},
	{Reason{CodeDestructive, "The tool may delete or overwrite data."}, false},
	{Reason{CodeIdempotent, "Repeating the call with the same arguments has no further effect, so it may be retried."}, true},
	{Reason{CodeOpenWorld, "The tool reaches outside systems, such as the internet or other services, which raises its tier by one."}, false},
	{Reason{CodeClosedWorld, "The tool only touches a closed, local set of data."}, true},
	{Reason{CodeNewPaths, "The call names only paths that do not exist yet, so this overwrite loses nothing there: it asks as a plain confirmation, and approving it covers no call that names something that exists."}, true},
	{Reason{CodePoisonedPrefix + PoisonOtherTool, "The tool's description tells the model how to use another tool, a known way to hijack it, so the call always asks; allow rules do not apply, only a person's approval."}, false},
	{Reason{CodePoisonedPrefix + PoisonSecrets, "The tool's description points the model at secrets such as SSH keys, .env files or credentials, so the call always asks; allow rules do not apply, only a person's approval."}, false},
	{Reason{CodePoisonedPrefix + PoisonConceal, "The tool's description asks the model to keep something from you, so the call always asks; allow rules do not apply, only a person's approval."}, false},
	{Reason{CodePoisonedPrefix + PoisonInstructionBlock, "The tool's description carries an instruction block aimed at the model (such as <IMPORTANT> or \"ignore previous instructions\"), so the call always asks; allow rules do not apply, only a person's approval."}, false},
	{Reason{CodeAutoApprove, "Your auto-approve setting asks before this kind of call."}, false},
	{Reason{CodeInvalidArguments, "The call's arguments are not a valid JSON object, so they cannot be checked and a person must confirm the call."}, false},
	{Reason{CodeSchemaRejected, "The call's arguments do not match the tool's input schema, so it was refused before anything was decided, asked or sent."}, false},
	{Reason{CodeProtectedPath, "The call's arguments lead to mcphost's own configuration, state, tokens or audit files (by name, by a relative path or through a link), so a person must confirm it as the riskiest kind of call; no rule or earlier approval can skip this."}, false},
	{Reason{CodeRulePrefix + "<id>", "A rule from your own configuration or command line matched this call; its id follows the colon."}, false},
	{Reason{CodeAllowNeedsServerName, "An allow rule matched only through a wildcard server name; allow rules apply to an untrusted server only when they name it exactly."}, false},
	{Reason{CodeTaintedSession, "This session has read private data and taken in content from outside systems, so open-world calls need confirmation even if a grant or an allow rule allowed them before; only a read you approved for this session after this warning, or an allow rule with \"evenWhenTainted\": true, still applies."}, false},
	{Reason{CodeGrantPrefix + "once", "You allowed this exact call once."}, true},
	{Reason{CodeGrantPrefix + "args", "You allowed this tool with exactly these arguments."}, true},
	{Reason{CodeGrantPrefix + "session", "You allowed this tool for this session."}, true},
	{Reason{CodeGrantPrefix + "always", "You always allow this tool."}, true},
	{Reason{CodeByPerson, "You asked for this yourself (an @server:uri mention in your message), not the model, so it runs without asking; deny and ask rules and protected paths still apply."}, true},
	{Reason{CodeNeedsApproval, "The call needs a person's approval and nobody can be asked in headless mode, so it is refused."}, false},
}

// ReasonCodes returns every reason code in the order Decide emits them.
// Codes that carry a value appear once each for every value, except rules,
// which appear as "rule:<id>".
func ReasonCodes() []string {
	out := make([]string, len(reasonTable))
	for i, r := range reasonTable {
		out[i] = r.Code
	}
	return out
}

// ReasonText returns the sentence for a reason code, or "" for a code the
// package does not know. Any "rule:<id>" code gets the rule sentence.
func ReasonText(code string) string {
	if strings.HasPrefix(code, CodeRulePrefix) {
		code = CodeRulePrefix + "<id>"
	}
	for _, r := range reasonTable {
		if r.Code == code {
			return r.Text
		}
	}
	return ""
}

// InFavour reports whether r, one of d's reasons, is a fact that lowers
// the call's risk rather than a reason to ask or to refuse: the tool only
// reads, repeating it is harmless, it touches only local data, a grant or
// an allow rule covers the call, the person asked for it. A reason the
// package does not know, and every rule but the allow rule that set d's
// verdict, counts as a reason to ask.
func (d *Decision) InFavour(r Reason) bool {
	if strings.HasPrefix(r.Code, CodeRulePrefix) {
		// An allow rule is the only rule that lets a call run: it set
		// the verdict Allow and named itself.
		return d.Verdict == Allow && d.Rule != "" && r.Code == CodeRulePrefix+d.Rule
	}
	for _, row := range reasonTable {
		if row.Code == r.Code {
			return row.favour
		}
	}
	return false
}

// Split returns d's reasons in their order, in two lists: the reasons to
// ask (or to refuse), and the facts in the call's favour (InFavour). A
// person reads the first under "Why it asks", the second apart, so that
// "it only reads" is never taken for a reason to worry.
func (d *Decision) Split() (ask, favour []Reason) {
	for _, r := range d.Reasons {
		if d.InFavour(r) {
			favour = append(favour, r)
		} else {
			ask = append(ask, r)
		}
	}
	return ask, favour
}

// AgainstHeading names the first list of Split by what those reasons did
// to the call, in lower case: "why it asks", "why it is refused", or, for
// a call that runs, "what counts against it".
func (d *Decision) AgainstHeading() string {
	switch d.Verdict {
	case Ask:
		return "why it asks"
	case Deny:
		return "why it is refused"
	default:
		return "what counts against it"
	}
}

func mustReason(code string) Reason {
	for _, r := range reasonTable {
		if r.Code == code {
			return r.Reason
		}
	}
	panic("decide: no reason " + code)
}

var (
	rUntrusted        = mustReason(CodeUntrustedServer)
	rNoAnnotations    = mustReason(CodeNoAnnotations)
	rMalformed        = mustReason(CodeMalformedAnnotations)
	rChanged          = mustReason(CodeDefinitionChanged)
	rContradiction    = mustReason(CodeContradiction)
	rNameWrite        = mustReason(CodeNameSuggestsWrite)
	rDefReadOnly      = mustReason(CodeHintDefaultPrefix + "readOnlyHint")
	rDefDestructive   = mustReason(CodeHintDefaultPrefix + "destructiveHint")
	rDefIdempotent    = mustReason(CodeHintDefaultPrefix + "idempotentHint")
	rDefOpenWorld     = mustReason(CodeHintDefaultPrefix + "openWorldHint")
	rReadOnly         = mustReason(CodeReadOnly)
	rAdditive         = mustReason(CodeAdditive)
	rDestructive      = mustReason(CodeDestructive)
	rIdempotent       = mustReason(CodeIdempotent)
	rOpenWorld        = mustReason(CodeOpenWorld)
	rClosedWorld      = mustReason(CodeClosedWorld)
	rNewPaths         = mustReason(CodeNewPaths)
	rAutoApprove      = mustReason(CodeAutoApprove)
	rInvalidArgs      = mustReason(CodeInvalidArguments)
	rProtected        = mustReason(CodeProtectedPath)
	rAllowNeedsServer = mustReason(CodeAllowNeedsServerName)
	rTainted          = mustReason(CodeTaintedSession)
	rNeedsApproval    = mustReason(CodeNeedsApproval)
	rByPerson         = mustReason(CodeByPerson)
	rGrant            = [...]Reason{
		ScopeOnce:    mustReason(CodeGrantPrefix + "once"),
		ScopeArgs:    mustReason(CodeGrantPrefix + "args"),
		ScopeSession: mustReason(CodeGrantPrefix + "session"),
		ScopeAlways:  mustReason(CodeGrantPrefix + "always"),
	}
)

// rPoisoned is the reason for each PoisonFlags heuristic.
var rPoisoned = map[string]Reason{
	PoisonOtherTool:        mustReason(CodePoisonedPrefix + PoisonOtherTool),
	PoisonSecrets:          mustReason(CodePoisonedPrefix + PoisonSecrets),
	PoisonConceal:          mustReason(CodePoisonedPrefix + PoisonConceal),
	PoisonInstructionBlock: mustReason(CodePoisonedPrefix + PoisonInstructionBlock),
}

// reasonList collects reasons without allocating until Decide hands them out.
type reasonList struct {
	n int
	a [24]Reason
}

func (l *reasonList) add(r Reason) {
	if l.n < len(l.a) {
		l.a[l.n] = r
		l.n++
	}
}

func (l *reasonList) slice() []Reason {
	out := make([]Reason, l.n)
	copy(out, l.a[:l.n])
	return out
}

// TierText says in a few words what a tier means for the person asked.
func TierText(t Tier) string {
	switch t {
	case T0:
		return "runs without asking"
	case T1:
		return "plain confirmation"
	case T2:
		return "destructive: confirmation with the focus on Deny"
	default:
		return "elevated: a deliberate confirmation, never \"always\""
	}
}
