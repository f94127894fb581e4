package markdown

import (
	"fmt"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/mcphost/mcphost/sanitize"
)

// testStyle is a Style for "dark", "light" or "notty", in colours like the
// chat's.
func testStyle(name string) Style {
	switch name {
	case "notty":
		return Style{NoColor: true}
	case "light":
		return Style{Heading: lipgloss.Color("#6f42c1"), Code: lipgloss.Color("#8a6100"), Link: lipgloss.Color("#005f87"), Quiet: lipgloss.Color("#6b6b6b")}
	}
	return Style{Heading: lipgloss.Color("#c678dd"), Code: lipgloss.Color("#e5c07b"), Link: lipgloss.Color("#61afef"), Quiet: lipgloss.Color("#8a8a8a")}
}

// render draws src as the chat does: prepared by PrepareSource, with a
// two-cell margin.
func render(src, style string, width int) []string {
	return New(Options{Style: testStyle(style), Indent: "  "}).Render(src, width)
}

// renderRaw is render without the preparation: CR, NUL and the like reach
// the parser.
func renderRaw(src, style string, width int) []string {
	same := func(s string) string { return s }
	return New(Options{Style: testStyle(style), Indent: "  ", Prepare: same}).Render(src, width)
}

// stripped removes every escape sequence.
func stripped(s string) string { return ansi.Strip(s) }

// unsafeOutput returns a description of the first thing in out that a
// terminal would act on, other than colour and style sequences; "" if
// there is none.
func unsafeOutput(out string) string {
	state := byte(0)
	for s := out; len(s) > 0; {
		seq, width, n, ns := ansi.DecodeSequence(s, state, nil)
		state = ns
		switch {
		case width > 0, seq == "\n", isSGR(seq):
		default:
			r, size := utf8.DecodeRuneInString(seq)
			if size <= 1 || r == utf8.RuneError || sanitize.Unsafe(r) {
				at := len(out) - len(s)
				return fmt.Sprintf("%q at byte %d, in %q", seq, at, out[max(at-40, 0):min(at+40, len(out))])
			}
		}
		s = s[n:]
	}
	return ""
}
