package markdown

// Inline parsing: the spec's delimiter-stack algorithm for emphasis and
// links, as in commonmark.js, with the scans that could repeat made to
// run once.

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// mdMaxParens bounds the nesting of parentheses in a link destination.
const mdMaxParens = 32

type mdInlineParser struct {
	s    string
	pos  int
	refs map[string]string

	delims   *mdDelim   // top of the emphasis delimiter stack
	brackets *mdBracket // top of the stack of [ and ![
	seq      int        // numbers brackets in the order they open
	inactive int        // links may not nest: [ openers numbered below this are dead

	ticks    map[int][]int // backtick runs by length, start offsets, found on first use
	tickNext map[int]int   // per length, the first run not yet passed
	noClose  [4]int        // per HTML closer, an offset from which it is known to be absent, +1
}

// mdDelim is a run of * or _ that may open or close emphasis.
type mdDelim struct {
	node              *mdNode // the text node holding the run
	ch                byte
	n, orig           int // characters left in the run, and at first
	canOpen, canClose bool
	prev, next        *mdDelim
}

// mdBracket is a [ or ![ that may open a link or image.
type mdBracket struct {
	node         *mdNode
	prev         *mdBracket
	prevDelim    *mdDelim
	index        int // offset of the [
	image        bool
	seq          int
	bracketAfter bool // another bracket opened after this one
}

// parse parses s as the inline content of block.
func (p *mdInlineParser) parse(block *mdNode, s string) {
	*p = mdInlineParser{s: s, refs: p.refs}
	for p.pos < len(s) {
		switch c := s[p.pos]; c {
		case '\n':
			p.newline(block)
		case '\\':
			p.backslash(block)
		case '`':
			p.backticks(block)
		case '*', '_':
			p.delim(block, c)
		case '[':
			p.pos++
			p.addBracket(p.text(block, "["), p.pos-1, false)
		case '!':
			if p.pos+1 < len(s) && s[p.pos+1] == '[' {
				p.pos += 2
				p.addBracket(p.text(block, "!["), p.pos-1, true)
			} else {
				p.pos++
				p.text(block, "!")
			}
		case ']':
			p.closeBracket(block)
		case '<':
			if !p.autolink(block) && !p.rawHTML(block) {
				p.pos++
				p.text(block, "<")
			}
		case '&':
			if r, n := mdEntity(s[p.pos:]); n > 0 {
				p.pos += n
				p.text(block, r)
			} else {
				p.pos++
				p.text(block, "&")
			}
		default:
			j := p.pos + 1
			for j < len(s) && !mdInlineSpecial(s[j]) {
				j++
			}
			p.text(block, s[p.pos:j])
			p.pos = j
		}
	}
	p.emphasis(nil)
}

func mdInlineSpecial(c byte) bool {
	switch c {
	case '\n', '\\', '`', '*', '_', '[', '!', ']', '<', '&':
		return true
	}
	return false
}

func (p *mdInlineParser) peek() byte {
	if p.pos < len(p.s) {
		return p.s[p.pos]
	}
	return 0
}

func (p *mdInlineParser) text(block *mdNode, s string) *mdNode {
	n := &mdNode{kind: mdText, text: s}
	block.appendChild(n)
	return n
}

func (p *mdInlineParser) newline(block *mdNode) {
	p.pos++
	kind := mdSoftBreak
	if l := block.last; l != nil && l.kind == mdText && strings.HasSuffix(l.text, " ") {
		if strings.HasSuffix(l.text, "  ") {
			kind = mdHardBreak
		}
		l.text = strings.TrimRight(l.text, " ")
	}
	block.appendChild(&mdNode{kind: kind})
	p.skipSpaces()
}

func (p *mdInlineParser) skipSpaces() {
	for p.pos < len(p.s) && p.s[p.pos] == ' ' {
		p.pos++
	}
}

func (p *mdInlineParser) backslash(block *mdNode) {
	p.pos++
	switch c := p.peek(); {
	case c == '\n':
		p.pos++
		block.appendChild(&mdNode{kind: mdHardBreak})
		p.skipSpaces()
	case mdIsPunct(c):
		p.pos++
		p.text(block, p.s[p.pos-1:p.pos])
	default:
		p.text(block, `\`)
	}
}

// mdIsPunct reports whether c is ASCII punctuation, which a backslash
// escapes.
func mdIsPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}

func (p *mdInlineParser) backticks(block *mdNode) {
	start := p.pos
	n := mdRun(p.s[start:], '`')
	after := start + n
	end := p.closingTicks(n, after)
	if end < 0 {
		p.pos = after
		p.text(block, p.s[start:after])
		return
	}
	code := strings.ReplaceAll(p.s[after:end], "\n", " ")
	if len(code) > 1 && code[0] == ' ' && code[len(code)-1] == ' ' && strings.Trim(code, " ") != "" {
		code = code[1 : len(code)-1]
	}
	block.appendChild(&mdNode{kind: mdCode, text: code})
	p.pos = end + n
}

// closingTicks returns the offset of the first run of exactly n backticks
// at or after from, or -1. The runs are listed once per block, so a line of
// unmatched openers costs no more than one pass.
func (p *mdInlineParser) closingTicks(n, from int) int {
	if p.ticks == nil {
		p.ticks, p.tickNext = map[int][]int{}, map[int]int{}
		for i := 0; i < len(p.s); {
			if p.s[i] != '`' {
				i++
				continue
			}
			k := mdRun(p.s[i:], '`')
			p.ticks[k] = append(p.ticks[k], i)
			i += k
		}
	}
	runs, i := p.ticks[n], p.tickNext[n]
	for i < len(runs) && runs[i] < from {
		i++
	}
	p.tickNext[n] = i
	if i < len(runs) {
		return runs[i]
	}
	return -1
}

// delim reads a run of * or _ and pushes it on the delimiter stack if it
// can open or close emphasis.
func (p *mdInlineParser) delim(block *mdNode, c byte) {
	start := p.pos
	n := mdRun(p.s[start:], c)
	p.pos += n
	before, after := '\n', '\n'
	if start > 0 {
		before, _ = utf8.DecodeLastRuneInString(p.s[:start])
	}
	if p.pos < len(p.s) {
		after, _ = utf8.DecodeRuneInString(p.s[p.pos:])
	}
	afterSpace, afterPunct := mdUnicodeSpace(after), mdUnicodePunct(after)
	beforeSpace, beforePunct := mdUnicodeSpace(before), mdUnicodePunct(before)
	left := !afterSpace && (!afterPunct || beforeSpace || beforePunct)
	right := !beforeSpace && (!beforePunct || afterSpace || afterPunct)
	canOpen, canClose := left, right
	if c == '_' {
		canOpen = left && (!right || beforePunct)
		canClose = right && (!left || afterPunct)
	}
	node := p.text(block, p.s[start:p.pos])
	if canOpen || canClose {
		d := &mdDelim{node: node, ch: c, n: n, orig: n, canOpen: canOpen, canClose: canClose, prev: p.delims}
		if p.delims != nil {
			p.delims.next = d
		}
		p.delims = d
	}
}

func mdUnicodeSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\f', '\r', ' ':
		return true
	}
	return r > 0x7f && unicode.Is(unicode.Zs, r)
}

func mdUnicodePunct(r rune) bool {
	if r < 0x80 {
		return mdIsPunct(byte(r))
	}
	return unicode.IsPunct(r) || unicode.IsSymbol(r)
}

func (p *mdInlineParser) removeDelim(d *mdDelim) {
	if d.prev != nil {
		d.prev.next = d.next
	}
	if d.next != nil {
		d.next.prev = d.prev
	} else {
		p.delims = d.prev
	}
}

// emphasis matches the delimiters above bottom into emphasis nodes (the
// spec's "process emphasis"). The lower bounds per kind of closer keep it
// linear.
func (p *mdInlineParser) emphasis(bottom *mdDelim) {
	if p.delims == bottom {
		return
	}
	var openersBottom [2][2][3]*mdDelim // by character, closer can open, length mod 3
	for i := range openersBottom {
		for j := range openersBottom[i] {
			for k := range openersBottom[i][j] {
				openersBottom[i][j][k] = bottom
			}
		}
	}
	closer := p.delims
	for closer != nil && closer.prev != bottom {
		closer = closer.prev
	}
	for closer != nil {
		if !closer.canClose {
			closer = closer.next
			continue
		}
		ci, oi := 0, 0
		if closer.ch == '_' {
			ci = 1
		}
		if closer.canOpen {
			oi = 1
		}
		ob := &openersBottom[ci][oi][closer.orig%3]
		opener := closer.prev
		found := false
		for opener != nil && opener != bottom && opener != *ob {
			odd := (closer.canOpen || opener.canClose) && closer.orig%3 != 0 && (opener.orig+closer.orig)%3 == 0
			if opener.ch == closer.ch && opener.canOpen && !odd {
				found = true
				break
			}
			opener = opener.prev
		}
		if !found {
			*ob = closer.prev
			next := closer.next
			if !closer.canOpen {
				p.removeDelim(closer)
			}
			closer = next
			continue
		}
		use := 1
		if closer.n >= 2 && opener.n >= 2 {
			use = 2
		}
		on, cn := opener.node, closer.node
		opener.n -= use
		closer.n -= use
		on.text = on.text[:len(on.text)-use]
		cn.text = cn.text[:len(cn.text)-use]
		em := &mdNode{kind: mdEmph, level: use}
		for t := on.next; t != nil && t != cn; {
			next := t.next
			t.unlink()
			em.appendChild(t)
			t = next
		}
		on.insertAfter(em)
		opener.next, closer.prev = closer, opener // drop the delimiters between
		if opener.n == 0 {
			on.unlink()
			p.removeDelim(opener)
		}
		if closer.n == 0 {
			cn.unlink()
			next := closer.next
			p.removeDelim(closer)
			closer = next
		}
	}
	for p.delims != nil && p.delims != bottom {
		p.removeDelim(p.delims)
	}
}

func (p *mdInlineParser) addBracket(node *mdNode, index int, image bool) {
	if p.brackets != nil {
		p.brackets.bracketAfter = true
	}
	p.brackets = &mdBracket{node: node, prev: p.brackets, prevDelim: p.delims, index: index, image: image, seq: p.seq}
	p.seq++
}

// closeBracket handles a ]: a link or image if the text before it and the
// destination or reference after it allow, else a literal bracket.
func (p *mdInlineParser) closeBracket(block *mdNode) {
	p.pos++
	startpos := p.pos
	opener := p.brackets
	if opener == nil {
		p.text(block, "]")
		return
	}
	if !opener.image && opener.seq < p.inactive {
		p.brackets = opener.prev
		p.text(block, "]")
		return
	}
	var dest string
	matched := false
	if p.peek() == '(' {
		p.pos++
		p.spnl()
		if d, ok := p.linkDest(); ok {
			dest = d
			if p.spnl() {
				p.linkTitle()
			}
			p.spnl()
			if p.peek() == ')' {
				p.pos++
				matched = true
			}
		}
		if !matched {
			p.pos = startpos
		}
	}
	if !matched {
		var label string
		n := p.linkLabel()
		if n > 2 {
			label = p.s[p.pos : p.pos+n]
		} else if !opener.bracketAfter {
			label = p.s[opener.index:startpos]
		}
		if n > 0 {
			p.pos += n
		}
		if d, ok := p.lookup(label); ok {
			dest, matched = d, true
		} else {
			p.pos = startpos
		}
	}
	if !matched {
		p.brackets = opener.prev
		p.text(block, "]")
		return
	}
	kind := mdLink
	if opener.image {
		kind = mdImage
	}
	link := &mdNode{kind: kind, text: dest}
	for t := opener.node.next; t != nil; {
		next := t.next
		t.unlink()
		link.appendChild(t)
		t = next
	}
	block.appendChild(link)
	p.emphasis(opener.prevDelim)
	p.brackets = opener.prev
	opener.node.unlink()
	if !opener.image {
		p.inactive = p.seq
	}
}

// lookup returns the destination defined for a label, brackets included.
func (p *mdInlineParser) lookup(label string) (string, bool) {
	if len(p.refs) == 0 || len(label) < 3 || len(label) > 4*1000 {
		return "", false
	}
	dest, ok := p.refs[mdNormLabel(label)]
	return dest, ok
}

// spnl skips spaces and at most one line ending, and reports whether it
// skipped any.
func (p *mdInlineParser) spnl() bool {
	start := p.pos
	p.skipSpaces()
	if p.peek() == '\n' {
		p.pos++
		p.skipSpaces()
	}
	return p.pos > start
}

// linkDest reads a link destination, <…> or bare, and returns it with
// escapes and references resolved.
func (p *mdInlineParser) linkDest() (string, bool) {
	s := p.s
	if p.peek() == '<' {
		for i := p.pos + 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				if i+1 < len(s) && mdIsPunct(s[i+1]) {
					i++
				}
			case '<', '\n':
				return "", false
			case '>':
				d := s[p.pos+1 : i]
				p.pos = i + 1
				return mdUnescape(d), true
			}
		}
		return "", false
	}
	start, depth, i := p.pos, 0, p.pos
scan:
	for i < len(s) {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s) && mdIsPunct(s[i+1]):
			i += 2
		case c == '(':
			depth++
			if depth > mdMaxParens {
				return "", false
			}
			i++
		case c == ')':
			if depth == 0 {
				break scan
			}
			depth--
			i++
		case c <= ' ' || c == 0x7f:
			break scan
		default:
			i++
		}
	}
	if depth != 0 || i == start && (i >= len(s) || s[i] != ')') {
		return "", false
	}
	p.pos = i
	return mdUnescape(s[start:i]), true
}

// linkTitle skips a link title in "…", '…' or (…), and reports whether
// there was one. Nothing draws titles, so they are not kept.
func (p *mdInlineParser) linkTitle() bool {
	s := p.s
	open := p.peek()
	closer := open
	switch open {
	case '"', '\'':
	case '(':
		closer = ')'
	default:
		return false
	}
	for i := p.pos + 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++
		case c == closer:
			p.pos = i + 1
			return true
		case c == '(' && open == '(':
			return false
		}
	}
	return false
}

// linkLabel returns the length of the link label ([…], brackets included)
// at pos, or 0.
func (p *mdInlineParser) linkLabel() int {
	s := p.s
	if p.peek() != '[' {
		return 0
	}
	chars := 0
	for i := p.pos + 1; i < len(s) && chars <= 999; i++ {
		switch c := s[i]; {
		case c == '\\':
			if i+1 < len(s) && mdIsPunct(s[i+1]) {
				i++
			}
		case c == '[':
			return 0
		case c == ']':
			return i + 1 - p.pos
		}
		if s[i] < 0x80 || s[i] >= 0xc0 {
			chars++
		}
	}
	return 0
}

// linkDef parses a link reference definition at the start of s and returns
// its normalized label, its destination and its length with the line
// ending; 0 if there is none.
func (p *mdInlineParser) linkDef(s string) (string, string, int) {
	*p = mdInlineParser{s: s}
	n := p.linkLabel()
	if n == 0 || n >= len(s) || s[n] != ':' {
		return "", "", 0
	}
	label := mdNormLabel(s[:n])
	if label == "" {
		return "", "", 0
	}
	p.pos = n + 1
	p.spnl()
	dest, ok := p.linkDest()
	if !ok {
		return "", "", 0
	}
	beforeTitle := p.pos
	if p.spnl() && p.linkTitle() && p.atLineEnd() {
		return label, dest, p.pos
	}
	p.pos = beforeTitle // a title that is not alone on its line is not one
	if !p.atLineEnd() {
		return "", "", 0
	}
	return label, dest, p.pos
}

// atLineEnd skips spaces and a line ending and reports whether nothing
// else was on the line.
func (p *mdInlineParser) atLineEnd() bool {
	p.skipSpaces()
	switch {
	case p.pos >= len(p.s):
		return true
	case p.s[p.pos] == '\n':
		p.pos++
		return true
	}
	return false
}

// autolink reads <scheme:…> or <address@host>.
func (p *mdInlineParser) autolink(block *mdNode) bool {
	s := p.s[p.pos:]
	end := mdURIAutolink(s)
	if end == 0 {
		end = mdEmailAutolink(s)
	}
	if end == 0 {
		return false
	}
	block.appendChild(&mdNode{kind: mdAutoLink, text: s[1 : end-1]})
	p.pos += end
	return true
}

func mdURIAutolink(s string) int {
	i := 1
	for i < len(s) && i <= 33 && (mdIsAlnum(s[i]) || i > 1 && (s[i] == '+' || s[i] == '.' || s[i] == '-')) {
		i++
	}
	if n := i - 1; n < 2 || n > 32 || !mdIsLetter(s[1]) || i >= len(s) || s[i] != ':' {
		return 0
	}
	for i++; i < len(s); i++ {
		switch c := s[i]; {
		case c == '>':
			return i + 1
		case c <= ' ' || c == '<' || c == 0x7f:
			return 0
		}
	}
	return 0
}

func mdEmailAutolink(s string) int {
	i := 1
	for i < len(s) && (mdIsAlnum(s[i]) || strings.IndexByte(".!#$%&'*+/=?^_`{|}~-", s[i]) >= 0) {
		i++
	}
	if i == 1 || i >= len(s) || s[i] != '@' {
		return 0
	}
	i++
	for {
		// A label: alphanumerics and inner hyphens, at most 63.
		j := i
		for j < len(s) && j-i < 63 && (mdIsAlnum(s[j]) || s[j] == '-') {
			j++
		}
		if j == i || s[i] == '-' || s[j-1] == '-' || j >= len(s) {
			return 0
		}
		switch s[j] {
		case '>':
			return j + 1
		case '.':
			i = j + 1
		default:
			return 0
		}
	}
}

// HTML constructs that end at a fixed string, indexes into noClose.
const (
	mdCloseComment = iota
	mdClosePI
	mdCloseDecl
	mdCloseCDATA
)

// rawHTML reads an inline HTML tag, comment, processing instruction,
// declaration or CDATA section.
func (p *mdInlineParser) rawHTML(block *mdNode) bool {
	s := p.s[p.pos:]
	end := 0
	switch {
	case strings.HasPrefix(s, "<!-->"):
		end = 5
	case strings.HasPrefix(s, "<!--->"):
		end = 6
	case strings.HasPrefix(s, "<!--"):
		end = p.until(4, "-->", mdCloseComment)
	case strings.HasPrefix(s, "<?"):
		end = p.until(2, "?>", mdClosePI)
	case strings.HasPrefix(s, "<![CDATA["):
		end = p.until(9, "]]>", mdCloseCDATA)
	case len(s) > 2 && s[1] == '!' && mdIsLetter(s[2]):
		end = p.until(2, ">", mdCloseDecl)
	default:
		end = mdHTMLTag(s)
	}
	if end == 0 {
		return false
	}
	block.appendChild(&mdNode{kind: mdRawHTML, text: s[:end]})
	p.pos += end
	return true
}

// until returns the length from pos to the end of the first closer after
// pos+skip, or 0. Once a closer is known to be absent after some offset,
// no later search for it runs.
func (p *mdInlineParser) until(skip int, closer string, which int) int {
	from := p.pos + skip
	if c := p.noClose[which]; c > 0 && from >= c-1 {
		return 0
	}
	i := strings.Index(p.s[from:], closer)
	if i < 0 {
		p.noClose[which] = from + 1
		return 0
	}
	return skip + i + len(closer)
}

// mdUnescape resolves backslash escapes and character references.
func mdUnescape(s string) string {
	if strings.IndexByte(s, '\\') < 0 && strings.IndexByte(s, '&') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s) && mdIsPunct(s[i+1]):
			i++
			b.WriteByte(s[i])
		case c == '&':
			if r, n := mdEntity(s[i:]); n > 0 {
				b.WriteString(r)
				i += n - 1
				continue
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// mdEntity resolves the character reference at the start of s (which
// starts with &) and returns it and its length, or 0.
func mdEntity(s string) (string, int) {
	if len(s) < 3 {
		return "", 0
	}
	if s[1] == '#' {
		i, base, max := 2, 10, 7
		if s[i]|0x20 == 'x' {
			i, base, max = 3, 16, 6
		}
		v, start := 0, i
		for i < len(s) && i-start < max {
			d := mdDigit(s[i], base)
			if d < 0 {
				break
			}
			v = v*base + d
			i++
		}
		if i == start || i >= len(s) || s[i] != ';' {
			return "", 0
		}
		return string(mdRefRune(v)), i + 1
	}
	i := 1
	for i < len(s) && i <= 32 && mdIsAlnum(s[i]) {
		i++
	}
	if i == 1 || i >= len(s) || s[i] != ';' || !mdIsLetter(s[1]) {
		return "", 0
	}
	if r := mdNamedEntity(s[1:i]); r != "" {
		return r, i + 1
	}
	return "", 0
}

// mdRefRune returns the character a numeric reference to r produces:
// U+FFFD for what is not a character.
func mdRefRune(r int) rune {
	if r == 0 || r > utf8.MaxRune || r >= 0xd800 && r <= 0xdfff {
		return utf8.RuneError
	}
	return rune(r)
}

func mdDigit(c byte, base int) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case base == 16 && c|0x20 >= 'a' && c|0x20 <= 'f':
		return int(c|0x20-'a') + 10
	}
	return -1
}

// mdNamedEntity knows the named references that are common in prose; the
// spec's full list of some 2,000 names would cost more than it is worth
// in a terminal.
func mdNamedEntity(name string) string {
	switch name {
	case "amp":
		return "&"
	case "lt":
		return "<"
	case "gt":
		return ">"
	case "quot":
		return `"`
	case "apos":
		return "'"
	case "nbsp":
		return "\u00a0"
	case "copy":
		return "©"
	case "reg":
		return "®"
	case "trade":
		return "™"
	case "hellip":
		return "…"
	case "mdash":
		return "—"
	case "ndash":
		return "–"
	case "lsquo":
		return "‘"
	case "rsquo":
		return "’"
	case "ldquo":
		return "“"
	case "rdquo":
		return "”"
	case "times":
		return "×"
	case "divide":
		return "÷"
	case "deg":
		return "°"
	case "plusmn":
		return "±"
	case "middot":
		return "·"
	case "bull":
		return "•"
	case "larr":
		return "←"
	case "rarr":
		return "→"
	case "uarr":
		return "↑"
	case "darr":
		return "↓"
	}
	return ""
}
