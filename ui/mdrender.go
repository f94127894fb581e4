package ui

// A small terminal renderer for markdown. goldmark only parses; the walk
// below decides every cell, so the output width is known exactly and nothing
// but SGR sequences is ever written. No syntax highlighting: its libraries
// cost tens of milliseconds of package initialisation at every start.

import (
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// attr is a set of inline looks; a piece of text carries one.
type attr uint8

const (
	attrItalic attr = 1 << iota
	attrBold
	attrCode
	attrLink    // a link's text
	attrURL     // a link's address, after its text
	attrHeading // a heading's text and marker
	attrQuiet   // code blocks, rules, quote bars
)

// mdLook turns attrs into SGR prefixes for one markdown style. The
// sequences come from lipgloss so that colours follow the UI's palette and
// are downsampled with everything else.
type mdLook struct {
	styles
	sgr map[attr][2]string
}

func newMDLook(style string) *mdLook {
	return &mdLook{styles: newStyles(style != "light", style == "notty"), sgr: map[attr][2]string{}}
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
			st = st.Foreground(l.Model.GetForeground())
		case a&attrCode != 0:
			st = st.Foreground(l.Warn.GetForeground())
		case a&attrLink != 0:
			st = st.Foreground(l.Info.GetForeground()).Underline(true)
		case a&(attrURL|attrQuiet) != 0:
			st = st.Foreground(l.Muted.GetForeground())
			if l.noColor {
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

// piece is a run of text with one look; a word is one or more pieces with
// no space between them.
type piece struct {
	s string
	a attr
}

// mdRender renders sanitized markdown to lines of at most width cells.
// p parses CommonMark; build it with newMDParser.
func mdRender(p parser.Parser, src string, look *mdLook, width int) []string {
	b := []byte(src)
	doc := p.Parse(text.NewReader(b))
	r := &mdWalk{src: b, look: look}
	lines := r.blocks(doc, width)
	for i, l := range lines {
		// The walk already keeps to width; this is the guarantee.
		lines[i] = trunc(onlySGR(strings.TrimRight(l, " ")), width)
	}
	return lines
}

// newMDParser returns a CommonMark parser. It is built on first use, not at
// package initialisation, so commands that draw no markdown do not pay for it.
func newMDParser() parser.Parser {
	return parser.NewParser(parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithInlineParsers(parser.DefaultInlineParsers()...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
	)
}

type mdWalk struct {
	src  []byte
	look *mdLook
}

// blocks renders the block children of n, one blank line between them
// unless n is a tight list item.
func (r *mdWalk) blocks(n ast.Node, width int) []string {
	tight := false
	if li, ok := n.(*ast.ListItem); ok {
		if l, ok := li.Parent().(*ast.List); ok {
			tight = l.IsTight
		}
	}
	var out []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		ls := r.block(c, width)
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

func (r *mdWalk) block(n ast.Node, width int) []string {
	width = max(width, 1)
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		return r.fill(r.inlines(n, 0, nil), width)
	case *ast.Heading:
		marker := piece{strings.Repeat("#", n.Level) + " ", attrHeading}
		return r.fill(append([]piece{marker}, r.inlines(n, attrHeading, nil)...), width)
	case *ast.ThematicBreak:
		return []string{r.look.wrapSGR(strings.Repeat("─", width), attrQuiet)}
	case *ast.CodeBlock, *ast.FencedCodeBlock:
		var out []string
		for _, l := range r.lines(n) {
			l = strings.TrimRight(clean(l), "\n")
			out = append(out, "  "+r.look.wrapSGR(ansi.Truncate(l, width-2, "…"), attrQuiet))
		}
		return out
	case *ast.HTMLBlock:
		ls := r.lines(n)
		if n.HasClosure() {
			ls = append(ls, string(n.ClosureLine.Value(r.src)))
		}
		var out []string
		for _, l := range ls {
			out = append(out, wrap(strings.TrimRight(clean(l), "\n"), width)...)
		}
		return out
	case *ast.Blockquote:
		bar := r.look.wrapSGR("│", attrQuiet) + " "
		out := r.blocks(n, width-2)
		for i, l := range out {
			out[i] = bar + l
		}
		return out
	case *ast.List:
		return r.list(n, width)
	}
	if n.Type() == ast.TypeBlock && n.HasChildren() {
		return r.blocks(n, width)
	}
	return r.fill(r.inlines(n, 0, nil), width)
}

// list renders items with their markers; an item's later lines line up with
// its text, so nested lists indent by their parent's marker.
func (r *mdWalk) list(n *ast.List, width int) []string {
	var markers []string
	mw := 0
	for i, c := 0, n.FirstChild(); c != nil; i, c = i+1, c.NextSibling() {
		m := "•"
		if n.IsOrdered() {
			m = strconv.Itoa(n.Start+i) + string(n.Marker)
		}
		markers = append(markers, m)
		mw = max(mw, ansi.StringWidth(m)+1)
	}
	var out []string
	i := 0
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if i > 0 && !n.IsTight {
			out = append(out, "")
		}
		ls := r.blocks(c, width-mw)
		if len(ls) == 0 {
			ls = []string{""}
		}
		m := markers[i]
		m += strings.Repeat(" ", mw-ansi.StringWidth(m))
		for j, l := range ls {
			if j == 0 {
				out = append(out, m+l)
			} else if l != "" {
				out = append(out, strings.Repeat(" ", mw)+l)
			} else {
				out = append(out, "")
			}
		}
		i++
	}
	return out
}

// lines returns the raw source lines of a code or HTML block.
func (r *mdWalk) lines(n ast.Node) []string {
	segs := n.Lines()
	out := make([]string, 0, segs.Len())
	for i := 0; i < segs.Len(); i++ {
		s := segs.At(i)
		out = append(out, string(s.Value(r.src)))
	}
	return out
}

// inlines flattens the inline children of n into pieces; "\n" in a piece
// is a hard line break.
func (r *mdWalk) inlines(n ast.Node, a attr, out []piece) []piece {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			v := c.Value(r.src)
			if !c.IsRaw() {
				v = util.ResolveNumericReferences(util.ResolveEntityNames(util.UnescapePunctuations(v)))
			}
			out = append(out, piece{clean(string(v)), a})
			switch {
			case c.HardLineBreak():
				out = append(out, piece{"\n", a})
			case c.SoftLineBreak():
				out = append(out, piece{" ", a})
			}
		case *ast.String:
			out = append(out, piece{clean(string(c.Value)), a})
		case *ast.CodeSpan:
			s := r.plain(c)
			if r.look.noColor {
				s = "`" + s + "`"
			}
			out = append(out, piece{s, a | attrCode})
		case *ast.Emphasis:
			e := attrItalic
			if c.Level >= 2 {
				e = attrBold
			}
			out = r.inlines(c, a|e, out)
		case *ast.Link:
			out = r.link(c, string(c.Destination), a, out)
		case *ast.Image:
			out = r.link(c, string(c.Destination), a, out)
		case *ast.AutoLink:
			out = append(out, piece{clean(string(c.URL(r.src))), a | attrLink})
		case *ast.RawHTML:
			for i := 0; i < c.Segments.Len(); i++ {
				s := c.Segments.At(i)
				out = append(out, piece{clean(string(s.Value(r.src))), a})
			}
		default:
			out = r.inlines(c, a, out)
		}
	}
	return out
}

// link writes a link's text, then its address if the text is not already
// the address.
func (r *mdWalk) link(n ast.Node, dest string, a attr, out []piece) []piece {
	start := len(out)
	out = r.inlines(n, a|attrLink, out)
	var label strings.Builder
	for _, p := range out[start:] {
		label.WriteString(p.s)
	}
	dest = clean(dest)
	if dest != "" && dest != label.String() {
		if label.Len() > 0 {
			out = append(out, piece{" ", a})
		}
		out = append(out, piece{"(" + dest + ")", a | attrURL})
	}
	return out
}

// plain is the text of n's descendants, unstyled; code spans keep their
// text as written.
func (r *mdWalk) plain(n ast.Node) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Value(r.src))
			if c.SoftLineBreak() || c.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(c.Value)
		}
		return ast.WalkContinue, nil
	})
	return clean(b.String())
}

// fill word-wraps pieces to width cells. Spaces separate words; a word
// longer than a line is broken across lines.
func (r *mdWalk) fill(ps []piece, width int) []string {
	f := filler{look: r.look, width: max(width, 1)}
	var word []piece
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
	out   []string
	line  strings.Builder
	w     int
}

func (f *filler) word(ps []piece) {
	w := 0
	for _, p := range ps {
		w += ansi.StringWidth(p.s)
	}
	if w == 0 {
		return
	}
	if f.w > 0 {
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

// put writes p, breaking it across lines where it does not fit.
func (f *filler) put(p piece) {
	for p.s != "" {
		room := f.width - f.w
		pw := ansi.StringWidth(p.s)
		if pw <= room {
			f.line.WriteString(f.look.wrapSGR(p.s, p.a))
			f.w += pw
			return
		}
		head := ansi.Truncate(p.s, room, "")
		if head == "" || !strings.HasPrefix(p.s, head) {
			if f.w == 0 {
				// Not even one grapheme fits: let the final cut mark it.
				f.line.WriteString(f.look.wrapSGR(p.s, p.a))
				f.w += pw
				return
			}
			f.newline()
			continue
		}
		f.line.WriteString(f.look.wrapSGR(head, p.a))
		f.w += ansi.StringWidth(head)
		p.s = p.s[len(head):]
		f.newline()
	}
}

func (f *filler) newline() {
	f.out = append(f.out, f.line.String())
	f.line.Reset()
	f.w = 0
}

func (f *filler) done() []string {
	if f.w > 0 {
		f.newline()
	}
	return f.out
}
