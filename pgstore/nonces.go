package pgstore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// SpentGrace is how long a spent nonce is kept past its state's expiry:
// each replica checks expiry on its own clock, so a replica whose clock is
// behind the database's by less than this still finds a spent state spent.
const SpentGrace = time.Hour

// RequestStates is what serve's sealed request states need so that a
// client's rounds may reach any replica: one key that seals them for every
// replica, and the nonces of the states spent through any replica.
type RequestStates struct {
	s   *Store
	key []byte
}

// requestStateKey is the name of the sealing key in mcphost_secrets, and
// requestStateKeySize its length: 32 random bytes, made by the first
// replica.
const (
	requestStateKey     = "request-state"
	requestStateKeySize = 32
)

// RequestStates returns the store's request states, with the sealing key
// every replica shares: made by the first replica that asks, read by the
// others.
func (s *Store) RequestStates(ctx context.Context) (*RequestStates, error) {
	fresh := make([]byte, requestStateKeySize)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	var key []byte
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO mcphost_secrets (name, value) VALUES ($1, $2) ON CONFLICT DO NOTHING`, requestStateKey, fresh); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT value FROM mcphost_secrets WHERE name = $1`, requestStateKey).Scan(&key)
	})
	if err != nil {
		return nil, fmt.Errorf("store %s: the request-state key: %w", s.shown, err)
	}
	// A key of another length is not one a replica made: cut short, or
	// put there by something else. Nothing is sealed with it.
	if len(key) != requestStateKeySize {
		return nil, fmt.Errorf("store %s: the request-state key in mcphost_secrets is %d bytes, want %d: delete its row (name %q) and restart every replica, and the first makes a new one", s.shown, len(key), requestStateKeySize, requestStateKey)
	}
	return &RequestStates{s: s, key: key}, nil
}

// Key is the key that seals request states, the same for every replica.
func (r *RequestStates) Key() []byte { return r.key }

// Spend records nonce as spent until expires (plus SpentGrace) and reports
// whether it was unspent: of any number of replicas spending one nonce at
// once, one is told so. Nonces whose time has passed are deleted, so the
// table holds only those of states that could still be presented.
func (r *RequestStates) Spend(nonce string, expires time.Time) (bool, error) {
	if nonce == "" {
		return false, errors.New("a request state without a nonce")
	}
	ctx, cancel := opCtx()
	defer cancel()
	fresh := false
	err := pgx.BeginFunc(ctx, r.s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM mcphost_spent WHERE expires < clock_timestamp()`); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO mcphost_spent (nonce, expires) VALUES ($1, $2) ON CONFLICT DO NOTHING`, nonce, expires.Add(SpentGrace))
		fresh = tag.RowsAffected() == 1
		return err
	})
	return err == nil && fresh, err
}
