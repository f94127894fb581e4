package ui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// panel is a full-screen view drawn over the transcript: tools, servers,
// grants, help.
type panel interface {
	// update handles a message; it returns nil to close the panel.
	update(m *Model, msg tea.Msg) (panel, tea.Cmd)
	// view draws the panel's inside, exactly h lines of w cells, and the
	// cursor position inside it, if it shows one.
	view(m *Model, w, h int) ([]string, *tea.Cursor)
	// refresh re-reads what the panel shows (servers, grants changed).
	refresh(m *Model)
	// resize and restyle follow the window and the palette.
	resize(m *Model)
	restyle(m *Model)
}

func (m *Model) openPanel(p panel) tea.Cmd {
	m.panel = p
	p.resize(m)
	return nil
}

// panelInner is the size of a panel's inside for a screen of w×h.
func panelInner(w, h int) (int, int) { return max(w-4, 10), max(h-2, 3) }

// panelView draws the open panel in a frame of w×h.
func (m *Model) panelView(w, h int) (string, *tea.Cursor) {
	iw, ih := panelInner(w, h)
	lines, cur := m.panel.view(m, iw, ih)
	for len(lines) < ih {
		lines = append(lines, "")
	}
	lines = lines[:ih]
	for i := range lines {
		lines[i] = fit(lines[i], iw)
	}
	box := m.st.Panel.Render(strings.Join(lines, "\n"))
	if cur != nil {
		cur.Position.X += 2
		cur.Position.Y++
	}
	return box, cur
}

// hints renders key bindings as a one-line reminder.
func (m *Model) hints(bs ...key.Binding) string {
	var parts []string
	for _, b := range bs {
		h := b.Help()
		desc, _, _ := strings.Cut(h.Desc, ";")
		desc, _, _ = strings.Cut(desc, " (")
		parts = append(parts, m.st.Key.Render(h.Key)+" "+m.st.Muted.Render(desc))
	}
	return strings.Join(parts, m.st.Muted.Render(" · "))
}

// hint is a binding shown only as a reminder.
func hint(k, desc string) key.Binding {
	return key.NewBinding(key.WithKeys(k), key.WithHelp(k, desc))
}

// scroller is a block of lines viewed through a window.
type scroller struct {
	off int
}

func (s *scroller) window(lines []string, h int) []string {
	s.off = min(max(s.off, 0), max(len(lines)-h, 0))
	end := min(s.off+h, len(lines))
	return lines[s.off:end]
}

// scrollKey moves the window for up, down, pgup, pgdown, home and end.
func (s *scroller) scrollKey(k tea.KeyPressMsg, h int) bool {
	switch k.String() {
	case "up", "k":
		s.off--
	case "down", "j":
		s.off++
	case "pgup":
		s.off -= max(h-1, 1)
	case "pgdown", "space":
		s.off += max(h-1, 1)
	case "home", "g":
		s.off = 0
	case "end", "G":
		s.off = 1 << 30
	default:
		return false
	}
	return true
}

// base gives panels no-op defaults.
type base struct{}

func (base) refresh(*Model) {}
func (base) resize(*Model)  {}
func (base) restyle(*Model) {}

// helpPanel lists every key binding and command.
type helpPanel struct {
	base
	sc scroller
	h  int
}

func newHelpPanel(*Model) *helpPanel { return &helpPanel{} }

func (p *helpPanel) resize(m *Model) {
	_, ih := panelInner(m.width, m.height-1)
	p.h = ih - 2
}

func (p *helpPanel) update(m *Model, msg tea.Msg) (panel, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return p, nil
	}
	if key.Matches(k, m.keys.list.Back) || key.Matches(k, m.keys.chat.Help) || k.String() == "q" {
		return nil, nil
	}
	p.sc.scrollKey(k, p.h)
	return p, nil
}

func (p *helpPanel) view(m *Model, w, h int) ([]string, *tea.Cursor) {
	p.h = h - 2
	body := m.keys.helpText(m.st, w)
	out := []string{m.st.Title.Render("Help") + m.st.Muted.Render(" — every key and command")}
	out = append(out, p.sc.window(body, h-2)...)
	for len(out) < h-1 {
		out = append(out, "")
	}
	return append(out, m.hints(m.keys.list.Back)+m.st.Muted.Render(" · ↑↓ pgup pgdown scroll")), nil
}
