package markdown

// A CommonMark parser for the subset the terminal renderer draws: the block
// structure of the spec (version 0.31.2) and its inlines, with one
// extension, the pipe tables of GitHub Flavored Markdown (as cmark-gfm
// parses them), and without strikethrough or the others. It follows the
// spec's two-phase algorithm — block structure line by line, then inlines
// per paragraph, heading or table cell — the way the reference
// implementation, commonmark.js, does.
//
// Nothing is built at package initialisation: no maps, no regular
// expressions. Where the spec allows unbounded work the parser sets a
// limit, so that time stays linear in the input:
//   - block quotes and list items nest at most mdMaxNesting deep; deeper
//     markers are text;
//   - a table has at most mdMaxColumns columns; a wider one is a
//     paragraph, and a row's cells past the header's count are not read;
//   - a link destination holds at most mdMaxParens nested parentheses;
//   - a code span's closing run, an HTML comment's end and the like are
//     each found once, not searched for again from every opener.
//
// Inlines may nest without limit: the renderer walks them without
// recursion.
//
// Deviations from the spec: of the named character references only the
// common ones in mdNamedEntity are known, and others stay literal text (the
// full table is 2,000 entries); tabs are expanded to spaces (tab stops of
// 4) before parsing, which changes nothing in the structure but turns a tab
// inside code into spaces; reference labels are case-folded with
// strings.ToLower, not full Unicode case folding; link titles are parsed
// but not kept, for nothing draws them; a table's header is the last line
// of the paragraph above its delimiter row, and that paragraph is tried
// again at each later line that could be a delimiter row (cmark-gfm tries
// a paragraph once).

import "strings"

// mdKind is the kind of a node of the markdown tree.
type mdKind uint8

const (
	// Blocks.
	mdDocument mdKind = iota
	mdParagraph
	mdHeading
	mdThematicBreak
	mdCodeBlock // indented or fenced; lines holds its text, text a fence's language
	mdHTMLBlock // lines holds its text
	mdBlockquote
	mdList
	mdItem
	mdLinkDefs // a paragraph of link reference definitions only; draws nothing
	mdTable    // text holds the columns' alignments, a byte each: 'l', 'c', 'r' or ' '
	mdTableRow // the first row of a table is its header
	mdTableCell

	// Inlines.
	mdText      // text holds it, escapes and references resolved
	mdSoftBreak // a line ending
	mdHardBreak
	mdCode     // text holds the code span's content
	mdEmph     // level 1 is emphasis, 2 strong emphasis
	mdLink     // text holds the destination
	mdImage    // text holds the source; the children are the description
	mdAutoLink // text holds the address as written
	mdRawHTML  // text holds the tag as written
)

// mdMaxNesting bounds how deep block quotes and list items nest.
const mdMaxNesting = 32

// mdMaxColumns bounds the columns of a table.
const mdMaxColumns = 64

// mdNode is a node of the tree that mdParse returns. Blocks and inlines
// share the type; the fields after the links are used by some kinds only.
type mdNode struct {
	kind                            mdKind
	parent, first, last, prev, next *mdNode

	text  string   // see the kinds
	lines []string // code and HTML blocks; paragraphs and tables while parsing
	level int      // heading 1–6; emphasis 1–2

	// Lists.
	ordered bool
	tight   bool
	start   int  // ordered lists: the first number
	delim   byte // the bullet, or '.' or ')' after a number

	// Block parsing state.
	open               bool
	depth              int // block quotes and list items around and including this one
	startLine, endLine int // the first line and the last line with content
	fenceChar          byte
	fenceLen           int // 0 unless fenced
	fenceOffset        int
	htmlType           int
	markerOffset       int // list items: indentation of the marker
	padding            int // list items: marker width plus spaces after it
}

func (n *mdNode) appendChild(c *mdNode) {
	c.parent = n
	c.prev = n.last
	c.next = nil
	if n.last != nil {
		n.last.next = c
	} else {
		n.first = c
	}
	n.last = c
}

func (n *mdNode) unlink() {
	if n.prev != nil {
		n.prev.next = n.next
	} else if n.parent != nil {
		n.parent.first = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	} else if n.parent != nil {
		n.parent.last = n.prev
	}
	n.parent, n.prev, n.next = nil, nil, nil
}

func (n *mdNode) insertAfter(s *mdNode) {
	s.parent = n.parent
	s.prev = n
	s.next = n.next
	if n.next != nil {
		n.next.prev = s
	} else if n.parent != nil {
		n.parent.last = s
	}
	n.next = s
}

// mdParse parses CommonMark into a tree rooted at an mdDocument node.
func mdParse(src string) *mdNode {
	p := &mdParser{doc: &mdNode{kind: mdDocument, open: true}}
	p.tip = p.doc
	for src != "" {
		i := strings.IndexAny(src, "\r\n")
		ln := src
		if i < 0 {
			src = ""
		} else {
			ln = src[:i]
			if src[i] == '\r' && i+1 < len(src) && src[i+1] == '\n' {
				i++
			}
			src = src[i+1:]
		}
		p.addLine(mdExpandTabs(ln))
	}
	for p.tip != nil {
		p.finalize(p.tip)
	}
	ip := &mdInlineParser{refs: p.refs}
	p.parseInlines(ip, p.doc)
	return p.doc
}

// mdExpandTabs replaces tabs with spaces up to the next tab stop (of 4).
func mdExpandTabs(s string) string {
	if strings.IndexByte(s, '\t') < 0 {
		return s
	}
	var b strings.Builder
	col := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\t' {
			n := 4 - col%4
			b.WriteString("    "[:n])
			col += n
			continue
		}
		b.WriteByte(c)
		if c < 0x80 || c >= 0xc0 { // count runes, not continuation bytes
			col++
		}
	}
	return b.String()
}

type mdParser struct {
	doc, tip    *mdNode
	oldtip      *mdNode           // the tip before this line
	lastMatched *mdNode           // the last container this line continued
	refs        map[string]string // link reference definitions: normalized label to destination

	line                 string
	lineNo               int
	offset, nextNonspace int
	indent               int // spaces between offset and nextNonspace
	blank, indented      bool
	allClosed            bool
}

// Results of continuing a block or starting one.
const (
	mdNoMatch   = 0
	mdContainer = 1 // matched, and more blocks may start inside
	mdLeaf      = 2 // matched, and the rest of the line belongs to it
)

func (p *mdParser) findNextNonspace() {
	i := p.offset
	for i < len(p.line) && p.line[i] == ' ' {
		i++
	}
	p.nextNonspace = i
	p.indent = i - p.offset
	p.indented = p.indent >= 4
	p.blank = i == len(p.line)
}

func (p *mdParser) peek(i int) byte {
	if i < len(p.line) {
		return p.line[i]
	}
	return 0
}

// addLine takes one line (without its ending) into the block structure.
func (p *mdParser) addLine(ln string) {
	p.line, p.offset = ln, 0
	p.lineNo++
	p.oldtip = p.tip

	// Which open blocks does the line continue?
	container := p.doc
	for container.last != nil && container.last.open {
		c := container.last
		p.findNextNonspace()
		touched := !p.blank
		r := p.continues(c)
		if r == mdNoMatch {
			break
		}
		container = c
		if touched && c.kind != mdList { // a list always matches; its items decide
			c.endLine = p.lineNo
			c.parent.endLine = p.lineNo
		}
		if r == mdLeaf { // a closing code fence: nothing more on this line
			for b := c; b != nil; b = b.parent {
				b.endLine = p.lineNo
			}
			return
		}
	}
	p.allClosed = container == p.oldtip
	p.lastMatched = container

	// New blocks, as long as the line starts them. Paragraphs and tables
	// take the rest of a line only if no block starts there.
	matchedLeaf := container.kind == mdCodeBlock || container.kind == mdHTMLBlock
	for !matchedLeaf {
		p.findNextNonspace()
		if !p.indented && !mdMaybeStart(p.peek(p.nextNonspace)) {
			p.offset = p.nextNonspace
			break
		}
		r := p.startBlock(container)
		if r == mdNoMatch {
			p.offset = p.nextNonspace
			break
		}
		container = p.tip
		matchedLeaf = r == mdLeaf
	}

	// The rest of the line is text.
	content := !p.blank
	switch {
	case !p.allClosed && !p.blank && p.tip.kind == mdParagraph:
		p.tip.lines = append(p.tip.lines, p.line[p.offset:]) // lazy continuation
	default:
		p.closeUnmatched()
		switch {
		case mdAcceptsLines(container.kind):
			container.lines = append(container.lines, p.line[p.offset:])
			content = content || container.kind != mdParagraph && (container.fenceLen > 0 || container.kind == mdHTMLBlock)
			if container.kind == mdHTMLBlock && mdHTMLBlockEnds(container.htmlType, p.line[p.offset:]) {
				for b := container; b != nil; b = b.parent {
					b.endLine = p.lineNo
				}
				p.finalize(container)
				return
			}
		case p.offset < len(p.line) && !p.blank:
			c := p.addChild(mdParagraph)
			c.lines = append(c.lines, p.line[p.offset:])
		}
	}
	if content {
		for b := p.tip; b != nil; b = b.parent {
			b.endLine = p.lineNo
		}
	}
}

// continues reports whether the line continues the open block c, and
// consumes c's markers: mdContainer if it does, mdLeaf if the line is the
// closing fence of c and nothing more, else mdNoMatch.
func (p *mdParser) continues(c *mdNode) int {
	switch c.kind {
	case mdDocument, mdList:
		return mdContainer
	case mdBlockquote:
		if !p.indented && p.peek(p.nextNonspace) == '>' {
			p.offset = p.nextNonspace + 1
			if p.peek(p.offset) == ' ' {
				p.offset++
			}
			return mdContainer
		}
	case mdItem:
		if p.blank {
			if c.first == nil { // an item can begin with at most one blank line
				return mdNoMatch
			}
			p.offset = p.nextNonspace
			return mdContainer
		}
		if n := c.markerOffset + c.padding; p.indent >= n {
			p.offset += n
			return mdContainer
		}
	case mdCodeBlock:
		if c.fenceLen > 0 {
			if !p.indented && mdClosingFence(p.line[p.nextNonspace:], c.fenceChar, c.fenceLen) {
				p.finalize(c)
				return mdLeaf
			}
			for i := c.fenceOffset; i > 0 && p.peek(p.offset) == ' '; i-- {
				p.offset++
			}
			return mdContainer
		}
		if p.indented {
			p.offset += 4
			return mdContainer
		}
		if p.blank {
			p.offset = p.nextNonspace
			return mdContainer
		}
	case mdHTMLBlock:
		if !p.blank || c.htmlType < 6 {
			return mdContainer
		}
	case mdParagraph:
		if !p.blank {
			return mdContainer
		}
	case mdTable:
		// Every line that is not blank is a row, but for a lone pipe,
		// which has no cells.
		if !p.blank && strings.TrimRight(p.line[p.nextNonspace:], " ") != "|" {
			return mdContainer
		}
	}
	return mdNoMatch
}

// startBlock starts a block at nextNonspace inside container, if the line
// has one there.
func (p *mdParser) startBlock(container *mdNode) int {
	s := p.line[p.nextNonspace:]
	if p.indented {
		if p.tip.kind != mdParagraph && !p.blank { // indented code
			p.offset += 4
			p.closeUnmatched()
			p.addChild(mdCodeBlock)
			return mdLeaf
		}
		return mdNoMatch
	}
	switch s[0] {
	case '>':
		if container.depth >= mdMaxNesting {
			return mdNoMatch
		}
		p.offset = p.nextNonspace + 1
		if p.peek(p.offset) == ' ' {
			p.offset++
		}
		p.closeUnmatched()
		p.addChild(mdBlockquote)
		return mdContainer
	case '#':
		n := mdRun(s, '#')
		if n > 6 || n < len(s) && s[n] != ' ' {
			return mdNoMatch
		}
		p.closeUnmatched()
		h := p.addChild(mdHeading)
		h.level = n
		h.text = mdATXContent(s[n:])
		p.offset = len(p.line)
		return mdLeaf
	case '`', '~':
		n := mdRun(s, s[0])
		if n < 3 || s[0] == '`' && strings.IndexByte(s[n:], '`') >= 0 {
			break
		}
		p.closeUnmatched()
		b := p.addChild(mdCodeBlock)
		b.fenceChar, b.fenceLen, b.fenceOffset = s[0], n, p.indent
		p.offset = p.nextNonspace + n
		return mdLeaf
	case '<':
		t := mdHTMLBlockStart(s)
		if t == 0 || t == 7 && (container.kind == mdParagraph || !p.allClosed && !p.blank && p.tip.kind == mdParagraph) {
			break
		}
		p.closeUnmatched()
		b := p.addChild(mdHTMLBlock) // the indentation is part of the block
		b.htmlType = t
		return mdLeaf
	}
	if (s[0] == '=' || s[0] == '-') && container.kind == mdParagraph && mdSetextLine(s) {
		p.closeUnmatched()
		p.extractDefs(container)
		if len(container.lines) > 0 {
			container.kind = mdHeading
			container.level = 1
			if s[0] == '-' {
				container.level = 2
			}
			container.text = strings.Join(container.lines, "\n")
			container.lines = nil
			p.offset = len(p.line)
			return mdLeaf
		}
	}
	if (s[0] == '*' || s[0] == '-' || s[0] == '_') && mdThematicBreakLine(s) {
		p.closeUnmatched()
		p.addChild(mdThematicBreak)
		p.offset = len(p.line)
		return mdLeaf
	}
	if r := p.startItem(container); r != mdNoMatch {
		return r
	}
	return p.startTable(container)
}

// startItem starts a list item, and a list if needed.
func (p *mdParser) startItem(container *mdNode) int {
	if container.depth >= mdMaxNesting || p.indent >= 4 {
		return mdNoMatch
	}
	s := p.line[p.nextNonspace:]
	var ordered bool
	var start, n int
	delim := s[0]
	switch {
	case delim == '-' || delim == '+' || delim == '*':
		n = 1
	case delim >= '0' && delim <= '9':
		for n < len(s) && n < 9 && s[n] >= '0' && s[n] <= '9' {
			start = start*10 + int(s[n]-'0')
			n++
		}
		if n >= len(s) || s[n] != '.' && s[n] != ')' {
			return mdNoMatch
		}
		if container.kind == mdParagraph && start != 1 { // only 1 may interrupt a paragraph
			return mdNoMatch
		}
		ordered, delim = true, s[n]
		n++
	default:
		return mdNoMatch
	}
	if n < len(s) && s[n] != ' ' {
		return mdNoMatch
	}
	spaces := 0
	for n+spaces < len(s) && s[n+spaces] == ' ' && spaces < 5 {
		spaces++
	}
	blankItem := strings.TrimLeft(s[n:], " ") == ""
	if container.kind == mdParagraph && blankItem { // an empty item may not interrupt a paragraph
		return mdNoMatch
	}
	markerOffset := p.indent
	p.offset = p.nextNonspace + n
	padding := n + spaces
	if spaces >= 5 || spaces < 1 || blankItem {
		// The content is indented code, or begins on a later line:
		// one space belongs to the marker.
		padding = n + 1
		if p.peek(p.offset) == ' ' {
			p.offset++
		}
	} else {
		p.offset += spaces
	}
	p.closeUnmatched()
	if l := p.tip; l.kind != mdList || l.ordered != ordered || l.delim != delim {
		l = p.addChild(mdList)
		l.ordered, l.start, l.delim = ordered, start, delim
	}
	it := p.addChild(mdItem)
	it.markerOffset, it.padding = markerOffset, padding
	return mdContainer
}

// startTable starts a table if the line is a delimiter row and the last
// line of the paragraph it continues is a header row with as many cells.
// The lines before the header stay a paragraph. The table keeps its lines
// — the header, the delimiter row, then the body — until it is finalized.
func (p *mdParser) startTable(container *mdNode) int {
	if container.kind != mdParagraph || len(container.lines) == 0 {
		return mdNoMatch
	}
	aligns := mdDelimiterRow(p.line[p.nextNonspace:])
	if aligns == "" {
		return mdNoMatch
	}
	header := container.lines[len(container.lines)-1]
	if len(mdTableCells(header, mdMaxColumns+1)) != len(aligns) {
		return mdNoMatch
	}
	p.closeUnmatched()
	t := container
	if len(container.lines) > 1 {
		container.lines = container.lines[:len(container.lines)-1]
		container.endLine = p.lineNo - 2 // a paragraph's lines are consecutive
		p.finalize(container)
		t = p.addChild(mdTable)
		t.startLine = p.lineNo - 1
	}
	t.kind, t.text, t.lines = mdTable, aligns, []string{header}
	p.offset = p.nextNonspace // the delimiter row is the table's second line
	return mdLeaf
}

func (p *mdParser) closeUnmatched() {
	if p.allClosed {
		return
	}
	for p.oldtip != p.lastMatched {
		parent := p.oldtip.parent
		p.finalize(p.oldtip)
		p.oldtip = parent
	}
	p.allClosed = true
}

// addChild adds an open block of the kind to the tip, closing blocks that
// cannot hold it.
func (p *mdParser) addChild(kind mdKind) *mdNode {
	for !mdCanContain(p.tip.kind, kind) {
		p.finalize(p.tip)
	}
	n := &mdNode{kind: kind, open: true, startLine: p.lineNo, depth: p.tip.depth}
	if kind == mdBlockquote || kind == mdItem {
		n.depth++
	}
	p.tip.appendChild(n)
	for b := n; b != nil; b = b.parent {
		b.endLine = p.lineNo
	}
	p.tip = n
	return n
}

// mdInfoLang is the language a fence's info string names: its first word,
// if it is short and made only of the characters language names use.
func mdInfoLang(info string) string {
	f := strings.Fields(info)
	if len(f) == 0 || len(f[0]) > 24 {
		return ""
	}
	for _, c := range f[0] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("+#-_.", c)) {
			return ""
		}
	}
	return f[0]
}

func (p *mdParser) finalize(b *mdNode) {
	b.open = false
	switch b.kind {
	case mdParagraph:
		p.extractDefs(b)
		if len(b.lines) == 0 {
			b.kind = mdLinkDefs
		}
	case mdHTMLBlock:
		b.lines = mdTrimBlankLines(b.lines)
	case mdCodeBlock:
		if b.fenceLen > 0 {
			b.text = mdInfoLang(b.lines[0])
			b.lines = b.lines[1:] // the info string
		} else {
			b.lines = mdTrimBlankLines(b.lines)
		}
	case mdTable:
		// The alignments are in text already: skip the delimiter row.
		for i, l := range b.lines {
			if i == 1 {
				continue
			}
			row := &mdNode{kind: mdTableRow}
			b.appendChild(row)
			for _, c := range mdTableCells(l, len(b.text)) {
				row.appendChild(&mdNode{kind: mdTableCell, text: c})
			}
		}
		b.lines = nil
	case mdList:
		// Loose if items, or blocks directly inside an item, are apart.
		b.tight = true
	items:
		for it := b.first; it != nil; it = it.next {
			if it.next != nil && it.next.startLine > it.endLine+1 {
				b.tight = false
				break
			}
			for c := it.first; c != nil; c = c.next {
				if c.next != nil && c.next.startLine > c.endLine+1 {
					b.tight = false
					break items
				}
			}
		}
	}
	p.tip = b.parent
}

// extractDefs takes link reference definitions off the start of a
// paragraph, leaving its other lines.
func (p *mdParser) extractDefs(b *mdNode) {
	if len(b.lines) == 0 || !strings.HasPrefix(b.lines[0], "[") {
		return
	}
	s := strings.Join(b.lines, "\n")
	ip := &mdInlineParser{}
	found := false
	for strings.HasPrefix(s, "[") {
		label, dest, n := ip.linkDef(s)
		if n == 0 {
			break
		}
		if p.refs == nil {
			p.refs = map[string]string{}
		}
		if _, ok := p.refs[label]; !ok { // the first definition wins
			p.refs[label] = dest
		}
		s = s[n:]
		found = true
	}
	if !found {
		return
	}
	b.lines = nil
	if strings.Trim(s, " \n") != "" {
		b.lines = []string{s}
	}
}

// parseInlines parses the text of every paragraph and heading.
func (p *mdParser) parseInlines(ip *mdInlineParser, n *mdNode) {
	for c := n.first; c != nil; c = c.next {
		switch c.kind {
		case mdParagraph:
			ip.parse(c, strings.Trim(strings.Join(c.lines, "\n"), " \n"))
			c.lines = nil
		case mdHeading:
			ip.parse(c, strings.Trim(c.text, " \n"))
			c.text = ""
		case mdTable:
			for row := c.first; row != nil; row = row.next {
				for cell := row.first; cell != nil; cell = cell.next {
					ip.parse(cell, cell.text)
					cell.text = ""
				}
			}
		case mdBlockquote, mdList, mdItem:
			p.parseInlines(ip, c)
		}
	}
}

// mdTrimBlankLines drops the blank lines at the end.
func mdTrimBlankLines(lines []string) []string {
	n := len(lines)
	for n > 0 && strings.TrimLeft(lines[n-1], " ") == "" {
		n--
	}
	return lines[:n]
}

func mdAcceptsLines(k mdKind) bool {
	return k == mdParagraph || k == mdCodeBlock || k == mdHTMLBlock || k == mdTable
}

func mdCanContain(parent, child mdKind) bool {
	switch parent {
	case mdDocument, mdBlockquote, mdItem:
		return child != mdItem
	case mdList:
		return child == mdItem
	}
	return false
}

// mdMaybeStart reports whether a line whose text starts with c may start a
// block other than a paragraph.
func mdMaybeStart(c byte) bool {
	switch c {
	case '#', '`', '~', '*', '+', '_', '=', '<', '>', '-', '|', ':':
		return true
	}
	return c >= '0' && c <= '9'
}

// mdRun is the length of the run of c at the start of s.
func mdRun(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}

// mdATXContent is a heading's text without its closing run of #.
func mdATXContent(s string) string {
	s = strings.TrimRight(s, " ")
	j := len(s)
	for j > 0 && s[j-1] == '#' {
		j--
	}
	if j == 0 || s[j-1] == ' ' {
		s = s[:j]
	}
	return strings.Trim(s, " ")
}

func mdClosingFence(s string, c byte, min int) bool {
	n := mdRun(s, c)
	return n >= min && strings.TrimRight(s[n:], " ") == ""
}

func mdSetextLine(s string) bool {
	n := mdRun(s, s[0])
	return strings.TrimRight(s[n:], " ") == ""
}

func mdThematicBreakLine(s string) bool {
	n := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case s[0]:
			n++
		case ' ':
		default:
			return false
		}
	}
	return n >= 3
}

// mdTableCells splits a table row (GFM) into its cells, at most limit of
// them: pipes separate cells, a leading and a trailing pipe are optional,
// and \| is a pipe inside a cell. Cells are trimmed. It returns nil if s is
// not a row: blank, or a lone pipe.
func mdTableCells(s string, limit int) []string {
	s = strings.Trim(s, " ")
	if strings.HasPrefix(s, "|") {
		s = strings.TrimLeft(s[1:], " ")
	}
	var cells []string
	escaped := false
	for s != "" && len(cells) < limit {
		i := 0
		for i < len(s) && s[i] != '|' {
			if s[i] == '\\' && i+1 < len(s) && s[i+1] == '|' {
				i++
				escaped = true
			}
			i++
		}
		c := s[:i]
		if escaped {
			c = strings.ReplaceAll(c, `\|`, "|")
			escaped = false
		}
		cells = append(cells, strings.Trim(c, " "))
		if i == len(s) {
			break
		}
		s = strings.TrimLeft(s[i+1:], " ")
	}
	return cells
}

// mdDelimiterRow returns the alignments of the columns if s is a table's
// delimiter row, else "". Each of its cells is a run of hyphens with an
// optional colon at either end.
func mdDelimiterRow(s string) string {
	cells := mdTableCells(s, mdMaxColumns+1)
	if len(cells) == 0 || len(cells) > mdMaxColumns {
		return ""
	}
	aligns := make([]byte, len(cells))
	for i, c := range cells {
		left, right := strings.HasPrefix(c, ":"), strings.HasSuffix(c, ":")
		c = strings.TrimSuffix(strings.TrimPrefix(c, ":"), ":")
		if c == "" || mdRun(c, '-') != len(c) {
			return ""
		}
		switch {
		case left && right:
			aligns[i] = 'c'
		case left:
			aligns[i] = 'l'
		case right:
			aligns[i] = 'r'
		default:
			aligns[i] = ' '
		}
	}
	return string(aligns)
}

// mdHTMLBlockStart returns the type (1–7) of the HTML block that a line
// starting with '<' opens, or 0.
func mdHTMLBlockStart(s string) int {
	switch {
	case strings.HasPrefix(s, "<!--"):
		return 2
	case strings.HasPrefix(s, "<?"):
		return 3
	case strings.HasPrefix(s, "<![CDATA["):
		return 5
	case len(s) > 2 && s[1] == '!' && mdIsLetter(s[2]):
		return 4
	}
	i := 1
	if i < len(s) && s[i] == '/' {
		i++
	}
	j := i
	for j < len(s) && (mdIsLetter(s[j]) || s[j] >= '0' && s[j] <= '9' || j > i && s[j] == '-') {
		j++
	}
	if j > i && mdIsLetter(s[i]) {
		name := strings.ToLower(s[i:j])
		rest := s[j:]
		end := rest == "" || rest[0] == ' ' || rest[0] == '>'
		if i == 1 && mdRawTextTag(name) && end {
			return 1
		}
		if mdBlockTag(name) && (end || strings.HasPrefix(rest, "/>")) {
			return 6
		}
	}
	if n := mdHTMLTag(s); n > 0 && strings.TrimRight(s[n:], " ") == "" {
		if i == 1 && mdRawTextTag(strings.ToLower(s[1:j])) {
			return 0
		}
		return 7
	}
	return 0
}

// mdHTMLBlockEnds reports whether the line ends an HTML block of type t.
func mdHTMLBlockEnds(t int, s string) bool {
	switch t {
	case 1:
		l := strings.ToLower(s)
		return strings.Contains(l, "</script>") || strings.Contains(l, "</pre>") ||
			strings.Contains(l, "</style>") || strings.Contains(l, "</textarea>")
	case 2:
		return strings.Contains(s, "-->")
	case 3:
		return strings.Contains(s, "?>")
	case 4:
		return strings.Contains(s, ">")
	case 5:
		return strings.Contains(s, "]]>")
	}
	return false
}

func mdRawTextTag(name string) bool {
	switch name {
	case "script", "pre", "style", "textarea":
		return true
	}
	return false
}

// mdBlockTag reports whether an HTML block of type 6 starts with the tag.
func mdBlockTag(name string) bool {
	switch name {
	case "address", "article", "aside", "base", "basefont", "blockquote", "body",
		"caption", "center", "col", "colgroup", "dd", "details", "dialog", "dir",
		"div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form",
		"frame", "frameset", "h1", "h2", "h3", "h4", "h5", "h6", "head", "header",
		"hr", "html", "iframe", "legend", "li", "link", "main", "menu", "menuitem",
		"nav", "noframes", "ol", "optgroup", "option", "p", "param", "search",
		"section", "summary", "table", "tbody", "td", "tfoot", "th", "thead",
		"title", "tr", "track", "ul":
		return true
	}
	return false
}

func mdIsLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func mdIsAlnum(c byte) bool { return mdIsLetter(c) || c >= '0' && c <= '9' }

// mdHTMLTag returns the length of the open or closing HTML tag at the
// start of s, or 0. Whitespace inside the tag may include line endings.
func mdHTMLTag(s string) int {
	if len(s) < 3 || s[0] != '<' {
		return 0
	}
	if s[1] == '/' {
		j := 2
		if j >= len(s) || !mdIsLetter(s[j]) {
			return 0
		}
		for j < len(s) && (mdIsAlnum(s[j]) || s[j] == '-') {
			j++
		}
		j = mdSkipSpace(s, j)
		if j < len(s) && s[j] == '>' {
			return j + 1
		}
		return 0
	}
	j := 1
	if !mdIsLetter(s[j]) {
		return 0
	}
	for j < len(s) && (mdIsAlnum(s[j]) || s[j] == '-') {
		j++
	}
	for {
		k := mdSkipSpace(s, j)
		if k == j || k >= len(s) || !(mdIsLetter(s[k]) || s[k] == '_' || s[k] == ':') {
			j = k
			break
		}
		j = k + 1
		for j < len(s) && (mdIsAlnum(s[j]) || strings.IndexByte("_.:-", s[j]) >= 0) {
			j++
		}
		v := mdSkipSpace(s, j)
		if v >= len(s) || s[v] != '=' {
			continue
		}
		v = mdSkipSpace(s, v+1)
		if v >= len(s) {
			return 0
		}
		switch q := s[v]; q {
		case '"', '\'':
			e := strings.IndexByte(s[v+1:], q)
			if e < 0 {
				return 0
			}
			j = v + 1 + e + 1
		default:
			e := v
			for e < len(s) && s[e] > ' ' && strings.IndexByte("\"'=<>`", s[e]) < 0 {
				e++
			}
			if e == v {
				return 0
			}
			j = e
		}
	}
	if j < len(s) && s[j] == '/' {
		j++
	}
	if j < len(s) && s[j] == '>' {
		return j + 1
	}
	return 0
}

// mdSkipSpace skips spaces and line endings from i.
func mdSkipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\n') {
		i++
	}
	return i
}

// mdNormLabel normalizes a link label, brackets included, for matching:
// case-insensitive, with runs of whitespace as one space.
func mdNormLabel(s string) string {
	s = strings.Trim(s[1:len(s)-1], " \n")
	var b strings.Builder
	space := false
	for _, r := range s {
		if r == ' ' || r == '\n' {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	s = strings.ToLower(b.String())
	if strings.Contains(s, "ß") { // the one common case where lower-casing is not folding
		s = strings.ReplaceAll(s, "ß", "ss")
	}
	return s
}
