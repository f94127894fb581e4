package markdown

import (
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
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
	return Style{Heading: lipgloss.Color("#c678dd"), Code: lipgloss.Color("#e5c07b"), Link: lipgloss.Color("#61afef"), Quiet: lipgloss.Color("#8a8a8a"),
		Syntax: Syntax{Keyword: lipgloss.Color("#c678dd"), String: lipgloss.Color("#98c379"), Comment: lipgloss.Color("#8a8a8a"),
			Number: lipgloss.Color("#e5c07b"), Type: lipgloss.Color("#61afef")}}
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
