package markdown

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// mdTableCases are tables rendered at width 30, styles stripped; the tests
// of mdCases run them too.
var mdTableCases = []struct {
	name, src string
	want      []string
}{
	{"columns are measured in cells", "| 漢字 | b |\n|---|---|\n| x | **yy** |",
		[]string{"  漢字 │ b", "  ─────┼───", "  x    │ yy"}},
	{"centred", "| a | b |\n|:-:|:-:|\n| long | x |",
		[]string{"   a   │ b", "  ─────┼──", "  long │ x"}},
	{"styles do not count", "| `code` | [docs](https://go.dev) |\n|--|--|\n| *a* | b |",
		[]string{"  code │ docs (https://go.dev)", "  ─────┼" + strings.Repeat("─", 22), "  a    │ b"}},
	{"missing cells are empty", "| a | b | c |\n|---|---|--:|\n| 1 |\n| 1 | | 3 |",
		[]string{"  a │ b │ c", "  ──┼───┼──", "  1 │   │", "  1 │   │ 3"}},
	{"header only", "a | b\n--|--", []string{"  a │ b", "  ──┼──"}},
	{"paragraph before", "Totals:\na | b\n--|--\n1 | 2", []string{"  Totals:", "", "  a │ b", "  ──┼──", "  1 │ 2"}},
	{"in a list", "- x\n\n  | a | b |\n  |---|---|\n  | 1 | 2 |",
		[]string{"  • x", "", "    a │ b", "    ──┼──", "    1 │ 2"}},
	{"in a quote", "> | a | b |\n> |---|---|\n> | 1 | 2 |",
		[]string{"  │ a │ b", "  │ ──┼──", "  │ 1 │ 2"}},
	{"rows too wide are lines of their own", "| command | what it does |\n|---|---|\n| `ls -la` | lists every file, hidden ones too |\n| `pwd` | prints the directory |",
		[]string{"  command │ what it does", "  " + strings.Repeat("─", 28), "  ls -la │ lists every file,", "    hidden ones too", "  pwd │ prints the directory"}},
}

// TestMDTableLook: the header is bold; the rule and the bars are quiet,
// as code blocks are.
func TestMDTableLook(t *testing.T) {
	lines := renderRaw("| Name | Qty |\n|---|--:|\n| **kiwi** | 3 |", "notty", 40)
	if len(lines) != 3 {
		t.Fatalf("render = %q, want a header, a rule and a row", lines)
	}
	faint, bold := "\x1b[2m", "\x1b[1m"
	for _, want := range []string{bold + "Name", faint + "│", bold + "Qty"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("header %q lacks %q", lines[0], want)
		}
	}
	if !strings.Contains(lines[1], faint+"──") {
		t.Errorf("rule %q is not faint", lines[1])
	}
	if !strings.Contains(lines[2], bold+"kiwi") || strings.Contains(lines[2], bold+"3") {
		t.Errorf("row %q: want only kiwi bold", lines[2])
	}
}

// TestMDTableRowsStayApart: however narrow the screen, a table is never
// drawn as one paragraph. Each row starts a line, its later lines are
// indented, and every cell is there.
func TestMDTableRowsStayApart(t *testing.T) {
	src := "| file | change | why |\n|---|---|---|\n" +
		"| `ui/mdparse.go` | tables | models write them all the time |\n" +
		"| `ui/mdrender.go` | grid, or rows | so that columns line up when they fit |\n" +
		"| `ui/text.go` | cleanMarkdown | tabs reach the parser |\n"
	rowStart := regexp.MustCompile(`^  [^ ]`)
	for width := 10; width <= 120; width++ {
		lines := render(src, "dark", width)
		checkMarkdown(t, src, width, lines)
		starts := 0
		var text strings.Builder
		for _, l := range lines {
			l = stripped(l)
			if rowStart.MatchString(l) {
				starts++
			}
			text.WriteString(l + " ")
		}
		if starts != 5 { // the header, the rule, three rows
			t.Fatalf("width %d: %d lines start a row, want 5:\n%s", width, starts, strings.Join(lines, "\n"))
		}
		// A word longer than the line is broken, so compare without spaces.
		all := strings.Join(strings.Fields(text.String()), "")
		for _, w := range strings.Fields("file change why ui/mdparse.go tables models write them all the time ui/mdrender.go grid, or rows cleanMarkdown") {
			if !strings.Contains(all, w) {
				t.Fatalf("width %d: %q is missing:\n%s", width, w, strings.Join(lines, "\n"))
			}
		}
	}
}

// TestMDTableColumns: a table has at most mdMaxColumns columns; a row's
// cells past the header's count are dropped.
func TestMDTableColumns(t *testing.T) {
	for _, n := range []int{1, mdMaxColumns, mdMaxColumns + 1} {
		src := "|" + strings.Repeat(" a |", n) + "\n|" + strings.Repeat("---|", n) + "\n|" + strings.Repeat(" b |", n+5)
		doc := mdParse(src)
		checkTree(t, src, doc)
		if n > mdMaxColumns {
			if doc.first.kind != mdParagraph {
				t.Errorf("%d columns: got a block of kind %v, want a paragraph", n, doc.first.kind)
			}
			continue
		}
		if doc.first.kind != mdTable || len(doc.first.text) != n {
			t.Fatalf("%d columns: got kind %v with %d columns, want a table", n, doc.first.kind, len(doc.first.text))
		}
		for row := doc.first.first; row != nil; row = row.next {
			cells := 0
			for c := row.first; c != nil; c = c.next {
				cells++
			}
			if cells != n {
				t.Errorf("%d columns: a row has %d cells", n, cells)
			}
		}
		width := max(4*n+2, 10)
		if lines := renderRaw(src, "dark", width); len(lines) != 3 {
			t.Errorf("%d columns at width %d: got %d lines, want a grid of 3", n, width, len(lines))
		}
	}
}

// BenchmarkMDTable renders an answer with a 20-row table, as a grid and,
// on a narrow screen, as rows.
func BenchmarkMDTable(b *testing.B) {
	var src strings.Builder
	src.WriteString("| task | owner | state | note |\n|---|:-:|--:|---|\n")
	for i := range 20 {
		src.WriteString("| `T-" + strings.Repeat("1", i%4+1) + "` | **ops** | blocked | waiting for [quota](https://example.com/q) |\n")
	}
	look := newMDLook(Options{Style: testStyle("dark")})
	for _, width := range []int{100, 30} {
		b.Run("width="+strconv.Itoa(width), func(b *testing.B) {
			b.SetBytes(int64(src.Len()))
			b.ReportAllocs()
			for b.Loop() {
				mdRender(src.String(), look, width)
			}
		})
	}
}
