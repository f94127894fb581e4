package host

import "strings"

// ChangeNote says, for a tool whose definition changed since a person
// accepted it, what changed and how to accept the change. fields are the
// parts of the definition that changed, as the client recorded them
// (client.Change.Fields), or nil when they are not known: across runs only
// a hash of the accepted definition is kept. It never suggests an allow
// rule: none applies to a changed definition.
func ChangeNote(server, tool string, fields []string) string {
	ref := server + "/" + tool
	if len(fields) == 1 && fields[0] == NewToolField {
		return ref + " is new: it appeared after the server's first listing (as a renamed tool would), so until a person accepts it, its annotations, grants and allow rules do not count and every call asks. " +
			"Accept it with mcphost pin accept " + shellWord(ref) + ", or by approving a call to it"
	}
	if len(fields) == 1 && fields[0] == UnreadablePinField {
		return "the pin of " + ref + " could not be read from the store, so whether its definition changed is not known; until the store can be read, or a person accepts it, its annotations, grants and allow rules do not count and every call asks. " +
			"Accept it by approving a call to it"
	}
	what := "which part is not known: only a hash of the accepted definition is kept"
	if len(fields) > 0 {
		what = "what changed: " + strings.Join(fields, ", ")
	}
	return "the definition of " + ref + " changed since it was accepted (" + what + "); until a person accepts it, its annotations, grants and allow rules do not count and every call asks. " +
		"Accept it with mcphost pin accept " + shellWord(ref) + ", or by approving a call to it"
}

// shellWord is s as one word of a command line: as it is when it holds
// only letters, digits and "_-./:@", else quoted (shellQuote).
func shellWord(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_-./:@", c) >= 0) {
			return shellQuote(s)
		}
	}
	if s == "" {
		return "''"
	}
	return s
}
