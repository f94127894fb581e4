// Package sanitize makes untrusted text safe to put on a terminal.
//
// Every string that came from an MCP server — names, titles, descriptions,
// results, errors, stderr, URLs — passes through this package before it is
// rendered. Control sequences, bidirectional overrides and invisible
// characters are not removed silently: they are shown as visible escapes
// (\x1b, \u202e), so a person sees that the server sent something odd.
package sanitize

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Text returns s with every unsafe rune replaced by a visible escape. Newline
// and tab are kept, so multi-line text (a result, a description) keeps its
// shape. Invalid UTF-8 bytes are escaped as \xNN.
func Text(s string) string { return clean(s, true) }

// Line is Text for a single-line cell: newline and tab are escaped too.
func Line(s string) string { return clean(s, false) }

// Unsafe reports whether r must not reach a terminal as is. Newline and tab
// are reported unsafe; Text lets them through on its own.
func Unsafe(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f: // C0 controls (ESC among them) and DEL
		return true
	case r >= 0x80 && r <= 0x9f: // C1 controls, including 8-bit CSI and OSC
		return true
	case r >= 0x200b && r <= 0x200f: // zero-width space/joiners, LRM, RLM
		return true
	case r >= 0x202a && r <= 0x202e: // bidi embeddings and overrides
		return true
	case r >= 0x2060 && r <= 0x2064, r >= 0x2066 && r <= 0x2069: // word joiner, invisible operators, bidi isolates
		return true
	case r == 0x061c, r == 0x180e, r == 0xfeff: // Arabic letter mark, Mongolian vowel separator, BOM / zero-width no-break space
		return true
	case r >= 0xfff9 && r <= 0xfffb: // interlinear annotation controls
		return true
	case r == 0x2028, r == 0x2029: // line and paragraph separators: some terminals break the line
		return true
	case r == 0x00ad: // soft hyphen: invisible, zero or one cell depending on the terminal
		return true
	case r == 0x115f, r == 0x1160, r == 0x3164, r == 0xffa0: // Hangul fillers: blank, yet letters
		return true
	case r >= 0xe0000 && r <= 0xe007f: // tag characters (invisible)
		return true
	}
	return false
}

func clean(s string, keepLayout bool) string {
	if safe(s, keepLayout) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
			i++
			continue
		}
		i += size
		if keepLayout && (r == '\n' || r == '\t') {
			b.WriteRune(r)
			continue
		}
		if !Unsafe(r) {
			b.WriteRune(r)
			continue
		}
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		default:
			escapeRune(&b, r)
		}
	}
	return b.String()
}

// safe is the fast path: most text needs no change and is returned without
// allocating.
func safe(s string, keepLayout bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return safeSlow(s[i:], keepLayout)
		}
		if c < 0x20 || c == 0x7f {
			if keepLayout && (c == '\n' || c == '\t') {
				continue
			}
			return false
		}
	}
	return true
}

func safeSlow(s string, keepLayout bool) bool {
	for _, r := range s {
		if r == utf8.RuneError {
			return false // invalid byte, or a literal U+FFFD, which is harmless but rare
		}
		if keepLayout && (r == '\n' || r == '\t') {
			continue
		}
		if Unsafe(r) {
			return false
		}
	}
	return true
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&0xf]})
}

func pad(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return strings.Repeat("0", n-len(s)) + s
}

// Strip returns s without the runes Unsafe reports (ESC and every other
// control character among them) and without invalid UTF-8 bytes, except
// newline and tab; it also returns how many it left out. It is for text
// that leaves mcphost (a clipboard), where a visible escape would change
// the text: what remains can be pasted into a terminal without acting on
// it.
func Strip(s string) (string, int) {
	if safe(s, true) {
		return s, 0
	}
	var b strings.Builder
	b.Grow(len(s))
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if (r == utf8.RuneError && size == 1) || (Unsafe(r) && r != '\n' && r != '\t') {
			n++
			continue
		}
		b.WriteRune(r)
	}
	return b.String(), n
}

// Truncate cuts s to at most max bytes on a rune boundary and appends a
// marker saying how many bytes were cut. It returns s unchanged when it fits.
func Truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "… [" + strconv.Itoa(len(s)-cut) + " bytes cut]"
}

// Name returns a name a person reads to tell one thing from another — a
// tool or server name — with every character outside printable ASCII
// shown as an escape (\u0435, \uff44, \x1b) and a backslash doubled, so a
// look-alike letter (a Cyrillic е, a fullwidth ｄ) can never pass for the
// ASCII letter it imitates, and an escape cannot be faked. Printable ASCII
// names, which are nearly all of them, come back unchanged.
func Name(s string) string {
	if plainName(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case r == '\\':
			b.WriteString(`\\`)
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		default:
			escapeRune(&b, r)
		}
		i += size
	}
	return b.String()
}

func plainName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '\\' {
			return false
		}
	}
	return true
}

// escapeRune writes r as a Go-style escape: \xHH below U+0100, \uHHHH in
// the Basic Multilingual Plane, \UHHHHHHHH beyond.
func escapeRune(b *strings.Builder, r rune) {
	switch {
	case r < 0x100:
		b.WriteString(`\x`)
		b.WriteString(hex2(byte(r)))
	case r <= 0xffff:
		b.WriteString(`\u`)
		b.WriteString(pad(strconv.FormatInt(int64(r), 16), 4))
	default:
		b.WriteString(`\U`)
		b.WriteString(pad(strconv.FormatInt(int64(r), 16), 8))
	}
}

// IsSGR reports whether seq is a colour and style sequence, CSI … m with
// only digits, ';' and ':' between: the one kind of escape sequence that
// mcphost writes itself, and that text it draws may hold.
func IsSGR(seq string) bool {
	if len(seq) < 3 || seq[0] != 0x1b || seq[1] != '[' || seq[len(seq)-1] != 'm' {
		return false
	}
	for i := 2; i < len(seq)-1; i++ {
		c := seq[i]
		if (c < '0' || c > '9') && c != ';' && c != ':' {
			return false
		}
	}
	return true
}
