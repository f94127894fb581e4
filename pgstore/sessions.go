package pgstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mcphost/mcphost/decide"
)

// DefaultGrantLifetime is how long a grant "for this session" kept in the
// database lasts when SessionOptions.GrantLifetime is not set.
const DefaultGrantLifetime = 24 * time.Hour

// SessionOptions configure Sessions.
type SessionOptions struct {
	// GrantLifetime is how long a grant "for this session" lasts once
	// given, on the database's clock (default DefaultGrantLifetime): a
	// session that no replica's restart ends must end somehow, and the
	// table must not grow without end. Taint does not expire.
	GrantLifetime time.Duration
}

// Sessions keeps the session state of the clients whose session is not a
// connection — serve's 2026-07-28 clients, keyed by who they are — so that
// every replica serves one client as one session: the grants "for this
// session" given through any replica, and the taint taken in through any.
type Sessions struct {
	s *Store
	o SessionOptions
}

// Sessions returns the store's session state.
func (s *Store) Sessions(o SessionOptions) *Sessions {
	if o.GrantLifetime <= 0 {
		o.GrantLifetime = DefaultGrantLifetime
	}
	return &Sessions{s: s, o: o}
}

// For returns the state of the session key, a host.SessionState. The key
// must tell sessions apart exactly (serve's is the person, client id and
// client name and version of a stateless client, each length-prefixed).
func (ss *Sessions) For(key string) *Session { return &Session{ss: ss, key: []byte(key)} }

// Session is one session's state in the database. Writes by several
// replicas at once lose nothing: taint is OR-ed in one statement, and a
// grant is a row of its own.
type Session struct {
	ss  *Sessions
	key []byte
}

func opCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), opTimeout)
}

// Load returns the session's unexpired grants, oldest first, and its
// taint, read in one round trip.
func (s *Session) Load() ([]decide.Grant, bool, bool, error) {
	ctx, cancel := opCtx()
	defer cancel()
	b := &pgx.Batch{}
	b.Queue(`SELECT grant_json FROM mcphost_session_grants WHERE session = $1 AND expires > clock_timestamp() ORDER BY id`, s.key)
	b.Queue(`SELECT open_world, private_read FROM mcphost_session_taint WHERE session = $1`, s.key)
	br := s.ss.s.pool.SendBatch(ctx, b)
	defer br.Close()
	rows, err := br.Query()
	if err != nil {
		return nil, false, false, err
	}
	var grants []decide.Grant
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			rows.Close()
			return nil, false, false, err
		}
		g, err := decodeSessionGrant(raw)
		if err != nil {
			continue // not a grant "for this session" this mcphost gives: it allows nothing
		}
		grants = append(grants, g)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, false, false, err
	}
	var open, priv bool
	if err := br.QueryRow().Scan(&open, &priv); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, false, false, err
	}
	return grants, open, priv, br.Close()
}

// AddGrant keeps g for the session until GrantLifetime passes, and forgets
// every session's expired grants. It refuses what Load would not hand
// out (checkSessionGrant).
func (s *Session) AddGrant(g decide.Grant) error {
	if err := checkSessionGrant(g); err != nil {
		return fmt.Errorf("a grant for this session: %w", err)
	}
	raw, err := json.Marshal(g)
	if err != nil {
		return err
	}
	ctx, cancel := opCtx()
	defer cancel()
	return pgx.BeginFunc(ctx, s.ss.s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM mcphost_session_grants WHERE expires <= clock_timestamp()`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO mcphost_session_grants (session, grant_json, expires)
			VALUES ($1, $2, clock_timestamp() + $3::interval)`, s.key, raw, s.ss.o.GrantLifetime)
		return err
	})
}

// decodeSessionGrant reads a stored grant "for this session": the JSON
// of a decide.Grant and nothing else, since a field this mcphost does not
// know may be one that narrows the grant (written by a newer mcphost), and
// reading the grant without it would widen it; and a grant that
// checkSessionGrant accepts.
func decodeSessionGrant(raw []byte) (decide.Grant, error) {
	var g decide.Grant
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&g); err != nil {
		return decide.Grant{}, err
	}
	if dec.More() {
		return decide.Grant{}, errors.New("more than one grant")
	}
	return g, checkSessionGrant(g)
}

// checkSessionGrant reports what makes g not a grant "for this session"
// as a gate gives one (decide.NewGrant, kept by host's keepSessionGrant):
// scope session or args, never once (which is used and gone) nor always
// (which is kept in mcphost_always_grants, checked as the state file checks
// it); bound to a server identity, a tool and a definition; an args grant
// to the hash of its arguments, a session grant to no arguments.
func checkSessionGrant(g decide.Grant) error {
	switch {
	case g.Scope != decide.ScopeSession && g.Scope != decide.ScopeArgs:
		return fmt.Errorf("scope is %s; a session keeps only %s and %s grants", g.Scope, decide.ScopeSession, decide.ScopeArgs)
	case g.Server == "":
		return errors.New("server identity is empty")
	case g.Tool == "":
		return errors.New("tool is empty")
	case g.DefinitionHash == "":
		return errors.New("definition hash is empty")
	case g.Scope == decide.ScopeArgs && g.ArgsHash == "":
		return fmt.Errorf("an %s grant without argsHash", decide.ScopeArgs)
	case g.Scope == decide.ScopeSession && g.ArgsHash != "":
		return fmt.Errorf("a %s grant covers every argument and has no argsHash", decide.ScopeSession)
	}
	return nil
}

// Revoke removes every grant of the session equal to g, for every
// replica, and reports how many there were.
func (s *Session) Revoke(g decide.Grant) (int, error) {
	raw, err := json.Marshal(g)
	if err != nil {
		return 0, err
	}
	ctx, cancel := opCtx()
	defer cancel()
	tag, err := s.ss.s.pool.Exec(ctx, `DELETE FROM mcphost_session_grants WHERE session = $1 AND grant_json = $2 AND expires > clock_timestamp()`, s.key, raw)
	if err != nil {
		return 0, err
	}
	return int(tag.RowsAffected()), nil
}

// AddTaint adds to the session's taint in one statement: whatever other
// replicas add at the same time, the row ends with the union of all.
func (s *Session) AddTaint(openWorld, privateRead bool) error {
	if !openWorld && !privateRead {
		return nil
	}
	ctx, cancel := opCtx()
	defer cancel()
	_, err := s.ss.s.pool.Exec(ctx, `INSERT INTO mcphost_session_taint AS t (session, open_world, private_read) VALUES ($1, $2, $3)
		ON CONFLICT (session) DO UPDATE SET open_world = t.open_world OR excluded.open_world,
			private_read = t.private_read OR excluded.private_read, updated = clock_timestamp()`, s.key, openWorld, privateRead)
	return err
}
