package ui

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/mcphost/mcphost/sanitize"
)

// clean makes server or model text safe and flat for the screen: unsafe
// runes become visible escapes, and tabs become spaces so that widths are
// what they look like.
func clean(s string) string {
	// A CRLF line ending is a line ending; a lone CR, which could move the
	// cursor back over a line, is still shown escaped by sanitize.
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(sanitize.Text(s), "\t", "    ")
}

// cleanMarkdown is clean for text that mdParse reads: it keeps tabs, for a
// tab's width depends on the column where it stands, which only the parser
// knows (a tab after a list marker may be one space, at the start of a
// line four). The parser expands tabs itself, and the renderer cleans
// every piece it draws.
func cleanMarkdown(s string) string {
	return sanitize.Text(strings.ReplaceAll(s, "\r\n", "\n"))
}

// cleanLine is clean for a one-line cell.
func cleanLine(s string) string {
	return sanitize.Line(s)
}

// wrap wraps plain or styled text to width cells, breaking long words.
func wrap(s string, width int) []string {
	if width < 1 {
		width = 1
	}
	return strings.Split(ansi.Wrap(s, width, ""), "\n")
}

// hang wraps s to width with every line after the first indented.
func hang(s string, width int, indent string) []string {
	iw := ansi.StringWidth(indent)
	first := wrap(s, width)
	if len(first) <= 1 || width-iw < 1 {
		return first
	}
	rest := wrap(strings.Join(first[1:], " "), width-iw)
	for i := range rest {
		rest[i] = indent + rest[i]
	}
	return append(first[:1], rest...)
}

// fit cuts a styled line to width cells and pads it to exactly width.
func fit(s string, width int) string {
	if width <= 0 {
		return ""
	}
	w := ansi.StringWidth(s)
	if w > width {
		return ansi.Truncate(s, width, "…")
	}
	return s + strings.Repeat(" ", width-w)
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
		if width > 0 || seq == "\n" || isSGR(seq) || printable(seq) {
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

// isSGR reports whether seq is CSI … m with only digits, ';' and ':'.
func isSGR(seq string) bool {
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

// plural returns "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// stripped removes every escape sequence.
func stripped(s string) string { return ansi.Strip(s) }
