package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/mcphost/mcphost/host"
)

// longResult is a result of n numbered lines.
func longResult(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d of the listing\n", i)
	}
	return b.String()
}

// addLongCard puts a finished card with a long result in the transcript.
func addLongCard(m *Model, text string, truncated bool) *card {
	c := &card{id: "1/1", started: m.now()}
	c.fromEntry(&host.CallEntry{ID: "1", Server: "files", Tool: "list", Args: json.RawMessage(`{}`), Verdict: "allow",
		Class: "read", DecidedBy: "auto", Status: host.StatusSuccess, Result: textResult(text, false),
		ResultBytes: len(text), Truncated: truncated})
	m.tr.add(&entry{kind: entryCard, card: c})
	return c
}

// TestLongResultCardSaysSizeAndWhatTheModelGot: the collapsed card shows
// the size and line count; expanded, its title and its footer agree on
// what went to the model.
func TestLongResultCardSaysSizeAndWhatTheModelGot(t *testing.T) {
	for _, truncated := range []bool{false, true} {
		h := newHarness(t, Config{Now: newClock().Now, Dark: dark(true)})
		h.ready()
		text := longResult(120)
		c := addLongCard(h.m, text, truncated)
		s := h.screen()
		want := fmt.Sprintf("(%s, 120 lines", humanBytes(len(text)))
		if !strings.Contains(s, want) {
			t.Errorf("truncated=%v: the card lacks %q:\n%s", truncated, want, s)
		}
		c.expanded = true
		h.m.invalidateCard(c)
		lines := c.render(&h.m.rc, 100, false)
		all := stripped(strings.Join(lines, "\n"))
		say := "the model got all of it"
		if truncated {
			say = "the model got only its beginning"
		}
		if strings.Count(all, say) != 2 {
			t.Errorf("truncated=%v: title and footer do not both say %q:\n%s", truncated, say, all)
		}
		if strings.Contains(all, "full result went") || truncated && strings.Contains(all, "got all of it") {
			t.Errorf("truncated=%v: the card contradicts itself:\n%s", truncated, all)
		}
	}
}

// TestPagerScrollsSearchesAndSaves opens the result from its card.
func TestPagerScrollsSearchesAndSaves(t *testing.T) {
	h := newHarness(t, Config{Now: newClock().Now, Dark: dark(true)})
	h.ready()
	text := longResult(200)
	addLongCard(h.m, text, true)
	h.key("f2")
	h.key("o")
	if h.m.pager == nil {
		t.Fatalf("o did not open the pager:\n%s", h.screen())
	}
	s := h.screen()
	if !strings.Contains(s, "result of files/list") || !strings.Contains(s, "lines 1–") || !strings.Contains(s, "line 1 of the listing") {
		t.Fatalf("pager:\n%s", s)
	}
	h.key("/")
	h.typeText("line 150 ")
	h.key("enter")
	if s := h.screen(); !strings.Contains(s, ">line 150 of the listing") {
		t.Fatalf("search did not reach line 150:\n%s", s)
	}
	h.send(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	if s := h.screen(); strings.Contains(s, ">line 150 of") && !strings.Contains(s, "line 147 of") {
		t.Errorf("the wheel did not scroll the pager:\n%s", s)
	}

	file := filepath.Join(t.TempDir(), "out.txt")
	for i := 0; i < 2; i++ {
		h.key("s")
		h.key("ctrl+u")
		h.typeText(file)
		h.key("enter")
	}
	got, err := os.ReadFile(file)
	if err != nil || string(got) != text {
		t.Fatalf("saved %d bytes (%v), want the whole result of %d", len(got), err, len(text))
	}
	if !strings.Contains(h.screen(), "exists") {
		t.Errorf("a second save did not refuse to overwrite:\n%s", h.screen())
	}
	h.key("q")
	if h.m.pager != nil || !strings.Contains(h.screen(), "files/list") {
		t.Fatal("q did not return to the transcript")
	}
}

// TestWheelScrollsAndF3GivesTheMouseBack: the wheel scrolls the
// transcript; f3 turns mouse reporting off so the terminal selects text.
func TestWheelScrollsAndF3GivesTheMouseBack(t *testing.T) {
	h := newHarness(t, Config{Now: newClock().Now, Dark: dark(true)})
	h.ready()
	for i := 0; i < 60; i++ {
		h.m.notice(levelInfo, fmt.Sprintf("notice %d", i))
	}
	if h.m.View().MouseMode != tea.MouseModeCellMotion {
		t.Fatal("the mouse is not reported")
	}
	h.send(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	if h.m.tr.follow {
		t.Fatal("the wheel did not scroll the transcript up")
	}
	h.key("f3")
	if h.m.View().MouseMode != tea.MouseModeNone {
		t.Fatal("f3 did not give the mouse back to the terminal")
	}
	h.key("f3")
	if h.m.View().MouseMode != tea.MouseModeCellMotion {
		t.Fatal("f3 again did not take the wheel back")
	}
}

// TestScrollbackPrintedOnExit: the conversation is written out after the
// program ends, without any escape sequence when the output is no terminal.
func TestScrollbackPrintedOnExit(t *testing.T) {
	h := newHarness(t, Config{Model: fakeModel{}, Now: newClock().Now, Dark: dark(true)})
	h.ready()
	playCards(h)
	var b bytes.Buffer
	if err := h.m.printScrollback(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"› Tidy up", "Here is the plan", "✓ tasks/list_tasks", "⊘ tasks/delete_task"} {
		if !strings.Contains(out, want) {
			t.Errorf("the scrollback lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("escape sequences went to a non-terminal:\n%q", out)
	}
}

// TestPagerMarksEveryMatch: each occurrence of the query, in any case, is
// drawn in reverse video, and the match the search went to looks different
// from the others.
func TestPagerMarksEveryMatch(t *testing.T) {
	st := newStyles(true, false)
	p := &pager{text: []string{"alpha beta ALPHA", "none here", "alphabet"}, query: "alpha"}
	p.layout(60, 10)
	p.jump(1) // from the top line: the next match is the third line
	m := &Model{st: st}
	view := p.view(m, 60, 10)
	other := st.Selected.Render("alpha")
	current := st.Selected.Bold(true).Underline(true).Render("alpha")
	if got, want := view[1], st.Selected.Render(">")+other+" beta "+st.Selected.Render("ALPHA"); !strings.Contains(got, want) {
		t.Errorf("first line %q, want both matches reversed: %q", got, want)
	}
	if strings.Contains(view[2], "\x1b[7") {
		t.Errorf("a line without a match is marked: %q", view[2])
	}
	if !strings.Contains(view[3], current+"bet") {
		t.Errorf("the current match %q is not drawn as %q", view[3], current)
	}
	if current == other {
		t.Fatal("the current match looks like the others")
	}
	// A resize rewraps the text: the current match stays the current one.
	p.layout(40, 10)
	if p.cur < 0 || p.from[p.cur] != 2 {
		t.Fatalf("after a resize the current match is wrapped line %d, want the one of the third line", p.cur)
	}
}

// TestPagerCountsMatchesInWords: the search's count reads as English, one
// line in the singular.
func TestPagerCountsMatchesInWords(t *testing.T) {
	m := &Model{st: newStyles(true, true)}
	for _, tc := range []struct {
		query, want string
	}{{"none", "1 line matches “none”"}, {"alpha", "2 lines match “alpha”"}, {"zzz", "0 lines match “zzz”"}} {
		p := &pager{text: []string{"alpha beta", "none here", "alphabet"}, query: tc.query}
		p.layout(80, 10)
		p.find()
		view := ansi.Strip(strings.Join(p.view(m, 80, 10), "\n"))
		if !strings.Contains(view, tc.want) {
			t.Errorf("search %q: the foot lacks %q:\n%s", tc.query, tc.want, view)
		}
	}
}
