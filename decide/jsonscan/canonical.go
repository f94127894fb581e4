package jsonscan

import (
	"slices"
	"unicode/utf8"
)

// Form is one of the two canonical forms; see the package comment. Neither
// may ever change: hashes in users' state files are computed over them.
type Form uint8

const (
	// ArgsForm is the argument-hash form (decide.Canonical, ArgsHash).
	ArgsForm Form = iota
	// DefinitionForm is the definition-hash form (client.Tool.Hash).
	DefinitionForm
)

// AppendString appends the inside s of a valid JSON string (the text
// between its quotes), decoded and re-encoded in form f, with its quotes.
func AppendString(dst, s []byte, f Form) []byte {
	if f == DefinitionForm {
		return appendDefinitionString(dst, s)
	}
	if !hasBackslash(s) {
		return appendArgsString(dst, s)
	}
	var buf [128]byte
	return appendArgsString(dst, Unescape(buf[:0], s))
}

func hasBackslash(s []byte) bool {
	for _, c := range s {
		if c == '\\' {
			return true
		}
	}
	return false
}

const hexDigits = "0123456789abcdef"

// appendArgsString appends the decoded string s in ArgsForm: only '"',
// '\\' and control characters escaped, invalid UTF-8 as U+FFFD.
func appendArgsString(dst, s []byte) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && n == 1 {
				dst = append(dst, "\uFFFD"...)
			} else {
				dst = append(dst, s[i:i+n]...)
			}
			i += n
			continue
		}
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		default:
			if c < 0x20 {
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			} else {
				dst = append(dst, c)
			}
		}
		i++
	}
	return append(dst, '"')
}

// appendDefinitionString appends the inside s of a valid JSON string as
// json.Marshal encodes the string it decodes to: HTML characters, U+2028,
// U+2029 and control characters escaped, invalid UTF-8 as U+FFFD.
func appendDefinitionString(dst, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for r := 0; r < len(s); {
		c := s[r]
		if htmlSafe[c] {
			r++
			continue
		}
		if c >= utf8.RuneSelf {
			rr, size := utf8.DecodeRune(s[r:])
			if rr != utf8.RuneError && rr != '\u2028' && rr != '\u2029' {
				r += size
				continue
			}
		}
		dst = append(dst, s[start:r]...)
		var rr rune
		rr, r = decodeRune(s, r)
		start = r
		switch {
		case rr == '\u2028' || rr == '\u2029':
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[rr&0xF])
		case rr >= utf8.RuneSelf:
			dst = utf8.AppendRune(dst, rr)
		case htmlSafe[rr]:
			dst = append(dst, byte(rr))
		case rr == '\\' || rr == '"':
			dst = append(dst, '\\', byte(rr))
		case rr == '\b':
			dst = append(dst, '\\', 'b')
		case rr == '\f':
			dst = append(dst, '\\', 'f')
		case rr == '\n':
			dst = append(dst, '\\', 'n')
		case rr == '\r':
			dst = append(dst, '\\', 'r')
		case rr == '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[rr>>4], hexDigits[rr&0xF])
		}
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

type member struct {
	key    string // decoded, for sorting
	raw    []byte // as written, between the quotes
	vs, ve int
}

// AppendCanonicalArgs appends the ArgsForm canonical JSON of the valid
// JSON text b: object members sorted by the bytes of their decoded keys
// (members with equal keys all kept, in document order), no insignificant
// whitespace, numbers exactly as written, strings as AppendString writes
// them in ArgsForm.
func AppendCanonicalArgs(dst, b []byte) []byte {
	return appendCanonicalArgs(dst, b, SkipSpace(b, 0))
}

func appendCanonicalArgs(dst, b []byte, i int) []byte {
	i = SkipSpace(b, i)
	if i >= len(b) {
		return dst
	}
	switch b[i] {
	case '{':
		var ms []member
		it := NewMembers(b, i)
		for {
			k, vs, ve, ok := it.Next()
			if !ok {
				break
			}
			ms = append(ms, member{UnescapeString(k), k, vs, ve})
		}
		slices.SortStableFunc(ms, func(x, y member) int {
			switch {
			case x.key < y.key:
				return -1
			case x.key > y.key:
				return 1
			}
			return 0
		})
		dst = append(dst, '{')
		for j, m := range ms {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, m.raw, ArgsForm)
			dst = append(dst, ':')
			dst = appendCanonicalArgs(dst, b[:m.ve], m.vs)
		}
		return append(dst, '}')
	case '[':
		dst = append(dst, '[')
		it := NewElements(b, i)
		for j := 0; ; j++ {
			vs, ve, ok := it.Next()
			if !ok {
				break
			}
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = appendCanonicalArgs(dst, b[:ve], vs)
		}
		return append(dst, ']')
	case '"':
		e := SkipString(b, i)
		return AppendString(dst, b[i+1:max(i+1, e-1)], ArgsForm)
	}
	return append(dst, b[i:SkipValue(b, i)]...)
}

// UnescapeString decodes the raw content of a valid JSON string (without its
// quotes) as Unescape does.
func UnescapeString(raw []byte) string {
	if !hasBackslash(raw) {
		return string(raw)
	}
	var buf [128]byte
	return string(Unescape(buf[:0], raw))
}
