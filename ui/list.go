package ui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
)

// listRow is a row of a filterList.
type listRow interface {
	// filterText returns the lower-case text the filter searches.
	filterText() string
}

// filterList is the list half of a panel that lists rows filtered by what
// the person types: the rows, the filter, the selection and its scrolling,
// and the frame drawn around the rows. The panel draws each row and handles
// what opening one means.
//
// A panel's view calls head, then rowsView, then foot: head measures the
// room that rowsView fills and pgup and pgdown move by.
type filterList[R listRow] struct {
	filter  textinput.Model
	loading bool
	rows    []R
	errs    []string // one per server whose listing failed
	shown   []int    // indexes into rows of those the filter shows
	sel     int      // index into shown
	sc      scroller
	h       int // room for rows in the last view; pgup and pgdown move by h-1

}

// newFilterList returns a list with no rows whose filter, focused, holds
// value.
func newFilterList[R listRow](placeholder, value string) filterList[R] {
	return filterList[R]{filter: newFilter(placeholder, value)}
}

func newFilter(placeholder, value string) textinput.Model {
	ti := textinput.New()
	ti.Prompt = "filter: "
	ti.Placeholder = placeholder
	ti.SetVirtualCursor(false)
	ti.SetValue(value)
	ti.Focus()
	return ti
}

// setRows replaces the rows and the listing errors, ends loading, and
// applies the filter to the new rows. rows is kept, not copied.
func (l *filterList[R]) setRows(rows []R, errs []string) {
	l.loading, l.rows, l.errs = false, rows, errs
	l.applyFilter()
}

// applyFilter shows the rows whose filterText contains the filter's text
// (ignoring case and surrounding space), in order, and keeps the selection
// within them.
func (l *filterList[R]) applyFilter() {
	q := strings.ToLower(strings.TrimSpace(l.filter.Value()))
	l.shown = l.shown[:0]
	for i := range l.rows {
		if q == "" || strings.Contains(l.rows[i].filterText(), q) {
			l.shown = append(l.shown, i)
		}
	}
	l.sel = min(max(l.sel, 0), max(len(l.shown)-1, 0))
}

// updateFilter hands msg to the filter and applies what it then holds.
func (l *filterList[R]) updateFilter(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	l.filter, cmd = l.filter.Update(msg)
	l.applyFilter()
	return cmd
}

// fitFilter sizes the filter to the panel and returns the panel's inner
// width.
func (l *filterList[R]) fitFilter(m *Model) int {
	iw, _ := panelInner(m.width, m.height-1)
	l.filter.SetWidth(iw - len(l.filter.Prompt) - 1)
	return iw
}

// selected returns the selected row, and false when the filter shows none.
func (l *filterList[R]) selected() (R, bool) {
	if len(l.shown) == 0 {
		var none R
		return none, false
	}
	return l.rows[l.shown[l.sel]], true
}

// move moves the selection for up, down, pgup and pgdown, staying within
// the shown rows, and reports whether k was one of them.
func (l *filterList[R]) move(m *Model, k tea.KeyPressMsg) bool {
	lk := m.keys.list
	last := max(len(l.shown)-1, 0)
	switch {
	case key.Matches(k, lk.Up):
		l.sel = max(l.sel-1, 0)
	case key.Matches(k, lk.Down):
		l.sel = min(l.sel+1, last)
	case k.String() == "pgup":
		l.sel = max(l.sel-max(l.h-1, 1), 0)
	case k.String() == "pgdown":
		l.sel = min(l.sel+max(l.h-1, 1), last)
	default:
		return false
	}
	return true
}

// head returns the first lines of a view h lines high: the title with how
// many rows the filter shows of how many there are, the filter, a warning
// for each listing error, then status. The room left for rows is h less
// those lines and the hints line, at least one.
func (l *filterList[R]) head(m *Model, title string, w, h int, status ...string) []string {
	st := m.st
	out := []string{st.Title.Render(title) + st.Muted.Render(fmt.Sprintf(" — %d of %d", len(l.shown), len(l.rows))), l.filter.View()}
	for _, e := range l.errs {
		out = append(out, trunc(st.Warn.Render("! "+cleanLine(e)), w))
	}
	out = append(out, status...)
	l.h = max(h-1-len(out), 1)
	return out
}

// rowsView draws the shown rows in order, each by appending its lines to
// out with draw, which is told the row's mark ("› " for the selected row,
// two spaces for the others) and whether it is selected. It scrolls so
// that the selected row's lines are in the room head measured, or as many
// of its first lines as fit, and returns the lines in the room.
func (l *filterList[R]) rowsView(m *Model, draw func(out []string, r R, mark string, selected bool) []string) []string {
	var lines []string
	at, span := 0, 1
	for i, idx := range l.shown {
		mark := "  "
		if i == l.sel {
			mark = m.st.Selected.Render("›") + " "
			at = len(lines)
		}
		lines = draw(lines, l.rows[idx], mark, i == l.sel)
		if i == l.sel {
			span = max(len(lines)-at, 1)
		}
	}
	keep := min(span, l.h)
	if at < l.sc.off {
		l.sc.off = at
	}
	if at+keep > l.sc.off+l.h {
		l.sc.off = at + keep - l.h
	}
	return l.sc.window(lines, l.h)
}

// foot ends a view h lines high: it pads or cuts out to h-1 lines and adds
// the hints line, whose enter hint says open. It returns the filter's cursor, placed for head's lines.
func (l *filterList[R]) foot(m *Model, out []string, h int, open string) ([]string, *tea.Cursor) {
	for len(out) < h-1 {
		out = append(out, "")
	}
	out = out[:h-1]
	lk := m.keys.list
	out = append(out, m.hints(lk.Up, lk.Down, hint("enter", open), lk.Back))
	c := l.filter.Cursor()
	if c != nil {
		c.Position.Y++
	}
	return out, c
}
