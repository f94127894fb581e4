package llm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// maxEventBytes bounds one line, and the data of one event, of an event
// stream. Providers send deltas of a few hundred bytes; the bound only stops
// a broken or hostile server from growing memory without end.
const maxEventBytes = 4 << 20

// sseEvent is one dispatched event of a text/event-stream. Both slices are
// valid until the next call of [sseReader.next].
type sseEvent struct {
	// name is the value of the last event field, empty when the event had
	// none (the standard's "message").
	name []byte
	// data is the event's data lines joined with "\n".
	data []byte
}

// sseReader reads a text/event-stream as the WHATWG HTML standard defines
// it: lines end in "\n", "\r\n" or "\r"; a line "field: value" sets a field
// (one space after the colon is dropped); a line starting with ":" is a
// comment; a blank line dispatches the event when it has data. The id and
// retry fields are ignored. One field the standard does not know is read:
// "error", as older llama.cpp servers send it (see next). A stream that ends without a blank line after
// its last event dispatches nothing more.
type sseReader struct {
	r     *bufio.Reader
	limit int // maxEventBytes; smaller in tests
	// onLine, if set, is called for every line read, comments included:
	// a sign of life from the server.
	onLine func()

	started bool // the byte order mark has been checked for
	skipLF  bool // the last line ended in "\r"; a "\n" right after it belongs to it
	line    []byte
	name    []byte
	data    []byte
	hasData bool
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReader(r), limit: maxEventBytes}
}

// next returns the next event. At the end of the stream it returns io.EOF;
// any other error is the underlying reader's, or a line or event over the
// limit.
func (s *sseReader) next() (sseEvent, error) {
	s.name, s.data, s.hasData = s.name[:0], s.data[:0], false
	for {
		line, err := s.readLine()
		if err != nil {
			return sseEvent{}, err
		}
		if s.onLine != nil {
			s.onLine()
		}
		if len(line) == 0 {
			if !s.hasData {
				s.name = s.name[:0]
				continue
			}
			return sseEvent{name: s.name, data: s.data[:len(s.data)-1]}, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value, found := bytes.Cut(line, []byte(":"))
		if found && len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(field) {
		case "event":
			s.name = append(s.name[:0], value...)
		case "error":
			// Not a field of the standard: older llama.cpp servers end a
			// failed stream with "error: {…}". It becomes an event named
			// "error" whose data is that value.
			s.name = append(s.name[:0], "error"...)
			fallthrough
		case "data":
			if len(s.data)+len(value)+1 > s.limit {
				return sseEvent{}, fmt.Errorf("event stream: an event has more than %d bytes of data", s.limit)
			}
			s.data = append(s.data, value...)
			s.data = append(s.data, '\n')
			s.hasData = true
		}
	}
}

// readLine returns the next line without its ending. It returns io.EOF at
// the end of the stream, dropping an unterminated last line: the event it
// belonged to cannot be dispatched anyway.
func (s *sseReader) readLine() ([]byte, error) {
	s.line = s.line[:0]
	if !s.started {
		s.started = true
		if b, err := s.r.Peek(3); err == nil && string(b) == "\uFEFF" {
			_, _ = s.r.Discard(3)
		}
	}
	for {
		// Peek(1) waits for more input only when nothing is buffered.
		if _, err := s.r.Peek(1); err != nil {
			if errors.Is(err, io.EOF) {
				return nil, io.EOF
			}
			return nil, err
		}
		buf, _ := s.r.Peek(s.r.Buffered())
		if s.skipLF {
			s.skipLF = false
			if buf[0] == '\n' {
				_, _ = s.r.Discard(1)
				continue
			}
		}
		end := bytes.IndexByte(buf, '\n')
		search := buf
		if end >= 0 {
			search = buf[:end]
		}
		if cr := bytes.IndexByte(search, '\r'); cr >= 0 {
			end = cr
		}
		n := len(buf)
		if end >= 0 {
			n = end
		}
		if len(s.line)+n > s.limit {
			return nil, fmt.Errorf("event stream: a line is longer than %d bytes", s.limit)
		}
		s.line = append(s.line, buf[:n]...)
		if end < 0 {
			_, _ = s.r.Discard(n)
			continue
		}
		s.skipLF = buf[end] == '\r'
		_, _ = s.r.Discard(end + 1)
		return s.line, nil
	}
}
