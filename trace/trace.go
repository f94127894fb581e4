// Package trace writes the JSON-RPC messages mcphost exchanges with its
// servers to a file, as JSON Lines, for `--trace FILE`: what a server author
// reads to see exactly what was said, in which order, both ways.
//
// Each line is one message:
//
//	{"time":"…","server":"tasks","dir":"send","method":"tools/call","id":3,"size":97,"message":{…}}
//
// dir is "send" (mcphost to the server) or "recv"; method is the request's
// or notification's, and for an answer the method of the request it
// answers, when that request was seen; id is the JSON-RPC id as sent. size
// is the message's length in bytes on the wire. message is the message with
// secrets replaced as in the audit log (audit.Redact: keys that look secret,
// bearer tokens, keys with known prefixes, URLs with a password); a message
// over MaxMessage bytes is not kept ("cut": true and size only). A message
// that is not JSON is kept as "text", escaped and cut to MaxMessage.
//
// Writing never fails a call: an error is kept and reported by Close.
package trace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
)

// MaxMessage bounds the bytes of one message the trace keeps.
const MaxMessage = 64 << 10

// maxPending bounds the request ids remembered per server to name the
// method of their answers.
const maxPending = 4096

// Record is one line of a trace.
type Record struct {
	Time    time.Time        `json:"time"`
	Server  string           `json:"server"`
	Dir     client.Direction `json:"dir"`
	Method  string           `json:"method,omitempty"`
	ID      json.RawMessage  `json:"id,omitempty"`
	Size    int              `json:"size"`
	Message json.RawMessage  `json:"message,omitempty"`
	Text    string           `json:"text,omitempty"`
	Cut     bool             `json:"cut,omitempty"`
}

// Writer writes a trace. Its Trace method is a client.Tracer; it is safe
// for concurrent use.
type Writer struct {
	mu      sync.Mutex
	w       *bufio.Writer
	c       io.Closer
	now     func() time.Time
	pending map[string]map[string]string // server → request id → method
	err     error
}

// Append opens path for a trace, adding to what it holds (a trace of an
// earlier run is never lost to the next one), and creates it readable by
// its owner only: a trace holds the conversation with every server.
func Append(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("--trace: %w", err)
	}
	return New(f, f, time.Now), nil
}

// New writes a trace to w; Close closes c (may be nil).
func New(w io.Writer, c io.Closer, now func() time.Time) *Writer {
	return &Writer{w: bufio.NewWriter(w), c: c, now: now, pending: map[string]map[string]string{}}
}

// Trace records one message; it is a client.Tracer. msg nil means the
// message was too large to be handed over: only its direction is known.
func (t *Writer) Trace(server string, dir client.Direction, msg []byte) {
	rec := Record{Time: t.now().UTC(), Server: server, Dir: dir, Size: len(msg)}
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	switch {
	case msg == nil:
		rec.Cut = true
	case json.Unmarshal(msg, &head) != nil:
		rec.Text = string(msg[:min(len(msg), MaxMessage)])
		rec.Cut = len(msg) > MaxMessage
	default:
		rec.Method, rec.ID = head.Method, head.ID
		if len(msg) > MaxMessage {
			rec.Cut = true
		} else {
			rec.Message = audit.Redact(msg)
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pair(&rec)
	line, err := json.Marshal(rec)
	if err == nil {
		line = append(line, '\n')
		_, err = t.w.Write(line)
	}
	if err == nil {
		// Flushed at every line: a trace is read while mcphost runs, and
		// what was said just before a crash is what matters most.
		err = t.w.Flush()
	}
	if err != nil && t.err == nil {
		t.err = err
	}
}

// pair names the method of an answer after the request it answers (ids are
// per direction: a request sent is answered by a message received).
func (t *Writer) pair(rec *Record) {
	if len(rec.ID) == 0 {
		return
	}
	key := string(rec.Dir) + " " + rec.Server
	if rec.Method != "" {
		p := t.pending[key]
		if p == nil {
			p = map[string]string{}
			t.pending[key] = p
		}
		if len(p) < maxPending {
			p[string(rec.ID)] = rec.Method
		}
		return
	}
	other := string(client.Sent)
	if rec.Dir == client.Sent {
		other = string(client.Received)
	}
	if p := t.pending[other+" "+rec.Server]; p != nil {
		if m, ok := p[string(rec.ID)]; ok {
			rec.Method = m
			delete(p, string(rec.ID))
		}
	}
}

// Close flushes and closes the trace and reports the first error met.
func (t *Writer) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	err := t.w.Flush()
	if t.c != nil {
		if cerr := t.c.Close(); err == nil {
			err = cerr
		}
	}
	if t.err != nil {
		return fmt.Errorf("--trace: %w", t.err)
	}
	if err != nil {
		return fmt.Errorf("--trace: %w", err)
	}
	return nil
}
