package ui

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// History bounds: how many messages are kept, and how long one may be.
const (
	historyMax      = 1000
	historyMaxBytes = 64 << 10
)

// history is what the person wrote, oldest first: messages and commands
// from this session and, when it has a file, earlier ones. The file is JSON
// Lines ({"text": …} per line), readable by the person only; it is appended
// to as messages are sent and rewritten when it holds twice the bound.
type history struct {
	path    string
	entries []string
	// at is the entry the input shows while browsing: len(entries) is the
	// draft, which is kept in draft.
	at    int
	draft string
}

type historyLine struct {
	Text string `json:"text"`
}

// loadHistory reads the history file at path (empty: no file). A missing
// file is an empty history; a line that is not JSON is skipped, so one
// damaged line loses one message, not the history.
func loadHistory(path string) (*history, error) {
	h := &history{path: path}
	if path == "" {
		return h, nil
	}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return h, nil
	}
	if err != nil {
		return h, fmt.Errorf("reading the input history: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 4*historyMaxBytes)
	n := 0
	for sc.Scan() {
		n++
		var l historyLine
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Text == "" {
			continue
		}
		h.entries = append(h.entries, l.Text)
	}
	if err := sc.Err(); err != nil {
		return h, fmt.Errorf("reading the input history %s: %w", path, err)
	}
	if len(h.entries) > historyMax {
		h.entries = append([]string(nil), h.entries[len(h.entries)-historyMax:]...)
	}
	h.at = len(h.entries)
	if n > 2*historyMax {
		return h, h.rewrite()
	}
	return h, nil
}

// add records text as the newest entry (not twice in a row) and ends
// browsing. It returns an error only about the file; the entry is kept for
// the session either way.
func (h *history) add(text string) error {
	text = strings.TrimSpace(text)
	if text == "" || len(text) > historyMaxBytes {
		h.reset()
		return nil
	}
	if n := len(h.entries); n == 0 || h.entries[n-1] != text {
		h.entries = append(h.entries, text)
		if len(h.entries) > historyMax {
			h.entries = h.entries[len(h.entries)-historyMax:]
		}
		if err := h.appendFile(text); err != nil {
			h.reset()
			return err
		}
	}
	h.reset()
	return nil
}

func (h *history) reset() { h.at, h.draft = len(h.entries), "" }

// browsing reports whether the input shows an entry rather than the draft.
func (h *history) browsing() bool { return h.at < len(h.entries) }

// prev moves to the previous entry, keeping cur as the draft when leaving
// it; ok is false at the oldest entry.
func (h *history) prev(cur string) (string, bool) {
	if h.at == 0 {
		return "", false
	}
	if h.at == len(h.entries) {
		h.draft = cur
	}
	h.at--
	return h.entries[h.at], true
}

// next moves to the next entry, or back to the draft.
func (h *history) next() (string, bool) {
	if h.at >= len(h.entries) {
		return "", false
	}
	h.at++
	if h.at == len(h.entries) {
		return h.draft, true
	}
	return h.entries[h.at], true
}

// search returns the newest entry before index from that contains query
// (case-insensitively), and its index; -1 if there is none.
func (h *history) search(query string, from int) (string, int) {
	q := strings.ToLower(query)
	for i := min(from, len(h.entries)) - 1; i >= 0; i-- {
		if strings.Contains(strings.ToLower(h.entries[i]), q) {
			return h.entries[i], i
		}
	}
	return "", -1
}

func (h *history) appendFile(text string) error {
	if h.path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
		return fmt.Errorf("saving the input history: %w", err)
	}
	f, err := os.OpenFile(h.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("saving the input history: %w", err)
	}
	line, _ := json.Marshal(historyLine{Text: text})
	_, err = f.Write(append(line, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("saving the input history %s: %w", h.path, err)
	}
	return nil
}

// rewrite replaces the file with the kept entries, atomically.
func (h *history) rewrite() error {
	var b bytes.Buffer
	for _, e := range h.entries {
		line, _ := json.Marshal(historyLine{Text: e})
		b.Write(append(line, '\n'))
	}
	tmp, err := os.CreateTemp(filepath.Dir(h.path), ".history-*")
	if err != nil {
		return fmt.Errorf("trimming the input history: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(b.Bytes())
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), h.path)
	}
	if err != nil {
		return fmt.Errorf("trimming the input history %s: %w", h.path, err)
	}
	return nil
}
