package pgstore_test

import (
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/later"
	"github.com/mcphost/mcphost/pgstore"
	"github.com/mcphost/mcphost/serve"
)

// The held calls in the database serve the gate and serve as the memory
// store does.
var (
	_ host.Later  = (*pgstore.Later)(nil)
	_ serve.Later = (*pgstore.Later)(nil)
	_ serve.Later = (*later.Store)(nil)
)

// A stateless client's session state in the database is the gate's.
var _ host.SessionState = (*pgstore.Session)(nil)

// Remembered trust and always grants in the database are the gate's
// grants, read at every decision.
var (
	_ host.GrantStore = (*pgstore.Grants)(nil)
	_ host.LiveGrants = (*pgstore.Grants)(nil)
)
