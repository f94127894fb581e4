package main

import (
	"github.com/mcphost/mcphost/config"
)

// trustStore is remembered trust kept where every replica reads it
// (pgstore.Trust).
type trustStore interface {
	Trusted(identity string) bool
}

// sharedTrust is whether serve trusts the server named name when a store
// keeps remembered trust: what the configuration says (its "trust": true or
// --trust, a project server's consent, the demo's own server) as setup
// found it, or else trust remembered in the store, read at every question
// so that `mcphost mcp untrust` through any machine ends it for every
// replica at once. The state file's remembered trust does not count: a
// replica's own file would make it a gate of its own. "trust": false in the
// person's file and the managed policy still win over remembered trust.
func (st *setup) sharedTrust(t trustStore) func(name string) bool {
	fixed := map[string]bool{}
	remembered := map[string]string{} // name → identity, for servers remembered trust may lift
	for _, spec := range st.specs {
		srv, ok := st.configured(spec.Name)
		switch {
		case !ok || srv.Source == config.SourceProject || srv.Trust:
			fixed[spec.Name] = st.trusted[spec.Name]
		case !srv.Distrusted() && st.managed.MayTrust(spec.Name):
			remembered[spec.Name] = spec.Identity()
		}
	}
	return func(name string) bool {
		if fixed[name] {
			return true
		}
		id, ok := remembered[name]
		return ok && t.Trusted(id)
	}
}
