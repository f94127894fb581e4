package markdown

import (
	"github.com/mcphost/mcphost/internal/termtest"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"
)

// mdCases are markdown sources with their rendering at width 30, styles
// stripped, prepared by PrepareSource. They also seed
// FuzzMarkdown.
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
	{"long code lines wrap, marked", "```sh\necho 'a line much longer than thirty cells'\nls\n```",
		[]string{"sh", "echo 'a line much longer tha", "↪ n thirty cells'", "ls"}},
	{"code wraps wide runes whole", "```\n" + strings.Repeat("漢", 20) + "\n```",
		[]string{strings.Repeat("漢", 14), "↪ " + strings.Repeat("漢", 6)}},
	{"indented code", "    x := 1", []string{"x := 1"}},
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
	{"line feed reference is a space", "a&#10;b &#13;&#10;c", []string{"  a b c"}},
	{"line feed reference in an address is a space", "[x](a&#10;b)", []string{"  x (a b)"}},
	{"hard break still breaks", "a&#10;b\\\nc", []string{"  a b", "  c"}},
	{"tab after a number", "1.\tone\n\n\t```\n\tcode\n\t```", []string{"  1. one", "", "     code"}},
	{"tab nests a list", "- a\n  \t- b", []string{"  • a", "    • b"}},
	{"table", "| Name | Qty |\n|:--|--:|\n| **apple** | 3 |\n| `kiwi` | 12 |",
		[]string{"  Name  │ Qty", "  ──────┼────", "  apple │   3", "  kiwi  │  12"}},
	{"table too wide for a grid", "| key | meaning |\n|---|---|\n| a | the first letter of the alphabet |",
		[]string{"  key │ meaning", "  " + strings.Repeat("─", 28), "  a │ the first letter of the", "    alphabet"}},
	{"deep quote keeps room for its text", "> > > > > > > > > > quoted text that is long enough to wrap",
		[]string{"  │ │ │ │ │ │ │ quoted text", "  │ │ │ │ │ │ │ that is long", "  │ │ │ │ │ │ │ enough to wrap"}},
	{"long word is broken", strings.Repeat("x", 40), []string{"  " + strings.Repeat("x", 28), "  " + strings.Repeat("x", 12)}},
	{"wide runes", strings.Repeat("漢", 20), []string{"  " + strings.Repeat("漢", 14), "  " + strings.Repeat("漢", 6)}},
}

func TestMarkdownRender(t *testing.T) {
	for _, tc := range slices.Concat(mdCases, mdTableCases) {
		t.Run(tc.name, func(t *testing.T) {
			got := render(tc.src, "dark", 30)
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
	got := strings.Join(renderRaw("# T\n\n**b** `c` [l](u)", "notty", 40), "\n")
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
		if bad := termtest.Unsafe(l); bad != "" {
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
	"| 漢字 | 😀 **b** | `c` |\n|:-:|--:|---|\n| 👩‍👩‍👧‍👦 | [l](https://example.com/" + strings.Repeat("p", 40) + ") | \\| |\n| x |",
	"- a\n\t- b\n\t\t- c\n\n\t\t\t```\n\t\t\tcode\twith\ttabs " + strings.Repeat("x", 60) + "\n\t\t\t```",
	strings.Repeat("> ", 40) + "quoted " + strings.Repeat("- ", 30) + "1000000. " + strings.Repeat("漢", 30),
}

func TestMarkdownWidth(t *testing.T) {
	var srcs []string
	for _, tc := range slices.Concat(mdCases, mdTableCases) {
		srcs = append(srcs, tc.src)
	}
	for _, src := range append(srcs, mdHard...) {
		for _, style := range []string{"dark", "light", "notty"} {
			for width := 10; width <= 50; width++ {
				checkMarkdown(t, src, width, render(src, style, width))
			}
		}
	}
}

func FuzzMarkdown(f *testing.F) {
	for _, tc := range slices.Concat(mdCases, mdTableCases) {
		f.Add(tc.src, 30)
	}
	for _, src := range mdHard {
		f.Add(src, 12)
	}
	f.Add("[x](javascript:\x1b[2J) \x1b]8;;http://x\x07y\x1b]8;;\x07 \u202e", 20)
	f.Fuzz(func(t *testing.T, src string, width int) {
		width = 10 + (width%200+200)%200
		for _, style := range []string{"dark", "notty"} {
			checkMarkdown(t, src, width, render(src, style, width))
		}
	})
}

// TestMDCodeHidesNothing: a code line of any length is drawn whole, from
// the first column, its later parts each on a line that starts with ↪.
func TestMDCodeHidesNothing(t *testing.T) {
	for _, code := range []string{
		"curl -fsSL https://example.com/install.sh | sh -s -- --prefix=/opt/tool --yes",
		strings.Repeat("漢a", 40),
		strings.Repeat("👩‍👩‍👧‍👦", 30),
		"e\u0301" + strings.Repeat("x", 100) + "\u200b",
	} {
		for width := 10; width <= 60; width++ {
			lines := render("```\n"+code+"\n```", "notty", width)
			checkMarkdown(t, code, width, lines)
			var got strings.Builder
			for i, l := range lines {
				l = stripped(l)
				prefix := ""
				if i > 0 {
					prefix = "↪ "
				}
				if !strings.HasPrefix(l, prefix) {
					t.Fatalf("width %d: line %d is %q, want it to start %q", width, i, l, prefix)
				}
				got.WriteString(l[len(prefix):])
			}
			if want := Clean(code); got.String() != want {
				t.Fatalf("width %d: code drawn as %q, want %q", width, got.String(), want)
			}
		}
	}
}

// TestMDNestingKeepsWords: however deep quotes and lists nest, their text
// keeps room enough that no word is cut or broken.
func TestMDNestingKeepsWords(t *testing.T) {
	const text = "quoted text that is long"
	words := strings.Fields(text)
	for _, marker := range []string{"> ", "- ", "1. ", "1000000. ", ">- ", "* > 10) "} {
		for _, depth := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 20, 25, mdMaxNesting + 1, 40} {
			src := strings.Repeat(marker, depth) + text
			for width := 10; width <= 60; width++ {
				lines := render(src, "dark", width)
				checkMarkdown(t, src, width, lines)
				var got []string
				for _, l := range lines {
					for _, f := range strings.Fields(stripped(l)) {
						if strings.Contains(f, "…") || strings.Contains(text, f) {
							got = append(got, f)
						}
					}
				}
				if !cmp.Equal(got, words) {
					t.Fatalf("render(%q, %d) has words %q, want %q:\n%s", src, width, got, words, strings.Join(lines, "\n"))
				}
			}
		}
	}
}

// TestPrepareByDefault: with no Options.Prepare, the source is made safe
// before it is parsed: a lone CR, which a terminal would act on, is shown
// escaped, not taken as a line ending.
func TestPrepareByDefault(t *testing.T) {
	got := New(Options{}).Render("a\rb", 20)
	if want := []string{`a\rb`}; !slices.Equal(got, want) {
		t.Errorf("Render(a CR b) = %q, want %q", got, want)
	}
}
