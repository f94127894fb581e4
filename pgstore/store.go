// Package pgstore keeps what several mcphost processes must share — the
// audit chain, the calls held for a person's later approval, the pins
// of tool definitions, the session state (grants "for this session",
// taint) of serve's stateless clients and the request states they spent —
// in one
// PostgreSQL database, so that replicas of `mcphost serve` behind a load
// balancer are one gate: every replica appends to one hash chain, and a
// call held by one replica and approved through another runs once,
// through whichever replica sees the retry.
//
// The schema is created and upgraded by versioned migrations that Open
// applies under an advisory lock, so replicas starting at once apply each
// migration once. Appends to the chain are serialised by a row lock on
// the chain's head, held for the append's transaction: whoever appends,
// each record's prev is the hash of the record before it. Remembered
// trust and "always" grants are here too (Trust, Grants); consents to
// project servers are still in the state directory's files.
package pgstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Store is a connection pool to the database, with its schema migrated.
// It is safe for concurrent use; each Store is what one replica holds.
type Store struct {
	pool   *pgxpool.Pool
	shown  string        // the URL without its password, for messages
	closed chan struct{} // closed by Close: background work stops
	once   sync.Once
}

// CheckURL reports what is wrong with url as the address of a store, in
// words that never include its password: it must be a postgres:// or
// postgresql:// URL that pgx can parse.
func CheckURL(raw string) error {
	_, err := parse(raw)
	return err
}

func parse(raw string) (*pgxpool.Config, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse quotes the whole input, password and all.
		return nil, fmt.Errorf("the store %s is not a URL (%s): want postgres://USER:PASSWORD@HOST:PORT/DATABASE", Redact(raw), urlProblem(err))
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return nil, fmt.Errorf("the store %s: want a postgres:// URL, such as postgres://mcphost@db.internal:5432/mcphost; the only store besides PostgreSQL is the files of the state directory, used when no store is set", Redact(raw))
	}
	cfg, err := pgxpool.ParseConfig(raw)
	if err != nil {
		return nil, fmt.Errorf("the store %s: %s", Redact(raw), scrubbed(err, u))
	}
	return cfg, nil
}

// Redact returns the store's URL with its password replaced by "xxxxx",
// for every message that names it, also when it does not parse.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return redactText(raw)
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// urlProblem is what url.Parse found wrong, without the URL it quotes.
func urlProblem(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return "it does not parse"
}

// redactText hides the password of a URL that does not parse: what
// follows the first colon of its user information, and the value of a
// password parameter.
func redactText(raw string) string {
	if i := strings.Index(raw, "://"); i >= 0 {
		rest := raw[i+3:]
		end := strings.IndexAny(rest, "/?")
		if end < 0 {
			end = len(rest)
		}
		if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
			if c := strings.Index(rest[:at], ":"); c >= 0 {
				raw = raw[:i+3] + rest[:c] + ":xxxxx" + rest[at:]
			}
		}
	}
	return passwordParam.ReplaceAllString(raw, "${1}xxxxx")
}

var passwordParam = regexp.MustCompile(`([?&]password=)[^&]*`)

// scrubbed is err's text without the URL's password, wherever it shows.
func scrubbed(err error, u *url.URL) string {
	msg := err.Error()
	var secrets []string
	if p, ok := u.User.Password(); ok && p != "" {
		secrets = append(secrets, p, url.QueryEscape(p), url.PathEscape(p))
	}
	if p := u.Query().Get("password"); p != "" {
		secrets = append(secrets, p, url.QueryEscape(p))
	}
	for _, s := range secrets {
		msg = strings.ReplaceAll(msg, s, "xxxxx")
	}
	return msg
}

// Open connects to the database at url and applies the migrations it has
// not had yet. The caller closes the Store.
func Open(ctx context.Context, raw string) (*Store, error) {
	cfg, err := parse(raw)
	if err != nil {
		return nil, err
	}
	s := &Store{shown: Redact(raw), closed: make(chan struct{})}
	s.pool, err = pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", s.shown, err)
	}
	if err := s.Migrate(ctx); err != nil {
		s.pool.Close()
		return nil, err
	}
	return s, nil
}

// Close closes every connection of the pool and stops the store's
// background work (Later.Answered's polling). It may be called more than
// once.
func (s *Store) Close() {
	s.once.Do(func() { close(s.closed) })
	s.pool.Close()
}

// String is the store's URL without its password.
func (s *Store) String() string { return s.shown }

// migrations are the schema's versions, in order; version N is
// migrations[N-1]. A migration is never changed once released: a change
// is a new one.
var migrations = []string{
	// 1: the audit chain, its head (one row, locked by each append), and
	// the calls held for a later approval.
	`CREATE TABLE mcphost_audit (
		seq     bigint PRIMARY KEY CHECK (seq > 0),
		hash    text NOT NULL UNIQUE,
		prev    text NOT NULL,
		call_id bytea NOT NULL DEFAULT '',
		line    bytea NOT NULL,
		stored  timestamptz NOT NULL DEFAULT clock_timestamp()
	);
	CREATE INDEX mcphost_audit_call ON mcphost_audit (call_id) WHERE call_id <> '';
	CREATE TABLE mcphost_audit_head (
		one  boolean PRIMARY KEY DEFAULT true CHECK (one),
		seq  bigint NOT NULL,
		hash text NOT NULL
	);
	INSERT INTO mcphost_audit_head (seq, hash) VALUES (0, '0000000000000000000000000000000000000000000000000000000000000000');
	CREATE TABLE mcphost_later (
		id         text PRIMARY KEY,
		client     bytea NOT NULL,
		server     bytea NOT NULL,
		identity   bytea NOT NULL,
		tool       bytea NOT NULL,
		definition bytea NOT NULL,
		args_hash  bytea NOT NULL,
		tier       bytea NOT NULL,
		created    timestamptz NOT NULL,
		expires    timestamptz NOT NULL,
		state      smallint NOT NULL DEFAULT 0,
		via        bytea NOT NULL DEFAULT '',
		reason     bytea NOT NULL DEFAULT ''
	);
	CREATE INDEX mcphost_later_call ON mcphost_later (client, server, identity, tool, definition, args_hash, tier);`,
	// 2: the pins of tool definitions, by server identity and tool.
	`CREATE TABLE mcphost_pins (
		identity bytea NOT NULL,
		tool     bytea NOT NULL,
		hash     text NOT NULL,
		pinned   timestamptz NOT NULL DEFAULT clock_timestamp(),
		PRIMARY KEY (identity, tool)
	);`,
	// 3: the session state of serve's stateless clients, by the client's
	// identity: its taint (one row, only ever OR-ed) and its "this
	// session" grants (a row each, until they expire).
	`CREATE TABLE mcphost_session_taint (
		session      bytea PRIMARY KEY,
		open_world   boolean NOT NULL DEFAULT false,
		private_read boolean NOT NULL DEFAULT false,
		updated      timestamptz NOT NULL DEFAULT clock_timestamp()
	);
	CREATE TABLE mcphost_session_grants (
		id         bigserial PRIMARY KEY,
		session    bytea NOT NULL,
		grant_json bytea NOT NULL,
		expires    timestamptz NOT NULL
	);
	CREATE INDEX mcphost_session_grants_session ON mcphost_session_grants (session, id);
	CREATE INDEX mcphost_session_grants_expires ON mcphost_session_grants (expires);`,
	// 4: what serve's request states need across replicas: the key that
	// seals them (made once, by the first replica), and the nonces of
	// those spent, until they expire.
	`CREATE TABLE mcphost_secrets (
		name    text PRIMARY KEY,
		value   bytea NOT NULL,
		created timestamptz NOT NULL DEFAULT clock_timestamp()
	);
	CREATE TABLE mcphost_spent (
		nonce   text PRIMARY KEY,
		expires timestamptz NOT NULL
	);
	CREATE INDEX mcphost_spent_expires ON mcphost_spent (expires);`,
	// 5: what a person gave a server that serve reads at every decision:
	// remembered trust, by server identity, and "always" grants, one per
	// server identity and tool (as in the state file).
	`CREATE TABLE mcphost_trust (
		identity bytea PRIMARY KEY,
		name     bytea NOT NULL,
		trusted  timestamptz NOT NULL DEFAULT clock_timestamp()
	);
	CREATE TABLE mcphost_always_grants (
		identity   bytea NOT NULL,
		tool       bytea NOT NULL,
		name       bytea NOT NULL,
		grant_json bytea NOT NULL,
		granted    timestamptz NOT NULL DEFAULT clock_timestamp(),
		PRIMARY KEY (identity, tool)
	);`,
	// 6: the team approval page's logins under way and browser sessions,
	// by kind and the SHA-256 of their key (a session's key is a bearer
	// secret: the database never holds it), until they expire.
	`CREATE TABLE mcphost_team (
		kind    text NOT NULL,
		key     bytea NOT NULL,
		value   bytea NOT NULL,
		expires timestamptz NOT NULL,
		PRIMARY KEY (kind, key)
	);
	CREATE INDEX mcphost_team_expires ON mcphost_team (kind, expires);`,
	// 7: when a replica last read or wrote each session's taint, so that
	// the taint of sessions no replica has seen for long is deleted (rows
	// there now count as seen at the upgrade). The default is now(), the
	// upgrade's time, not clock_timestamp(): a column added with a
	// volatile default makes PostgreSQL rewrite the whole table under an
	// exclusive lock, while with a stable one it only notes the value. A
	// row written later is seen at the start of its writing transaction.
	`ALTER TABLE mcphost_session_taint ADD COLUMN seen timestamptz NOT NULL DEFAULT now();
	CREATE INDEX mcphost_session_taint_seen ON mcphost_session_taint (seen);`,
	// 8: what a person approving a held call is shown of it, so that every
	// replica's team page shows a call another replica holds in full.
	`ALTER TABLE mcphost_later ADD COLUMN shown bytea NOT NULL DEFAULT ''::bytea;`,
}

// migrateLock is the advisory lock key under which migrations run: the
// first eight bytes of "mcphost1" read as a number.
const migrateLock = 0x6d6370686f737431

// Migrate applies, in one transaction holding an advisory lock, the
// migrations the database has not had. Replicas that start at once wait
// for each other; a database already current is left as it is. A
// database migrated by a newer mcphost is refused.
func (s *Store) Migrate(ctx context.Context) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrateLock)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS mcphost_schema (
			version int PRIMARY KEY,
			applied timestamptz NOT NULL DEFAULT clock_timestamp()
		)`); err != nil {
			return err
		}
		var have int
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM mcphost_schema`).Scan(&have); err != nil {
			return err
		}
		if have > len(migrations) {
			return fmt.Errorf("%w: the database is at schema version %d, this mcphost knows %d: upgrade mcphost", ErrNewerSchema, have, len(migrations))
		}
		for v := have + 1; v <= len(migrations); v++ {
			if _, err := tx.Exec(ctx, migrations[v-1]); err != nil {
				return fmt.Errorf("migration %d: %w", v, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO mcphost_schema (version) VALUES ($1)`, v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store %s: migrate: %w", s.shown, err)
	}
	return nil
}

// ErrNewerSchema: the database was migrated by a newer mcphost.
var ErrNewerSchema = errors.New("schema newer than this mcphost")

// Version returns the database's schema version.
func (s *Store) Version(ctx context.Context) (int, error) {
	var v int
	err := s.pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM mcphost_schema`).Scan(&v)
	return v, err
}
