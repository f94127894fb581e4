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
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Style is the look of the rendered text. A nil colour is the terminal's
// default.
type Style struct {
	Heading color.Color // headings' text and markers
	Code    color.Color // inline code
	Link    color.Color // a link's text (also underlined)
	Quiet   color.Color // code blocks, rules, quote bars, link addresses
	// NoColor is for terminals without colour: inline code keeps its
	// backticks and quiet text is faint.
	NoColor bool
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
// one cell of text is always kept after the indent).
func (r *Renderer) Render(src string, width int) []string {
	lines := mdRender(r.prepare(src), r.look, max(width-r.indentW, 1))
	if r.opts.Indent != "" {
		for i, l := range lines {
			if l != "" {
				lines[i] = r.opts.Indent + l
			}
		}
	}
	return lines
}

// Stream returns a Stream that draws at width.
func (r *Renderer) Stream(width int) *Stream {
	return &Stream{r: r, width: width}
}

// Stream is a document that arrives in chunks. The blocks that have
// finished (see Boundary) are drawn once, as they complete, and kept; the
// open block is drawn anew on every call to Lines.
type Stream struct {
	r     *Renderer
	width int
	src   strings.Builder
	done  int      // bytes of src in the finished blocks
	lines []string // the finished blocks, drawn
}

// Write appends a chunk of the document.
func (s *Stream) Write(chunk string) { s.src.WriteString(chunk) }

// Len is the number of bytes written.
func (s *Stream) Len() int { return s.src.Len() }

// Lines draws what has arrived: done, the finished blocks, and open, the
// block still arriving, drawn as if the document ended there. Between the
// two, when both have lines, the caller puts one blank line. done is the
// Stream's own and grows in place: the caller must not change it. When the
// stream ends, done, the blank line and open are the lines Render draws
// for the whole document, except where a block uses a link reference
// defined in another.
func (s *Stream) Lines() (done, open []string) {
	src := s.src.String()
	if cut := s.done + Boundary(src[s.done:]); cut > s.done {
		seg := s.r.Render(src[s.done:cut], s.width)
		if len(s.lines) > 0 && len(seg) > 0 {
			s.lines = append(s.lines, "")
		}
		s.lines, s.done = append(s.lines, seg...), cut
	}
	return s.lines, s.r.Render(src[s.done:], s.width)
}
