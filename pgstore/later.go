package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mcphost/mcphost/later"
)

// Later keeps the calls held for a person's later approval in the
// database (what host.Later asks for), so that a call held through one
// replica can be answered through another and its retry taken, exactly
// once, through any. It behaves as later.Store does, with these
// differences: time is the database's clock unless Options.Now is set (one
// clock for every replica), and when the database cannot be reached
// nothing is held, found or taken — the call is refused, never run.
type Later struct {
	s *Store
	o later.Options

	mu      sync.Mutex
	waiters map[string]chan struct{} // Answered's channels, by approval id
	polling bool
}

// PollEvery is how often Answered looks for answers given through other
// replicas.
const PollEvery = 250 * time.Millisecond

// opTimeout bounds one operation on the held calls.
const opTimeout = 10 * time.Second

// Later returns the held calls of the store; o as for later.New, except
// that a nil Now means the database's clock.
func (s *Store) Later(o later.Options) *Later {
	if o.Lifetime <= 0 {
		o.Lifetime = later.DefaultLifetime
	}
	if o.NewID == nil {
		o.NewID = randomID
	}
	if o.Max <= 0 {
		o.Max = later.DefaultMax
	}
	return &Later{s: s, o: o, waiters: map[string]chan struct{}{}}
}

// Lifetime is how long a held call lives.
func (l *Later) Lifetime() time.Duration { return l.o.Lifetime }

// now is the injected clock's time, or nil for the database's: every
// statement reads the time as coalesce($n, clock_timestamp()).
func (l *Later) now() *time.Time {
	if l.o.Now == nil {
		return nil
	}
	t := l.o.Now()
	return &t
}

const approvalColumns = `id, client, server, identity, tool, definition, args_hash, tier, created, expires, state, via, reason, shown`

// sameCall is the condition that a row is the call $1…$7.
const sameCall = `client = $1 AND server = $2 AND identity = $3 AND tool = $4 AND definition = $5 AND args_hash = $6 AND tier = $7`

// callArgs are c's fields as bytea parameters: the words are a client's
// and a server's, and may hold bytes text columns refuse (the client's
// identity joins its parts with NUL).
func callArgs(c later.Call) []any {
	return []any{[]byte(c.Client), []byte(c.Server), []byte(c.Identity), []byte(c.Tool), []byte(c.Definition), []byte(c.ArgsHash), []byte(c.Tier)}
}

// scanApproval reads a row of approvalColumns, and extra columns after.
func scanApproval(row pgx.Row, extra ...any) (later.Approval, error) {
	var a later.Approval
	var state int16
	var f [9][]byte
	dst := []any{&a.ID, &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &a.Created, &a.Expires, &state, &f[7], &f[8], &a.Shown}
	err := row.Scan(append(dst, extra...)...)
	a.Call = later.Call{Client: string(f[0]), Server: string(f[1]), Identity: string(f[2]), Tool: string(f[3]),
		Definition: string(f[4]), ArgsHash: string(f[5]), Tier: string(f[6])}
	a.State, a.Via, a.Reason = later.State(state), string(f[7]), string(f[8])
	return a, err
}

// callLock is the advisory lock key that serialises Hold of one call
// across replicas, so that two replicas holding the same call at once
// keep one approval.
func callLock(c later.Call) int64 {
	h := fnv.New64a()
	for _, s := range callArgs(c) {
		h.Write(s.([]byte))
		h.Write([]byte{0})
	}
	return int64(h.Sum64())
}

func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (l *Later) ctx() (context.Context, context.CancelFunc) { return opCtx() }

// Hold keeps c waiting for a person and returns its approval, as
// later.Store.Hold. When the database cannot be reached it holds nothing
// and returns an approval without an id.
func (l *Later) Hold(c later.Call) (a later.Approval, held bool) {
	ctx, cancel := l.ctx()
	defer cancel()
	now := l.now()
	err := pgx.BeginFunc(ctx, l.s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, callLock(c)); err != nil {
			return err
		}
		// Forget what expired; rows another Hold is forgetting are left to
		// it, so two Holds never wait on each other's rows.
		if _, err := tx.Exec(ctx, `DELETE FROM mcphost_later WHERE id IN (SELECT id FROM mcphost_later
			WHERE expires <= coalesce($1::timestamptz, clock_timestamp()) FOR UPDATE SKIP LOCKED)`, now); err != nil {
			return err
		}
		var err error
		a, err = scanApproval(tx.QueryRow(ctx, `SELECT `+approvalColumns+` FROM mcphost_later WHERE `+sameCall+` AND state = 0 LIMIT 1`, callArgs(c)...))
		if err == nil {
			return nil // already waiting: keep its approval
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		// Bounded: the oldest calls no one answered make room; an
		// approval already given is never pushed out.
		if _, err := tx.Exec(ctx, `DELETE FROM mcphost_later WHERE id IN (
			SELECT id FROM mcphost_later WHERE state = 0 ORDER BY created, id
			LIMIT greatest(0, (SELECT count(*) FROM mcphost_later) - ($1 - 1)) FOR UPDATE SKIP LOCKED)`, l.o.Max); err != nil {
			return err
		}
		args := append(callArgs(c), l.o.NewID(), now, l.o.Lifetime.Microseconds())
		a, err = scanApproval(tx.QueryRow(ctx, `INSERT INTO mcphost_later
			(client, server, identity, tool, definition, args_hash, tier, id, created, expires)
			SELECT $1, $2, $3, $4, $5, $6, $7, $8, t, t + $10 * interval '1 microsecond'
			FROM coalesce($9::timestamptz, clock_timestamp()) AS t
			RETURNING `+approvalColumns, args...))
		held = err == nil
		return err
	})
	if err != nil {
		return later.Approval{}, false
	}
	return a, held
}

// Drop forgets the held call id while no one has answered it, and reports
// whether it did (false also when the database could not be reached).
func (l *Later) Drop(id string) bool {
	ctx, cancel := l.ctx()
	defer cancel()
	tag, err := l.s.pool.Exec(ctx, `DELETE FROM mcphost_later WHERE id = $1 AND state = 0`, id)
	return err == nil && tag.RowsAffected() == 1
}

// Answer records a person's answer to the held call id, as
// later.Store.Answer: only a waiting, unexpired call, only once, whichever
// replica the answers come through.
func (l *Later) Answer(id string, approve bool, via, reason string) (later.Approval, error) {
	ctx, cancel := l.ctx()
	defer cancel()
	now := l.now()
	var a later.Approval
	var answerErr error
	err := pgx.BeginFunc(ctx, l.s.pool, func(tx pgx.Tx) error {
		var expired bool
		var err error
		a, err = scanApproval(tx.QueryRow(ctx, `SELECT `+approvalColumns+`, expires <= coalesce($2::timestamptz, clock_timestamp())
			FROM mcphost_later WHERE id = $1 FOR UPDATE`, id, now), &expired)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			a, answerErr = later.Approval{}, later.ErrUnknown
			return nil
		case err != nil:
			return err
		case expired:
			a, answerErr = later.Approval{}, later.ErrExpired
			_, err = tx.Exec(ctx, `DELETE FROM mcphost_later WHERE id = $1`, id)
			return err
		case a.State != later.Waiting:
			answerErr = later.ErrAnswered
			return nil
		}
		a.State, a.Via, a.Reason = later.Denied, via, reason
		if approve {
			a.State, a.Reason = later.Approved, ""
		}
		_, err = tx.Exec(ctx, `UPDATE mcphost_later SET state = $2, via = $3, reason = $4 WHERE id = $1`, id, int16(a.State), []byte(a.Via), []byte(a.Reason))
		return err
	})
	if err != nil {
		return later.Approval{}, fmt.Errorf("store %s: answer held call: %w", l.s.shown, err)
	}
	if answerErr == nil {
		l.answered(id)
	}
	return a, answerErr
}

// Take spends the approval of a call equal to c, as later.Store.Take: one
// UPDATE moves one approved, unexpired row to used and returns it, so of
// every retry racing for it, in any replica, exactly one gets true.
func (l *Later) Take(c later.Call) (later.Approval, bool) {
	ctx, cancel := l.ctx()
	defer cancel()
	a, err := scanApproval(l.s.pool.QueryRow(ctx, `UPDATE mcphost_later SET state = 3 WHERE state = 1 AND id = (
		SELECT id FROM mcphost_later WHERE `+sameCall+` AND state = 1
		AND expires > coalesce($8::timestamptz, clock_timestamp())
		ORDER BY created, id LIMIT 1 FOR UPDATE SKIP LOCKED)
		RETURNING `+approvalColumns, append(callArgs(c), l.now())...))
	if err != nil {
		return later.Approval{}, false
	}
	return a, true
}

// Denial returns, and forgets, the unexpired denial of a call equal to c,
// as later.Store.Denial.
func (l *Later) Denial(c later.Call) (later.Approval, bool) {
	ctx, cancel := l.ctx()
	defer cancel()
	a, err := scanApproval(l.s.pool.QueryRow(ctx, `DELETE FROM mcphost_later WHERE state = 2 AND id = (
		SELECT id FROM mcphost_later WHERE `+sameCall+` AND state = 2
		AND coalesce($8::timestamptz, clock_timestamp()) < expires
		ORDER BY created, id LIMIT 1 FOR UPDATE SKIP LOCKED)
		RETURNING `+approvalColumns, append(callArgs(c), l.now())...))
	if err != nil {
		return later.Approval{}, false
	}
	return a, true
}

// MaxShown bounds what Describe keeps of a held call.
const MaxShown = 256 << 10

// Describe keeps, with the held call id while it waits, what a person
// approving it is shown of it (later.Approval.Shown), so that a replica
// that did not hold it shows it in full. More than MaxShown is refused.
func (l *Later) Describe(id string, shown []byte) error {
	if len(shown) > MaxShown {
		return fmt.Errorf("the description of held call %s is %d bytes, more than the %d kept", id, len(shown), MaxShown)
	}
	ctx, cancel := l.ctx()
	defer cancel()
	_, err := l.s.pool.Exec(ctx, `UPDATE mcphost_later SET shown = $2 WHERE id = $1 AND state = 0`, id, shown)
	return err
}

// Get returns the held call id, if it is there and has not expired.
func (l *Later) Get(id string) (later.Approval, bool) {
	ctx, cancel := l.ctx()
	defer cancel()
	a, err := scanApproval(l.s.pool.QueryRow(ctx, `SELECT `+approvalColumns+` FROM mcphost_later
		WHERE id = $1 AND expires > coalesce($2::timestamptz, clock_timestamp())`, id, l.now()))
	if err != nil {
		return later.Approval{}, false
	}
	return a, true
}

// Waiting lists the calls still waiting for an answer, oldest first.
func (l *Later) Waiting() []later.Approval {
	ctx, cancel := l.ctx()
	defer cancel()
	rows, err := l.s.pool.Query(ctx, `SELECT `+approvalColumns+` FROM mcphost_later
		WHERE state = 0 AND expires > coalesce($1::timestamptz, clock_timestamp()) ORDER BY created, id`, l.now())
	if err != nil {
		return nil
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (later.Approval, error) { return scanApproval(r) })
	if err != nil {
		return nil
	}
	return out
}

// StillWaiting reports which of ids name calls that still wait (neither
// answered, withdrawn nor expired), reading their ids alone; its error
// says the store could not tell, and then nothing is to be concluded.
func (l *Later) StillWaiting(ids []string) (map[string]bool, error) {
	ctx, cancel := l.ctx()
	defer cancel()
	rows, err := l.s.pool.Query(ctx, `SELECT id FROM mcphost_later
		WHERE state = 0 AND expires > coalesce($2::timestamptz, clock_timestamp()) AND id = ANY($1)`, ids, l.now())
	if err != nil {
		return nil, fmt.Errorf("store %s: held calls: %w", l.s.shown, err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("store %s: held calls: %w", l.s.shown, err)
	}
	waiting := make(map[string]bool, len(got))
	for _, id := range got {
		waiting[id] = true
	}
	return waiting, nil
}

// Answered returns a channel closed once the held call id is answered,
// through this replica or another (looked for every PollEvery); nil when
// no call is held under id.
func (l *Later) Answered(id string) <-chan struct{} {
	a, ok := l.Get(id)
	if !ok {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if a.State != later.Waiting {
		ch := make(chan struct{})
		close(ch)
		return ch
	}
	ch, ok := l.waiters[id]
	if !ok {
		ch = make(chan struct{})
		l.waiters[id] = ch
	}
	if !l.polling {
		l.polling = true
		go l.poll()
	}
	return ch
}

// answered closes the channel of a waiter for id.
func (l *Later) answered(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ch, ok := l.waiters[id]; ok {
		close(ch)
		delete(l.waiters, id)
	}
}

// poll looks for answers to the calls waited for, until none is: a call
// answered is told to its waiters; one expired or dropped is let go of,
// its channel left open (the waiter's own deadline ends its wait, as with
// later.Store).
func (l *Later) poll() {
	t := time.NewTicker(PollEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-l.s.closed:
			l.mu.Lock()
			l.polling = false
			l.mu.Unlock()
			return
		}
		l.mu.Lock()
		ids := make([]string, 0, len(l.waiters))
		for id := range l.waiters {
			ids = append(ids, id)
		}
		if len(ids) == 0 {
			l.polling = false
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
		ctx, cancel := l.ctx()
		rows, err := l.s.pool.Query(ctx, `SELECT id, state FROM mcphost_later
			WHERE id = ANY($1) AND expires > coalesce($2::timestamptz, clock_timestamp())`, ids, l.now())
		states := map[string]int16{}
		if err == nil {
			var id string
			var state int16
			_, err = pgx.ForEachRow(rows, []any{&id, &state}, func() error { states[id] = state; return nil })
		}
		cancel()
		if err != nil {
			continue // the database will answer again
		}
		l.mu.Lock()
		for _, id := range ids {
			state, ok := states[id]
			switch {
			case ok && state != int16(later.Waiting):
				if ch, ok := l.waiters[id]; ok {
					close(ch)
				}
				delete(l.waiters, id)
			case !ok:
				delete(l.waiters, id)
			}
		}
		l.mu.Unlock()
	}
}
