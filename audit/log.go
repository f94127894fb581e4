package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// Errors returned by Open and Append.
var (
	// ErrClosed is returned by Append after Close.
	ErrClosed = errors.New("audit: log is closed")
	// ErrNotLog is returned by Open and Append for a file that has content
	// but no record, and whose content does not look like a record cut short:
	// most likely the wrong path.
	ErrNotLog = errors.New("audit: file is not an audit log")
	// ErrTooLarge is returned by Append for a record whose line would be
	// longer than MaxLine even without its raw data and annotations.
	ErrTooLarge = errors.New("audit: record too large")
)

// Limits on the fields of a record that can grow with what a server sends.
const (
	// MaxData is the longest Args or Result stored with Options.RecordData;
	// a longer one is stored as the JSON string "[omitted: N bytes]".
	MaxData = 128 << 10
	// MaxAnnotations is the longest Annotations stored; a longer value is
	// stored as the JSON string "[omitted: N bytes]".
	MaxAnnotations = 64 << 10
	// MaxDetail is the longest Attempt.Detail stored, in bytes; a longer one
	// is cut at a character boundary and ends with "…".
	MaxDetail = 2 << 10
)

// Options configure a Log. The zero value is the safe default: the real
// clock, no raw arguments or results, a sync after every record.
type Options struct {
	// Now is the clock for Record.Time; nil means time.Now.
	Now func() time.Time
	// RecordData keeps the raw arguments and results (Record.Args,
	// Record.Result), passed through Redact and capped at MaxData. Without
	// it Append stores only their hashes and sizes.
	RecordData bool
	// Secrets are exact values that must never be written, such as the
	// environment and header values of the configured servers. Append
	// replaces them with "[REDACTED]" in Attempt.Detail, Reasons and, with
	// RecordData, in the strings of Args and Result. Values shorter than
	// four bytes are ignored.
	Secrets []string
	// NoSync skips every sync (and the one after creating the file).
	// Records then reach the disk when the kernel writes them back: a power
	// failure can lose the last ones, and an intent is no longer known to
	// be durable before its call runs. For tests and benchmarks.
	NoSync bool
	// Sync makes what was written to the file durable; nil means
	// fdatasync(2) where the system has it (the file's data and its size,
	// all a reader needs), else (*os.File).Sync. It lets tests stand in for
	// a disk that fails, and may be called from a goroutine of the Log's
	// own, never twice at once.
	Sync func(*os.File) error
	// SyncDelay bounds how long a record that Append does not wait for (an
	// outcome, or the intent of a read) stays written but not synced: a
	// sync starts at most this long after it was written, unless an
	// intent's sync or Close covers it first. Zero or less means
	// DefaultSyncDelay.
	SyncDelay time.Duration
	// Heads, when set, keeps the log's head outside the log: Close records
	// it there (see SaveHead), so that removing records from the end of the
	// log can be detected with CheckHead.
	Heads HeadStore
}

// Log appends records to one audit file. It is safe for concurrent use by
// many goroutines, and several processes may append to the same file at
// once (on systems with flock, see the package documentation).
type Log struct {
	path string
	opts Options

	mu     sync.Mutex
	f      *os.File
	closed bool
	failed error // a sync failed or records vanished: nothing more is appended

	// The end of the file as this Log last saw it. size is -1 when unknown.
	size   int64
	seq    uint64
	hash   string
	needNL bool // the file ends in a partial line
	buf    []byte

	// Syncing (sync.go). written counts the records this Log wrote, synced
	// how many of the first of them are known to be on disk.
	cond    *sync.Cond // on mu: a sync ended
	written uint64
	synced  uint64
	syncing bool        // a sync runs, without mu
	timer   *time.Timer // a background sync is due
}

// Open opens the audit log at path for appending, creating the file (mode
// 0600) and its missing parent directories (mode 0700). An existing file
// must be a log: Open reads its last record, and fails with ErrNotLog when
// the file has content but none of it looks like a record.
func Open(path string, opts Options) (*Log, error) {
	opts = opts.withDefaults()
	if opts.Sync == nil {
		opts.Sync = syncData
	}
	if opts.SyncDelay <= 0 {
		opts.SyncDelay = DefaultSyncDelay
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("audit: open %s: %w", path, err)
	}
	created := true
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		created = false
		f, err = os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	}
	if err != nil {
		return nil, fmt.Errorf("audit: open %s: %w", path, err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file", fi.Mode().Type())
	}
	if err == nil && created && !opts.NoSync {
		// The new file's directory entry must survive a crash too.
		err = syncDir(dir)
	}
	l := &Log{path: path, opts: opts, f: f, size: -1}
	l.cond = sync.NewCond(&l.mu)
	if err == nil {
		err = l.locked(l.refresh)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("audit: open %s: %w", path, err)
	}
	// encoding/json builds a type's encoder on its first use; build
	// Record's now, so that the first Append, on the way to the first tool
	// call, does not pay for it (a fifth of its time).
	_, _ = json.Marshal(&Record{})
	return l, nil
}

// Append completes r and writes it as one line: it sets r.V, r.Seq, r.Time
// (from Options.Now, in UTC), r.Prev and r.Hash, fills ArgsHash/ArgsSize and
// ResultHash/ResultSize from Args and Result when those are empty, drops or
// redacts Args and Result (Options.RecordData), scrubs credentials from and
// caps Attempt.Detail, hides Options.Secrets, and caps Annotations.
// Afterwards r holds exactly what was written. r.Kind must be Intent,
// Outcome or Approval.
//
// When Append returns nil the record is in the file: written with one
// write(2), so no crash of this process can lose it. An intent whose Class
// is not ReadClass is also on disk (synced), unless Options.NoSync, with
// every record written before it. Any other record (an outcome, a read's
// intent) reaches the disk with the next sync: the next such intent's, a
// background one at most Options.SyncDelay later, or Close's; only a power
// failure or a crash of the system before then can lose it. When Append
// returns an error the caller must act as if nothing was recorded (for an
// intent: refuse any call that is not a read). A failed write may leave a
// partial line, which the next Append steps over (see the package
// documentation). After a failed sync, whether Append's own or a background
// one, the Log refuses every later Append, because the kernel may have
// dropped data it had accepted: close it and open the file again. It does
// the same when the file became shorter than this Log left it: records
// were removed.
func (l *Log) Append(r *Record) error {
	if r == nil {
		return errors.New("audit: append: nil record")
	}
	if r.Kind != Intent && r.Kind != Outcome && r.Kind != Approval {
		return fmt.Errorf("audit: append: kind %q: want %q, %q or %q", r.Kind, Intent, Outcome, Approval)
	}
	l.opts.prepare(r)

	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return ErrClosed
	case l.failed != nil:
		return fmt.Errorf("audit: append to %s: %w", l.path, l.failed)
	}
	// The file lock is held for the write alone, never across a sync or
	// between records: a process that is stopped (Ctrl-Z, SIGSTOP, a
	// debugger) between two records must not hold up every other
	// process's Append.
	if err := l.lockedFile(func() error { return l.write(r) }); err != nil {
		return err
	}
	switch {
	case l.opts.NoSync:
		return nil
	case waitsForDisk(r):
		// Other processes append while the disk works, and concurrent
		// intents share one sync.
		return l.syncThrough(l.written)
	default:
		l.syncSoon()
		return nil
	}
}

// write appends r at the end of the file. l.mu and the file lock are held.
func (l *Log) write(r *Record) error {
	if err := l.refresh(); err != nil {
		return err
	}
	line := l.buf[:0]
	if l.needNL {
		// A writer died mid-line: start on a fresh line, leaving the
		// fragment as a line of its own that Verify reports as truncated.
		line = append(line, '\n')
	}
	line, err := l.opts.encodeNext(line, r, Head{Seq: l.seq, Hash: l.hash})
	if errors.Is(err, ErrTooLarge) {
		return fmt.Errorf("audit: append to %s: %w", l.path, err)
	}
	if err != nil {
		return err
	}
	if cap(line) <= 64<<10 {
		l.buf = line[:0]
	}
	// With O_APPEND each write lands at the current end of the file, and the
	// file lock keeps other mcphost processes out until it is done.
	n, err := l.f.Write(line)
	if err != nil {
		l.size = -1
		return fmt.Errorf("audit: append to %s: %w", l.path, err)
	}
	l.size += int64(n)
	l.seq, l.hash, l.needNL = r.Seq, r.Hash, false
	l.written++
	return nil
}

// refresh reads the last record of the file again when the file's size is
// not what this Log left it at: another process appended (or someone
// truncated the file). l.mu or exclusive use, and the file lock, are held.
func (l *Log) refresh() error {
	fi, err := l.f.Stat()
	if err != nil {
		return fmt.Errorf("audit: stat %s: %w", l.path, err)
	}
	if fi.Size() == l.size {
		return nil
	}
	if l.size >= 0 && fi.Size() < l.size {
		// Other writers only ever append: records this Log wrote or saw
		// were removed. Chaining to what is left would hide that.
		l.failed = fmt.Errorf("the file shrank from %d to %d bytes since this log last wrote it: records were removed; run \"mcphost audit verify\"", l.size, fi.Size())
		return l.failed
	}
	seq, hash, needNL, err := lastRecord(l.f, fi.Size())
	if errors.Is(err, ErrLongLine) {
		return fmt.Errorf("audit: read end of %s: %w; mcphost never writes such a line: run \"mcphost audit verify\" to see it, and move the file aside to start a new log", l.path, err)
	}
	if err != nil {
		return fmt.Errorf("audit: read end of %s: %w", l.path, err)
	}
	l.size, l.seq, l.hash, l.needNL = fi.Size(), seq, hash, needNL
	return nil
}

// lastRecord finds the seq and hash of the last record in the first size
// bytes of r, stepping back over lines that are not records, and reports
// whether the file ends without a newline. With no record it returns 0 and
// Genesis, or ErrNotLog if a line it stepped over is neither empty nor an
// unfinished record.
func lastRecord(r io.ReaderAt, size int64) (seq uint64, hash string, needNL bool, err error) {
	seq, hash = 0, Genesis
	found, fragmentsOnly := false, true
	err = scanBack(r, size, func(line []byte, terminated bool) bool {
		if !terminated {
			needNL = true
		}
		if rec, _, perr := parseLine(line); perr == nil {
			seq, hash, found = rec.Seq, rec.Hash, true
			return false
		}
		if len(line) > 0 && !isFragment(line) {
			fragmentsOnly = false
		}
		return true
	})
	if err == nil && !found && !fragmentsOnly {
		err = ErrNotLog
	}
	return seq, hash, needNL, err
}

// withDefaults fills in what every writer of a chain shares: the clock,
// and the secrets worth hiding, longest first.
func (o Options) withDefaults() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	var secrets []string
	for _, v := range o.Secrets {
		if len(v) >= 4 {
			secrets = append(secrets, v)
		}
	}
	// Longest first, so that a secret containing another is replaced whole.
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	o.Secrets = secrets
	return o
}

// encodeNext completes r as the record after prev (V, Seq, Time, Prev,
// Hash) and appends its line, newline included, to dst, dropping r's raw
// fields when the line would be longer than MaxLine. An error wrapping
// ErrTooLarge says the line is too long even without them.
func (o *Options) encodeNext(dst []byte, r *Record, prev Head) ([]byte, error) {
	r.V = Version
	r.Seq = prev.Seq + 1
	r.Time = Timestamp{o.Now().UTC()}
	r.Prev = prev.Hash
	start := len(dst)
	line, err := appendLine(dst, r)
	if err == nil && len(line)-start > MaxLine && dropBulk(r) {
		line, err = appendLine(line[:start], r)
	}
	if err != nil {
		return dst, err
	}
	if len(line)-start > MaxLine {
		return dst, fmt.Errorf("%d bytes: %w", len(line)-start, ErrTooLarge)
	}
	return line, nil
}

// prepare applies Options and the field limits to r before it is encoded.
func (o *Options) prepare(r *Record) {
	fillHash(r.Args, &r.ArgsHash, &r.ArgsSize)
	fillHash(r.Result, &r.ResultHash, &r.ResultSize)
	if o.RecordData {
		r.Args, r.Result = o.keepData(r.Args), o.keepData(r.Result)
	} else {
		r.Args, r.Result = nil, nil
	}
	if len(r.Annotations) > MaxAnnotations {
		r.Annotations = omitted(len(r.Annotations))
	}
	for i := range r.Attempts {
		d := capString(r.Attempts[i].Detail, MaxDetail)
		r.Attempts[i].Detail = capString(hide(scrub(d), o.Secrets), MaxDetail)
	}
	if len(o.Secrets) > 0 {
		// The slice may be shared with the caller's other records.
		reasons := slices.Clone(r.Reasons)
		for i, s := range reasons {
			reasons[i] = hide(s, o.Secrets)
		}
		r.Reasons = reasons
	}
}

func fillHash(raw json.RawMessage, hash *string, size *int64) {
	if len(raw) == 0 {
		return
	}
	if *hash == "" {
		*hash = HashBytes(raw)
	}
	if *size == 0 {
		*size = int64(len(raw))
	}
}

func (o *Options) keepData(raw json.RawMessage) json.RawMessage {
	if len(raw) > MaxData {
		return omitted(len(raw))
	}
	return redact(raw, o.Secrets)
}

// dropBulk replaces the raw fields of r by markers, and reports whether
// there was anything to drop.
func dropBulk(r *Record) bool {
	dropped := false
	for _, p := range []*json.RawMessage{&r.Args, &r.Result, &r.Annotations} {
		if len(*p) > 0 {
			*p = omitted(len(*p))
			dropped = true
		}
	}
	return dropped
}

func omitted(n int) json.RawMessage {
	return json.RawMessage(`"[omitted: ` + strconv.Itoa(n) + ` bytes]"`)
}

// capString cuts s to at most n bytes at a character boundary, marking the
// cut with "…".
func capString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…"
	i := n - len(mark)
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + mark
}

// locked runs fn holding l.mu and the file lock.
func (l *Log) locked(fn func() error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lockedFile(fn)
}

// lockedFile runs fn holding the file lock; l.mu is held.
func (l *Log) lockedFile(fn func() error) (err error) {
	if err := lockFile(l.f); err != nil {
		return fmt.Errorf("audit: lock %s: %w", l.path, err)
	}
	defer func() {
		if uerr := unlockFile(l.f); uerr != nil && err == nil {
			l.size = -1
			err = fmt.Errorf("audit: unlock %s: %w", l.path, uerr)
		}
	}()
	return fn()
}

// Close syncs and closes the file and, with Options.Heads, records the
// log's head there (see SaveHead). It may be called more than once and
// concurrently with Append; Appends after it fail with ErrClosed.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	var errs []error
	if l.timer != nil {
		l.timer.Stop() // if it already fired, it sees l.closed and returns
		l.timer = nil
	}
	for l.syncing {
		l.cond.Wait() // a sync without mu still uses the file
	}
	if !l.opts.NoSync && l.failed == nil {
		if err := l.opts.Sync(l.f); err != nil {
			errs = append(errs, fmt.Errorf("audit: sync %s: %w", l.path, err))
		}
	}
	if l.opts.Heads != nil && l.size >= 0 {
		if err := SaveHead(l.opts.Heads, l.path, l.f, Head{Seq: l.seq, Hash: l.hash}); err != nil {
			errs = append(errs, err)
		}
	}
	if err := l.f.Close(); err != nil {
		errs = append(errs, fmt.Errorf("audit: close %s: %w", l.path, err))
	}
	return errors.Join(errs...)
}

// Head returns the seq and hash of the last record this Log wrote or read
// back from the file (0 and Genesis for an empty log).
func (l *Log) Head() Head {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Head{Seq: l.seq, Hash: l.hash}
}

// Path returns the file the log appends to.
func (l *Log) Path() string { return l.path }
