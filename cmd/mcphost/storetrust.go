package main

import (
	"context"
	"fmt"

	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/pgstore"
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

// storeTrust applies fn to the remembered trust of the store the config
// names, if any: `mcphost mcp trust` and `untrust` write there as well as
// to this machine's state file (which the chat, run and call read), so
// that every serve replica on the store trusts, or stops trusting, at its
// next call. A store that cannot be reached is an error: the person must
// know that the replicas did not hear it.
func (st *setup) storeTrust(ctx context.Context, fn func(*pgstore.Trust) (int, error)) error {
	if st.storeURL == "" {
		return nil
	}
	shared, err := openStore(ctx, st.storeURL)
	if err != nil {
		return withCode(exitError, fmt.Errorf("this machine's state file has it, but the serve replicas on the store do not: %w", err))
	}
	defer shared.Close()
	if _, err := fn(shared.Trust()); err != nil {
		return withCode(exitError, fmt.Errorf("this machine's state file has it, but the serve replicas on the store %s do not: %w", shared, err))
	}
	return nil
}

// sharedStore is serve's host.Store with a store: pins and always grants
// both in the database, the grants read at every decision (LiveGrants), and
// nothing in this machine's state file, which would make the replica a
// gate of its own.
func sharedStore(shared *pgstore.Store) host.Store {
	return host.SharedPins{Pins: shared.Pins(), Grants: shared.Grants()}
}
