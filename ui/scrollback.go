package ui

import (
	"io"
	"os"
	"strings"

	"github.com/charmbracelet/colorprofile"
)

// The interactive screen is drawn on the terminal's alternate screen, so
// that dialogs can sit over the chat and the layout holds on resize. When
// the person quits, the conversation is printed to the normal screen, where
// the terminal's own scrollback keeps it like any other output.

// scrollbackLines renders every entry of the transcript at width, as the
// screen showed them, with the usual blank lines between entries.
func (m *Model) scrollbackLines(width int) []string {
	var out []string
	for i := range m.tr.entries {
		ls, gap := m.tr.block(&m.rc, i, width)
		for _, l := range ls {
			out = append(out, strings.TrimRight(l, " "))
		}
		if gap > 0 {
			out = append(out, "")
		}
	}
	return out
}

// printScrollback writes the conversation to w, in colour only when w is
// a terminal that shows it (and NO_COLOR is not set).
func (m *Model) printScrollback(w io.Writer) error {
	if w == nil || len(m.tr.entries) == 0 {
		return nil
	}
	m.tr.sel = -1
	m.invalidateAll()
	cw := colorprofile.NewWriter(w, os.Environ())
	if m.cfg.NoColor {
		cw.Profile = colorprofile.Ascii
	}
	_, err := io.WriteString(cw, strings.Join(m.scrollbackLines(m.width), "\n")+"\n")
	return err
}
