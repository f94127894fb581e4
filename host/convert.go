package host

import (
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
)

// hint converts a hint as sent (nil when absent) to the engine's tri-state.
func hint(b *bool) decide.Hint {
	if b == nil {
		return decide.Absent
	}
	return decide.HintOf(*b)
}

// DeclaredHints converts annotations as sent to the engine's form.
func DeclaredHints(a client.Annotations) decide.Hints {
	return decide.Hints{
		ReadOnly: hint(a.ReadOnly), Destructive: hint(a.Destructive),
		Idempotent: hint(a.Idempotent), OpenWorld: hint(a.OpenWorld),
	}
}

// DecideTool describes a listed tool to the engine. pinned is the
// definition hash remembered for the tool, "" if it was never pinned.
func DecideTool(t *client.Tool, pinned string) decide.Tool {
	return decide.Tool{
		Name: t.Name, Title: t.Title, Description: t.Description,
		Present:        t.Annotations.Present,
		Declared:       DeclaredHints(t.Annotations),
		Malformed:      t.Annotations.Malformed != "",
		DefinitionHash: t.Hash,
		PinnedHash:     pinned,
	}
}

// DecideServer describes a server to the engine.
func DecideServer(spec *client.Spec, trusted bool) decide.Server {
	return decide.Server{Name: spec.Name, Identity: spec.Identity(), Trusted: trusted}
}

// LintTools prepares listed tools for decide.Lint.
func LintTools(tools []*client.Tool) []decide.LintTool {
	out := make([]decide.LintTool, 0, len(tools))
	for _, t := range tools {
		out = append(out, decide.LintTool{
			Server: t.Server, Name: t.Name, Title: t.Title, Description: t.Description,
			Present: t.Annotations.Present, Declared: DeclaredHints(t.Annotations),
			Malformed: t.Annotations.Malformed != "", MalformedReason: t.Annotations.Malformed,
		})
	}
	return out
}
