package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// ProblemKind names what is wrong with a line.
type ProblemKind string

const (
	// ProblemTruncated: the line is the start of a record that was never
	// finished — a write cut short by a crash or a full disk, or a file cut
	// mid-line. Records before it are intact; when it is not the last line,
	// the chain continues from the record before it.
	ProblemTruncated ProblemKind = "truncated record"
	// ProblemMalformed: the line is not a record (not JSON, no hash member,
	// missing or invalid fields, longer than MaxLine).
	ProblemMalformed ProblemKind = "malformed record"
	// ProblemEdited: the record does not match its own hash: it was changed
	// after it was written.
	ProblemEdited ProblemKind = "edited record"
	// ProblemChain: the record has the next seq but its prev is not the hash
	// of the record before it: that record or this one was replaced, or
	// edited and re-hashed.
	ProblemChain ProblemKind = "broken chain"
	// ProblemMissing: seq jumps forward: records were removed.
	ProblemMissing ProblemKind = "missing records"
	// ProblemReordered: seq goes backwards, or a record missing at one line
	// turns up later: records were moved.
	ProblemReordered ProblemKind = "reordered records"
	// ProblemDuplicate: the line repeats the record before it, or has the
	// same seq.
	ProblemDuplicate ProblemKind = "duplicate record"
)

// Problem is one thing wrong with the log, at a line numbered from 1.
type Problem struct {
	Line int         `json:"line"`
	Kind ProblemKind `json:"kind"`
	Msg  string      `json:"msg"`
}

// String writes the problem as "line N: kind: message", without the line
// for a problem with no line of its own (Line 0, as from CheckHead).
func (p Problem) String() string {
	if p.Line == 0 {
		return fmt.Sprintf("%s: %s", p.Kind, p.Msg)
	}
	return fmt.Sprintf("line %d: %s: %s", p.Line, p.Kind, p.Msg)
}

// Entry is a record and the line it is on.
type Entry struct {
	Line   int    `json:"line"`
	Record Record `json:"record"`
}

// String describes the entry in one line, e.g.
// "line 5: intent s1/call-9 tasks/delete_task seq 5".
func (e Entry) String() string {
	r := e.Record
	return fmt.Sprintf("line %d: %s %s/%s %s/%s seq %d", e.Line, r.Kind, r.SessionID, r.CallID, r.Server, r.Tool, r.Seq)
}

// Report is what Verify found. The log is intact when Problems is empty.
type Report struct {
	Lines    int `json:"lines"`   // lines read, a final line without newline included
	Records  int `json:"records"` // lines that are records, including ones with problems
	Intents  int `json:"intents"`
	Outcomes int `json:"outcomes"`
	// Approvals counts the approval records (held calls and their
	// answers); they are chained like every record and pair with nothing.
	Approvals int `json:"approvals,omitempty"`
	// LastSeq and LastHash are the seq and hash of the last record of the
	// chain (0 and Genesis for an empty log). Anyone able to write the file
	// can rewrite the whole chain consistently; keeping LastHash somewhere
	// else and comparing it later detects that.
	LastSeq  uint64 `json:"lastSeq"`
	LastHash string `json:"lastHash"`
	// OpenIntents are intents with no outcome in the log (same SessionID and
	// CallID), in file order: calls that were running, or whose process
	// died, when the log was read. They are facts to look at, not Problems.
	OpenIntents []Entry `json:"openIntents"`
	// OrphanOutcomes are outcomes with no earlier intent for their call.
	OrphanOutcomes []Entry `json:"orphanOutcomes"`
	// Problems are in line order; the first names the first broken line.
	Problems []Problem `json:"problems"`
}

// OK reports whether the log has no problems.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

// Verify reads a whole log and checks every line: that it is a record,
// that its hash matches its content, that its seq is one more than the
// previous record's and that its prev is that record's hash (Genesis and
// seq 1 for the first). Each broken line gets one Problem, and checking
// goes on so that one fault is reported once: after a line that is not a
// record, the chain continues from the last record before it; after a
// record whose hash does not match, from the hash stored in it; after a gap
// in seq, from the record after the gap; a record whose seq goes backwards
// is reported and skipped. The error is non-nil only when r fails.
func Verify(r io.Reader) (*Report, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	rep := &Report{LastHash: Genesis}
	v := verifier{rep: rep, open: map[callKey][]Entry{}}
	var buf []byte
	for n := 1; ; n++ {
		line, terminated, tooLong, err := readLine(br, buf)
		buf = line
		if err != nil && err != io.EOF {
			return rep, fmt.Errorf("audit: verify: read line %d: %w", n, err)
		}
		if len(line) == 0 && !terminated && !tooLong {
			break
		}
		rep.Lines = n
		v.line(n, line, terminated, tooLong)
		if !terminated {
			break
		}
	}
	for _, es := range v.open {
		rep.OpenIntents = append(rep.OpenIntents, es...)
	}
	slices.SortFunc(rep.OpenIntents, func(a, b Entry) int { return a.Line - b.Line })
	return rep, nil
}

type callKey struct{ session, call string }

type gap struct {
	from, to uint64 // missing seqs, inclusive
	problem  int    // index in Report.Problems
}

type verifier struct {
	rep      *Report
	lastLine int
	altHash  string
	open     map[callKey][]Entry
	gaps     []gap
}

func (v *verifier) add(line int, kind ProblemKind, format string, args ...any) {
	v.rep.Problems = append(v.rep.Problems, Problem{Line: line, Kind: kind, Msg: fmt.Sprintf(format, args...)})
}

func (v *verifier) line(n int, line []byte, terminated, tooLong bool) {
	rep := v.rep
	if tooLong {
		kind := ProblemMalformed
		if !terminated {
			kind = ProblemTruncated
		}
		v.add(n, kind, "line longer than %d bytes", MaxLine)
		return
	}
	rec, computed, err := parseLine(line)
	if err != nil {
		fragment := errors.Is(err, errNoTrailer) && isFragment(line)
		switch {
		case fragment && !terminated:
			v.add(n, ProblemTruncated, "the last line is an unfinished record with no newline: a write was cut short (crash, full disk, or the file was cut); the records before it are intact")
		case fragment:
			v.add(n, ProblemTruncated, "an unfinished record: a write was cut short and later records continue after it")
		case len(line) == 0:
			v.add(n, ProblemMalformed, "empty line")
		default:
			v.add(n, ProblemMalformed, "not a record: %v", err)
		}
		return
	}
	rep.Records++
	switch rec.Kind {
	case Intent:
		rep.Intents++
	case Outcome:
		rep.Outcomes++
	case Approval:
		rep.Approvals++
	}
	last := rep.LastSeq
	if computed != rec.Hash {
		// Nothing in an edited record can be trusted, its seq included: take
		// it as the next record, and let the next one link to either its
		// stored hash (the content was changed) or its computed one (the
		// hash was).
		v.add(n, ProblemEdited, "the content does not match its hash %.12s…: the record was changed after it was written", rec.Hash)
		v.advance(n, last+1, rec.Hash, computed)
		v.pair(n, rec)
		return
	}
	switch {
	case rec.Seq == last+1:
		if !v.linksTo(rec.Prev) {
			if v.lastLine == 0 {
				v.add(n, ProblemChain, "the first record's prev is not the genesis value: the chain does not start here")
			} else {
				v.add(n, ProblemChain, "prev does not match the hash of the record on line %d: that record or this one was replaced, or edited and re-hashed", v.lastLine)
			}
		}
	case rec.Seq > last+1:
		switch {
		case v.lastLine == 0:
			v.add(n, ProblemMissing, "the first record has seq %d: records 1 to %d were removed from the start", rec.Seq, rec.Seq-1)
		case rec.Seq == last+2:
			v.add(n, ProblemMissing, "seq jumps from %d (line %d) to %d: record %d is missing", last, v.lastLine, rec.Seq, last+1)
		default:
			v.add(n, ProblemMissing, "seq jumps from %d (line %d) to %d: records %d to %d are missing", last, v.lastLine, rec.Seq, last+1, rec.Seq-1)
		}
		v.gaps = append(v.gaps, gap{from: last + 1, to: rec.Seq - 1, problem: len(rep.Problems) - 1})
	default:
		// Out of place: report it and keep checking against the chain as it was.
		if rec.Seq == last {
			if rec.Hash == rep.LastHash {
				v.add(n, ProblemDuplicate, "repeats the record on line %d", v.lastLine)
			} else {
				v.add(n, ProblemDuplicate, "has the same seq %d as the record on line %d: two writers appended without a lock, or a record was copied and changed", rec.Seq, v.lastLine)
			}
			return
		}
		for _, g := range v.gaps {
			if g.from <= rec.Seq && rec.Seq <= g.to {
				p := &rep.Problems[g.problem]
				p.Kind = ProblemReordered
				p.Msg = fmt.Sprintf("records out of order: seq %d, which belongs before this line, is on line %d", rec.Seq, n)
			}
		}
		v.add(n, ProblemReordered, "seq %d comes after seq %d (line %d): the record was moved here, or is a copy of an earlier one", rec.Seq, last, v.lastLine)
		return
	}
	v.advance(n, rec.Seq, rec.Hash, "")
	v.pair(n, rec)
}

// advance makes the record on line n the end of the chain. alt is another
// hash the next record may link to, after an edited record.
func (v *verifier) advance(n int, seq uint64, hash, alt string) {
	v.rep.LastSeq, v.rep.LastHash, v.altHash, v.lastLine = seq, hash, alt, n
}

func (v *verifier) linksTo(prev string) bool {
	return prev == v.rep.LastHash || (v.altHash != "" && prev == v.altHash)
}

// pair matches outcomes with intents of the same call.
func (v *verifier) pair(n int, rec Record) {
	k := callKey{rec.SessionID, rec.CallID}
	switch rec.Kind {
	case Intent:
		v.open[k] = append(v.open[k], Entry{Line: n, Record: rec})
	case Outcome:
		es := v.open[k]
		if len(es) == 0 {
			v.rep.OrphanOutcomes = append(v.rep.OrphanOutcomes, Entry{Line: n, Record: rec})
			return
		}
		if len(es) == 1 {
			delete(v.open, k)
		} else {
			v.open[k] = es[1:]
		}
	}
}

// isFragment reports whether line could be the start of a record that was
// never finished. A whole JSON object is not: the end of a record is its
// only closing brace at depth zero.
func isFragment(line []byte) bool {
	if !bytes.HasPrefix(line, recordStart) && (len(line) == 0 || !bytes.HasPrefix(recordStart, line)) {
		return false
	}
	return !json.Valid(line)
}

// readLine reads one line into buf[:0], without its newline. terminated
// is false for a final line with no newline; a line longer than MaxLine is
// skipped to its end and returned empty with tooLong set. It returns
// io.EOF with an empty, unterminated line at the end of the input.
func readLine(br *bufio.Reader, buf []byte) (line []byte, terminated, tooLong bool, err error) {
	buf = buf[:0]
	for {
		frag, err := br.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(frag) > MaxLine {
				tooLong, buf = true, buf[:0]
			} else {
				buf = append(buf, frag...)
			}
		}
		switch {
		case err == nil:
			if !tooLong {
				buf = buf[:len(buf)-1]
			}
			return buf, true, tooLong, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return buf, false, tooLong, err
		}
	}
}

// Tail returns the last n records of the log at path, oldest first,
// reading the file from its end. Lines that are not records are skipped.
// Tail does not check hashes or the chain: use Verify for that.
func Tail(path string, n int) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("audit: tail: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("audit: tail: %w", err)
	}
	if n <= 0 {
		return nil, nil
	}
	var out []Record
	err = scanBack(f, fi.Size(), func(line []byte, _ bool) bool {
		if rec, _, err := parseLine(line); err == nil {
			out = append(out, rec)
		}
		return len(out) < n
	})
	if errors.Is(err, ErrLongLine) {
		return nil, fmt.Errorf("audit: tail %s: %w; mcphost never writes such a line: run \"mcphost audit verify\" to see where it starts", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("audit: tail %s: %w", path, err)
	}
	slices.Reverse(out)
	return out, nil
}

// CallRecords returns the records of the call with id callID, of every
// session, oldest first: its intents and its outcome (none for no id).
// Like Tail it skips lines that are not records and checks no hash.
func CallRecords(path, callID string) ([]Record, error) {
	return records(path, func(r *Record) bool { return callID != "" && r.CallID == callID })
}

// ApprovalRecords returns the records about the held call with approval id
// id, oldest first: the approval records of its holding, its answer and
// its use, and the intent and outcome of the retry that ran under it
// (none for no id). Like Tail it skips lines that are not records and
// checks no hash.
func ApprovalRecords(path, id string) ([]Record, error) {
	return records(path, func(r *Record) bool { return id != "" && r.ApprovalID == id })
}

// records returns the records of the log at path that keep accepts, oldest
// first.
func records(path string, keep func(*Record) bool) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	var out []Record
	err = scanBack(f, fi.Size(), func(line []byte, _ bool) bool {
		if rec, _, err := parseLine(line); err == nil && keep(&rec) {
			out = append(out, rec)
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("audit: read %s: %w", path, err)
	}
	slices.Reverse(out)
	return out, nil
}
