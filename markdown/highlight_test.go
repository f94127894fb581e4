package markdown

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// TestCodeBlockHighlighted: a fence naming a language it knows is labelled
// with it, drawn from the first column, and its keywords, strings and
// comments are coloured, the text unchanged.
func TestCodeBlockHighlighted(t *testing.T) {
	src := "Intro.\n\n```go\nfunc main() { // start\n\tfmt.Println(\"hi\", 42)\n}\n```"
	lines := render(src, "dark", 60)
	want := []string{"  Intro.", "", "go", "func main() { // start", "    fmt.Println(\"hi\", 42)", "}"}
	got := make([]string, len(lines))
	for i, l := range lines {
		got[i] = stripped(l)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("render (-want +got):\n%s", d)
	}
	look := newMDLook(Options{Style: testStyle("dark")})
	for _, c := range []struct {
		text string
		a    attr
	}{{"func", attrKeyword}, {"// start", attrComment}, {`"hi"`, attrString}, {"42", attrNumber}} {
		if styled := look.wrapSGR(c.text, c.a); !strings.Contains(strings.Join(lines, "\n"), styled) {
			t.Errorf("%q is not drawn as %q in %q", c.text, styled, lines)
		}
	}
}

// TestCodeBlockPlainWithoutColour: without colour a code block is plain
// text, not a single escape sequence, whatever its language.
func TestCodeBlockPlainWithoutColour(t *testing.T) {
	lines := render("```go\nfunc main() { return \"x\" } // c\n```", "notty", 60)
	for _, l := range lines[1:] {
		if strings.ContainsRune(l, 0x1b) {
			t.Fatalf("code line %q has escape sequences, want plain text", l)
		}
	}
	if len(lines) != 2 || stripped(lines[0]) != "go" || lines[1] != `func main() { return "x" } // c` {
		t.Fatalf("got %q, want the label go and the line as written", lines)
	}
}

// TestCodeBlockUnknownLanguage: a language it does not know is still the
// label; the code is drawn in the terminal's colour.
func TestCodeBlockUnknownLanguage(t *testing.T) {
	lines := render("```cobol\nMOVE A TO B.\n```", "dark", 60)
	if len(lines) != 2 || stripped(lines[0]) != "cobol" || lines[1] != "MOVE A TO B." {
		t.Fatalf("got %q, want the label cobol and the plain line", lines)
	}
}

// TestCodeBlockNestedKeepsItsIndent: only top-level code leaves the margin;
// code in a list stays under its item.
func TestCodeBlockNestedKeepsItsIndent(t *testing.T) {
	lines := render("- item\n\n  ```sh\n  ls -l\n  ```", "notty", 40)
	want := []string{"  • item", "", "    sh", "    ls -l"}
	got := make([]string, len(lines))
	for i, l := range lines {
		got[i] = stripped(l)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("render (-want +got):\n%s", d)
	}
}

// TestHighlightKeepsText: in every language, the pieces of a line put
// together are the line, and there is one slice of pieces per line.
func TestHighlightKeepsText(t *testing.T) {
	langs := []string{"go", "c", "js", "json", "python", "sh", "yaml", "diff", "none"}
	rapid.Check(t, func(t *rapid.T) {
		lang := rapid.SampledFrom(langs).Draw(t, "lang")
		lines := rapid.SliceOfN(rapid.StringMatching(`[ -~漢]{0,30}`), 1, 6).Draw(t, "lines")
		rows := highlight(lines, lang)
		if len(rows) != len(lines) {
			t.Fatalf("%d rows for %d lines", len(rows), len(lines))
		}
		for i, ps := range rows {
			var b strings.Builder
			for _, p := range ps {
				b.WriteString(p.s)
			}
			if b.String() != lines[i] {
				t.Fatalf("%s line %d drawn as %q, want %q", lang, i, b.String(), lines[i])
			}
		}
	})
}

// TestLexersBuiltOnDemand: drawing markdown with no code block builds no
// lexer; a code block builds the one for its language only.
func TestLexersBuiltOnDemand(t *testing.T) {
	lexers.Lock()
	lexers.m = nil
	lexers.Unlock()
	render("# Title\n\nText with `code`.", "dark", 40)
	render("```python\nx = 1\n```", "notty", 40) // no colour: no lexer either
	lexers.Lock()
	n := len(lexers.m)
	lexers.Unlock()
	if n != 0 {
		t.Fatalf("%d lexers built for markdown without highlighted code, want 0", n)
	}
	render("```python\nx = 1\n```", "dark", 40)
	lexers.Lock()
	defer lexers.Unlock()
	if _, ok := lexers.m[famPython]; !ok || len(lexers.m) != 1 {
		t.Fatalf("lexers built: %v, want python's only", lexers.m)
	}
}
