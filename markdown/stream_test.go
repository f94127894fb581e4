package markdown

import (
	"strings"
	"testing"
)

func TestBoundary(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // the finished part
	}{
		{"para", ""},
		{"para\n\nnext", "para\n\n"},
		{"para\n\nnext\n", "para\n\n"},
		{"para\n\n1", ""},       // may become a numbered item
		{"- a\n\n- b\n", ""},    // a list may turn loose
		{"- a\n\n  more\n", ""}, // an item's continuation
		{"```\nx\n\ny\n", ""},   // inside an open fence
		{"```\nx\n\n```\n\nz", "```\nx\n\n```\n\n"},
		{"> q\n\n> r\n", ""},
	} {
		if got := c.in[:Boundary(c.in)]; got != c.want {
			t.Errorf("Boundary(%q) keeps %q, want %q", c.in, got, c.want)
		}
	}
}

// streamDoc has every kind of block.
const streamDoc = "# Plan\n\nIntro with **bold** text.\n\n- one\n- two\n\n  more\n\nA table:\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```go\nfunc main() {\n\n}\n```\n\n> quoted\n\n1. first\n2. second\n\n---\n\nLast *words*."

// streamed feeds src to a Stream in chunks of size n and returns its lines
// as the chat shows them, checking at every step that the finished lines
// only grow and begin the final rendering.
func streamed(t *testing.T, r *Renderer, src string, n, width int) []string {
	t.Helper()
	final := r.Render(src, width)
	s := r.Stream(width)
	var done, open []string
	for i := 0; i < len(src); i += n {
		s.Feed(src[i:min(i+n, len(src))])
		done, open = s.Lines()
		for j, l := range done {
			if j >= len(final) || final[j] != l {
				t.Fatalf("chunks of %d, at %d bytes: finished line %d is %q, the final rendering has %q", n, s.Len(), j, l, final[min(j, len(final)-1)])
			}
		}
	}
	out := append([]string(nil), done...)
	if len(out) > 0 && len(open) > 0 {
		out = append(out, "")
	}
	return append(out, open...)
}

// TestStreamMatchesRender: whatever the chunks, the finished lines are the
// final rendering's beginning as the document arrives, and at the end the
// stream shows exactly what Render draws: nothing moves when it ends.
func TestStreamMatchesRender(t *testing.T) {
	r := New(Options{Style: testStyle("dark"), Indent: "  "})
	final := r.Render(streamDoc, 50)
	for _, n := range []int{1, 2, 3, 7, 64, len(streamDoc)} {
		got := streamed(t, r, streamDoc, n, 50)
		if strings.Join(got, "\n") != strings.Join(final, "\n") {
			t.Fatalf("chunks of %d: the whole document streamed differs from Render:\n%s\n---\n%s", n, strings.Join(got, "\n"), strings.Join(final, "\n"))
		}
	}
}

// TestStreamDrawsFinishedBlocksOnce: a finished block is drawn when it
// completes and kept; later chunks do not change it, and the open block is
// drawn as markdown too.
func TestStreamDrawsFinishedBlocksOnce(t *testing.T) {
	s := New(Options{Style: testStyle("notty")}).Stream(40)
	s.Feed("Intro with **bold** text.\n\nA *second* para")
	done, open := s.Lines()
	if len(done) != 1 || stripped(done[0]) != "Intro with bold text." {
		t.Fatalf("finished lines %q, want the rendered paragraph", done)
	}
	if len(open) != 1 || stripped(open[0]) != "A second para" {
		t.Fatalf("open lines %q, want the second paragraph so far", open)
	}
	first := done[0]
	s.Feed("graph.\n\n```\ncode")
	done, open = s.Lines()
	if len(done) != 3 || done[0] != first || stripped(done[2]) != "A second paragraph." {
		t.Fatalf("finished lines %q: want the first paragraph kept as it was, a blank line and the second", done)
	}
	if len(open) != 1 || stripped(open[0]) != "code" {
		t.Fatalf("open lines %q, want the open code block", open)
	}
}

// FuzzStream streams random markdown in random chunks: every line the
// stream shows is safe and fits, and the finished lines begin the final
// rendering unless a link reference definition, which the whole document
// shares, is in play.
func FuzzStream(f *testing.F) {
	f.Add(streamDoc, 3, 40)
	for _, tc := range mdCases {
		f.Add(tc.src, 2, 30)
	}
	for _, src := range mdHard {
		f.Add(src, 5, 12)
	}
	f.Fuzz(func(t *testing.T, src string, n, width int) {
		n = 1 + (n%64+64)%64
		width = 1 + (width%200+200)%200
		r := New(Options{Style: testStyle("dark"), Indent: "  "})
		s := r.Stream(width)
		refs := strings.Contains(src, "]:")
		var final []string
		if !refs {
			final = r.Render(src, width)
		}
		for i := 0; i < len(src); i += n {
			s.Feed(src[i:min(i+n, len(src))])
			done, open := s.Lines()
			checkMarkdown(t, src, width, done)
			checkMarkdown(t, src, width, open)
			for j, l := range done {
				if !refs && (j >= len(final) || final[j] != l) {
					t.Fatalf("at %d bytes: finished line %d is %q, the final rendering differs", s.Len(), j, l)
				}
			}
		}
	})
}

// BenchmarkStream feeds a long answer in chunks of about 20 bytes and
// draws it after each, as the chat does while a model streams: the cost
// of a frame is the open block's, whatever has arrived before it.
func BenchmarkStream(b *testing.B) {
	doc := strings.Repeat(streamDoc+"\n\n", 40)
	r := New(Options{Style: testStyle("dark"), Indent: "  "})
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		s := r.Stream(80)
		for i := 0; i < len(doc); i += 20 {
			s.Feed(doc[i:min(i+20, len(doc))])
			s.Lines()
		}
	}
}
