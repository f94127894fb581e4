package pgstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/jackc/pgx/v5"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/state"
)

// Trust keeps in the database the servers a person trusted (`mcphost mcp
// trust`), by server identity, as the state file does on one machine: so
// that a server trusted through any replica is trusted by every replica,
// and trust taken back through any is gone for all. Readers read through
// to the database at every question; there is no cache to outlive a
// revocation. When the database cannot be read a server is not trusted,
// so its calls ask more, never less.
type Trust struct{ s *Store }

// Trust returns the store's remembered trust.
func (s *Store) Trust() *Trust { return &Trust{s: s} }

// Trusted reports whether a person trusted the server with this identity.
func (t *Trust) Trusted(identity string) bool {
	if identity == "" {
		return false
	}
	ctx, cancel := opCtx()
	defer cancel()
	var ok bool
	err := t.s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM mcphost_trust WHERE identity = $1)`, []byte(identity)).Scan(&ok)
	return err == nil && ok
}

// SetTrust records (on) or withdraws (!on) a person's trust in the server
// with this identity; name is its configuration name, for display and for
// Untrust. Trusting a server already trusted keeps when it was first
// trusted. An empty identity changes nothing.
func (t *Trust) SetTrust(identity, name string, on bool) error {
	if identity == "" {
		return nil
	}
	ctx, cancel := opCtx()
	defer cancel()
	var err error
	if on {
		_, err = t.s.pool.Exec(ctx, `INSERT INTO mcphost_trust (identity, name) VALUES ($1, $2)
			ON CONFLICT (identity) DO UPDATE SET name = excluded.name`, []byte(identity), []byte(name))
	} else {
		_, err = t.s.pool.Exec(ctx, `DELETE FROM mcphost_trust WHERE identity = $1`, []byte(identity))
	}
	return err
}

// Untrust withdraws the trust remembered for the server with this
// identity or under its configuration name (a server whose command
// changed since), for every replica, and reports how many it removed.
func (t *Trust) Untrust(identity, name string) (int, error) {
	ctx, cancel := opCtx()
	defer cancel()
	tag, err := t.s.pool.Exec(ctx, `DELETE FROM mcphost_trust WHERE ($1 <> ''::bytea AND identity = $1) OR ($2 <> ''::bytea AND name = $2)`, []byte(identity), []byte(name))
	if err != nil {
		return 0, err
	}
	return int(tag.RowsAffected()), nil
}

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

// Grants keeps the "always" grants in the database, one per server
// identity and tool as in the state file: a grant given through any
// replica lets the same tool run unasked through every replica, and one
// revoked through any is gone for all. Readers read through to the
// database at every decision (LiveGrants). When the database cannot be
// read there are no always grants, so calls ask more, never less.
type Grants struct{ s *Store }

// Grants returns the store's always grants.
func (s *Store) Grants() *Grants { return &Grants{s: s} }

// LiveGrants reports that other processes change these grants, so a gate
// reads them at every decision (host.LiveGrants).
func (g *Grants) LiveGrants() bool { return true }

// AlwaysGrants returns the always grants, sorted by server identity and
// tool.
func (g *Grants) AlwaysGrants() []decide.Grant {
	ctx, cancel := opCtx()
	defer cancel()
	rows, err := g.s.pool.Query(ctx, `SELECT grant_json FROM mcphost_always_grants ORDER BY identity, tool`)
	if err != nil {
		return nil
	}
	defer rows.Close()
	var grants []decide.Grant
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			return nil
		}
		gr, err := decodeGrant(raw, decide.ScopeAlways)
		if err != nil {
			continue // not a grant this mcphost keeps: it allows nothing
		}
		grants = append(grants, gr)
	}
	if rows.Err() != nil {
		return nil
	}
	return grants
}

// AddAlwaysGrant keeps gr for the server with configuration name name,
// replacing any grant for the same server identity and tool (so a tool has
// at most one, bound to one definition hash), in one statement: of
// replicas granting the same tool at once, the last write wins and none
// fails. It refuses what the state file refuses (state.CheckGrant).
func (g *Grants) AddAlwaysGrant(gr decide.Grant, name string) error {
	if err := state.CheckGrant(gr); err != nil {
		return err
	}
	raw, err := json.Marshal(gr)
	if err != nil {
		return err
	}
	ctx, cancel := opCtx()
	defer cancel()
	_, err = g.s.pool.Exec(ctx, `INSERT INTO mcphost_always_grants (identity, tool, name, grant_json) VALUES ($1, $2, $3, $4)
		ON CONFLICT (identity, tool) DO UPDATE SET name = excluded.name, grant_json = excluded.grant_json,
			granted = CASE WHEN mcphost_always_grants.grant_json = excluded.grant_json THEN mcphost_always_grants.granted ELSE clock_timestamp() END`,
		[]byte(gr.Server), []byte(gr.Tool), []byte(name), raw)
	return err
}

// RevokeGrants removes, for every replica, the always grants for a server
// identity and tool and reports how many it removed. An empty tool matches
// every tool of the server; an empty identity matches every server.
func (g *Grants) RevokeGrants(identity, tool string) (int, error) {
	ctx, cancel := opCtx()
	defer cancel()
	tag, err := g.s.pool.Exec(ctx, `DELETE FROM mcphost_always_grants WHERE ($1 = ''::bytea OR identity = $1) AND ($2 = ''::bytea OR tool = $2)`, []byte(identity), []byte(tool))
	if err != nil {
		return 0, err
	}
	return int(tag.RowsAffected()), nil
}

// decodeGrant reads a stored grant: the JSON of a decide.Grant and nothing
// else, since a field this mcphost does not know may be one that narrows
// the grant (written by a newer mcphost, or by hand), and reading the grant
// without it would widen it; and a grant of one of scopes that the state
// file would keep as well (state.CheckGrantOf). Always grants and grants
// "for this session" are both read through it.
func decodeGrant(raw []byte, scopes ...decide.Scope) (decide.Grant, error) {
	var g decide.Grant
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&g); err != nil {
		return decide.Grant{}, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return decide.Grant{}, errors.New("data after the grant")
	}
	return g, state.CheckGrantOf(g, scopes...)
}
