package host

import (
	"strings"

	"github.com/mcphost/mcphost/decide"
)

// ChangeNote says, for a tool whose definition changed since a person
// accepted it, what changed and how to accept the change. fields are the
// parts of the definition that changed, as the client recorded them
// (client.Change.Fields), or nil when they are not known: across runs only
// a hash of the accepted definition is kept. It never suggests an allow
// rule: none applies to a changed definition.
func ChangeNote(server, tool string, fields []string) string {
	ref := server + "/" + tool
	what := "which part is not known: only a hash of the accepted definition is kept"
	if len(fields) > 0 {
		what = "what changed: " + strings.Join(fields, ", ")
	}
	return "the definition of " + ref + " changed since it was accepted (" + what + "); until a person accepts it, its annotations, grants and allow rules do not count and every call asks. " +
		"Accept it with mcphost pin accept " + ref + ", or by approving a call to it"
}

// Unliftable says, in a few words, why no allow rule can let a call with
// decision d run without a person, or "" when one could (see unliftable).
func Unliftable(d decide.Decision) string { return unliftable(d) }

// unliftable says why no allow rule can let a call run without a person,
// or "" when one could: its arguments lead to mcphost's own files, its
// description gives the model orders, or its arguments cannot be read.
func unliftable(d decide.Decision) string {
	for _, r := range d.Reasons {
		switch {
		case r.Code == decide.CodeProtectedPath:
			return "its arguments lead to mcphost's own files"
		case strings.HasPrefix(r.Code, decide.CodePoisonedPrefix):
			return "the tool's description gives the model orders"
		case r.Code == decide.CodeInvalidArguments:
			return "its arguments are not a valid JSON object"
		}
	}
	return ""
}
