package audit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Link is one record of a chain kept in a Chain: its line as a file would
// hold it (without the newline), with what a store indexes it by.
type Link struct {
	Seq    uint64
	Hash   string
	Prev   string // the hash of the record before, Genesis for the first
	CallID string
	Line   []byte
}

// Chain is an audit chain kept outside a file, by a store that several
// processes append to at once (the PostgreSQL store). The store, not the
// process, serialises appends, so every writer's records form one chain.
type Chain interface {
	// Append calls next with the chain's current head (0 and Genesis when
	// it is empty), holding the store's lock on the chain so that no other
	// appender, in this process or another, comes between, and stores the
	// Link next returns as the record after that head. When Append returns
	// nil the record is durable; an error from next is returned as is, and
	// with any error the caller must act as if nothing was stored. Append
	// may call next more than once, when it has to start over.
	Append(ctx context.Context, next func(head Head) (Link, error)) error
}

// ChainLog appends records to a Chain, completing them exactly as a Log
// does (Options.Now, RecordData, Secrets; the other options are a file's
// and are ignored), so that each link's line is the line Log would have
// written and Verify reads the chain exported from the store as it reads a
// file. It is safe for concurrent use.
type ChainLog struct {
	chain   Chain
	opts    Options
	timeout time.Duration

	mu     sync.Mutex
	closed bool
}

// DefaultChainTimeout bounds one append to a Chain.
const DefaultChainTimeout = 30 * time.Second

// OpenChain returns a ChainLog appending to c.
func OpenChain(c Chain, opts Options) *ChainLog {
	return &ChainLog{chain: c, opts: opts.withDefaults(), timeout: DefaultChainTimeout}
}

// Append completes r and stores it as the next record of the chain, as
// Log.Append does (see there for what it fills in and keeps out). When it
// returns nil the record is durable in the store, whatever its kind: there
// is no window in which an outcome is written but not yet synced. When it
// returns an error the caller must act as if nothing was recorded.
func (l *ChainLog) Append(r *Record) error {
	if r == nil {
		return errors.New("audit: append: nil record")
	}
	if r.Kind != Intent && r.Kind != Outcome && r.Kind != Approval {
		return fmt.Errorf("audit: append: kind %q: want %q, %q or %q", r.Kind, Intent, Outcome, Approval)
	}
	l.mu.Lock()
	closed := l.closed
	l.mu.Unlock()
	if closed {
		return ErrClosed
	}
	l.opts.prepare(r)
	ctx, cancel := context.WithTimeout(context.Background(), l.timeout)
	defer cancel()
	// next may run more than once: each run starts from the record as
	// prepared, not as a failed run left it.
	orig := *r
	var done Record
	err := l.chain.Append(ctx, func(head Head) (Link, error) {
		rec := orig
		line, err := l.opts.encodeNext(nil, &rec, head)
		if err != nil {
			return Link{}, err
		}
		done = rec
		return Link{Seq: rec.Seq, Hash: rec.Hash, Prev: rec.Prev, CallID: rec.CallID, Line: line[:len(line)-1]}, nil
	})
	if err != nil {
		return fmt.Errorf("audit: append: %w", err)
	}
	*r = done
	return nil
}

// Close makes later Appends fail with ErrClosed. The chain itself, and
// the store behind it, belong to the caller.
func (l *ChainLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	return nil
}

// ParseRecord decodes one line of a log (without its newline) as Verify
// and Tail read it, and reports whether its content matches its hash. An
// error means the line is not a record.
func ParseRecord(line []byte) (r Record, intact bool, err error) {
	r, computed, err := parseLine(line)
	if err != nil {
		return Record{}, false, err
	}
	return r, computed == r.Hash, nil
}
