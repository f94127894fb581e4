package chatlog

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Limits of what is written and read.
const (
	// MaxLine bounds one record. Long texts are stored apart, so only a
	// record with very many short parts comes near it; such a record is
	// refused rather than written unreadable.
	MaxLine = 1 << 20
	// MaxFile bounds a session file read back whole.
	MaxFile = 256 << 20
	// MaxText bounds a text stored apart that is read back; a longer one is
	// replaced by a note saying its size.
	MaxText = 16 << 20
	// MaxResultPreview bounds the part of a call's result read back with
	// the session (it is shown in the call's card; the model's copy is a
	// message); the rest stays in its file.
	MaxResultPreview = 256 << 10
	// DefaultInlineMax is the longest text kept inside a record.
	DefaultInlineMax = 16 << 10
)

// ErrClosed is returned by Append after Close.
var ErrClosed = errors.New("chatlog: the session log is closed")

// ValidID reports whether id can name a session file: letters, digits, '-'
// and '_', so that an id never leaves the directory.
func ValidID(id string) bool {
	// Checked by hand rather than with a regexp compiled at start: every
	// command imports this package. The rule: [A-Za-z0-9][A-Za-z0-9_-]{0,63}.
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || c != '_' && c != '-') {
			return false
		}
	}
	return true
}

// NewID returns a fresh session id: the start time (UTC), so that ids sort
// by age, and random digits.
func NewID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// Log appends the records of one session. It is safe for concurrent use.
// The file is created by the first Append, so a chat in which nothing was
// said leaves no file.
type Log struct {
	// InlineMax is the longest text kept inside a record (default
	// DefaultInlineMax); set it before the first Append.
	InlineMax int

	dir    string
	header Header
	now    func() time.Time

	mu     sync.Mutex
	f      *os.File
	closed bool
}

// New returns the log of a new session in dir. h.ID must be valid (see
// NewID); h.Version is set. now is the clock (nil: time.Now).
func New(dir string, h Header, now func() time.Time) (*Log, error) {
	if !ValidID(h.ID) {
		return nil, fmt.Errorf("chatlog: %q is not a valid session id", h.ID)
	}
	if now == nil {
		now = time.Now
	}
	h.Version = Version
	return &Log{dir: dir, header: h, now: now}, nil
}

// ID returns the session's id.
func (l *Log) ID() string { return l.header.ID }

// Header returns the session's header.
func (l *Log) Header() Header { return l.header }

// Path returns the session file's path.
func (l *Log) Path() string { return filepath.Join(l.dir, l.header.ID+".jsonl") }

// Append writes r as one line, setting its time when zero. Long texts in
// r are stored apart first. It returns the first error met; the file is
// left as it was before the call unless the line itself was written in
// part (a full disk), which a later read reports.
func (l *Log) Append(r Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	if err := l.open(); err != nil {
		return err
	}
	if r.Time.IsZero() {
		r.Time = l.now()
	}
	if err := l.storeTexts(&r); err != nil {
		return err
	}
	return l.write(r)
}

// open creates the file with its header line, once. Never O_TRUNC: an
// existing file of the same name is an error, not something to replace.
func (l *Log) open() error {
	if l.f != nil {
		return nil
	}
	if err := os.MkdirAll(l.dir, 0o700); err != nil {
		return fmt.Errorf("save the session: %w", err)
	}
	f, err := os.OpenFile(l.Path(), os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("save the session: %w", err)
	}
	l.f = f
	h := l.header
	if h.Started.IsZero() {
		h.Started = l.now()
		l.header.Started = h.Started
	}
	return l.write(Record{Type: TypeSession, Time: h.Started, Session: &h})
}

func (l *Log) write(r Record) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil { // Encode ends the line
		return fmt.Errorf("save the session: encode a %s record: %w", r.Type, err)
	}
	if b.Len() > MaxLine {
		return fmt.Errorf("save the session: a %s record of %d bytes is over the %d-byte limit; it was not saved", r.Type, b.Len(), MaxLine)
	}
	if _, err := l.f.Write(b.Bytes()); err != nil {
		return fmt.Errorf("save the session: %w", err)
	}
	return nil
}

// storeTexts moves every text of r longer than InlineMax to a file of its
// own.
func (l *Log) storeTexts(r *Record) error {
	var texts []*Text
	if m := r.Message; m != nil {
		texts = append(texts, &m.Text)
		for i := range m.ToolCalls {
			texts = append(texts, &m.ToolCalls[i].Args)
		}
		for i := range m.ToolResults {
			texts = append(texts, &m.ToolResults[i].Content)
		}
	}
	if c := r.Call; c != nil {
		texts = append(texts, &c.Args, &c.Result, &c.Content)
	}
	limit := l.InlineMax
	if limit <= 0 {
		limit = DefaultInlineMax
	}
	for _, t := range texts {
		if t.Ref != "" || len(t.S) <= limit {
			continue
		}
		ref, err := l.storeText(t.S)
		if err != nil {
			return err
		}
		*t = Text{Ref: ref, Bytes: len(t.S)}
	}
	return nil
}

// storeText writes s to <id>.d/<sha256> by way of a temporary file and a
// rename, so that a reference never points at half a text. The name is
// the content's hash: an existing file already holds it.
func (l *Log) storeText(s string) (string, error) {
	sum := sha256.Sum256([]byte(s))
	ref := hex.EncodeToString(sum[:])
	dir := textDir(l.dir, l.header.ID)
	path := filepath.Join(dir, ref)
	if _, err := os.Lstat(path); err == nil {
		return ref, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("save a long text of the session: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return "", fmt.Errorf("save a long text of the session: %w", err)
	}
	_, werr := tmp.WriteString(s)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("save a long text of the session: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("save a long text of the session: %w", err)
	}
	return ref, nil
}

func textDir(dir, id string) string { return filepath.Join(dir, id+".d") }

// Close closes the file. Appends after Close fail with ErrClosed; Close
// may be called more than once.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
