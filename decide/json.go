package decide

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// A small JSON scanner. Decide must look into call arguments on every call
// without allocating, which encoding/json cannot do; this file validates
// JSON text (RFC 8259, as strict as encoding/json.Valid) and walks valid
// text by byte offsets. The walkers assume valid input but never panic on
// invalid input.

// maxDepth bounds nesting, as encoding/json does; deeper text is invalid.
const maxDepth = 10000

// validJSON reports whether b is exactly one JSON value, optionally
// surrounded by whitespace.
func validJSON(b []byte) bool {
	i, ok := validValue(b, skipWS(b, 0), 0)
	return ok && skipWS(b, i) == len(b)
}

func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

func validValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '{':
		if depth >= maxDepth {
			return i, false
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1, true
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return i, false
			}
			var ok bool
			if i, ok = validString(b, i); !ok {
				return i, false
			}
			i = skipWS(b, i)
			if i >= len(b) || b[i] != ':' {
				return i, false
			}
			if i, ok = validValue(b, skipWS(b, i+1), depth+1); !ok {
				return i, false
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return i, false
			}
			if b[i] == '}' {
				return i + 1, true
			}
			if b[i] != ',' {
				return i, false
			}
			i = skipWS(b, i+1)
		}
	case c == '[':
		if depth >= maxDepth {
			return i, false
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = validValue(b, i, depth+1); !ok {
				return i, false
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return i, false
			}
			if b[i] == ']' {
				return i + 1, true
			}
			if b[i] != ',' {
				return i, false
			}
			i = skipWS(b, i+1)
		}
	case c == '"':
		return validString(b, i)
	case c == '-' || isDigit(c):
		return validNumber(b, i)
	case c == 't':
		return validLiteral(b, i, "true")
	case c == 'f':
		return validLiteral(b, i, "false")
	case c == 'n':
		return validLiteral(b, i, "null")
	}
	return i, false
}

func validLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit), true
	}
	return i, false
}

// plainStringByte marks the bytes a JSON string holds as they are: not a
// quote, a backslash or a control character.
var plainStringByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func validString(b []byte, i int) (int, bool) {
	i++ // opening quote
	for i < len(b) {
		c := b[i]
		switch {
		case plainStringByte[c]:
			i++
		case c == '"':
			return i + 1, true
		case c == '\\':
			if i+1 >= len(b) {
				return i, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if _, ok := hex4(b, i+2); !ok {
					return i, false
				}
				i += 6
			default:
				return i, false
			}
		default:
			return i, false
		}
	}
	return i, false
}

func validNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return i, false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return i, false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	return i, true
}

func isHex(c byte) bool {
	return isDigit(c) || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

// skipValue returns the offset just past the value that starts at or after
// offset i (leading whitespace is skipped).
func skipValue(b []byte, i int) int {
	i = skipWS(b, i)
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b)
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// skipString returns the offset just past the string whose opening quote
// is at b[i]. Short strings are scanned byte by byte; past the first 32
// bytes it switches to bytes.IndexByte, which is faster on long strings.
func skipString(b []byte, i int) int {
	j := i + 1
	for end := min(len(b), j+32); j < end; j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	if j > len(b) {
		return len(b)
	}
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return len(b)
		}
		j += k
		escaped := false
		for m := j - 1; m > i && b[m] == '\\'; m-- {
			escaped = !escaped
		}
		if !escaped {
			return j + 1
		}
		j++
	}
}

// members iterates over the members of the object that starts at b[i].
type members struct {
	b  []byte
	i  int
	ks int // offset of the last key returned by next
}

func newMembers(b []byte, i int) members { return members{b: b, i: i + 1} }

// next returns the raw key (between its quotes, escapes not decoded) and
// the offsets of the member's value.
func (m *members) next() (key []byte, vs, ve int, ok bool) {
	b := m.b
	for {
		m.i = skipWS(b, m.i)
		if m.i >= len(b) || b[m.i] == '}' {
			return nil, 0, 0, false
		}
		if b[m.i] == ',' {
			m.i++
			continue
		}
		if b[m.i] != '"' {
			m.i = len(b)
			return nil, 0, 0, false
		}
		ke := skipString(b, m.i)
		m.ks = m.i + 1
		key = b[m.ks:max(m.ks, ke-1)]
		i := skipWS(b, ke)
		if i < len(b) && b[i] == ':' {
			i++
		}
		vs = skipWS(b, i)
		ve = skipValue(b, vs)
		m.i = ve
		return key, vs, ve, true
	}
}

// elements iterates over the elements of the array that starts at b[i].
type elements struct {
	b []byte
	i int
}

func newElements(b []byte, i int) elements { return elements{b, i + 1} }

func (e *elements) next() (vs, ve int, ok bool) {
	b := e.b
	for {
		e.i = skipWS(b, e.i)
		if e.i >= len(b) || b[e.i] == ']' {
			return 0, 0, false
		}
		if b[e.i] == ',' {
			e.i++
			continue
		}
		vs = e.i
		ve = skipValue(b, vs)
		if ve <= vs {
			e.i = len(b)
			return 0, 0, false
		}
		e.i = ve
		return vs, ve, true
	}
}

// hasByte reports whether c occurs in b.
func hasByte(b []byte, c byte) bool { return bytes.IndexByte(b, c) >= 0 }

// unescape appends the decoded content of a valid JSON string (raw is the
// text between the quotes) to dst. Like encoding/json it turns a lone or
// mismatched surrogate escape into U+FFFD; other bytes are copied as they
// are. Passing a stack buffer as dst keeps short strings off the heap.
func unescape(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' || i+1 >= len(raw) {
			dst = append(dst, c)
			i++
			continue
		}
		switch raw[i+1] {
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'u':
			r, ok := hex4(raw, i+2)
			if !ok {
				return append(dst, raw[i:]...)
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if r2, ok := hex4(raw, i+2); ok && i+1 < len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
						dst = utf8.AppendRune(dst, pair)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default: // '"', '\\', '/'
			dst = append(dst, raw[i+1])
		}
		i += 2
	}
	return dst
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case isDigit(c):
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
