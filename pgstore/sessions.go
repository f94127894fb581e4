package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/state"
)

// DefaultGrantLifetime is how long a grant "for this session" kept in the
// database lasts when SessionOptions.GrantLifetime is not set.
const DefaultGrantLifetime = 24 * time.Hour

// TaintIdle is how long a session's taint is kept after no replica has
// read or written it: 30 days, and never less than thirty grant lifetimes.
// A session is read at every call decided for it, so a row unseen that
// long belongs to a client gone for a month, whose every grant ended long
// before (a grant lasts GrantLifetime) — none that is still at work. Taint
// is only ever deleted whole, by this bound: a session seen within it
// keeps all of its taint.
const TaintIdle = taintFactor * DefaultGrantLifetime

// taintFactor is how many grant lifetimes taint outlasts, at the least.
const taintFactor = 30

// seenEvery is how stale a taint row's seen time may be before a read
// writes it again: a write at most once an hour per session, not at
// every decision, and a rounding TaintIdle dwarfs.
const seenEvery = time.Hour

// pruneBatch bounds the rows of unseen taint one write deletes, so that a
// write never pays for a backlog at once; the next writes take the rest.
const pruneBatch = 500

// SessionOptions configure Sessions.
type SessionOptions struct {
	// GrantLifetime is how long a grant "for this session" lasts once
	// given, on the database's clock (default DefaultGrantLifetime): a
	// session that no replica's restart ends must end somehow, and the
	// table must not grow without end. Taint does not expire while its
	// session is seen; unseen for TaintIdle (or thirty GrantLifetimes,
	// if longer) it is deleted.
	GrantLifetime time.Duration
}

// Sessions keeps the session state of the clients whose session is not a
// connection — serve's 2026-07-28 clients, keyed by who they are — so that
// every replica serves one client as one session: the grants "for this
// session" given through any replica, and the taint taken in through any.
type Sessions struct {
	s         *Store
	o         SessionOptions
	taintIdle time.Duration // TaintIdle, or taintFactor grant lifetimes if longer
}

// Sessions returns the store's session state.
func (s *Store) Sessions(o SessionOptions) *Sessions {
	if o.GrantLifetime <= 0 {
		o.GrantLifetime = DefaultGrantLifetime
	}
	return &Sessions{s: s, o: o, taintIdle: max(TaintIdle, taintFactor*o.GrantLifetime)}
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
// taint, read in one round trip. Reading the taint marks the session seen
// (at most once in seenEvery), so that it is not deleted as unseen while
// calls are decided for it.
func (s *Session) Load() ([]decide.Grant, bool, bool, error) {
	ctx, cancel := opCtx()
	defer cancel()
	b := &pgx.Batch{}
	b.Queue(`SELECT grant_json FROM mcphost_session_grants WHERE session = $1 AND expires > clock_timestamp() ORDER BY id`, s.key)
	b.Queue(`WITH touched AS (UPDATE mcphost_session_taint SET seen = clock_timestamp() WHERE session = $1 AND seen < clock_timestamp() - $2::interval RETURNING 1)
		SELECT open_world, private_read FROM mcphost_session_taint WHERE session = $1`, s.key, seenEvery)
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
		g, err := decodeGrant(raw, sessionScopes...)
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

// sessionScopes are the scopes of the grants "for this session" as a gate
// gives them (decide.NewGrant, kept by host's keepSessionGrant): never once
// (which is used and gone) nor always (which is kept in
// mcphost_always_grants, checked as the state file checks it).
var sessionScopes = []decide.Scope{decide.ScopeSession, decide.ScopeArgs}

// checkSessionGrant reports what makes g not a grant "for this session".
func checkSessionGrant(g decide.Grant) error { return state.CheckGrantOf(g, sessionScopes...) }

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
// replicas add at the same time, the row ends with the union of all. It
// also deletes the taint of up to pruneBatch sessions no replica has seen
// for the taint lifetime (TaintIdle), so the table cannot grow without
// end; the session written is seen now, so it is never one of them.
func (s *Session) AddTaint(openWorld, privateRead bool) error {
	if !openWorld && !privateRead {
		return nil
	}
	ctx, cancel := opCtx()
	defer cancel()
	return pgx.BeginFunc(ctx, s.ss.s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO mcphost_session_taint AS t (session, open_world, private_read) VALUES ($1, $2, $3)
		ON CONFLICT (session) DO UPDATE SET open_world = t.open_world OR excluded.open_world,
			private_read = t.private_read OR excluded.private_read, updated = clock_timestamp(), seen = clock_timestamp()`, s.key, openWorld, privateRead); err != nil {
			return err
		}
		// The rows to delete are locked skipping those another write holds,
		// so that no write waits on another's pruning (nor two deadlock);
		// the lock rereads seen, so a row a replica read meanwhile is kept.
		_, err := tx.Exec(ctx, `DELETE FROM mcphost_session_taint WHERE session IN (SELECT session FROM mcphost_session_taint
			WHERE seen < clock_timestamp() - $1::interval ORDER BY seen LIMIT $2 FOR UPDATE SKIP LOCKED)`,
			s.ss.taintIdle, pruneBatch)
		return err
	})
}
