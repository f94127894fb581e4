package ui

import (
	"strings"
	"time"

	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/markdown"
	"github.com/mcphost/mcphost/ui/dialog"
)

type entryKind uint8

const (
	entryUser entryKind = iota
	entryAssistant
	entryCard
	entryNotice
)

type level uint8

const (
	levelInfo level = iota
	levelWarn
	levelError
)

// entry is one item of the transcript. Its lines are cached per width;
// entries that change (a streaming message, a running call) are drawn anew
// every frame, and there are only ever a few of those.
type entry struct {
	kind  entryKind
	text  string // user and assistant: as written; notice: built from cleaned parts
	level level
	done  bool // assistant: the message is complete and is shown as markdown
	card  *card

	cacheW   int
	cacheSel bool
	cache    []string
	// A long message that is still streaming is wrapped again at most
	// every streamEvery, not on every delta.
	wrappedLen int
	wrappedAt  time.Time
	// While it streams, stream holds text as it arrived, drawn at streamW
	// in streamStyle: its finished blocks are drawn once, only the open
	// block anew.
	stream      *markdown.Stream
	streamW     int
	streamStyle string
}

// streamLines renders a message that is still streaming with a
// markdown.Stream: its finished blocks as markdown, each rendered once as
// it completes and kept, and the open block after them as markdown too, so
// that nothing moves when the stream ends. A frame costs the open block,
// whatever the message's length.
func (e *entry) streamLines(rc *renderCtx, width int) []string {
	if width < mdMinWidth {
		return nil // too narrow for markdown: the caller wraps the text
	}
	style := rc.st.markdownStyle()
	if e.stream == nil || width != e.streamW || style != e.streamStyle || len(e.text) < e.stream.Len() {
		e.stream, e.streamW, e.streamStyle = rc.md.renderer(style).Stream(width), width, style
	}
	e.stream.Feed(e.text[e.stream.Len():])
	done, open := e.stream.Lines()
	out := make([]string, 0, len(done)+len(open)+1)
	out = append(out, done...)
	if len(out) > 0 && len(open) > 0 {
		out = append(out, "")
	}
	return append(out, open...)
}

const (
	streamEvery = 50 * time.Millisecond
	streamSmall = 4 << 10
)

func (e *entry) live() bool {
	switch e.kind {
	case entryAssistant:
		return !e.done
	case entryCard:
		return e.card.live()
	}
	return false
}

func (e *entry) invalidate() { e.cache = nil }

// renderCtx is what drawing needs besides the entries.
type renderCtx struct {
	st    styles
	dst   dialog.Styles
	now   func() time.Time
	frame int
	md    *answerMarkdown
}

var spinFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func (rc *renderCtx) spin() string { return spinFrames[rc.frame%len(spinFrames)] }

func (rc *renderCtx) badge(c decide.Class, t decide.Tier) string { return dialog.Badge(c, t, rc.dst) }

// lines returns the entry's lines at width.
func (e *entry) lines(rc *renderCtx, width int, selected bool) []string {
	if e.cache != nil && e.cacheW == width && e.cacheSel == selected {
		if !e.live() {
			return e.cache
		}
		if e.kind == entryAssistant && (len(e.text) == e.wrappedLen ||
			len(e.text) > streamSmall && rc.now().Sub(e.wrappedAt) < streamEvery) {
			return e.cache
		}
	}
	var out []string
	st := rc.st
	switch e.kind {
	case entryUser:
		for i, l := range wrap(clean(e.text), max(width-2, 1)) {
			prefix := "  "
			if i == 0 {
				prefix = st.User.Render("›") + " "
			}
			out = append(out, prefix+st.Bold.Render(l))
		}
	case entryAssistant:
		switch {
		case e.done && e.stream != nil && e.streamW == width && e.streamStyle == st.markdownStyle():
			// Just finished streaming: the finished blocks are kept and
			// only the last one is rendered, not the whole message again.
			out = e.streamLines(rc, width)
			e.stream = nil
		case e.done:
			e.stream = nil // the stream's copy of the text is not needed again
			out = rc.md.render(e.text, st.markdownStyle(), width)
		default:
			out = e.streamLines(rc, width)
		}
		if out == nil {
			for _, l := range wrap(cleanModel(e.text), max(width-2, 1)) {
				out = append(out, "  "+l)
			}
		}
	case entryCard:
		out = e.card.render(rc, width, selected)
	case entryNotice:
		style := st.Muted
		switch e.level {
		case levelWarn:
			style = st.Warn
		case levelError:
			style = st.Bad
		}
		for _, l := range strings.Split(e.text, "\n") {
			for _, w := range wrap(l, max(width-2, 1)) {
				out = append(out, "  "+style.Render(w))
			}
		}
	}
	if !e.live() || e.kind == entryAssistant {
		e.cache, e.cacheW, e.cacheSel = out, width, selected
		e.wrappedLen, e.wrappedAt = len(e.text), rc.now()
	}
	return out
}

// transcript is the scrollable list of entries. The scroll position is
// anchored at the bottom of the screen: entry bot, with skip of its lines
// hidden below. Only the entries on screen are ever drawn.
type transcript struct {
	entries []*entry
	follow  bool
	bot     int
	skip    int
	sel     int // the selected card's entry, or -1
}

func newTranscript() transcript { return transcript{follow: true, sel: -1} }

func (t *transcript) add(e *entry) {
	t.entries = append(t.entries, e)
	if t.follow {
		t.bot, t.skip = len(t.entries)-1, 0
	}
}

func (t *transcript) clear() { *t = newTranscript() }

func (t *transcript) last() *entry {
	if len(t.entries) == 0 {
		return nil
	}
	return t.entries[len(t.entries)-1]
}

// block returns entry i's lines and whether a blank line follows it:
// one does, except between two tool cards, which read as a group.
func (t *transcript) block(rc *renderCtx, i, width int) ([]string, int) {
	ls := t.entries[i].lines(rc, width, i == t.sel)
	if i+1 == len(t.entries) || t.entries[i].kind == entryCard && t.entries[i+1].kind == entryCard {
		return ls, 0
	}
	return ls, 1
}

func (t *transcript) height(rc *renderCtx, i, width int) int {
	ls, gap := t.block(rc, i, width)
	return len(ls) + gap
}

// view returns exactly h lines of width cells.
func (t *transcript) view(rc *renderCtx, width, h int) []string {
	if t.follow && len(t.entries) > 0 {
		t.bot, t.skip = len(t.entries)-1, 0
	}
	out := make([]string, h)
	if len(t.entries) == 0 {
		for i := range out {
			out[i] = fit("", width)
		}
		return out
	}
	t.bot = min(t.bot, len(t.entries)-1)
	row := h - 1
	for i := t.bot; i >= 0 && row >= 0; i-- {
		ls, gap := t.block(rc, i, width)
		n := len(ls) + gap
		end := n
		if i == t.bot {
			end = max(n-t.skip, 0)
		}
		for j := end - 1; j >= 0 && row >= 0; j-- {
			if j < len(ls) {
				out[row] = ls[j]
			}
			row--
		}
	}
	if row >= 0 {
		// The top of the transcript is on screen: draw it from the top.
		n := h - 1 - row
		copy(out, out[row+1:])
		for k := n; k < h; k++ {
			out[k] = ""
		}
	}
	for i := range out {
		out[i] = fit(out[i], width)
	}
	return out
}

// scroll moves the view by n lines (negative: up), never past either end.
func (t *transcript) scroll(rc *renderCtx, n, width, h int) {
	if len(t.entries) == 0 {
		return
	}
	if t.follow {
		t.bot, t.skip = len(t.entries)-1, 0
	}
	t.follow = false
	if n < 0 {
		t.skip -= n
		for t.bot > 0 && t.skip >= t.height(rc, t.bot, width) {
			t.skip -= t.height(rc, t.bot, width)
			t.bot--
		}
		t.clampTop(rc, width, h)
	} else {
		t.skip -= n
		for t.skip < 0 && t.bot < len(t.entries)-1 {
			t.bot++
			t.skip += t.height(rc, t.bot, width)
		}
		if t.bot == len(t.entries)-1 && t.skip <= 0 {
			t.skip, t.follow = 0, true
		}
	}
}

// clampTop keeps at least a screenful above the anchor, if there is one.
func (t *transcript) clampTop(rc *renderCtx, width, h int) {
	above := max(t.height(rc, t.bot, width)-t.skip, 0)
	for i := t.bot - 1; i >= 0 && above < h; i-- {
		above += t.height(rc, i, width)
	}
	if above >= h {
		return
	}
	// Fewer than h lines from the top to the anchor: anchor at the line
	// that puts the first entry at the top.
	need := h
	for i := 0; i < len(t.entries); i++ {
		hi := t.height(rc, i, width)
		if need <= hi {
			t.bot, t.skip = i, hi-need
			return
		}
		need -= hi
	}
	t.bot, t.skip, t.follow = len(t.entries)-1, 0, true
}

func (t *transcript) top(rc *renderCtx, width, h int) {
	if len(t.entries) == 0 {
		return
	}
	t.follow = false
	t.bot, t.skip = 0, t.height(rc, 0, width)
	t.clampTop(rc, width, h)
}

func (t *transcript) bottom() {
	t.follow = true
	if len(t.entries) > 0 {
		t.bot, t.skip = len(t.entries)-1, 0
	}
}

// selectCard moves the selection to the previous (dir < 0) or next card
// and scrolls it into view.
func (t *transcript) selectCard(rc *renderCtx, dir, width, h int) bool {
	start := t.sel
	if start < 0 {
		start = len(t.entries)
	}
	for i := start + dir; i >= 0 && i < len(t.entries); i += dir {
		if t.entries[i].kind == entryCard {
			t.sel = i
			t.reveal(rc, i, width, h)
			return true
		}
	}
	return false
}

// lastCard selects the newest card.
func (t *transcript) lastCard() *card {
	if t.sel >= 0 && t.sel < len(t.entries) && t.entries[t.sel].kind == entryCard {
		return t.entries[t.sel].card
	}
	for i := len(t.entries) - 1; i >= 0; i-- {
		if t.entries[i].kind == entryCard {
			return t.entries[i].card
		}
	}
	return nil
}

// reveal scrolls so that entry i is on screen, its top if it is taller.
func (t *transcript) reveal(rc *renderCtx, i, width, h int) {
	// Lines from the top of entry i to the bottom of the screen.
	if i > t.bot || t.follow && i == len(t.entries)-1 {
		t.bot, t.skip = i, 0
		t.follow = i == len(t.entries)-1
		return
	}
	below := 0
	for j := i; j <= t.bot; j++ {
		below += t.height(rc, j, width)
	}
	below -= t.skip
	if below <= h {
		return
	}
	t.follow = false
	hi := t.height(rc, i, width)
	if hi >= h {
		t.bot, t.skip = i, hi-h
		return
	}
	t.bot, t.skip = i, 0
	t.clampTop(rc, width, h)
}

// position says where the view is, for the status line.
func (t *transcript) position() (bot, total int, following bool) {
	return t.bot + 1, len(t.entries), t.follow
}
