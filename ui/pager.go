package ui

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// pager shows one tool result in full, in place of the transcript: it
// scrolls, searches (/, n, N) and saves the result to a file (s).
type pager struct {
	title string
	raw   string   // the result as the server sent it, for saving
	text  []string // its lines, cleaned for the screen

	width int
	lines []string // text wrapped to width
	from  []int    // the text line each wrapped line comes from
	top   int
	h     int

	query   string
	typing  bool // typing the search query
	matches []int
	cur     int  // the wrapped line of the match the last jump went to; -1 before any
	saving  bool // typing the file name
	file    string
	note    string
}

var saveName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func newPager(c *card) *pager {
	raw := c.body()
	p := &pager{title: c.ref(), raw: raw, text: strings.Split(strings.TrimRight(clean(indentJSON(raw)), "\n"), "\n")}
	p.file = "mcphost-" + strings.Trim(saveName.ReplaceAllString(c.ref(), "-"), "-") + ".txt"
	return p
}

// openPager opens the selected (or newest) card's result.
func (m *Model) openPager() {
	c := m.tr.lastCard()
	if c == nil || !c.ranResult() {
		m.flash = "no result to open: select a card that ran"
		return
	}
	m.pager = newPager(c)
}

func (p *pager) layout(w, h int) {
	p.h = max(h-2, 1)
	if w == p.width {
		return
	}
	cur := -1 // the source line of the current match, kept across the rewrap
	if p.cur >= 0 && p.cur < len(p.from) {
		cur = p.from[p.cur]
	}
	p.width, p.lines, p.from = w, nil, nil
	for i, l := range p.text {
		for _, wl := range wrap(l, max(w-1, 1)) {
			p.lines = append(p.lines, wl)
			p.from = append(p.from, i)
		}
	}
	p.find()
	for _, i := range p.matches {
		if p.from[i] == cur {
			p.cur = i
			break
		}
	}
}

func (p *pager) scroll(n int) {
	p.top = min(max(p.top+n, 0), max(len(p.lines)-p.h, 0))
}

// find lists the wrapped lines that hold the query.
func (p *pager) find() {
	p.matches, p.cur = nil, -1
	if p.query == "" {
		return
	}
	q := strings.ToLower(p.query)
	for i, l := range p.lines {
		if strings.Contains(strings.ToLower(l), q) {
			p.matches = append(p.matches, i)
		}
	}
}

// jump moves to the next (dir > 0) or previous match from the top line.
func (p *pager) jump(dir int) {
	if len(p.matches) == 0 {
		p.note = "no match for " + cleanLine(p.query)
		return
	}
	target := -1
	if dir > 0 {
		for _, i := range p.matches {
			if i > p.top {
				target = i
				break
			}
		}
		if target < 0 {
			target, p.note = p.matches[0], "search wrapped to the top"
		}
	} else {
		for j := len(p.matches) - 1; j >= 0; j-- {
			if p.matches[j] < p.top {
				target = p.matches[j]
				break
			}
		}
		if target < 0 {
			target, p.note = p.matches[len(p.matches)-1], "search wrapped to the bottom"
		}
	}
	p.top, p.cur = target, target
	p.scroll(0)
}

func (m *Model) pagerKey(k tea.KeyPressMsg) tea.Cmd {
	p := m.pager
	p.layout(m.width, m.transcriptHeight())
	s := k.String()
	p.note = ""
	if p.typing || p.saving {
		field := &p.query
		if p.saving {
			field = &p.file
		}
		switch {
		case s == "esc":
			p.typing, p.saving = false, false
		case s == "enter":
			if p.saving {
				p.saving = false
				p.save()
			} else {
				p.typing = false
				p.find()
				p.top--
				p.jump(1)
			}
		case s == "backspace":
			if r := []rune(*field); len(r) > 0 {
				*field = string(r[:len(r)-1])
			}
		case s == "ctrl+u":
			*field = ""
		case k.Text != "" && k.Mod&^tea.ModShift == 0:
			*field += k.Text
		}
		return nil
	}
	switch s {
	case "q", "esc":
		m.pager = nil
	case "up", "k":
		p.scroll(-1)
	case "down", "j", "enter":
		p.scroll(1)
	case "pgup", "b":
		p.scroll(-p.h + 1)
	case "pgdown", "space", "f":
		p.scroll(p.h - 1)
	case "home", "g":
		p.top = 0
	case "end", "G":
		p.scroll(len(p.lines))
	case "/":
		p.typing, p.query = true, ""
	case "n":
		p.jump(1)
	case "N":
		p.jump(-1)
	case "s":
		p.saving = true
	}
	return nil
}

// save writes the result, as the server sent it, to a new file; an
// existing file is never replaced.
func (p *pager) save() {
	name := strings.TrimSpace(p.file)
	if name == "" {
		p.note = "no file name given"
		return
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		p.note = "not saved: " + cleanLine(name) + " exists; choose another name (s)"
		return
	}
	if err == nil {
		_, err = f.WriteString(p.raw)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		p.note = "not saved: " + cleanLine(err.Error())
		return
	}
	p.note = fmt.Sprintf("saved %s (%s)", cleanLine(name), humanBytes(len(p.raw)))
}

// markMatches draws every occurrence of q in l (ignoring case) in look. A
// line whose lower case is not the same length as itself, which a few
// scripts have, is drawn in look whole, so that no match goes unmarked.
func markMatches(l, q string, look lipgloss.Style) string {
	low, lq := strings.ToLower(l), strings.ToLower(q)
	if lq == "" {
		return l
	}
	if len(low) != len(l) {
		return look.Render(l)
	}
	var b strings.Builder
	for {
		i := strings.Index(low, lq)
		if i < 0 {
			b.WriteString(l)
			return b.String()
		}
		b.WriteString(l[:i])
		b.WriteString(look.Render(l[i : i+len(lq)]))
		l, low = l[i+len(lq):], low[i+len(lq):]
	}
}

// view draws the pager in h rows: a title, the text, and a line of keys.
func (p *pager) view(m *Model, w, h int) []string {
	p.layout(w, h)
	p.scroll(0)
	st := m.st
	out := make([]string, 0, h)
	pos := fmt.Sprintf(" lines %d–%d of %d ", min(p.top+1, len(p.lines)), min(p.top+p.h, len(p.lines)), len(p.lines))
	title := st.Title.Render(" result of "+cleanLine(p.title)) + st.Muted.Render(" ·"+pos)
	out = append(out, fit(title, w))
	match := map[int]bool{}
	for _, i := range p.matches {
		match[i] = true
	}
	for i := p.top; i < p.top+p.h; i++ {
		l := ""
		if i < len(p.lines) {
			l = p.lines[i]
			if match[i] {
				look := st.Selected
				if i == p.cur {
					look = look.Bold(true).Underline(true)
				}
				l = st.Selected.Render(">") + markMatches(l, p.query, look)
			} else {
				l = " " + l
			}
		}
		out = append(out, fit(l, w))
	}
	var foot string
	switch {
	case p.typing:
		foot = st.Info.Render("search: ") + cleanLine(p.query) + "▏" + st.Muted.Render("  enter finds · esc")
	case p.saving:
		foot = st.Info.Render("save to file: ") + cleanLine(p.file) + "▏" + st.Muted.Render("  enter saves · esc")
	case p.note != "":
		foot = st.Warn.Render(p.note)
	default:
		foot = st.Muted.Render("↑/↓ pgup/pgdn home/end · / search · n/N next/previous · s save · q back")
		if p.query != "" {
			count := fmt.Sprintf("%d lines match", len(p.matches))
			if len(p.matches) == 1 {
				count = "1 line matches"
			}
			foot = st.Muted.Render(count+" “"+cleanLine(p.query)+"” · ") + foot
		}
	}
	out = append(out, fit(foot, w))
	for len(out) < h {
		out = append(out, fit("", w))
	}
	return out[:h]
}
