package dialog

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/mcphost/mcphost/sanitize"
)

// position renders "2 of 3", or "" when there is only one dialog.
func position(o Options) string {
	if o.Of <= 1 {
		return ""
	}
	return strconv.Itoa(max(o.Position, 1)) + " of " + strconv.Itoa(o.Of)
}

// oneLine makes server prose safe and flat: escapes what is unsafe and
// folds newlines, tabs and runs of spaces into one space.
func oneLine(s string) string {
	return strings.Join(strings.Fields(sanitize.Text(s)), " ")
}

// clip cuts s (which may hold styling) to width cells, ending in "…".
func clip(s string, width int) string {
	if ansi.StringWidth(s) <= width {
		return s
	}
	return ansi.Truncate(s, max(width, 1), "…")
}

// quotedLine renders `label "text"` in width cells, truncating the text
// inside the quotes so the closing quote stays visible.
func quotedLine(st Styles, label, text string, width int) string {
	room := width - ansi.StringWidth(label) - 2
	if room < 2 {
		return clip(st.Muted.Render(label), width)
	}
	return st.Muted.Render(label) + `"` + clip(text, room) + `"`
}

// wrapText wraps prose at spaces to width, breaking words that do not fit.
func wrapText(s string, width int) []string {
	return strings.Split(ansi.Wrap(s, max(width, 1), ""), "\n")
}

// hanging wraps s behind a first-line prefix, indenting the following
// lines to line up with the text.
func hanging(prefix, s string, width int) []string {
	pw := ansi.StringWidth(prefix)
	lines := wrapText(s, width-pw)
	for i := range lines {
		if i == 0 {
			lines[i] = prefix + lines[i]
		} else {
			lines[i] = strings.Repeat(" ", pw) + lines[i]
		}
	}
	return lines
}

// hardWrap breaks every line of s at width cells exactly, keeping every
// character, spaces included: used for arguments, where what is shown must
// be exactly what is sent.
func hardWrap(s string, width int) []string {
	return strings.Split(ansi.Hardwrap(s, max(width, 1), true), "\n")
}

// expandTabs replaces tabs with spaces: a tab's width depends on the
// terminal, and the layout must not.
func expandTabs(s string) string { return strings.ReplaceAll(s, "\t", "    ") }

// fitLine truncates or pads a line to exactly width cells.
func fitLine(s string, width int) string {
	s = clip(s, width)
	if w := ansi.StringWidth(s); w < width {
		s += strings.Repeat(" ", width-w)
	}
	return s
}

// box draws lines in a frame of exactly width×height cells (border
// included), one cell of padding left and right. Lines beyond the room are
// dropped; missing lines are blank.
func box(frame lipgloss.Style, width, height int, lines []string) string {
	innerW, innerH := width-4, height-2
	out := make([]string, innerH)
	for i := range out {
		s := ""
		if i < len(lines) {
			s = lines[i]
		}
		out[i] = fitLine(s, innerW)
	}
	return frame.Padding(0, 1).Render(strings.Join(out, "\n"))
}

// spread puts left and right on one line of width cells, right-aligned;
// when both do not fit it returns them on two lines.
func spread(left, right string, width int) []string {
	if ansi.StringWidth(right) == 0 {
		return []string{left}
	}
	gap := width - ansi.StringWidth(left) - ansi.StringWidth(right)
	if gap < 1 {
		return []string{left, right}
	}
	return []string{left + strings.Repeat(" ", gap) + right}
}

// prettyArgs renders a call's arguments for display and for the editor.
// Valid JSON is indented with member order, duplicate keys and number
// spelling kept as sent, and every rune a terminal must not see is written
// as a JSON \u escape, which means the same to a JSON reader: the result is
// both terminal-safe and the same JSON value. Anything else is shown as
// text, sanitized, with valid false.
func prettyArgs(raw json.RawMessage) (text string, valid bool) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "{}", true
	}
	var buf bytes.Buffer
	if json.Valid(raw) && json.Indent(&buf, raw, "", "  ") == nil {
		if buf.Len() > maxIndentGrowth*len(raw)+4096 {
			// deep nesting: indentation would dwarf the content
			buf.Reset()
			_ = json.Compact(&buf, raw)
		}
		return jsonSafe(buf.String()), true
	}
	return expandTabs(sanitize.Text(string(raw))), false
}

// maxIndentGrowth bounds how much larger than the arguments their indented
// form may be before they are shown compact instead.
const maxIndentGrowth = 8

// jsonSafe rewrites unsafe runes of valid JSON text as \u escapes. In valid
// JSON they can only occur inside strings (json.Indent rewrote the
// whitespace between tokens), where an escape is equivalent. Invalid UTF-8
// becomes \ufffd, as a JSON decoder would read it.
func jsonSafe(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\ufffd`)
		case r == '\n' || !sanitize.Unsafe(r):
			b.WriteRune(r)
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			b.WriteString(uEscape(r1) + uEscape(r2))
		default:
			b.WriteString(uEscape(r))
		}
	}
	return b.String()
}

func uEscape(r rune) string {
	h := strconv.FormatInt(int64(r), 16)
	return `\u` + strings.Repeat("0", 4-len(h)) + h
}

// quoteArg quotes one command-line argument unambiguously: Go string
// syntax, so quotes, backslashes and anything unprintable are escaped and
// an empty argument or one with spaces is still visibly one argument.
func quoteArg(s string) string {
	return sanitize.Line(strconv.Quote(s))
}
