package markdown

import (
	"strconv"
	"strings"
)

// mdHTML writes the tree as the spec's reference renderer writes HTML, so
// that expectations read like the spec's examples. Titles and info strings
// are not kept in the tree, so they are not written.
func mdHTML(doc *mdNode) string {
	var w mdHTMLWriter
	w.block(doc, false)
	return w.b.String()
}

type mdHTMLWriter struct{ b strings.Builder }

func (w *mdHTMLWriter) cr() {
	if s := w.b.String(); s != "" && !strings.HasSuffix(s, "\n") {
		w.b.WriteByte('\n')
	}
}

func (w *mdHTMLWriter) block(n *mdNode, tight bool) {
	switch n.kind {
	case mdDocument:
		for c := n.first; c != nil; c = c.next {
			w.block(c, false)
		}
	case mdParagraph:
		if tight {
			w.inlines(n)
			return
		}
		w.cr()
		w.b.WriteString("<p>")
		w.inlines(n)
		w.b.WriteString("</p>")
		w.cr()
	case mdHeading:
		w.cr()
		h := strconv.Itoa(n.level)
		w.b.WriteString("<h" + h + ">")
		w.inlines(n)
		w.b.WriteString("</h" + h + ">")
		w.cr()
	case mdThematicBreak:
		w.cr()
		w.b.WriteString("<hr />")
		w.cr()
	case mdCodeBlock:
		w.cr()
		w.b.WriteString("<pre><code>")
		for _, l := range n.lines {
			w.b.WriteString(mdEscHTML(l) + "\n")
		}
		w.b.WriteString("</code></pre>")
		w.cr()
	case mdHTMLBlock:
		w.cr()
		w.b.WriteString(strings.Join(n.lines, "\n"))
		w.cr()
	case mdBlockquote:
		w.cr()
		w.b.WriteString("<blockquote>")
		w.cr()
		for c := n.first; c != nil; c = c.next {
			w.block(c, false)
		}
		w.cr()
		w.b.WriteString("</blockquote>")
		w.cr()
	case mdTable:
		w.table(n)
	case mdList:
		tag := "ul"
		w.cr()
		if n.ordered {
			tag = "ol"
			if n.start != 1 {
				w.b.WriteString(`<ol start="` + strconv.Itoa(n.start) + `">`)
			} else {
				w.b.WriteString("<ol>")
			}
		} else {
			w.b.WriteString("<ul>")
		}
		w.cr()
		for c := n.first; c != nil; c = c.next {
			w.b.WriteString("<li>")
			for d := c.first; d != nil; d = d.next {
				w.block(d, n.tight)
			}
			w.b.WriteString("</li>")
			w.cr()
		}
		w.cr()
		w.b.WriteString("</" + tag + ">")
		w.cr()
	}
}

// table writes a table as cmark-gfm does: the cells a row lacks are
// written empty.
func (w *mdHTMLWriter) table(n *mdNode) {
	w.cr()
	w.b.WriteString("<table>\n<thead>\n")
	for row := n.first; row != nil; row = row.next {
		tag := "td"
		if row == n.first {
			tag = "th"
		} else if row == n.first.next {
			w.b.WriteString("<tbody>\n")
		}
		w.b.WriteString("<tr>\n")
		c := row.first
		for _, a := range []byte(n.text) {
			w.b.WriteString("<" + tag)
			switch a {
			case 'l':
				w.b.WriteString(` align="left"`)
			case 'c':
				w.b.WriteString(` align="center"`)
			case 'r':
				w.b.WriteString(` align="right"`)
			}
			w.b.WriteString(">")
			if c != nil {
				w.inlines(c)
				c = c.next
			}
			w.b.WriteString("</" + tag + ">\n")
		}
		w.b.WriteString("</tr>\n")
		if row == n.first {
			w.b.WriteString("</thead>\n")
		}
	}
	if n.first != nil && n.first.next != nil {
		w.b.WriteString("</tbody>\n")
	}
	w.b.WriteString("</table>\n")
}

func (w *mdHTMLWriter) inlines(n *mdNode) {
	for c := n.first; c != nil; c = c.next {
		switch c.kind {
		case mdText:
			w.b.WriteString(mdEscHTML(c.text))
		case mdSoftBreak:
			w.b.WriteString("\n")
		case mdHardBreak:
			w.b.WriteString("<br />\n")
		case mdCode:
			w.b.WriteString("<code>" + mdEscHTML(c.text) + "</code>")
		case mdEmph:
			tag := "em"
			if c.level == 2 {
				tag = "strong"
			}
			w.b.WriteString("<" + tag + ">")
			w.inlines(c)
			w.b.WriteString("</" + tag + ">")
		case mdLink:
			w.b.WriteString(`<a href="` + mdEscHTML(mdEncodeURL(c.text)) + `">`)
			w.inlines(c)
			w.b.WriteString("</a>")
		case mdImage:
			w.b.WriteString(`<img src="` + mdEscHTML(mdEncodeURL(c.text)) + `" alt="`)
			w.plain(c)
			w.b.WriteString(`" />`)
		case mdAutoLink:
			href := c.text
			if !strings.Contains(href, ":") {
				href = "mailto:" + href
			}
			w.b.WriteString(`<a href="` + mdEscHTML(mdEncodeURL(href)) + `">` + mdEscHTML(c.text) + "</a>")
		case mdRawHTML:
			w.b.WriteString(c.text)
		}
	}
}

// plain writes the text of n's descendants, as an image's alt text.
func (w *mdHTMLWriter) plain(n *mdNode) {
	for c := n.first; c != nil; c = c.next {
		switch c.kind {
		case mdText, mdCode:
			w.b.WriteString(mdEscHTML(c.text))
		case mdSoftBreak, mdHardBreak:
			w.b.WriteString("\n")
		case mdAutoLink:
			w.b.WriteString(mdEscHTML(c.text))
		default:
			w.plain(c)
		}
	}
}

func mdEscHTML(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// mdEncodeURL percent-encodes what the reference renderer encodes in an
// address, keeping escapes already there.
func mdEncodeURL(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case mdIsAlnum(c) || strings.IndexByte(";/?:@&=+$,-_.!~*'()#", c) >= 0:
			b.WriteByte(c)
		case c == '%' && i+2 < len(s) && mdDigit(s[i+1], 16) >= 0 && mdDigit(s[i+2], 16) >= 0:
			b.WriteByte(c)
		default:
			b.WriteString("%" + strings.ToUpper(strconv.FormatUint(uint64(c)|0x100, 16)[1:]))
		}
	}
	return b.String()
}
