package ui

import (
	"fmt"
	"strings"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/sanitize"
)

// copyLimit bounds the text /copy puts in one OSC 52 sequence, in bytes:
// many terminals refuse a payload past about 100 KB, and base64 makes 74 KB
// into 98.7 KB.
const copyLimit = 74_000

// copyCommand runs /copy: the last answer's Markdown source, or with
// "result" the selected card's result (the newest card's when none is
// selected, as the pager picks), goes to the terminal's clipboard with
// OSC 52. The terminal decides whether to take it, and says nothing back:
// a notice says what was sent and what the terminal must allow.
//
// The text is the raw text, not its rendering, less what could act when it
// is pasted into a terminal: control characters other than newline and
// tab (ESC first) and invalid UTF-8 are left out (sanitize.Strip), and the
// notice counts them. Past copyLimit only the beginning is copied.
//
// The sequence is written with tea.Raw rather than tea.SetClipboard so that
// inside tmux it can go twice: as it is, for tmux's own clipboard (which
// takes it with set-clipboard on and passes it on), and wrapped for
// passthrough to the outer terminal (with allow-passthrough on), as the
// notifications are.
func (m *Model) copyCommand(arg string) tea.Cmd {
	var text, what string
	switch arg {
	case "":
		e := m.lastAnswer()
		if e == nil {
			m.flash = "nothing to copy: the model has not answered yet"
			return nil
		}
		text, what = e.text, "the last answer"
	case "result":
		c := m.tr.lastCard()
		if c == nil || !c.ranResult() {
			m.flash = "no result to copy: f2 selects a card that ran"
			return nil
		}
		text, what = host.ResultText(c.result), "the result of "+sanitize.Name(c.ref())
	default:
		m.notice(levelWarn, "usage: /copy copies the last answer; /copy result the selected card's result (f2 selects one)")
		return nil
	}
	term := m.cfg.Notify.Terminal()
	if term.Dumb {
		m.flash = "nothing copied: this terminal (TERM=dumb) takes no clipboard writes; /export writes the chat to a file"
		return nil
	}
	text, left := sanitize.Strip(text)
	all := len(text)
	if all > copyLimit {
		cut := copyLimit
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
	}
	lines := strings.Count(strings.TrimRight(text, "\n"), "\n") + 1
	seq := ansi.SetSystemClipboard(text)
	if term.Tmux {
		seq += term.Passthrough(seq)
	}
	msg := fmt.Sprintf("copied %s (%d line%s, %s) with OSC 52", what, lines, plural(lines), humanBytes(len(text)))
	if len(text) < all {
		msg += fmt.Sprintf(": only its first %s of %s, as terminals refuse more (o, then s, saves a result whole)", humanBytes(len(text)), humanBytes(all))
	}
	if left > 0 {
		msg += fmt.Sprintf("; %d control character%s left out", left, plural(left))
	}
	msg += " · nothing pasted? the terminal must allow clipboard writes (in tmux: set-clipboard on)"
	m.notice(levelInfo, msg)
	return tea.Raw(seq)
}

// lastAnswer is the newest entry of the model's text, nil before any.
func (m *Model) lastAnswer() *entry {
	for i := len(m.tr.entries) - 1; i >= 0; i-- {
		if e := m.tr.entries[i]; e.kind == entryAssistant && strings.TrimSpace(e.text) != "" {
			return e
		}
	}
	return nil
}
