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
	lines := (&markdown{}).render(clean("# Title\r\n\r\nSome *text*.\r\n"), "notty", 40)
	for _, l := range lines {
		if strings.Contains(l, `\r`) || strings.ContainsRune(l, '\r') {
			t.Errorf("rendered line shows a CR: %q", l)
		}
	}
	if len(lines) < 3 {
		t.Errorf("rendered %q, want a heading, a blank line and a paragraph", lines)
	}
}
