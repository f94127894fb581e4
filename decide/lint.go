package decide

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Severity ranks a lint finding. The zero value is Error, the most severe.
type Severity uint8

const (
	Error   Severity = iota // mcphost cannot classify the tool as the author meant
	Warning                 // the tool works, but asks more than it needs to, or may be retried wrongly
	Info                    // harmless but meaningless annotations
)

var severityNames = []string{"error", "warning", "info"}

// String returns "error", "warning" or "info".
func (s Severity) String() string { return enumString(severityNames, "Severity", uint8(s)) }

// MarshalText encodes s as its String.
func (s Severity) MarshalText() ([]byte, error) {
	return enumMarshal(severityNames, "Severity", uint8(s))
}

// UnmarshalText decodes the String form of a Severity.
func (s *Severity) UnmarshalText(b []byte) error {
	return enumUnmarshal(severityNames, "severity", (*uint8)(s), b)
}

// LintTool is one tool as a server listed it, for Lint.
type LintTool struct {
	Server      string // the server's configuration name
	Name        string
	Title       string
	Description string
	Present     bool  // the "annotations" object exists
	Declared    Hints // as sent; ignored when Present is false or Malformed is true
	Malformed   bool
	// MalformedReason says what was wrong, for example
	// `"readOnlyHint" is a string, not a boolean`.
	MalformedReason string
}

// Lint finding codes. Like reason codes, they are stable.
const (
	LintNoAnnotations        = "no-annotations"           // error
	LintMalformedAnnotations = "malformed-annotations"    // error
	LintContradiction        = "contradiction"            // error
	LintNameSuggestsWrite    = "name-suggests-write"      // error
	LintDuplicateTool        = "duplicate-tool"           // error
	LintMissingHints         = "missing-hints"            // warning
	LintOpenWorldUnset       = "open-world-unset"         // warning
	LintIdempotentAdditive   = "idempotent-additive-name" // warning
	LintMeaninglessHints     = "meaningless-hints"        // info
	LintLookAlikeName        = "look-alike-name"          // error
	LintPoisonedDescription  = "poisoned-description"     // error
)

// RestsOnDefault reports whether a finding with this code means that a
// tool's verdict rests on a spec default: a hint was left out and mcphost
// assumes the riskier reading. A strict lint fails on these.
func RestsOnDefault(code string) bool {
	return code == LintMissingHints || code == LintOpenWorldUnset
}

// Finding is one lint result. Message says what mcphost will do and how to
// fix it.
type Finding struct {
	Severity Severity `json:"severity"`
	Server   string   `json:"server"`
	Tool     string   `json:"tool"`
	Code     string   `json:"code"`
	Message  string   `json:"message"`
}

// Lint checks the annotations of the listed tools and returns findings
// sorted by server, tool, severity (errors first), code and message, with
// duplicates removed. It judges annotations as if every server were
// trusted: it is for server authors.
func Lint(tools []LintTool) []Finding {
	var out []Finding
	add := func(t LintTool, sev Severity, code, msg string) {
		out = append(out, Finding{sev, t.Server, t.Name, code, msg})
	}
	type key struct{ server, name string }
	count := map[key]int{}
	for _, t := range tools {
		count[key{t.Server, t.Name}]++
	}
	for _, t := range tools {
		if n := count[key{t.Server, t.Name}]; n > 1 {
			add(t, Error, LintDuplicateTool, fmt.Sprintf(
				"the server lists %d tools named %+q, so mcphost cannot tell which one a call, a rule or a grant means; give each tool a unique name",
				n, t.Name))
		}
		lintTool(t, add)
	}
	slices.SortFunc(out, func(a, b Finding) int {
		return cmp.Or(
			cmp.Compare(a.Server, b.Server),
			cmp.Compare(a.Tool, b.Tool),
			cmp.Compare(a.Severity, b.Severity),
			cmp.Compare(a.Code, b.Code),
			cmp.Compare(a.Message, b.Message),
		)
	})
	return slices.Compact(out)
}

func lintTool(t LintTool, add func(LintTool, Severity, string, string)) {
	lintName(t, add)
	if flags := PoisonFlags(t.Description); flags != nil {
		add(t, Error, LintPoisonedDescription, fmt.Sprintf(
			`the description gives the model orders (%s), so mcphost marks the tool and every call asks, even on a trusted server and under an allow rule; describe what the tool does and leave instructions to the person`,
			strings.Join(flags, ", ")))
	}
	if !t.Present {
		add(t, Error, LintNoAnnotations,
			`the tool has no annotations, so mcphost treats it as unknown (destructive, open-world) and always asks; add an "annotations" object with "readOnlyHint", "destructiveHint", "idempotentHint" and "openWorldHint"`)
		return
	}
	if t.Malformed {
		why := ""
		if t.MalformedReason != "" {
			why = " (" + t.MalformedReason + ")"
		}
		add(t, Error, LintMalformedAnnotations,
			"the annotations cannot be read"+why+`, so mcphost ignores them and treats the tool as unknown; send each hint as a JSON true or false`)
		return
	}
	h := t.Declared
	readOnly := h.ReadOnly == True
	if readOnly && h.Destructive == True {
		add(t, Error, LintContradiction,
			`"readOnlyHint" and "destructiveHint" are both true, so mcphost treats the tool as destructive; remove "destructiveHint" if the tool only reads, or set "readOnlyHint": false if it writes`)
	}
	if readOnly {
		if w, ok := nameSuggestsWrite(t.Name); ok {
			add(t, Error, LintNameSuggestsWrite, fmt.Sprintf(
				`the name says the tool writes (%+q) but "readOnlyHint" is true, so mcphost does not believe the read-only claim; set "readOnlyHint": false if the tool changes anything, or rename it if it only reads`, w))
		}
		if h.Destructive != True && (h.Destructive == False || h.Idempotent != Absent) {
			var extra []string
			if h.Destructive == False {
				extra = append(extra, `"destructiveHint"`)
			}
			if h.Idempotent != Absent {
				extra = append(extra, `"idempotentHint"`)
			}
			add(t, Info, LintMeaninglessHints, fmt.Sprintf(
				`%s mean nothing when "readOnlyHint" is true; remove them`, strings.Join(extra, " and ")))
		}
	}

	var missing, fixes []string
	if h.ReadOnly == Absent {
		missing = append(missing, `"readOnlyHint" (defaults to false: the tool writes)`)
		fixes = append(fixes, `add "readOnlyHint": true if the tool only reads`)
	}
	if !readOnly {
		if h.Destructive == Absent {
			missing = append(missing, `"destructiveHint" (defaults to true: the tool may delete or overwrite)`)
			fixes = append(fixes, `add "destructiveHint": false if it only adds`)
		}
		if h.Idempotent == Absent {
			missing = append(missing, `"idempotentHint" (defaults to false: never retried)`)
			fixes = append(fixes, `add "idempotentHint": true if repeating a call with the same arguments has no further effect`)
		}
	}
	if len(missing) > 0 {
		verb := "is"
		if len(missing) > 1 {
			verb = "are"
		}
		add(t, Warning, LintMissingHints, fmt.Sprintf("%s %s not set, so mcphost assumes the riskier reading; %s",
			strings.Join(missing, ", "), verb, strings.Join(fixes, "; ")))
	}
	if h.OpenWorld == Absent {
		add(t, Warning, LintOpenWorldUnset,
			`"openWorldHint" is not set, so it defaults to true (the tool reaches outside systems) and every call needs confirmation; add "openWorldHint": false if the tool only touches local or closed data`)
	}
	if !readOnly && h.Idempotent == True && !statesIdempotence(t.Description) {
		if w, ok := nameLooksAdditive(t.Name); ok {
			add(t, Warning, LintIdempotentAdditive, fmt.Sprintf(
				`"idempotentHint" is true but the name (%+q) suggests each call adds something new, so a retry could add it twice; set "idempotentHint": false unless repeating a call with the same arguments really has no further effect`, w))
		}
	}
}

// lintName flags a name that imitates another: its characters outside
// ASCII all look like ASCII letters ("dеlete_all" with a Cyrillic е reads
// as "delete_all"). Such a name is shown escaped, and deny and ask rules
// and the name check see what it looks like, but a person skimming a
// list still reads the look-alike, and an allow rule never matches it.
// (The client already warns about every name outside [A-Za-z0-9_.-].)
func lintName(t LintTool, add func(LintTool, Severity, string, string)) {
	if sk, ok := ReadsAs(t.Name); ok {
		add(t, Error, LintLookAlikeName, fmt.Sprintf(
			`the name %+q has non-ASCII characters that look like ASCII letters: it reads as %+q; mcphost shows it escaped and applies deny and ask rules written for %+q to it, but allow rules written for %+q do not match it; use plain ASCII names ([A-Za-z0-9_.-])`,
			t.Name, sk, sk, sk))
	}
}

// idempotencePhrases say, in a tool's description, that repeating a call
// has no further effect: the behaviour "idempotentHint": true claims.
var idempotencePhrases = []string{
	"idempotent", "already exist", "no further effect", "no additional effect", "has no effect if",
	"does nothing if", "succeed silently", "succeeds silently", "safe to repeat", "safe to retry",
	"safe to call again", "same result",
}

// statesIdempotence reports whether a description says in so many words
// what "idempotentHint": true claims. A finding drawn from the name alone
// (idempotent-additive-name) then has nothing to add: the author stated the
// behaviour twice, in the hint and in the words the model reads, and only
// the name disagrees. Findings the gate acts on (name-suggests-write) are
// kept whatever the description says: a description is no evidence the
// gate believes.
func statesIdempotence(desc string) bool {
	d := strings.ToLower(desc)
	for _, p := range idempotencePhrases {
		for rest := d; ; {
			i := strings.Index(rest, p)
			if i < 0 {
				break
			}
			if !negated(rest[:i]) {
				return true
			}
			rest = rest[i+len(p):]
		}
	}
	return false
}

// negated reports whether the text before a phrase denies it: "not
// idempotent", "non-idempotent", "isn't safe to retry".
func negated(before string) bool {
	for _, n := range []string{"not ", "non-", "non", "n't ", "never "} {
		if strings.HasSuffix(before, n) {
			return true
		}
	}
	return false
}
