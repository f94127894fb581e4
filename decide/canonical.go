package decide

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"unicode/utf8"
)

// ErrInvalidJSON is returned by Canonical for text that is not one valid
// JSON value.
var ErrInvalidJSON = errors.New("decide: invalid JSON")

// Canonical returns the canonical form of one JSON value: object members
// sorted by key (byte order of the decoded UTF-8 key; members with equal
// keys keep their order), no insignificant whitespace, numbers exactly as
// written, and strings re-encoded so that equal strings have equal bytes
// (only '"', '\\' and control characters are escaped, invalid UTF-8
// becomes U+FFFD). Two texts that differ only in member order, whitespace
// or string escaping have the same canonical form.
func Canonical(raw []byte) ([]byte, error) {
	if !validJSON(raw) {
		return nil, ErrInvalidJSON
	}
	return appendCanonical(nil, raw, skipWS(raw, 0)), nil
}

// ArgsHash returns the hex SHA-256 of the canonical form of a call's
// arguments, the value an Args or Once grant is bound to. Empty arguments
// hash like {}. It returns "" for text that is not valid JSON, and such a
// hash matches no grant.
func ArgsHash(args json.RawMessage) string {
	raw := []byte(args)
	if skipWS(raw, 0) == len(raw) {
		raw = []byte("{}")
	}
	c, err := Canonical(raw)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:])
}

type member struct {
	key    string
	vs, ve int
}

func appendCanonical(dst, b []byte, i int) []byte {
	i = skipWS(b, i)
	if i >= len(b) {
		return dst
	}
	switch b[i] {
	case '{':
		var ms []member
		it := newMembers(b, i)
		for {
			k, vs, ve, ok := it.next()
			if !ok {
				break
			}
			ms = append(ms, member{decodeString(k), vs, ve})
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
			dst = appendString(dst, m.key)
			dst = append(dst, ':')
			dst = appendCanonical(dst, b[:m.ve], m.vs)
		}
		return append(dst, '}')
	case '[':
		dst = append(dst, '[')
		it := newElements(b, i)
		for j := 0; ; j++ {
			vs, ve, ok := it.next()
			if !ok {
				break
			}
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = appendCanonical(dst, b[:ve], vs)
		}
		return append(dst, ']')
	case '"':
		e := skipString(b, i)
		return appendString(dst, decodeString(b[i+1:max(i+1, e-1)]))
	}
	return append(dst, b[i:skipValue(b, i)]...)
}

// decodeString decodes the raw content of a valid JSON string (without its
// quotes).
func decodeString(raw []byte) string {
	if !hasByte(raw, '\\') {
		return string(raw)
	}
	var buf [128]byte
	return string(unescape(buf[:0], raw))
}

func appendString(dst []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
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
