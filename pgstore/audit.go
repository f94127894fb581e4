package pgstore

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/mcphost/mcphost/audit"
)

// Append stores the next record of the audit chain (audit.Chain): in one
// transaction it locks the chain's head row, so appenders of every
// replica take turns, builds the record after that head with next, inserts
// it and moves the head. A transaction cut short (a replica killed, a
// connection dropped) rolls back whole and releases the lock: the chain
// holds the record entirely or not at all.
func (s *Store) Append(ctx context.Context, next func(head audit.Head) (audit.Link, error)) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var head audit.Head
		var seq int64
		if err := tx.QueryRow(ctx, `SELECT seq, hash FROM mcphost_audit_head FOR UPDATE`).Scan(&seq, &head.Hash); err != nil {
			return fmt.Errorf("lock the chain's head: %w", err)
		}
		head.Seq = uint64(seq)
		l, err := next(head)
		if err != nil {
			return err
		}
		if l.Seq != head.Seq+1 || l.Prev != head.Hash {
			return fmt.Errorf("record %d with prev %.12s… does not follow the head %s", l.Seq, l.Prev, head)
		}
		b := &pgx.Batch{}
		b.Queue(`INSERT INTO mcphost_audit (seq, hash, prev, call_id, line) VALUES ($1, $2, $3, $4, $5)`,
			int64(l.Seq), l.Hash, l.Prev, []byte(l.CallID), l.Line)
		b.Queue(`UPDATE mcphost_audit_head SET seq = $1, hash = $2`, int64(l.Seq), l.Hash)
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return fmt.Errorf("store %s: %w", s.shown, err)
	}
	return nil
}

// Head returns the head the store recorded with the last append: the seq
// and hash of the last record, as the chain's own last row must show them.
func (s *Store) Head(ctx context.Context) (audit.Head, error) {
	var h audit.Head
	var seq int64
	if err := s.pool.QueryRow(ctx, `SELECT seq, hash FROM mcphost_audit_head`).Scan(&seq, &h.Hash); err != nil {
		return h, fmt.Errorf("store %s: read the chain's head: %w", s.shown, err)
	}
	h.Seq = uint64(seq)
	return h, nil
}

// Export writes every record of the chain, in seq order, to w as the lines
// of an audit file (each with its newline): what audit.Verify reads, and a
// file that `mcphost audit verify FILE` checks elsewhere.
func (s *Store) Export(ctx context.Context, w io.Writer) error {
	err := s.snapshot(ctx, func(tx pgx.Tx) error { return exportTx(ctx, tx, w) })
	if err != nil {
		return fmt.Errorf("store %s: export the audit chain: %w", s.shown, err)
	}
	return nil
}

// snapshot runs fn in a read-only transaction that sees one snapshot, so
// that appends made meanwhile are not half seen.
func (s *Store) snapshot(ctx context.Context, fn func(pgx.Tx) error) error {
	return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
}

// exportTx writes the chain's lines, read in pages by seq so that a chain
// larger than memory streams.
func exportTx(ctx context.Context, tx pgx.Tx, w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	after := int64(0)
	for {
		rows, err := tx.Query(ctx, `SELECT seq, line FROM mcphost_audit WHERE seq > $1 ORDER BY seq LIMIT 1000`, after)
		if err != nil {
			return err
		}
		n := 0
		var line []byte
		_, err = pgx.ForEachRow(rows, []any{&after, &line}, func() error {
			n++
			bw.Write(line)
			return bw.WriteByte('\n')
		})
		if err != nil {
			return err
		}
		if n == 0 {
			return bw.Flush()
		}
	}
}

// Verify checks the whole chain as audit.Verify checks a file, and that
// it ends at the head the store recorded with the last append: a chain
// whose last records were deleted, or whose head row was moved, yields a
// problem of its own (a cut at the end leaves a chain that is whole).
func (s *Store) Verify(ctx context.Context) (*audit.Report, error) {
	pr, pw := io.Pipe()
	var head audit.Head
	go func() {
		pw.CloseWithError(s.snapshot(ctx, func(tx pgx.Tx) error {
			var seq int64
			if err := tx.QueryRow(ctx, `SELECT seq, hash FROM mcphost_audit_head`).Scan(&seq, &head.Hash); err != nil {
				return err
			}
			head.Seq = uint64(seq)
			return exportTx(ctx, tx, pw)
		}))
	}()
	rep, err := audit.Verify(pr)
	pr.CloseWithError(io.ErrClosedPipe) // ends the export if Verify stopped early
	if err != nil {
		return nil, fmt.Errorf("store %s: verify the audit chain: %w", s.shown, err)
	}
	if head.Seq != rep.LastSeq || head.Hash != rep.LastHash {
		rep.Problems = append(rep.Problems, audit.Problem{Kind: audit.ProblemMissing,
			Msg: fmt.Sprintf("the store's head is %s but the chain ends at %s: records were removed from its end, or the head was changed", head, audit.Head{Seq: rep.LastSeq, Hash: rep.LastHash})})
	}
	return rep, nil
}

// Holds reports whether the chain holds a record with this hash.
func (s *Store) Holds(ctx context.Context, hash string) (bool, error) {
	var ok bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM mcphost_audit WHERE hash = $1)`, hash).Scan(&ok); err != nil {
		return false, fmt.Errorf("store %s: %w", s.shown, err)
	}
	return ok, nil
}

// Tail returns the last n records of the chain, oldest first. Like
// audit.Tail it checks no hash: rows that are not records are skipped.
func (s *Store) Tail(ctx context.Context, n int) ([]audit.Record, error) {
	if n <= 0 {
		return nil, nil
	}
	recs, err := s.records(ctx, `SELECT line FROM mcphost_audit ORDER BY seq DESC LIMIT $1`, n)
	slices.Reverse(recs)
	return recs, err
}

// CallRecords returns the records of the call with id callID, oldest
// first, as audit.CallRecords does for a file.
func (s *Store) CallRecords(ctx context.Context, callID string) ([]audit.Record, error) {
	return s.records(ctx, `SELECT line FROM mcphost_audit WHERE call_id = $1 ORDER BY seq`, []byte(callID))
}

// ApprovalRecords returns the records of the chain about the held call with
// approval id id, oldest first: the approval records of its holding, its
// answer and its use, and the intent and outcome of the retry that ran
// under it. No column holds the approval id, so this reads every line
// that names it: a command a person runs, never the gate's path.
func (s *Store) ApprovalRecords(ctx context.Context, id string) ([]audit.Record, error) {
	if id == "" {
		// No record of an approval has an empty approvalId (it is left
		// out), but arguments may hold one, which the search below finds
		// and the filter's comparison keeps.
		return nil, nil
	}
	quoted, err := json.Marshal(id)
	if err != nil {
		return nil, err
	}
	recs, err := s.records(ctx, `SELECT line FROM mcphost_audit WHERE position($1::bytea in line) > 0 ORDER BY seq`,
		append([]byte(`"approvalId":`), quoted...))
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(recs, func(r audit.Record) bool { return r.ApprovalID != id }), nil
}

func (s *Store) records(ctx context.Context, query string, arg any) ([]audit.Record, error) {
	rows, err := s.pool.Query(ctx, query, arg)
	if err != nil {
		return nil, fmt.Errorf("store %s: read the audit chain: %w", s.shown, err)
	}
	var out []audit.Record
	var line []byte
	_, err = pgx.ForEachRow(rows, []any{&line}, func() error {
		if r, _, err := audit.ParseRecord(line); err == nil {
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store %s: read the audit chain: %w", s.shown, err)
	}
	return out, nil
}
