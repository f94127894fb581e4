// Package markdown parses CommonMark and draws it for a terminal, whole or
// as it streams in.
//
// The parser follows the CommonMark spec, version 0.31.2, plus the pipe
// tables of GitHub Flavored Markdown. Its test corpus is the spec's own
// examples (testdata/spec-0.31.2.txt): it passes 599 of the 652 exactly.
// Of the other 53, 45 differ only in what the parser drops because the
// terminal draws none of it (link titles, code blocks' info strings), 4 in
// tabs, which it expands to spaces, and 4 in named character references
// outside the common ones it knows (see parse.go). The renderer decides every cell itself: a line is never wider
// than asked, and nothing but text and SGR colour and style sequences is
// ever written, whatever the input.
//
// A Renderer draws with one Style. Render draws a finished document;
// Stream takes a document in chunks as it arrives and draws its finished
// blocks once each, as they complete, and its open block provisionally, so
// that a frame costs the open block whatever the document's length, and
// the lines do not move when the stream ends.
//
// The package knows nothing of where the text comes from: the caller makes
// untrusted text safe with Options.Prepare (the source, before parsing)
// and Options.Clean (each piece of text drawn); both default to the
// sanitize package's rules.
package markdown

import (
	"image/color"

	"github.com/charmbracelet/x/ansi"
)

// Style is the look of the rendered text. A nil colour is the terminal's
// default.
type Style struct {
	Heading color.Color // headings' text and markers
	Code    color.Color // inline code
	Link    color.Color // a link's text (also underlined)
	Quiet   color.Color // code blocks' labels, rules, quote bars, link addresses
	// Syntax colours fenced code in a language the package knows.
	Syntax Syntax
	// NoColor is for terminals without colour: inline code keeps its
	// backticks, quiet text is faint and code blocks are plain text.
	NoColor bool
}

// Syntax is the look of highlighted code; a nil colour is the terminal's
// default. Comments are also italic.
type Syntax struct {
	Keyword, String, Comment, Number, Type color.Color
}

// Options configure a Renderer.
type Options struct {
	Style Style
	// Indent goes before every non-empty line; it counts in the width.
	Indent string
	// Prepare makes a source safe to parse; nil is PrepareSource.
	Prepare func(src string) string
	// Clean makes each piece of text safe to draw, with no tabs or line
	// breaks left; nil is Clean.
	Clean func(s string) string
}

// Renderer draws markdown with one set of Options. It keeps the style's
// sequences once built, so it is for one goroutine at a time.
type Renderer struct {
	opts    Options
	prepare func(string) string
	indentW int
	look    *mdLook
}

// New returns a Renderer for o.
func New(o Options) *Renderer {
	r := &Renderer{opts: o, prepare: o.Prepare, indentW: ansi.StringWidth(o.Indent), look: newMDLook(o)}
	if r.prepare == nil {
		r.prepare = PrepareSource
	}
	return r
}

// Render draws a whole document as lines of at most width cells (at least
// one cell of text is always kept after the indent). The lines of a
// top-level code block are not indented, so that a copy is the code alone.
func (r *Renderer) Render(src string, width int) []string {
	lines, flush := mdRender(r.prepare(src), r.look, max(width-r.indentW, 1))
	if r.opts.Indent != "" {
		for i, l := range lines {
			if l != "" && (flush == nil || !flush[i]) {
				lines[i] = r.opts.Indent + l
			}
		}
	}
	return lines
}
