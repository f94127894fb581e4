package chatlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/llm"
)

// CorruptError says why a session file does not read back. The file is
// left as it is.
type CorruptError struct {
	Path string
	Line int // 0 when the problem is the file as a whole
	Why  string
}

func (e *CorruptError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("the session file %s is damaged at line %d: %s; it is left as it is", e.Path, e.Line, e.Why)
	}
	return fmt.Sprintf("the session file %s is damaged: %s; it is left as it is", e.Path, e.Why)
}

// ErrNotFound is returned for a session id with no file.
var ErrNotFound = errors.New("no such session")

// Session is a session read back from its file.
type Session struct {
	Header  Header
	Records []Record // every record after the header, texts resolved
	path    string
	dir     string
	// outcomes are the audit log's statuses of the calls started but not
	// ended in the file, by mcphost's call id (Settle).
	outcomes map[string]audit.Status
}

// Path returns the session file's path.
func (s *Session) Path() string { return s.path }

// Load reads the session id from dir, with the texts stored apart. A file
// that does not read back cleanly gives a *CorruptError.
func Load(dir, id string) (*Session, error) {
	if !ValidID(id) {
		return nil, fmt.Errorf("%q is not a session id (mcphost sessions lists them)", id)
	}
	path := filepath.Join(dir, id+".jsonl")
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("session %s: %w (mcphost sessions lists them)", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read session %s: %w", id, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read session %s: %w", id, err)
	}
	if fi.Size() > MaxFile {
		return nil, &CorruptError{Path: path, Why: fmt.Sprintf("it is %d bytes, over the %d-byte limit", fi.Size(), MaxFile)}
	}
	s := &Session{path: path, dir: dir}
	if err := s.read(f, id); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Session) read(r io.Reader, id string) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := readLine(br)
		if err == io.EOF {
			if n == 1 {
				return &CorruptError{Path: s.path, Why: "it is empty"}
			}
			return nil
		}
		if err != nil {
			return &CorruptError{Path: s.path, Line: n, Why: err.Error()}
		}
		var rec Record
		if err := json.Unmarshal(line, &rec); err != nil {
			return &CorruptError{Path: s.path, Line: n, Why: "not a record: " + err.Error()}
		}
		if n == 1 {
			if rec.Type != TypeSession || rec.Session == nil {
				return &CorruptError{Path: s.path, Line: 1, Why: "the first line is not the session's header"}
			}
			if rec.Session.Version > Version {
				return &CorruptError{Path: s.path, Line: 1, Why: fmt.Sprintf("format version %d is newer than this mcphost reads (%d)", rec.Session.Version, Version)}
			}
			if rec.Session.ID != id {
				return &CorruptError{Path: s.path, Line: 1, Why: fmt.Sprintf("the header names session %q", rec.Session.ID)}
			}
			s.Header = *rec.Session
			continue
		}
		if !knownType(rec) {
			return &CorruptError{Path: s.path, Line: n, Why: fmt.Sprintf("a record of type %q without its content", rec.Type)}
		}
		s.resolve(&rec)
		s.Records = append(s.Records, rec)
	}
}

func knownType(r Record) bool {
	switch r.Type {
	case TypeMessage:
		return r.Message != nil
	case TypeCall:
		return r.Call != nil
	case TypeNote:
		return true
	}
	return false
}

// readLine returns the next line without its newline, at most MaxLine
// bytes of it. A last line without a newline is an error: the writer
// stopped in the middle of it.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > MaxLine+1 {
			return nil, fmt.Errorf("a line longer than %d bytes", MaxLine)
		}
		switch {
		case err == nil:
			return buf[:len(buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && len(buf) == 0:
			return nil, io.EOF
		case err == io.EOF:
			return nil, errors.New("the last line is incomplete (mcphost stopped while writing it)")
		default:
			return nil, err
		}
	}
}

func (s *Session) resolve(r *Record) {
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
		texts = append(texts, &c.Args, &c.Content)
		if c.Result.Ref != "" { // shown in a card: the model has its own copy
			c.Result.S = readText(textDir(s.dir, s.Header.ID), c.Result.Ref, c.Result.Bytes, MaxResultPreview)
		}
	}
	for _, t := range texts {
		if t.Ref != "" {
			t.S = readText(textDir(s.dir, s.Header.ID), t.Ref, t.Bytes, MaxText)
		}
	}
}

// readText reads a text stored apart, or says why it cannot be. A text
// over limit bytes is read up to limit (on a character boundary), with a
// note of what is left out, when limit is below MaxText; otherwise it is
// not read at all.
func readText(dir, ref string, size, limit int) string {
	path := filepath.Join(dir, ref)
	if size > MaxText && limit >= MaxText {
		return fmt.Sprintf("[a text of %d bytes, over the %d-byte limit for reading back, is in %s]", size, MaxText, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("[a text of %d bytes could not be read back: %v]", size, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() != int64(size) {
		return fmt.Sprintf("[a text of %d bytes was changed after it was saved]", size)
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(min(size, limit))))
	if err != nil {
		return fmt.Sprintf("[a text of %d bytes could not be read back: %v]", size, err)
	}
	if len(b) < size {
		cut := len(b)
		for i := 0; i < utf8.UTFMax && cut > 0; i++ { // not in the middle of a character
			if r, n := utf8.DecodeLastRune(b[:cut]); r != utf8.RuneError || n > 1 {
				break
			}
			cut--
		}
		return string(b[:cut]) + fmt.Sprintf("\n[… %d more bytes, in %s]", size-cut, path)
	}
	return string(b)
}

// History returns the model's conversation since the last NoteCleared. A
// call the model asked for that has no result (the session ended in the
// middle of its turn) is answered as it ended: from its own record in the
// file, else, if it was started, from the audit log (call Settle first;
// an intent without an outcome, or no audit record, is an unknown
// outcome), and as not run only when it was never started.
func (s *Session) History() []llm.Message {
	msgs, _ := s.conversation()
	return msgs
}

// Ran returns what the session last ran with: the header, with the
// servers of its last NoteResumed note, and the model and base URL of its
// last NoteResumed or NoteModel note, whichever came later.
func (s *Session) Ran() Header {
	h := s.Header
	model := false
	for i := len(s.Records) - 1; i >= 0; i-- {
		r := s.Records[i]
		if r.Type != TypeNote || r.Session == nil || (r.Note != NoteResumed && r.Note != NoteModel) {
			continue
		}
		if !model {
			h.Model, h.BaseURL, model = r.Session.Model, r.Session.BaseURL, true
		}
		if r.Note == NoteResumed {
			h.Servers = r.Session.Servers
			break
		}
	}
	return h
}

// Calls returns the calls whose results are in History, oldest first, as
// the file (and Settle) knows them: for host.LoopOptions.Past.
func (s *Session) Calls() []*host.CallEntry {
	_, calls := s.conversation()
	return calls
}

// Continue opens the session's file to append to it. The file must have
// read back cleanly (Load): Continue never creates, truncates or rewrites
// it.
func (s *Session) Continue(now func() time.Time) (*Log, error) {
	f, err := os.OpenFile(s.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("continue session %s: %w", s.Header.ID, err)
	}
	if now == nil {
		now = time.Now
	}
	return &Log{dir: s.dir, header: s.Header, now: now, f: f}, nil
}

// Summary is a session as listed: its header and its last message.
type Summary struct {
	Header
	Updated time.Time // the file's modification time
	// First is the person's first message, on one line, when it is within
	// the file's first headBytes: what the chat is about.
	First string
	// Last is the last thing the person or the model wrote, on one line,
	// when it is within the file's last tailBytes.
	Last string
	// Err, when set, says why the file could not be read; Header then has
	// only the ID.
	Err error
}

const (
	headBytes = 64 << 10
	tailBytes = 256 << 10
)

// List returns the sessions in dir, the most recently updated first. A
// missing dir has none. Damaged files are listed with Err set.
func List(dir string) ([]Summary, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list the sessions: %w", err)
	}
	var out []Summary
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || !ValidID(id) || !e.Type().IsRegular() {
			continue
		}
		out = append(out, summarize(filepath.Join(dir, e.Name()), id))
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Updated.Equal(out[j].Updated) {
			return out[i].Updated.After(out[j].Updated)
		}
		return out[i].ID > out[j].ID
	})
	return out, nil
}

func summarize(path, id string) Summary {
	s := Summary{Header: Header{ID: id}}
	f, err := os.Open(path)
	if err != nil {
		s.Err = err
		return s
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		s.Err = err
		return s
	}
	s.Updated = fi.ModTime()
	head := make([]byte, min(fi.Size(), headBytes))
	if _, err := io.ReadFull(f, head); err != nil {
		s.Err = err
		return s
	}
	first, rest, ok := bytes.Cut(head, []byte("\n"))
	var rec Record
	if !ok || json.Unmarshal(first, &rec) != nil || rec.Type != TypeSession || rec.Session == nil || rec.Session.ID != id {
		s.Err = &CorruptError{Path: path, Line: 1, Why: "the first line is not the session's header"}
		return s
	}
	s.Header = *rec.Session
	s.First = firstPrompt(rest)
	tail := head // a file within headBytes is read once
	if int64(len(head)) < fi.Size() {
		off := max(fi.Size()-tailBytes, 0)
		tail = make([]byte, fi.Size()-off)
		if _, err := f.ReadAt(tail, off); err != nil && err != io.EOF {
			s.Err = err
			return s
		}
	}
	lines := bytes.Split(tail, []byte("\n"))
	for i := len(lines) - 1; i >= 0 && s.Last == ""; i-- {
		var r Record
		if json.Unmarshal(lines[i], &r) != nil || r.Message == nil {
			continue
		}
		if r.Message.Role == "user" || r.Message.Role == "assistant" {
			s.Last = summaryText(r.Message.Text)
		}
	}
	return s
}

// firstPrompt returns the first user message among the complete lines of
// head, on one line; "" when there is none there.
func firstPrompt(head []byte) string {
	for len(head) > 0 {
		line, rest, ok := bytes.Cut(head, []byte("\n"))
		if !ok {
			return "" // cut by headBytes: not a whole record
		}
		head = rest
		// Only the person's messages are decoded (Log.write puts no
		// space in either pair): a call's record may be long.
		if !bytes.Contains(line, []byte(`"type":"message"`)) || !bytes.Contains(line, []byte(`"role":"user"`)) {
			continue
		}
		var r userLine
		if json.Unmarshal(line, &r) == nil && r.Message.Role == "user" {
			if t := summaryText(r.Message.Text); t != "" {
				return t
			}
		}
	}
	return ""
}

// userLine is the part of a message record firstPrompt reads.
type userLine struct {
	Message struct {
		Role string `json:"role"`
		Text Text   `json:"text"`
	} `json:"message"`
}

// summaryText is a message's text on one line, or its size when it is
// stored apart (List does not read texts stored apart).
func summaryText(t Text) string {
	s := oneLine(t.S)
	if s == "" && t.Ref != "" {
		s = fmt.Sprintf("[%d bytes]", t.Bytes)
	}
	return s
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:199]) + "…"
	}
	return s
}

// Latest returns the most recently updated readable session started in
// workDir, or ErrNotFound.
func Latest(dir, workDir string) (Summary, error) {
	list, err := List(dir)
	if err != nil {
		return Summary{}, err
	}
	for _, s := range list {
		if s.Err == nil && s.Dir == workDir {
			return s, nil
		}
	}
	return Summary{}, fmt.Errorf("no session was started in %s: %w", workDir, ErrNotFound)
}

// Find returns the session whose id is id, or the only one whose id starts
// with it.
func Find(dir, id string) (Summary, error) {
	list, err := List(dir)
	if err != nil {
		return Summary{}, err
	}
	var found []Summary
	for _, s := range list {
		if s.ID == id {
			return s, nil
		}
		if id != "" && strings.HasPrefix(s.ID, id) {
			found = append(found, s)
		}
	}
	switch len(found) {
	case 0:
		return Summary{}, fmt.Errorf("session %s: %w (mcphost sessions lists them)", id, ErrNotFound)
	case 1:
		return found[0], nil
	}
	return Summary{}, fmt.Errorf("%d sessions start with %s; give more of the id (mcphost sessions lists them)", len(found), id)
}
