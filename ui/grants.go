package ui

import (
	"bytes"
	"encoding/json"

	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
)

// grantedArgs remembers the arguments of the "these arguments" grants the
// person gave in this session, by their hash, so that /grants can show
// them: the gate keeps only the hash. Only the program's goroutine uses it.
type grantedArgs map[string]json.RawMessage

// maxGrantedArgs bounds the arguments shown for a grant.
const maxGrantedArgs = 300

// note records the arguments of an answer that grants them.
func (g *grantedArgs) note(q *host.Question, ans host.Answer) {
	if q == nil || !ans.Approve || ans.Scope != decide.ScopeArgs || ans.Args != nil {
		return // an edited call is asked again, and granted then
	}
	if *g == nil {
		*g = grantedArgs{}
	}
	(*g)[decide.ArgsHash(q.Args)] = q.Args
}

// describe says which arguments a grant covers: them, compacted and
// cleaned, or their hash when this session did not see them given.
func (g grantedArgs) describe(hash string) string {
	args, ok := g[hash]
	if !ok {
		return "the arguments with hash " + hash[:min(8, len(hash))]
	}
	var b bytes.Buffer
	if json.Compact(&b, args) != nil {
		b.Reset()
		b.Write(args)
	}
	return "these arguments: " + cleanLine(truncBytes(b.String(), maxGrantedArgs))
}
