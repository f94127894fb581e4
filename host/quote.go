package host

import (
	"strings"
	"unicode"

	"github.com/mcphost/mcphost/sanitize"
)

// Server text handed to a model.
//
// A server writes its tools' names, titles and descriptions, their
// argument names and argument descriptions, and its results. All of it
// reaches a model only between OpenMark and CloseMark, after a label in
// mcphost's own words that says whose text it is, and Quote is the only
// function that writes those marks. Server text never holds them: Quote
// turns OpenMark, CloseMark and the brackets drawn like them into plain
// ASCII brackets, so a server cannot close its region early, nor open
// one that reads as mcphost's. With oneLine, every run of white space
// (line breaks and tabs among it) becomes one space, so a name or a list
// entry cannot start a line of its own; otherwise line breaks and tabs are
// kept. Either way every other control or invisible character is shown as
// an escape (\x1b, \u202e), as package sanitize does for the terminal.
const (
	OpenMark  = "⟦"
	CloseMark = "⟧"
)

// markLookalikes are the brackets a reader could take for OpenMark or
// CloseMark: white square, white lenticular, white tortoise shell, white
// curly and white (double) parentheses, fullwidth and not.
var markLookalikes = map[rune]rune{
	'⟦': '[', '⟧': ']', // U+27E6, U+27E7: the marks themselves
	'〚': '[', '〛': ']', // U+301A, U+301B
	'〖': '[', '〗': ']', // U+3016, U+3017
	'⟬': '[', '⟭': ']', // U+27EC, U+27ED
	'⦃': '{', '⦄': '}', // U+2983, U+2984
	'⦅': '(', '⦆': ')', // U+2985, U+2986
	'｟': '(', '｠': ')', // U+FF5F, U+FF60
	'⸨': '(', '⸩': ')', // U+2E28, U+2E29
}

// isLookalike is a quick test for the keys of markLookalikes, which are
// all in two blocks of brackets and the fullwidth forms.
func isLookalike(r rune) bool {
	if r < 0x27e6 || (r > 0x2e29 && r < 0x3016) || (r > 0x301b && r < 0xff5f) || r > 0xff60 {
		return false
	}
	_, ok := markLookalikes[r]
	return ok
}

// Quote renders text a server wrote for a model: label, which must be
// mcphost's own words (say whose text it is and that it is data, not
// instructions), then the text between OpenMark and CloseMark. With
// oneLine the result is one line: "label ⟦text⟧"; otherwise the marks
// stand on lines of their own around the text's lines. Whatever text
// holds, the result holds exactly one OpenMark and one CloseMark, plus
// those of label.
func Quote(label, text string, oneLine bool) string {
	body := Defang(text, oneLine)
	sep := " "
	if label == "" {
		sep = ""
	}
	if oneLine {
		return label + sep + OpenMark + body + CloseMark
	}
	if label != "" {
		sep = "\n"
	}
	return label + sep + OpenMark + "\n" + body + "\n" + CloseMark
}

// Defang returns s as it may stand inside a quoted region, without its
// marks: what Quote does to the text it quotes. It is idempotent, so parts
// of one region may be defanged, joined and quoted.
func Defang(s string, oneLine bool) string {
	if oneLine {
		if strings.Contains(s, "  ") || strings.ContainsFunc(s, func(r rune) bool { return r != ' ' && unicode.IsSpace(r) }) {
			s = strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
		}
		s = sanitize.Line(s)
	} else {
		s = sanitize.Text(strings.ReplaceAll(s, "\r\n", "\n"))
	}
	if !strings.ContainsFunc(s, isLookalike) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if to, ok := markLookalikes[r]; ok {
			return to
		}
		return r
	}, s)
}

// quoteName renders a name a server chose (a tool's, "server/tool") inside
// one of mcphost's own lines: quoted on one line, cut to maxQuotedName
// runes.
func quoteName(name string) string {
	name, _ = truncateRunes(name, maxQuotedName)
	return Quote("", name, true)
}

// maxQuotedName bounds a name quoted in one of mcphost's lines.
const maxQuotedName = 128

// closeRegions appends the CloseMark a cut left out: text cut from a
// quoted region (for a summary) would otherwise leave the region open and
// make mcphost's next lines read as the server's.
func closeRegions(s string) string {
	if open := strings.Count(s, OpenMark) - strings.Count(s, CloseMark); open > 0 {
		return s + strings.Repeat(CloseMark, open)
	}
	return s
}
