package ui

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/host"
	"github.com/rivo/uniseg"
)

// streamMD is a message with every kind of block, streamed in pieces.
const streamMD = "Intro with **bold** text.\n\n- one\n- two\n\nA table:\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```go\nfunc main() {\n\n}\n```\n\nLast *words*."

// TestStreamedMarkdownRendersFinishedBlocks: while the model streams, a
// finished paragraph is already markdown (no asterisks), the open block
// shows, and when the stream ends the screen does not move.
func TestStreamedMarkdownRendersFinishedBlocks(t *testing.T) {
	h := newHarness(t, Config{Model: fakeModel{}, Now: newClock().Now, Dark: dark(true)})
	h.ready()
	ev := func(k host.LoopEventKind, text string) {
		h.send(inboxMsg{loopEventMsg{run: 1, ev: host.LoopEvent{Kind: k, Text: text}}})
	}
	ev(host.EvTurnStart, "")
	ev(host.EvTextDelta, "Intro with **bold** text.\n\n- one\n- tw")
	s := h.screen()
	if !strings.Contains(s, "Intro with bold text.") || strings.Contains(s, "**bold**") {
		t.Fatalf("the finished paragraph is not rendered:\n%s", s)
	}
	if !strings.Contains(s, "tw") {
		t.Fatalf("the open block is not shown:\n%s", s)
	}
	ev(host.EvTextDelta, strings.TrimPrefix(streamMD, "Intro with **bold** text.\n\n- one\n- tw"))
	streamed := h.screen()
	ev(host.EvDone, "")
	if done := h.screen(); done != streamed {
		t.Errorf("the message moved when the stream ended:\nstreamed:\n%s\ndone:\n%s", streamed, done)
	}
}

// TestStreamedMarkdownMatchesAtEveryCut: for every prefix, the streamed
// rendering of the finished blocks is the final rendering's beginning.
func TestStreamedMarkdownMatchesAtEveryCut(t *testing.T) {
	rc := &renderCtx{st: newStyles(true, true), md: &answerMarkdown{}}
	final := rc.md.render(streamMD, rc.st.markdownStyle(), 60)
	for i := 1; i <= len(streamMD); i++ {
		e := &entry{kind: entryAssistant, text: streamMD[:i]}
		got := e.streamLines(rc, 60)
		if i == len(streamMD) && strings.Join(got, "\n") != strings.Join(final, "\n") {
			t.Fatalf("the whole message streamed differs from the final rendering:\n%s\n---\n%s", strings.Join(got, "\n"), strings.Join(final, "\n"))
		}
		done, _ := e.stream.Lines()
		for j, l := range done {
			if j >= len(final) || final[j] != l {
				t.Fatalf("at %d bytes, finished line %d is %q, the final rendering has %q", i, j, l, final[min(j, len(final)-1)])
			}
		}
	}
}

// TestStreamedMarkdownFollowsResize: a message streamed at one width and
// then drawn at another is drawn anew at the new width, as the finished
// message will be.
func TestStreamedMarkdownFollowsResize(t *testing.T) {
	rc := &renderCtx{st: newStyles(true, true), md: &answerMarkdown{}}
	e := &entry{kind: entryAssistant, text: streamMD}
	e.streamLines(rc, 60)
	got := e.streamLines(rc, 14)
	if want := rc.md.render(streamMD, rc.st.markdownStyle(), 14); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("streamed at 60 then 14 cells:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestAssistantMarkdownTabs: a finished answer reaches the parser with its
// tabs, whose width depends on their column, so structure built with tabs
// survives.
func TestAssistantMarkdownTabs(t *testing.T) {
	rc := &renderCtx{st: newStyles(true, true), now: newClock().Now, md: &answerMarkdown{}}
	for _, tc := range []struct {
		src  string
		want []string
	}{
		{"1.\tone\n\n\t```\n\tcode\n\t```", []string{"  1. one", "", "     code"}},
		// Top-level code leaves the transcript's margin, so a copy is clean.
		{"Run:\n\n```go\n\tx := 1\n```", []string{"  Run:", "", "go", "    x := 1"}},
		{"- a\n  \t- b", []string{"  • a", "    • b"}},
		{"x\r\n\r\n-\ty", []string{"  x", "", "  • y"}},
	} {
		e := &entry{kind: entryAssistant, done: true, text: tc.src}
		got := e.lines(rc, 30, false)
		for i := range got {
			got[i] = stripped(got[i])
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("answer %q (-want +got):\n%s", tc.src, diff)
		}
	}
}

// TestEmojiJoinersInModelTextOnly: the model's family emoji stays one
// emoji; a joiner elsewhere, and any joiner in server text, is escaped.
func TestEmojiJoinersInModelTextOnly(t *testing.T) {
	family := "👩\u200d👩\u200d👧\u200d👦"
	text := "family " + family + " hidden a\u200db and \u200d" + "👩"
	got := cleanModel(text)
	if !strings.Contains(got, family) {
		t.Errorf("the family emoji was broken: %q", got)
	}
	if strings.Count(got, "\u200d") != 3 || !strings.Contains(got, `a\u200db`) || !strings.Contains(got, `\u200d👩`) {
		t.Errorf("a joiner outside an emoji was kept: %q", got)
	}
	if s := clean(family); strings.ContainsRune(s, '\u200d') {
		t.Errorf("server text kept a joiner: %q", s)
	}
	md := (&answerMarkdown{}).render("**"+family+"** a\u200db", "notty", 40)
	if joined := strings.Join(md, "\n"); !strings.Contains(stripped(joined), family) || strings.Contains(joined, "a\u200db") {
		t.Errorf("markdown: %q", joined)
	}
	// A joiner between an emoji and a symbol that is not one is escaped,
	// though the two make one grapheme.
	for _, s := range []string{"👩\u200dx", "👩\u200d™", "\u200d👩"} {
		if got := cleanModel(s); strings.ContainsRune(got, '\u200d') {
			t.Errorf("cleanModel(%q) kept the joiner: %q", s, got)
		}
	}
}

// noStrayJoiner reports a zero-width joiner in out that is not inside an
// emoji sequence.
func noStrayJoiner(out string) string {
	g := uniseg.NewGraphemes(stripped(out))
	for g.Next() {
		if cl := g.Str(); strings.ContainsRune(cl, '\u200d') && !emojiSequence(cl) {
			return cl
		}
	}
	return ""
}
