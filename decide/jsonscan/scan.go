package jsonscan

import (
	"bytes"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth is encoding/json's nesting limit: deeper text is not valid JSON
// to it, so it is not to Valid either.
const MaxDepth = 10000

// Valid reports whether b is exactly one JSON value, optionally surrounded
// by whitespace, with what encoding/json.Valid accepts: RFC 8259 with no
// UTF-8 validation and at most MaxDepth levels of nesting.
func Valid(b []byte) bool {
	i, ok := validValue(b, SkipSpace(b, 0), 0)
	return ok && SkipSpace(b, i) == len(b)
}

// SkipSpace returns the offset of the first byte at or after b[i] that is
// not JSON whitespace.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

func validValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '{' || c == '[':
		if depth >= MaxDepth {
			return i, false
		}
		obj := c == '{'
		end := byte(']')
		if obj {
			end = '}'
		}
		i = SkipSpace(b, i+1)
		if i < len(b) && b[i] == end {
			return i + 1, true
		}
		for {
			var ok bool
			if obj {
				if i >= len(b) || b[i] != '"' {
					return i, false
				}
				if i, _, ok = ScanString(b, i); !ok {
					return i, false
				}
				i = SkipSpace(b, i)
				if i >= len(b) || b[i] != ':' {
					return i, false
				}
				i = SkipSpace(b, i+1)
			}
			if i, ok = validValue(b, i, depth+1); !ok {
				return i, false
			}
			i = SkipSpace(b, i)
			if i >= len(b) {
				return i, false
			}
			if b[i] == end {
				return i + 1, true
			}
			if b[i] != ',' {
				return i, false
			}
			i = SkipSpace(b, i+1)
		}
	case c == '"':
		j, _, ok := ScanString(b, i)
		return j, ok
	case c == '-' || '0' <= c && c <= '9':
		return ScanNumber(b, i)
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

// strPlain marks the bytes a string can hold as they are: not a quote, a
// backslash or a control character.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// htmlSafe marks the ASCII bytes json.Marshal writes as they are inside a
// string: printable, and not a quote, a backslash, <, > or &.
var htmlSafe = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = !bytes.ContainsRune([]byte(`"\<>&`), rune(c))
	}
	return t
}()

// ScanString reads the string whose opening quote is b[i] and returns the
// offset after its closing quote. It reports whether the string is valid,
// and whether it is plain: printable ASCII other than '"', '\\', '<', '>'
// and '&' only, so that it decodes, and encodes in either Form, to itself.
func ScanString(b []byte, i int) (end int, plain, ok bool) {
	j := i + 1
	for j < len(b) && htmlSafe[b[j]] {
		j++
	}
	if j < len(b) && b[j] == '"' {
		return j + 1, true, true
	}
	for {
		for j < len(b) && strPlain[b[j]] {
			j++
		}
		if j >= len(b) {
			return 0, false, false
		}
		switch b[j] {
		case '"':
			return j + 1, false, true
		case '\\':
			if j+1 >= len(b) {
				return 0, false, false
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if getu4(b[j:]) < 0 {
					return 0, false, false
				}
				j += 6
			default:
				return 0, false, false
			}
		default: // a control character
			return 0, false, false
		}
	}
}

// ScanNumber reads the number that starts at b[i] and returns the offset
// after it, and whether it is valid.
func ScanNumber(b []byte, i int) (int, bool) {
	digits := func(j int) int {
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		return j
	}
	j := i
	if b[j] == '-' {
		j++
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case j < len(b) && b[j] >= '1' && b[j] <= '9':
		j = digits(j + 1)
	default:
		return 0, false
	}
	if j < len(b) && b[j] == '.' {
		k := digits(j + 1)
		if k == j+1 {
			return 0, false
		}
		j = k
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		k := digits(j)
		if k == j {
			return 0, false
		}
		j = k
	}
	return j, true
}

// getu4 decodes the \uXXXX escape at the start of s, or returns -1.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// SkipValue returns the offset just past the value that starts at or after
// b[i] (leading whitespace is skipped). It assumes valid text but never
// panics on invalid text.
func SkipValue(b []byte, i int) int {
	i = SkipSpace(b, i)
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		return SkipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = SkipString(b, i)
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

// SkipString returns the offset just past the string whose opening quote
// is at b[i], without validating it. Short strings are scanned byte by
// byte; past the first 32 bytes it switches to bytes.IndexByte, which is
// faster on long strings.
func SkipString(b []byte, i int) int {
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

// Members iterates over the members of the object that starts at b[i] of
// valid text.
type Members struct {
	b  []byte
	i  int
	ks int // offset of the last key returned by Next
}

// NewMembers returns an iterator over the members of the object at b[i].
func NewMembers(b []byte, i int) Members { return Members{b: b, i: i + 1} }

// KeyStart returns the offset in b of the key Next returned last (after
// its opening quote).
func (m *Members) KeyStart() int { return m.ks }

// Next returns the next member's raw key (between its quotes, escapes not
// decoded) and the offsets of its value, or ok false after the last.
func (m *Members) Next() (key []byte, vs, ve int, ok bool) {
	b := m.b
	for {
		m.i = SkipSpace(b, m.i)
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
		ke := SkipString(b, m.i)
		m.ks = m.i + 1
		key = b[m.ks:max(m.ks, ke-1)]
		i := SkipSpace(b, ke)
		if i < len(b) && b[i] == ':' {
			i++
		}
		vs = SkipSpace(b, i)
		ve = SkipValue(b, vs)
		m.i = ve
		return key, vs, ve, true
	}
}

// Elements iterates over the elements of the array that starts at b[i] of
// valid text.
type Elements struct {
	b []byte
	i int
}

// NewElements returns an iterator over the elements of the array at b[i].
func NewElements(b []byte, i int) Elements { return Elements{b, i + 1} }

// Next returns the offsets of the next element, or ok false after the
// last.
func (e *Elements) Next() (vs, ve int, ok bool) {
	b := e.b
	for {
		e.i = SkipSpace(b, e.i)
		if e.i >= len(b) || b[e.i] == ']' {
			return 0, 0, false
		}
		if b[e.i] == ',' {
			e.i++
			continue
		}
		vs = e.i
		ve = SkipValue(b, vs)
		if ve <= vs {
			e.i = len(b)
			return 0, 0, false
		}
		e.i = ve
		return vs, ve, true
	}
}

// Unescape appends to dst the content of a JSON string (raw is the text
// between the quotes) with its escapes decoded. Like encoding/json it turns
// a lone or mismatched surrogate escape into U+FFFD; unlike it, every other
// byte, invalid UTF-8 included, is copied as it is, so that byte-level
// checks see what the server will. Passing a stack buffer as dst keeps
// short strings off the heap.
func Unescape(dst, raw []byte) []byte {
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
			r := getu4(raw[i:])
			if r < 0 {
				return append(dst, raw[i:]...)
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if r2 := getu4(raw[i:]); r2 >= 0 {
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

// PlainString reports whether the inside of a valid JSON string decodes to
// itself: no escapes and valid UTF-8.
func PlainString(s []byte) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\\' {
			return false
		} else if c >= utf8.RuneSelf {
			return bytes.IndexByte(s[i:], '\\') < 0 && utf8.Valid(s[i:])
		}
	}
	return true
}

// decodeRune decodes the character at s[r] of the inside of a valid JSON
// string, an escape or a literal, as encoding/json's unquote does.
func decodeRune(s []byte, r int) (rune, int) {
	c := s[r]
	if c < utf8.RuneSelf {
		if c != '\\' {
			return rune(c), r + 1
		}
		switch e := s[r+1]; e {
		case 'b':
			return '\b', r + 2
		case 'f':
			return '\f', r + 2
		case 'n':
			return '\n', r + 2
		case 'r':
			return '\r', r + 2
		case 't':
			return '\t', r + 2
		case 'u':
			rr := getu4(s[r:])
			if !utf16.IsSurrogate(rr) {
				return rr, r + 6
			}
			if dec := utf16.DecodeRune(rr, getu4(s[r+6:])); dec != unicode.ReplacementChar {
				return dec, r + 12
			}
			return unicode.ReplacementChar, r + 6
		default: // " \ /
			return rune(e), r + 2
		}
	}
	rr, size := utf8.DecodeRune(s[r:])
	return rr, r + size
}

// Decode appends the decoded inside s of a valid JSON string as
// encoding/json's unquote decodes it: invalid UTF-8 and lone surrogates
// become U+FFFD.
func Decode(dst, s []byte) []byte {
	for r := 0; r < len(s); {
		var rr rune
		rr, r = decodeRune(s, r)
		dst = utf8.AppendRune(dst, rr)
	}
	return dst
}
