package ui

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

type textRow string

func (r textRow) filterText() string { return string(r) }

func TestFilterListFilters(t *testing.T) {
	rows := []textRow{"tasks/get", "tasks/list", "files/read"}
	for _, c := range []struct {
		filter    string
		sel       int
		wantShown []int
		wantSel   int
	}{
		{"", 2, []int{0, 1, 2}, 2},
		{" TASKS ", 2, []int{0, 1}, 1},
		{"read", 0, []int{2}, 0},
		{"nothing", 1, nil, 0},
	} {
		l := newFilterList[textRow]("", c.filter)
		l.sel = c.sel
		l.setRows(rows, nil)
		if !slices.Equal(l.shown, c.wantShown) || l.sel != c.wantSel {
			t.Errorf("filter %q from sel %d: got shown %v sel %d, want %v sel %d", c.filter, c.sel, l.shown, l.sel, c.wantShown, c.wantSel)
		}
		r, ok := l.selected()
		if want := len(c.wantShown) > 0; ok != want || ok && r != rows[c.wantShown[c.wantSel]] {
			t.Errorf("filter %q: selected() = %q, %v", c.filter, r, ok)
		}
	}
}

func TestFilterListMoves(t *testing.T) {
	m := newHarness(t, Config{Now: newClock().Now, Dark: dark(true)}).m
	rows := make([]textRow, 30)
	for _, c := range []struct {
		sel     int
		key     string
		wantSel int
		moved   bool
	}{
		{0, "up", 0, true},
		{0, "down", 1, true},
		{29, "down", 29, true},
		{0, "pgdown", 9, true}, // the room is 10 lines: a page is 9
		{25, "pgdown", 29, true},
		{12, "pgup", 3, true},
		{5, "pgup", 0, true},
		{3, "x", 3, false},
	} {
		l := newFilterList[textRow]("", "")
		l.setRows(rows, nil)
		l.head(m, "T", 40, 13)
		l.sel = c.sel
		k := keyMsg(c.key)
		if c.key == "pgdown" {
			k = tea.KeyPressMsg{Code: tea.KeyPgDown}
		}
		if moved := l.move(m, k); moved != c.moved || l.sel != c.wantSel {
			t.Errorf("%s from %d: got sel %d moved %v, want %d %v", c.key, c.sel, l.sel, moved, c.wantSel, c.moved)
		}
	}
}

// TestFilterListKeepsSelectionInView walks down a list of two-line rows
// and back up, and checks that both lines of the selected row are drawn.
func TestFilterListKeepsSelectionInView(t *testing.T) {
	m := newHarness(t, Config{Now: newClock().Now, Dark: dark(true)}).m
	var rows []textRow
	for i := range 12 {
		rows = append(rows, textRow(fmt.Sprint("row", i)))
	}
	l := newFilterList[textRow]("", "")
	l.setRows(rows, []string{"srv: failed"})
	const h = 10 // the room is 10 - title, filter, error and hints = 6
	draw := func(out []string, r textRow, mark string, _ bool) []string {
		return append(out, mark+string(r), "  about "+string(r))
	}
	check := func() {
		t.Helper()
		out := l.head(m, "Rows", 40, h)
		out = append(out, l.rowsView(m, draw)...)
		out, _ = l.foot(m, out, h, "open")
		if len(out) != h {
			t.Fatalf("got %d lines, want %d", len(out), h)
		}
		screen := ansi.Strip(strings.Join(out, "\n"))
		sel := string(rows[l.sel])
		if !strings.Contains(screen, "› "+sel+"\n  about "+sel+"\n") {
			t.Fatalf("%s is not in view:\n%s", sel, screen)
		}
	}
	for _, k := range []string{"down", "up"} {
		for range len(rows) {
			check()
			l.move(m, keyMsg(k))
		}
	}
}

// A selected row taller than the room shows its first line, the one with
// the mark; and a view stays h lines high, hints last, however little room
// its head leaves.
func TestFilterListSmallRoom(t *testing.T) {
	m := newHarness(t, Config{Now: newClock().Now, Dark: dark(true)}).m
	var rows []textRow
	for i := range 8 {
		rows = append(rows, textRow(fmt.Sprint("row", i)))
	}
	l := newFilterList[textRow]("", "")
	l.setRows(rows, []string{"a: failed", "b: failed", "c: failed"})
	draw := func(out []string, r textRow, mark string, _ bool) []string {
		return append(out, mark+string(r), "  about "+string(r))
	}
	for _, h := range []int{3, 4, 6} {
		for sel := range rows {
			l.sel = sel
			out := l.head(m, "Rows", 40, h)
			rowLines := l.rowsView(m, draw)
			out, _ = l.foot(m, append(out, rowLines...), h, "open")
			if len(out) != h {
				t.Fatalf("h %d: got %d lines, want %d", h, len(out), h)
			}
			if last := ansi.Strip(out[h-1]); !strings.Contains(last, "open") {
				t.Errorf("h %d: last line %q is not the hints line", h, last)
			}
			if got := ansi.Strip(rowLines[0]); got != "› "+string(rows[sel]) {
				t.Errorf("h %d, sel %d: first line of the room %q, want the selected row's mark line", h, sel, got)
			}
		}
	}
}
