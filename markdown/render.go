package markdown

// A small terminal renderer for markdown. mdParse only parses; the walk
// below decides every cell, so the output width is known exactly and nothing
// but SGR sequences is ever written. Fenced code is highlighted by
// highlight.go, whose lexers are built only when a block needs one.

import (
	"image/color"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// attr is a set of inline looks; a piece of text carries one.
type attr uint16

const (
	attrItalic attr = 1 << iota
	attrBold
	attrCode
	attrLink    // a link's text
	attrURL     // a link's address, after its text
	attrHeading // a heading's text and marker
	attrQuiet   // code blocks, rules, quote bars
)

// mdLook turns attrs into SGR prefixes for one Style. The sequences come
// from lipgloss so that colours are downsampled with everything else on the
// screen. It also holds the cleaning every drawn piece goes through.
type mdLook struct {
	Style
	clean func(string) string
	sgr   map[attr][2]string
}

func newMDLook(o Options) *mdLook {
	l := &mdLook{Style: o.Style, clean: o.Clean, sgr: map[attr][2]string{}}
	if l.clean == nil {
		l.clean = Clean
	}
	return l
}

// wrapSGR returns the text styled with a, each piece self-contained so a
// line can be cut or prefixed anywhere.
func (l *mdLook) wrapSGR(s string, a attr) string {
	if a == 0 || s == "" {
		return s
	}
	p, ok := l.sgr[a]
	if !ok {
		st := lipgloss.NewStyle()
		if a&attrItalic != 0 {
			st = st.Italic(true)
		}
		if a&(attrBold|attrHeading) != 0 {
			st = st.Bold(true)
		}
		switch {
		case a&attrHeading != 0:
			st = fg(st, l.Heading)
		case a&attrCode != 0:
			st = fg(st, l.Code)
		case a&attrKeyword != 0:
			st = fg(st, l.Syntax.Keyword)
		case a&attrString != 0:
			st = fg(st, l.Syntax.String)
		case a&attrComment != 0:
			st = fg(st, l.Syntax.Comment).Italic(true)
		case a&attrNumber != 0:
			st = fg(st, l.Syntax.Number)
		case a&attrType != 0:
			st = fg(st, l.Syntax.Type)
		case a&attrLink != 0:
			st = fg(st, l.Link).Underline(true)
		case a&(attrURL|attrQuiet) != 0:
			st = fg(st, l.Quiet)
			if l.NoColor {
				st = st.Faint(true)
			}
		}
		out := st.Render("x")
		before, after, _ := strings.Cut(out, "x")
		p = [2]string{before, after}
		l.sgr[a] = p
	}
	return p[0] + s + p[1]
}

// fg is st in colour c, unless c is nil.
func fg(st lipgloss.Style, c color.Color) lipgloss.Style {
	if c == nil {
		return st
	}
	return st.Foreground(c)
}

// piece is a run of text with one look; a word is one or more pieces with
// no space between them.
type piece struct {
	s string
	a attr
}

// Nested blocks keep room for their text: half the width, but at least
// mdNestMin cells (or the whole width, if it is less) and never more than
// mdNestMax. A block quote's bar or a list item's indent that would leave
// less is not drawn, so that deep nesting does not squeeze text into a
// column too narrow to read.
const (
	mdNestMin = 10
	mdNestMax = 20
)

// mdRender renders markdown, prepared by Options.Prepare (its pieces are
// cleaned again with Options.Clean), to lines of at most width cells. flush,
// nil when there are none, marks the lines of top-level code blocks.
func mdRender(src string, look *mdLook, width int) (lines []string, flush []bool) {
	r := &mdWalk{look: look, floor: max(min(width, max(width/2, mdNestMin), mdNestMax), 1)}
	lines = r.blocks(mdParse(src), width, false, nil)
	for i, l := range lines {
		if f, ok := strings.CutPrefix(l, flushMark); ok {
			if flush == nil {
				flush = make([]bool, len(lines))
			}
			flush[i], l = true, f
		}
		l = strings.TrimSuffix(strings.TrimRight(l, " "), keepMark)
		// The walk already keeps to width; this is the guarantee.
		lines[i] = trunc(onlySGR(l), width)
	}
	return lines, flush
}

type mdWalk struct {
	look  *mdLook
	floor int // nested blocks are not indented below this width
}

// blocks renders the block children of n, one blank line between them
// unless they are the blocks of an item of a tight list. lead, if any, goes
// before the text of the first block when that is a paragraph.
func (r *mdWalk) blocks(n *mdNode, width int, tight bool, lead []piece) []string {
	var out []string
	for c := n.first; c != nil; c = c.next {
		var ls []string
		if lead != nil && c == n.first && c.kind == mdParagraph {
			ls = r.fill(r.inlines(c, 0, lead), width, 0)
		} else {
			ls = r.block(c, width)
		}
		if len(ls) == 0 {
			continue
		}
		if len(out) > 0 && !tight {
			out = append(out, "")
		}
		out = append(out, ls...)
	}
	return out
}

func (r *mdWalk) block(n *mdNode, width int) []string {
	width = max(width, 1)
	switch n.kind {
	case mdParagraph:
		return r.fill(r.inlines(n, 0, nil), width, 0)
	case mdHeading:
		marker := piece{strings.Repeat("#", n.level) + " ", attrHeading}
		return r.fill(r.inlines(n, attrHeading, []piece{marker}), width, 0)
	case mdThematicBreak:
		return []string{r.look.wrapSGR(strings.Repeat("─", width), attrQuiet)}
	case mdCodeBlock:
		return r.code(n, width)
	case mdHTMLBlock:
		var out []string
		for _, l := range n.lines {
			out = append(out, wrap(r.look.clean(l), width)...)
		}
		return out
	case mdBlockquote:
		if width-2 < r.floor {
			return r.blocks(n, width, false, nil)
		}
		bar := r.look.wrapSGR("│", attrQuiet) + " "
		out := r.blocks(n, width-2, false, nil)
		for i, l := range out {
			out[i] = bar + l
		}
		return out
	case mdList:
		return r.list(n, width)
	case mdTable:
		return r.table(n, width)
	}
	return nil // link reference definitions
}

// flushMark starts a line that the Renderer's indent must not shift: the
// lines of a top-level code block, so that a copy of them from the terminal
// is the code as written. Cleaned text never holds a NUL.
const flushMark = "\x00"

// keepMark ends a line of code whose spaces at the end are its own, not
// padding: a long line cut after a space must not lose it.
const keepMark = "\x01"

// code draws a code block: its language, if a fence names one, on a line of
// its own, then the code with no indent, highlighted when the language is
// one highlight.go knows and the style has colour (without colour it is
// plain text). A line wider than the block goes on over as many lines as it
// needs, each marked ↪, so that no character of the code is hidden.
func (r *mdWalk) code(n *mdNode, width int) []string {
	lines := make([]string, len(n.lines))
	for i, l := range n.lines {
		lines[i] = r.look.clean(l)
	}
	var out []string
	lang := r.look.clean(n.text)
	if lang != "" {
		out = append(out, r.look.wrapSGR(lang, attrQuiet))
	}
	var rows [][]piece
	if r.look.NoColor {
		rows = highlight(lines, "")
	} else {
		rows = highlight(lines, lang)
	}
	more := r.look.wrapSGR("↪", attrQuiet) + " "
	for _, ps := range rows {
		out = r.codeLine(out, ps, width, more)
	}
	if n.parent != nil && n.parent.kind == mdDocument {
		for i := range out {
			out[i] = flushMark + out[i]
		}
	}
	return out
}

// codeLine appends one line of code, as pieces, to out: width cells on the
// first line, then width-2 after the mark more on each line it goes on to.
func (r *mdWalk) codeLine(out []string, ps []piece, width int, more string) []string {
	var b strings.Builder
	room, empty := width, true
	for _, p := range ps {
		for s := p.s; s != ""; {
			w := ansi.StringWidth(s)
			if w <= room {
				b.WriteString(r.look.wrapSGR(s, p.a))
				room, empty = room-w, false
				break
			}
			head, _ := cutCells(s, room)
			if head == "" && empty {
				// One grapheme wider than the block: the final cut marks it.
				head, _ = ansi.FirstGraphemeCluster(s, ansi.GraphemeWidth)
			}
			b.WriteString(r.look.wrapSGR(head, p.a))
			out = append(out, b.String()+keepMark)
			b.Reset()
			b.WriteString(more)
			room, empty = max(width-2, 1), true
			s = s[len(head):]
		}
	}
	return append(out, b.String())
}

// list renders items with their markers; an item's later lines line up with
// its text, so nested lists indent by their parent's marker. Where that
// would leave the text less than the floor, items are not indented: the
// marker is the first word of the item's paragraph, or goes before its
// first line, or on a line of its own.
func (r *mdWalk) list(n *mdNode, width int) []string {
	var markers []string
	mw := 0
	for i, c := 0, n.first; c != nil; i, c = i+1, c.next {
		m := "•"
		if n.ordered {
			m = strconv.Itoa(n.start+i) + string(n.delim)
		}
		markers = append(markers, m)
		mw = max(mw, ansi.StringWidth(m)+1)
	}
	indent := mw
	if width-mw < r.floor {
		indent = 0
	}
	var out []string
	i := 0
	for c := n.first; c != nil; c = c.next {
		if i > 0 && !n.tight {
			out = append(out, "")
		}
		m := markers[i]
		var lead []piece
		if indent == 0 && c.first != nil && c.first.kind == mdParagraph {
			lead = []piece{{m + " ", 0}}
		}
		ls := r.blocks(c, width-indent, n.tight, lead)
		if len(ls) == 0 {
			ls = []string{""}
		}
		m += strings.Repeat(" ", mw-ansi.StringWidth(m))
		switch {
		case lead != nil:
			m = ""
		case indent == 0 && ls[0] != "" && ansi.StringWidth(m)+ansi.StringWidth(ls[0]) > width:
			out = append(out, m)
			m = ""
		}
		for j, l := range ls {
			if j == 0 {
				out = append(out, m+l)
			} else if l != "" {
				out = append(out, strings.Repeat(" ", indent)+l)
			} else {
				out = append(out, "")
			}
		}
		i++
	}
	return out
}

// table draws a table as a grid when its columns fit the width. When they
// do not, each row is drawn as a paragraph of its own, its cells apart by
// a bar and its later lines indented.
func (r *mdWalk) table(n *mdNode, width int) []string {
	aligns := n.text
	type cell struct {
		ps []piece
		w  int
	}
	colw := make([]int, len(aligns))
	var rows [][]cell // as many cells as the row has, up to the columns
	for row := n.first; row != nil; row = row.next {
		a := attr(0)
		if row == n.first {
			a = attrBold
		}
		var cells []cell
		for c, i := row.first, 0; c != nil && i < len(aligns); c, i = c.next, i+1 {
			ps := merge(r.inlines(c, a, nil))
			w := 0
			for _, p := range ps {
				w += ansi.StringWidth(p.s)
			}
			colw[i] = max(colw[i], w)
			cells = append(cells, cell{ps, w})
		}
		rows = append(rows, cells)
	}
	total := 3 * (len(colw) - 1) // " │ " between columns
	for i := range colw {
		colw[i] = max(colw[i], 1)
		total += colw[i]
	}

	var out []string
	if total > width {
		hang := 2
		if width <= 2*hang {
			hang = 0
		}
		sep := []piece{{" ", 0}, {"│", attrQuiet}, {" ", 0}}
		for i, cells := range rows {
			var ps []piece
			for j, c := range cells {
				if j > 0 {
					ps = append(ps, sep...)
				}
				ps = append(ps, c.ps...)
			}
			out = append(out, r.fill(ps, width, hang)...)
			if i == 0 {
				out = append(out, r.look.wrapSGR(strings.Repeat("─", width), attrQuiet))
			}
		}
		return out
	}

	sep := " " + r.look.wrapSGR("│", attrQuiet) + " "
	var b strings.Builder
	for i, cells := range rows {
		b.Reset()
		for j, w := range colw {
			if j > 0 {
				b.WriteString(sep)
			}
			var c cell
			if j < len(cells) {
				c = cells[j]
			}
			left := 0
			switch aligns[j] {
			case 'r':
				left = w - c.w
			case 'c':
				left = (w - c.w) / 2
			}
			b.WriteString(strings.Repeat(" ", left))
			for _, p := range c.ps {
				b.WriteString(r.look.wrapSGR(p.s, p.a))
			}
			b.WriteString(strings.Repeat(" ", w-c.w-left))
		}
		out = append(out, b.String())
		if i == 0 {
			b.Reset()
			for j, w := range colw {
				if j > 0 {
					b.WriteString("─┼─")
				}
				b.WriteString(strings.Repeat("─", w))
			}
			out = append(out, r.look.wrapSGR(b.String(), attrQuiet))
		}
	}
	return out
}

// inlines appends the inline children of n to out as pieces; "\n" in a
// piece is a hard line break, and nothing else makes one. It walks the
// tree without recursion, for emphasis and images nest as deep as the
// input is long.
func (r *mdWalk) inlines(n *mdNode, a attr, out []piece) []piece {
	type frame struct {
		n           *mdNode
		a           attr // the look outside n
		start, size int  // len(out) and size when n began
	}
	var stack []frame
	size := 0 // bytes in out
	add := func(p piece) {
		out = append(out, p)
		size += len(p.s)
	}
	for c := n.first; ; {
		if c == nil {
			if len(stack) == 0 {
				return out
			}
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if dest := r.look.clean(mdOneLine(f.n.text)); (f.n.kind == mdLink || f.n.kind == mdImage) && dest != "" {
				// The address, unless the text is the address already.
				if label := size - f.size; label != len(dest) || !piecesEqual(out[f.start:], dest) {
					if label > 0 {
						add(piece{" ", f.a})
					}
					add(piece{"(" + dest + ")", f.a | attrURL})
				}
			}
			a, c = f.a, f.n.next
			continue
		}
		switch c.kind {
		case mdText:
			add(piece{r.look.clean(mdOneLine(c.text)), a})
		case mdSoftBreak:
			add(piece{" ", a})
		case mdHardBreak:
			add(piece{"\n", a})
		case mdCode:
			s := r.look.clean(c.text)
			if r.look.NoColor {
				s = "`" + s + "`"
			}
			add(piece{s, a | attrCode})
		case mdAutoLink:
			add(piece{r.look.clean(c.text), a | attrLink})
		case mdRawHTML:
			add(piece{r.look.clean(strings.ReplaceAll(c.text, "\n", " ")), a})
		case mdEmph, mdLink, mdImage:
			stack = append(stack, frame{c, a, len(out), size})
			switch {
			case c.kind != mdEmph:
				a |= attrLink
			case c.level >= 2:
				a |= attrBold
			default:
				a |= attrItalic
			}
			c = c.first
			continue
		}
		c = c.next
	}
}

// mdOneLine turns the line endings that character references (&#10;,
// &#13;) put in text into spaces: they are characters, not line breaks.
func mdOneLine(s string) string {
	if strings.IndexAny(s, "\r\n") < 0 {
		return s
	}
	return strings.Map(func(c rune) rune {
		if c == '\r' || c == '\n' {
			return ' '
		}
		return c
	}, s)
}

// piecesEqual reports whether the pieces' text joined is s.
func piecesEqual(ps []piece, s string) bool {
	for _, p := range ps {
		if !strings.HasPrefix(s, p.s) {
			return false
		}
		s = s[len(p.s):]
	}
	return s == ""
}

// merge joins neighbouring pieces of the same look, so that a run of text
// takes one pair of SGR sequences however the parser split it.
func merge(ps []piece) []piece {
	out := ps[:0]
	for i := 0; i < len(ps); {
		j := i + 1
		for j < len(ps) && ps[j].a == ps[i].a {
			j++
		}
		p := ps[i]
		if j > i+1 {
			var b strings.Builder
			for _, q := range ps[i:j] {
				b.WriteString(q.s)
			}
			p.s = b.String()
		}
		out = append(out, p)
		i = j
	}
	return out
}

// fill word-wraps pieces to width cells, indenting every line after the
// first by hang cells. Spaces separate words; a word longer than a line is
// broken across lines.
func (r *mdWalk) fill(ps []piece, width, hang int) []string {
	f := filler{look: r.look, width: max(width, 1), hang: hang}
	var word []piece
	ps = merge(ps)
	flushWord := func() {
		f.word(word)
		word = word[:0]
	}
	for _, p := range ps {
		for p.s != "" {
			i := strings.IndexAny(p.s, " \n")
			if i < 0 {
				word = append(word, p)
				break
			}
			if i > 0 {
				word = append(word, piece{p.s[:i], p.a})
			}
			flushWord()
			if p.s[i] == '\n' {
				f.newline()
			}
			p.s = p.s[i+1:]
		}
	}
	flushWord()
	return f.done()
}

type filler struct {
	look  *mdLook
	width int
	hang  int
	out   []string
	line  strings.Builder
	w     int // cells on the line, its indent included
	start int // cells of indent on the line
}

func (f *filler) word(ps []piece) {
	w := 0
	for _, p := range ps {
		w += ansi.StringWidth(p.s)
	}
	if w == 0 {
		return
	}
	if f.w > f.start {
		if f.w+1+w > f.width {
			f.newline()
		} else {
			f.line.WriteByte(' ')
			f.w++
		}
	}
	for _, p := range ps {
		f.put(p)
	}
}

// put writes p, breaking it across lines where it does not fit. Each cut
// measures only the part that fits, so a word of any length costs time in
// proportion to its length.
func (f *filler) put(p piece) {
	pw := ansi.StringWidth(p.s)
	for p.s != "" {
		room := f.width - f.w
		if pw <= room {
			f.line.WriteString(f.look.wrapSGR(p.s, p.a))
			f.w += pw
			return
		}
		head, hw := cutCells(p.s, room)
		if head == "" {
			if f.w == f.start {
				// Not even one grapheme fits: let the final cut mark it.
				f.line.WriteString(f.look.wrapSGR(p.s, p.a))
				f.w += pw
				return
			}
			f.newline()
			continue
		}
		f.line.WriteString(f.look.wrapSGR(head, p.a))
		f.w += hw
		p.s = p.s[len(head):]
		pw -= hw
		f.newline()
	}
}

// cutCells returns the longest prefix of s, plain text, that is at most
// room cells wide, and its width.
func cutCells(s string, room int) (string, int) {
	w, i := 0, 0
	for i < len(s) {
		g, gw := ansi.FirstGraphemeCluster(s[i:], ansi.GraphemeWidth)
		if w+gw > room {
			break
		}
		w += gw
		i += len(g)
	}
	return s[:i], w
}

func (f *filler) newline() {
	f.out = append(f.out, f.line.String())
	f.line.Reset()
	f.line.WriteString(strings.Repeat(" ", f.hang))
	f.w, f.start = f.hang, f.hang
}

func (f *filler) done() []string {
	if f.w > f.start {
		f.newline()
	}
	return f.out
}
