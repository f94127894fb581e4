package pgstore

import (
	"crypto/sha256"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// TeamPage keeps what serve's team approval page must share between
// replicas: its logins under way and its browser sessions (serve.TeamStore),
// each an opaque value with an expiry. Keys are kept as their SHA-256, so
// that the database never holds a session's bearer secret.
type TeamPage struct{ s *Store }

// TeamPage returns the store's team page state.
func (s *Store) TeamPage() *TeamPage { return &TeamPage{s: s} }

func teamKey(key string) []byte {
	sum := sha256.Sum256([]byte(key))
	return sum[:]
}

// Put adds or replaces the value of kind and key until expires, dropping
// the expired values of kind and, past max of them, those closest to
// their end.
func (t *TeamPage) Put(kind, key string, value []byte, expires time.Time, max int) error {
	ctx, cancel := opCtx()
	defer cancel()
	return pgx.BeginFunc(ctx, t.s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM mcphost_team WHERE kind = $1 AND expires < $2`, kind, time.Now()); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO mcphost_team (kind, key, value, expires) VALUES ($1, $2, $3, $4)
			ON CONFLICT (kind, key) DO UPDATE SET value = excluded.value, expires = excluded.expires`, kind, teamKey(key), value, expires); err != nil {
			return err
		}
		if max > 0 {
			_, err := tx.Exec(ctx, `DELETE FROM mcphost_team WHERE kind = $1 AND key IN (
				SELECT key FROM mcphost_team WHERE kind = $1 ORDER BY expires DESC OFFSET $2)`, kind, max)
			return err
		}
		return nil
	})
}

// Take returns the unexpired value of kind and key and removes it: of
// several replicas taking it at once, one gets it.
func (t *TeamPage) Take(kind, key string, now time.Time) ([]byte, bool, error) {
	ctx, cancel := opCtx()
	defer cancel()
	var v []byte
	var expires time.Time
	err := t.s.pool.QueryRow(ctx, `DELETE FROM mcphost_team WHERE kind = $1 AND key = $2 RETURNING value, expires`, kind, teamKey(key)).Scan(&v, &expires)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return v, now.Before(expires), nil
}

// Get returns the unexpired value of kind and key.
func (t *TeamPage) Get(kind, key string, now time.Time) ([]byte, bool, error) {
	ctx, cancel := opCtx()
	defer cancel()
	var v []byte
	err := t.s.pool.QueryRow(ctx, `SELECT value FROM mcphost_team WHERE kind = $1 AND key = $2 AND expires > $3`, kind, teamKey(key), now).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return v, true, nil
}

// Drop removes the value of kind and key.
func (t *TeamPage) Drop(kind, key string) error {
	ctx, cancel := opCtx()
	defer cancel()
	_, err := t.s.pool.Exec(ctx, `DELETE FROM mcphost_team WHERE kind = $1 AND key = $2`, kind, teamKey(key))
	return err
}
