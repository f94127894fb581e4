package audit

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ProblemTail: the log does not reach a head recorded outside it (see
// CheckHead): records were removed from its end, or the end was cut and
// written again.
const ProblemTail ProblemKind = "missing end"

// Head is the end of a log's chain: the seq and hash of its last record.
// Every record up to it is committed to by its hash, so a head kept outside
// the log pins the whole log up to that record.
type Head struct {
	Seq  uint64 `json:"seq"`
	Hash string `json:"hash"`
}

// String writes the head as "seq 42 hash <64 hex>".
func (h Head) String() string { return fmt.Sprintf("seq %d hash %s", h.Seq, h.Hash) }

// HeadStore keeps the heads of logs outside the logs, under the key
// HeadKey gives.
type HeadStore interface {
	// UpdateHead calls fn with the head recorded for key (ok is false when
	// there is none) and, when fn returns true, records the head it
	// returns. Concurrent updates, from other processes too, must not be
	// lost: fn runs under the store's lock.
	UpdateHead(key string, fn func(old Head, ok bool) (Head, bool)) error
}

// HeadKey returns the key of the log at path in a HeadStore: its absolute
// path, with symbolic links resolved when the file exists.
func HeadKey(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("audit: head key for %s: %w", path, err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real, nil
	}
	return abs, nil
}

// CheckHead reads the log held in the first size bytes of r backwards from
// its end, only as far as it needs, and checks that it still holds want:
// the record with seq want.Seq, intact, with hash want.Hash. A want with
// seq 0 names a record by its hash alone, which may take reading the whole
// file. It returns the log's end (its last record; 0 and Genesis when it
// has none) and a Problem of kind ProblemTail when the log does not hold
// want. Lines that are not records are stepped over (Verify reports them);
// a line longer than MaxLine stops the reading with an error wrapping
// ErrLongLine.
func CheckHead(r io.ReaderAt, size int64, want Head) (end Head, p *Problem, err error) {
	end = Head{Hash: Genesis}
	seen, found := false, false
	var other *Record // the record at want.Seq, when its hash differs
	genesis := want.Seq == 0 && want.Hash == Genesis
	err = scanBack(r, size, func(line []byte, _ bool) bool {
		rec, computed, perr := parseLine(line)
		if perr != nil {
			return true
		}
		if !seen {
			end, seen = Head{Seq: rec.Seq, Hash: rec.Hash}, true
		}
		switch {
		case genesis:
			found = true
			return false
		case want.Seq == 0:
			found = rec.Hash == want.Hash && computed == rec.Hash
			return !found
		case rec.Seq == want.Seq:
			found = rec.Hash == want.Hash && computed == want.Hash
			if !found {
				other = &rec
			}
			return false
		}
		return rec.Seq > want.Seq
	})
	if err != nil {
		return end, nil, fmt.Errorf("audit: check head: %w", err)
	}
	if found || genesis {
		return end, nil, nil
	}
	problem := func(format string, args ...any) *Problem {
		return &Problem{Kind: ProblemTail, Msg: fmt.Sprintf(format, args...)}
	}
	switch {
	case want.Seq == 0:
		p = problem("no record has hash %s: the log was cut back to before that record, or replaced; it now ends at seq %d", want.Hash, end.Seq)
	case end.Seq+1 == want.Seq:
		p = problem("the log ends at seq %d, but its head was seq %d hash %s: record %d was removed from the end",
			end.Seq, want.Seq, want.Hash, want.Seq)
	case end.Seq < want.Seq:
		p = problem("the log ends at seq %d, but its head was seq %d hash %s: records %d to %d were removed from the end",
			end.Seq, want.Seq, want.Hash, end.Seq+1, want.Seq)
	case other != nil && other.Hash != want.Hash:
		p = problem("the record with seq %d has hash %s, but the head was seq %d hash %s: the log was cut back to before it and written again, or replaced",
			want.Seq, other.Hash, want.Seq, want.Hash)
	case other != nil:
		p = problem("the record with seq %d does not match its hash %s: it was changed after it was written", want.Seq, want.Hash)
	default:
		p = problem("the log has no record with seq %d, its head seq %d hash %s: that record was removed", want.Seq, want.Seq, want.Hash)
	}
	return end, p, nil
}

// SaveHead records in hs the head of the log at path, read through f, which
// the caller last knew as mine (what it wrote or read last). It never moves
// a recorded head backwards, and never past a log that no longer holds it,
// so that CheckHead keeps reporting records removed from the end:
//
//   - when f still holds mine, the candidate is the file's end (other
//     processes may have appended); otherwise mine itself, the evidence
//     that records were removed while the log was open;
//   - a recorded head with a seq at least the candidate's stays;
//   - a recorded head the file no longer holds stays;
//   - otherwise the candidate is recorded.
func SaveHead(hs HeadStore, path string, f *os.File, mine Head) error {
	key, err := HeadKey(path)
	if err != nil {
		return err
	}
	var ferr error
	err = hs.UpdateHead(key, func(old Head, ok bool) (Head, bool) {
		fi, err := f.Stat()
		if err != nil {
			ferr = err
			return old, false
		}
		cand := mine
		end, p, err := CheckHead(f, fi.Size(), mine)
		if err != nil {
			ferr = err
			return old, false
		}
		if p == nil {
			cand = end
		}
		switch {
		case !ok:
			return cand, true
		case old.Seq >= cand.Seq:
			return old, false
		case p != nil:
			return cand, true
		}
		// A log that no longer holds the recorded head keeps it: CheckHead
		// reports that until a person looks (see ResetHead).
		if _, p, err := CheckHead(f, fi.Size(), old); err != nil || p != nil {
			ferr = err
			return old, false
		}
		return cand, true
	})
	if err == nil {
		err = ferr
	}
	if err != nil {
		return fmt.Errorf("audit: record the head of %s: %w", path, err)
	}
	return nil
}

// ReadHead returns the end of the log at path (0 and Genesis for an empty
// log), reading only its last lines.
func ReadHead(path string) (Head, error) {
	f, err := os.Open(path)
	if err != nil {
		return Head{}, fmt.Errorf("audit: read head: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Head{}, fmt.Errorf("audit: read head: %w", err)
	}
	end, _, err := CheckHead(f, fi.Size(), Head{Hash: Genesis})
	if err != nil {
		return Head{}, fmt.Errorf("audit: read head of %s: %w", path, err)
	}
	return end, nil
}

// ResetHead records the current end of the log at path in hs, replacing
// whatever was recorded, and returns it: for when a person has looked at
// the log after CheckHead reported it, or started a new log on purpose.
func ResetHead(hs HeadStore, path string) (Head, error) {
	key, err := HeadKey(path)
	if err != nil {
		return Head{}, err
	}
	end, err := ReadHead(path)
	if err != nil {
		return Head{}, err
	}
	if err := hs.UpdateHead(key, func(Head, bool) (Head, bool) { return end, true }); err != nil {
		return Head{}, fmt.Errorf("audit: record the head of %s: %w", path, err)
	}
	return end, nil
}
