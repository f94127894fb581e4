package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"
)

// mdCases are markdown sources with their rendering at width 30, styles
// stripped. They also seed FuzzMarkdown.
var mdCases = []struct {
	name, src string
	want      []string
}{
	{"paragraph wraps", "one two three four five six seven eight nine ten",
		[]string{"  one two three four five six", "  seven eight nine ten"}},
	{"soft break is a space", "a\nb", []string{"  a b"}},
	{"hard break", "a  \nb", []string{"  a", "  b"}},
	{"heading has a marker", "## Plan *now*", []string{"  ## Plan now"}},
	{"emphasis", "*it* **bold** ***both***", []string{"  it bold both"}},
	{"inline code", "run `go test` now", []string{"  run go test now"}},
	{"fenced code is truncated, not wrapped", "```sh\necho 'a line much longer than thirty cells'\nls\n```",
		[]string{"    echo 'a line much longer …", "    ls"}},
	{"indented code", "    x := 1", []string{"    x := 1"}},
	{"bullets nest", "- a\n- b\n  - c\n  - d", []string{"  • a", "  • b", "    • c", "    • d"}},
	{"numbers line up", "9. nine\n10. ten wraps onto a second line here",
		[]string{"  9.  nine", "  10. ten wraps onto a second", "      line here"}},
	{"loose list", "- a\n\n- b", []string{"  • a", "", "  • b"}},
	{"block quote", "> said\n>\n> more", []string{"  │ said", "  │", "  │ more"}},
	{"link shows its address", "[docs](https://go.dev)", []string{"  docs (https://go.dev)"}},
	{"link that is its address", "<https://go.dev>", []string{"  https://go.dev"}},
	{"image", "![logo](a.png)", []string{"  logo (a.png)"}},
	{"thematic break", "a\n\n---\n\nb", []string{"  a", "", "  " + strings.Repeat("─", 28), "", "  b"}},
	{"raw html is text", "<div>\nhi\n</div>\n\nx <b>y</b>", []string{"  <div>", "  hi", "  </div>", "", "  x <b>y</b>"}},
	{"entities and escapes", `\*not\* &amp; &copy;`, []string{"  *not* & ©"}},
	{"numeric control reference stays visible", "a &#27;[2J b", []string{`  a \x1b[2J b`}},
	{"long word is broken", strings.Repeat("x", 40), []string{"  " + strings.Repeat("x", 28), "  " + strings.Repeat("x", 12)}},
	{"wide runes", strings.Repeat("漢", 20), []string{"  " + strings.Repeat("漢", 14), "  " + strings.Repeat("漢", 6)}},
}

func TestMarkdownRender(t *testing.T) {
	for _, tc := range mdCases {
		t.Run(tc.name, func(t *testing.T) {
			md := &markdown{}
			got := md.render(clean(tc.src), "dark", 30)
			for i := range got {
				got[i] = stripped(got[i])
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("render(%q) (-want +got):\n%s", tc.src, diff)
			}
		})
	}
}

func TestMarkdownNoColor(t *testing.T) {
	md := &markdown{}
	got := strings.Join(md.render("# T\n\n**b** `c` [l](u)", "notty", 40), "\n")
	if strings.Contains(got, "38;") || strings.Contains(got, "48;") {
		t.Errorf("notty output has colour: %q", got)
	}
	for _, want := range []string{"\x1b[1m#", "\x1b[1mb\x1b[m", "`c`", "(u)"} {
		if !strings.Contains(got, want) {
			t.Errorf("notty output %q lacks %q", got, want)
		}
	}
}

// checkMarkdown fails the test if any line is wider than width or carries
// anything but text and SGR sequences.
func checkMarkdown(t *testing.T, src string, width int, lines []string) {
	t.Helper()
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > width {
			t.Fatalf("render(%q, %d): line %q is %d cells", src, width, l, w)
		}
		if strings.Contains(l, "\n") {
			t.Fatalf("render(%q, %d): line %q holds a newline", src, width, l)
		}
		if bad := unsafeOutput(l); bad != "" {
			t.Fatalf("render(%q, %d): %s", src, width, bad)
		}
	}
}

var mdHard = []string{
	"# 漢字の見出しはとても長いのでそのまま折り返されるはず 😀😀😀",
	"- 👩‍👩‍👧‍👦 family\n  - 🇯🇵 flag 漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字",
	"> > > deeply **quoted 漢字漢字漢字漢字** text\n> > > with `code` in it",
	"```\n漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字\n😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀\n```",
	"1. a\n   1. b\n      1. c\n         1. d\n            1. e\n               1. f 漢字漢字",
	"[漢字漢字漢字漢字漢字漢字漢字](https://example.com/" + strings.Repeat("p", 80) + ")",
	"e\u0301\u0301\u0301 combining, zero\u200bwidth, tab\there",
}

func TestMarkdownWidth(t *testing.T) {
	var srcs []string
	for _, tc := range mdCases {
		srcs = append(srcs, tc.src)
	}
	for _, src := range append(srcs, mdHard...) {
		for _, style := range []string{"dark", "light", "notty"} {
			for width := 10; width <= 50; width++ {
				md := &markdown{}
				checkMarkdown(t, src, width, md.render(clean(src), style, width))
			}
		}
	}
}

func FuzzMarkdown(f *testing.F) {
	for _, tc := range mdCases {
		f.Add(tc.src, 30)
	}
	for _, src := range mdHard {
		f.Add(src, 12)
	}
	f.Add("[x](javascript:\x1b[2J) \x1b]8;;http://x\x07y\x1b]8;;\x07 \u202e", 20)
	f.Fuzz(func(t *testing.T, src string, width int) {
		width = 10 + (width%200+200)%200
		md := &markdown{}
		for _, style := range []string{"dark", "notty"} {
			checkMarkdown(t, src, width, md.render(clean(src), style, width))
		}
	})
}
