package markdown

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/mcphost/mcphost/sanitize"
)

// PrepareSource makes untrusted markdown safe to parse: unsafe runes
// become visible escapes. It keeps tabs, whose width depends on the column
// where they stand, which only the parser knows; the parser expands them.
func PrepareSource(src string) string {
	return sanitize.Text(strings.ReplaceAll(src, "\r\n", "\n"))
}

// Clean makes untrusted text safe and flat to draw: unsafe runes become
// visible escapes and tabs become four spaces.
func Clean(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(sanitize.Text(s), "\t", "    ")
}

// wrap wraps plain or styled text to width cells, breaking long words.
func wrap(s string, width int) []string {
	return strings.Split(ansi.Wrap(s, max(width, 1), ""), "\n")
}

// trunc cuts a styled line to at most width cells.
func trunc(s string, width int) string {
	if width <= 0 {
		return ""
	}
	return ansi.Truncate(s, width, "…")
}

// onlySGR drops every escape sequence that is not a colour or style
// (SGR) sequence: nothing but styling may reach the terminal from rendered
// text, whatever the renderer or its input.
func onlySGR(s string) string {
	if !strings.ContainsRune(s, 0x1b) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	state := byte(0)
	for len(s) > 0 {
		seq, width, n, newState := ansi.DecodeSequence(s, state, nil)
		state = newState
		if width > 0 || seq == "\n" || sanitize.IsSGR(seq) || printable(seq) {
			b.WriteString(seq)
		}
		s = s[n:]
	}
	return b.String()
}

// printable reports whether seq, a grapheme of no width, is safe text.
func printable(seq string) bool {
	r, size := utf8.DecodeRuneInString(seq)
	return size > 1 && r != utf8.RuneError && !sanitize.Unsafe(r)
}
