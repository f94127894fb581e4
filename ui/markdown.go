package ui

// markdown renders finished assistant messages. The style's sequences are
// built on first use and kept.
type markdown struct {
	style string
	look  *mdLook
}

// render returns the message as styled lines of at most width cells, or
// nil if it cannot be rendered (the caller then shows it as plain text).
// text must be prepared by cleanMarkdown. style is "dark", "light" or
// "notty" (no colour; bold, italic and faint remain).
func (md *markdown) render(text, style string, width int) []string {
	if width < 10 {
		return nil
	}
	if md.look == nil || md.style != style {
		md.look, md.style = newMDLook(style), style
	}
	// A two-cell margin, as for every other entry in the transcript.
	lines := mdRender(text, md.look, width-2)
	for i, l := range lines {
		if l != "" {
			lines[i] = "  " + l
		}
	}
	return lines
}
