package pgstore

import (
	"errors"

	"github.com/jackc/pgx/v5"
)

// Pins keeps the pins of tool definitions in the database (the pins part
// of host.Store), so that a definition pinned through one replica is the
// one every replica compares with: a changed definition one replica saw is
// a change for all. Like the state file's pins, a pin is never removed,
// first sight (PinNew) never moves one, and only SetPin (a person) does.
// When the database cannot be read, LookupPin and LookupHasPins say so (host.Pins then
// counts the definition as changed, never as first seen), Pin reports no
// pin, and a write that fails returns its error (the caller then pins in
// memory).
type Pins struct{ s *Store }

// Pins returns the store's pins.
func (s *Store) Pins() *Pins { return &Pins{s: s} }

// Pin returns the definition hash pinned for a tool of the server with
// this identity.
func (p *Pins) Pin(identity, tool string) (string, bool) {
	h, ok, _ := p.LookupPin(identity, tool)
	return h, ok
}

// LookupPin is Pin that tells a tool with no pin (ok false, err nil) from
// a database it could not read (err set).
func (p *Pins) LookupPin(identity, tool string) (hash string, ok bool, err error) {
	ctx, cancel := opCtx()
	defer cancel()
	err = p.s.pool.QueryRow(ctx, `SELECT hash FROM mcphost_pins WHERE identity = $1 AND tool = $2`, []byte(identity), []byte(tool)).Scan(&hash)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, err
	}
	return hash, true, nil
}

// SetPin pins a tool to a definition hash, replacing any earlier pin; an
// empty identity, tool or hash changes nothing.
func (p *Pins) SetPin(identity, tool, hash string) error {
	if identity == "" || tool == "" || hash == "" {
		return nil
	}
	ctx, cancel := opCtx()
	defer cancel()
	_, err := p.s.pool.Exec(ctx, `INSERT INTO mcphost_pins (identity, tool, hash) VALUES ($1, $2, $3)
		ON CONFLICT (identity, tool) DO UPDATE SET hash = excluded.hash, pinned = clock_timestamp()
		WHERE mcphost_pins.hash <> excluded.hash`, []byte(identity), []byte(tool), hash)
	return err
}

// PinNew pins, in one transaction, every tool of tools (name → hash) that
// has no pin for this identity yet; it never moves an existing pin, also
// when another replica pins the same tool at the same time.
func (p *Pins) PinNew(identity string, tools map[string]string) error {
	if identity == "" {
		return nil
	}
	b := &pgx.Batch{}
	for name, hash := range tools {
		if name == "" || hash == "" {
			continue
		}
		b.Queue(`INSERT INTO mcphost_pins (identity, tool, hash) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, []byte(identity), []byte(name), hash)
	}
	if b.Len() == 0 {
		return nil
	}
	ctx, cancel := opCtx()
	defer cancel()
	return pgx.BeginFunc(ctx, p.s.pool, func(tx pgx.Tx) error { return tx.SendBatch(ctx, b).Close() })
}

// HasPins reports whether any tool of the server with this identity is
// pinned.
func (p *Pins) HasPins(identity string) bool {
	ok, err := p.LookupHasPins(identity)
	return err == nil && ok
}

// LookupHasPins is HasPins that tells a server with no pin from a
// database it could not read (err set).
func (p *Pins) LookupHasPins(identity string) (bool, error) {
	ctx, cancel := opCtx()
	defer cancel()
	var ok bool
	err := p.s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM mcphost_pins WHERE identity = $1)`, []byte(identity)).Scan(&ok)
	return ok, err
}
