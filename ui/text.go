package ui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/rivo/uniseg"
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

// zwj is the zero-width joiner, which sanitize escapes: it can hide text.
const zwj = '\u200d'

// cleanModel is clean for the model's own text: a zero-width joiner inside
// an emoji sequence (👩‍👩‍👧‍👦) is kept, so the family shows as one emoji;
// everywhere else it is escaped as before. Server text never comes here.
func cleanModel(s string) string { return keepEmoji(s, clean) }

// cleanModelMarkdown is cleanMarkdown for the model's own text.
func cleanModelMarkdown(s string) string { return keepEmoji(s, cleanMarkdown) }

// keepEmoji applies san to s except to the emoji ZWJ sequences in it.
func keepEmoji(s string, san func(string) string) string {
	if !strings.ContainsRune(s, zwj) {
		return san(s)
	}
	var b strings.Builder
	start := 0
	g := uniseg.NewGraphemes(s)
	for g.Next() {
		cl := g.Str()
		if strings.ContainsRune(cl, zwj) && emojiSequence(cl) {
			from, to := g.Positions()
			b.WriteString(san(s[start:from]))
			b.WriteString(cl)
			start = to
		}
	}
	b.WriteString(san(s[start:]))
	return b.String()
}

// emojiSequence reports whether a grapheme cluster is emoji joined by ZWJ:
// every joiner stands between two emoji (a variation selector or a skin
// tone may follow the first), and nothing in it is otherwise unsafe.
func emojiSequence(cl string) bool {
	rs := []rune(cl)
	for i, r := range rs {
		if r != zwj {
			if sanitize.Unsafe(r) {
				return false
			}
			continue
		}
		if i == 0 || i == len(rs)-1 || !isEmoji(rs[i+1]) {
			return false
		}
		j := i - 1
		for j > 0 && (rs[j] == 0xfe0f || rs[j] >= 0x1f3fb && rs[j] <= 0x1f3ff) {
			j--
		}
		if !isEmoji(rs[j]) {
			return false
		}
	}
	return true
}

// isEmoji reports whether r is in the blocks emoji come from.
func isEmoji(r rune) bool {
	switch {
	case r >= 0x1f000 && r <= 0x1faff, r >= 0x2600 && r <= 0x27bf,
		r >= 0x2300 && r <= 0x23ff, r >= 0x2b00 && r <= 0x2bff,
		r >= 0x2190 && r <= 0x21ff, r == 0x00a9, r == 0x00ae, r == 0x203c, r == 0x2049:
		return true
	}
	return false
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

// plural returns "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// stripped removes every escape sequence.
func stripped(s string) string { return ansi.Strip(s) }
