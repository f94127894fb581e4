package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/mcphost/mcphost/state"
)

// List returns the trust remembered in the database, by configuration
// name, as the state file lists its own (state.State.TrustRecords).
func (t *Trust) List(ctx context.Context) ([]state.TrustRecord, error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	rows, err := t.s.pool.Query(ctx, `SELECT identity, name, trusted FROM mcphost_trust ORDER BY name, identity`)
	if err != nil {
		return nil, err
	}
	var out []state.TrustRecord
	var r state.TrustRecord
	var identity, name []byte
	_, err = pgx.ForEachRow(rows, []any{&identity, &name, &r.TrustedAt}, func() error {
		r.Identity, r.Name = string(identity), string(name)
		out = append(out, r)
		return nil
	})
	return out, err
}
