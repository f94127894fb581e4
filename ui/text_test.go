package ui

import (
	"strings"
	"testing"

	"github.com/mcphost/mcphost/sanitize"
)

// A model that ends its lines with CRLF gets plain lines; a lone CR, which
// a terminal would act on, stays escaped.
func TestCleanLineEndings(t *testing.T) {
	if got := clean("one\r\ntwo\r\n"); got != "one\ntwo\n" {
		t.Errorf("clean(CRLF lines) = %q, want LF lines", got)
	}
	got := clean("safe\rEVIL")
	if strings.ContainsRune(got, '\r') || got != sanitize.Text("safe\rEVIL") {
		t.Errorf("clean(lone CR) = %q, want it escaped as sanitize does", got)
	}
	lines := (&answerMarkdown{}).render(clean("# Title\r\n\r\nSome *text*.\r\n"), "notty", 40)
	for _, l := range lines {
		if strings.Contains(l, `\r`) || strings.ContainsRune(l, '\r') {
			t.Errorf("rendered line shows a CR: %q", l)
		}
	}
	if len(lines) < 3 {
		t.Errorf("rendered %q, want a heading, a blank line and a paragraph", lines)
	}
}

// cleanMarkdown is clean without the tab expansion, which the markdown
// parser does by columns.
func TestCleanMarkdown(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"1.\tone\r\n\tcode\r\n", "1.\tone\n\tcode\n"},
		{"safe\rEVIL \x1b[2J", `safe\rEVIL \x1b[2J`},
		{"\u202egnp.exe", `\u202egnp.exe`},
	} {
		if got := cleanMarkdown(tc.in); got != tc.want {
			t.Errorf("cleanMarkdown(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := clean("a\tb"); got != "a    b" {
		t.Errorf("clean(tab) = %q, want the tab as four spaces, as before", got)
	}
}
