package ui

import (
	"strings"

	"charm.land/glamour/v2"
)

// markdown renders finished assistant messages. Building a renderer is the
// expensive part, so one is kept per style and width.
type markdown struct {
	style string
	width int
	r     *glamour.TermRenderer
}

// render returns the message as styled lines of at most width cells, or
// nil if it cannot be rendered (the caller then shows it as plain text).
// text must already be sanitized.
func (md *markdown) render(text, style string, width int) []string {
	if width < 10 {
		return nil
	}
	if md.r == nil || md.style != style || md.width != width {
		r, err := glamour.NewTermRenderer(glamour.WithStandardStyle(style), glamour.WithWordWrap(width))
		if err != nil {
			return nil
		}
		md.r, md.style, md.width = r, style, width
	}
	out, err := md.r.Render(text)
	if err != nil {
		return nil
	}
	out = onlySGR(strings.Trim(out, "\n"))
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = trunc(strings.TrimRight(l, " "), width)
	}
	// glamour pads blocks with blank lines; keep at most one in a row.
	keep := lines[:0]
	blank := true
	for _, l := range lines {
		b := strings.TrimSpace(stripped(l)) == ""
		if b && blank {
			continue
		}
		keep = append(keep, l)
		blank = b
	}
	for len(keep) > 0 && strings.TrimSpace(stripped(keep[len(keep)-1])) == "" {
		keep = keep[:len(keep)-1]
	}
	return keep
}
