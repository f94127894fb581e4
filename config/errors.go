package config

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// Error is a configuration problem that stops loading: a file that cannot be
// read or parsed, an invalid entry, or a bad flag. Callers map it to the
// usage/config exit code.
//
// Line and Col are 1-based and set when the problem is inside a file; Col
// counts characters (Unicode code points, a tab is one), not bytes. For a
// problem with a flag, File, Line and Col are empty and Msg names the flag.
type Error struct {
	File      string
	Line, Col int
	Msg       string
	Err       error // the underlying error, if any

	off int // the byte offset of a problem inside a file, for warnings made of it
}

// Error returns "FILE:LINE:COL: MSG", "FILE: MSG" or "MSG", depending on
// what is known.
func (e *Error) Error() string {
	return position(e.File, e.Line, e.Col) + e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// Warning is a problem that does not stop loading, such as an unknown key or
// a setting that a project file may not make.
type Warning struct {
	File      string
	Line, Col int // as in Error; 0 when the warning is not about one place
	Message   string
}

// String returns "FILE:LINE:COL: MESSAGE", or less when the position is not
// known.
func (w Warning) String() string {
	return position(w.File, w.Line, w.Col) + w.Message
}

func position(file string, line, col int) string {
	switch {
	case file == "":
		return ""
	case line <= 0:
		return file + ": "
	default:
		return fmt.Sprintf("%s:%d:%d: ", file, line, col)
	}
}

var bom = []byte("\xef\xbb\xbf")

// lineCol converts a byte offset in data to a 1-based line and column.
// "\n", "\r\n" and a lone "\r" end a line. The column counts code points
// (an invalid byte counts as one); a byte order mark at the start is not
// counted.
func lineCol(data []byte, off int) (line, col int) {
	return newPositioner(data).pos(off)
}

// positioner computes lineCol for many offsets of one file. Asked for
// offsets in increasing order, it takes linear time in all; a smaller
// offset than the last one starts over from the top.
type positioner struct {
	data      []byte
	off, line int
	col       int // code points between the line's start and off
}

func newPositioner(data []byte) *positioner {
	p := &positioner{data: data}
	p.reset()
	return p
}

func (p *positioner) reset() {
	p.off, p.line, p.col = 0, 1, 0
	if bytes.HasPrefix(p.data, bom) {
		p.off = len(bom)
	}
}

func (p *positioner) pos(off int) (line, col int) {
	off = max(0, min(off, len(p.data)))
	if off < p.off {
		p.reset()
		if off < p.off { // inside the byte order mark
			return 1, 1
		}
	}
	for p.off < off {
		switch c := p.data[p.off]; {
		case c == '\n':
			p.off, p.line, p.col = p.off+1, p.line+1, 0
		case c == '\r':
			p.off++
			if p.off < len(p.data) && p.data[p.off] == '\n' {
				continue // the \n ends the line
			}
			p.line, p.col = p.line+1, 0
		case c < utf8.RuneSelf:
			p.off, p.col = p.off+1, p.col+1
		default:
			_, size := utf8.DecodeRune(p.data[p.off:])
			if p.off+size > off {
				// off is inside this character; count the bytes before it
				// one each and stay where we are.
				return p.line, p.col + off - p.off + 1
			}
			p.off, p.col = p.off+size, p.col+1
		}
	}
	return p.line, p.col + 1
}
