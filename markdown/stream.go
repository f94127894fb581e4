package markdown

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

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

// Feed appends a chunk of the document.
func (s *Stream) Feed(chunk string) { s.src.WriteString(chunk) }

// Len is the number of bytes fed.
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

// Boundary is where the finished blocks of streamed markdown end: the
// last blank line outside a fenced code block that is followed by a line
// starting in the first column (so not a list item's or a quote's
// continuation, nor a lazy one). 0 if no block has finished.
func Boundary(s string) int {
	cut, fence := 0, ""
	blank := false
	for off := 0; off < len(s); {
		end := strings.IndexByte(s[off:], '\n')
		if end < 0 {
			// The last line is still open: a letter cannot grow into a
			// list item, a quote, a fence or a heading.
			if r, _ := utf8.DecodeRuneInString(s[off:]); fence == "" && blank && unicode.IsLetter(r) {
				cut = off
			}
			break
		}
		line := s[off : off+end]
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		switch {
		case fence != "":
			if indent < 4 && strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]+" ") == "" {
				fence = ""
			}
		case indent < 4 && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			if blank && indent == 0 {
				cut = off
			}
			fence = trimmed[:3]
		case strings.TrimSpace(line) == "":
			blank = true
			off += end + 1
			continue
		default:
			if blank && indent == 0 && !strings.HasPrefix(line, ">") && !listStart(line) {
				cut = off
			}
		}
		blank = false
		off += end + 1
	}
	return cut
}

// listStart reports whether line begins a list item: a blank line between
// items can make the list loose, which only the whole list decides.
func listStart(line string) bool {
	if len(line) > 1 && strings.ContainsRune("-*+", rune(line[0])) && line[1] == ' ' {
		return true
	}
	i := 0
	for i < len(line) && i < 9 && line[i] >= '0' && line[i] <= '9' {
		i++
	}
	return i > 0 && i+1 < len(line) && (line[i] == '.' || line[i] == ')') && line[i+1] == ' '
}
