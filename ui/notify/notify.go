// Package notify tells a person in another window that mcphost waits for
// them: a confirmation, a server's question, a consent or a sampling request
// is on screen. It rings the terminal bell, sends a desktop notification in
// the terminals that show one for an escape sequence, and names what waits
// in the window title.
//
// It only builds bytes; the caller writes them (in the TUI, with tea.Raw,
// and the title through the view's WindowTitle). What the terminal is comes
// from the environment, read once with Detect from an injected getenv.
//
// Desktop notifications:
//   - OSC 9 (ESC ] 9 ; text BEL): iTerm2, WezTerm, kitty, Ghostty.
//   - OSC 777 (ESC ] 777 ; notify ; title ; body BEL): VTE terminals (GNOME
//     Terminal, Tilix, …) and foot.
//   - Any other terminal gets the bell alone: an unknown OSC may be drawn
//     as text by a terminal that does not parse it.
//
// Inside tmux the desktop sequence is wrapped for passthrough (ESC P tmux;
// … ESC \, every ESC inside doubled), which tmux forwards to the outer
// terminal when its allow-passthrough option is on; the bell and the title
// are tmux's own business and are not wrapped. TERM=dumb gets nothing at
// all: no bell, no sequence, no title.
package notify

import (
	"fmt"
	"strings"

	"github.com/mcphost/mcphost/sanitize"
)

// Mode is what a person chose to be told with ("notify" in their config).
// The zero value is the default: bell and desktop notification.
type Mode uint8

const (
	Both    Mode = iota // the bell and a desktop notification
	Bell                // the bell only
	Desktop             // a desktop notification only
	Off                 // nothing: no bell, no notification, no waiting title
)

// Modes lists the values the "notify" setting accepts.
var Modes = []string{"bell", "desktop", "off"}

// ParseMode reads the "notify" setting: "bell", "desktop" or "off"; ""
// selects Both.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "":
		return Both, nil
	case "bell":
		return Bell, nil
	case "desktop":
		return Desktop, nil
	case "off":
		return Off, nil
	}
	return Both, fmt.Errorf("invalid notify setting \"%s\"; expected one of %s (or leave it out for both bell and desktop)",
		sanitize.Line(s), strings.Join(Modes, ", "))
}

// String returns the setting's word; Both is "bell+desktop".
func (m Mode) String() string {
	switch m {
	case Bell:
		return "bell"
	case Desktop:
		return "desktop"
	case Off:
		return "off"
	}
	return "bell+desktop"
}

// Protocol is how a terminal shows a desktop notification.
type Protocol uint8

const (
	None   Protocol = iota // no desktop notification known
	OSC9                   // iTerm2's ESC ] 9 ; text BEL
	OSC777                 // VTE's ESC ] 777 ; notify ; title ; body BEL
)

// Terminal is what Detect learned about the terminal.
type Terminal struct {
	// Dumb is TERM=dumb: nothing is emitted, not even a title.
	Dumb bool
	// Desktop is the notification protocol the terminal speaks.
	Desktop Protocol
	// Tmux is set inside tmux: desktop sequences are wrapped for
	// passthrough to the terminal tmux runs in.
	Tmux bool
}

// Detect reads the terminal's kind from the environment. Inside tmux,
// TERM and TERM_PROGRAM name tmux, so the outer terminal is recognised by
// the variables it leaves in the environment of the shell that started
// tmux (KITTY_WINDOW_ID, WEZTERM_PANE, ITERM_SESSION_ID, VTE_VERSION, …).
func Detect(getenv func(string) string) Terminal {
	term := getenv("TERM")
	if term == "dumb" {
		return Terminal{Dumb: true}
	}
	t := Terminal{Tmux: getenv("TMUX") != ""}
	prog := getenv("TERM_PROGRAM")
	switch {
	case prog == "iTerm.app" || prog == "WezTerm" || prog == "ghostty",
		getenv("LC_TERMINAL") == "iTerm2", getenv("ITERM_SESSION_ID") != "",
		getenv("WEZTERM_PANE") != "", getenv("KITTY_WINDOW_ID") != "",
		getenv("GHOSTTY_RESOURCES_DIR") != "",
		term == "xterm-kitty" || term == "xterm-ghostty" || term == "wezterm":
		t.Desktop = OSC9
	case getenv("VTE_VERSION") != "", term == "foot" || strings.HasPrefix(term, "foot-"):
		t.Desktop = OSC777
	}
	return t
}

// Passthrough returns seq as tmux forwards it to the terminal it runs in,
// when its allow-passthrough option is on: wrapped in ESC P tmux; … ESC \,
// every ESC inside doubled. Outside tmux it returns seq unchanged.
func (t Terminal) Passthrough(seq string) string {
	if !t.Tmux {
		return seq
	}
	return "\x1bPtmux;" + strings.ReplaceAll(seq, "\x1b", "\x1b\x1b") + "\x1b\\"
}

// Notifier builds what is written when a question starts to wait.
type Notifier struct {
	mode Mode
	term Terminal
}

// New returns a notifier for the person's mode and their terminal.
func New(mode Mode, t Terminal) Notifier { return Notifier{mode: mode, term: t} }

// Terminal returns the terminal the notifier was made for.
func (n Notifier) Terminal() Terminal { return n.term }

// maxSubject bounds what of a subject reaches the title and a
// notification: a server chooses its tool names.
const maxSubject = 96

// Subject names what waits: "SERVER/TOOL", or "SERVER" without a tool, each
// part shown as sanitize.Name shows it, so an escape in a name is drawn as
// text and a look-alike letter as its code.
func Subject(server, tool string) string {
	s := sanitize.Name(server)
	if tool != "" {
		s += "/" + sanitize.Name(tool)
	}
	return s
}

// Waiting returns the bytes to write once when a question about subject
// (from Subject, perhaps with words of mcphost's own after it) starts to
// wait: the bell and the desktop notification, as the mode and the
// terminal allow. It is "" when the mode is Off or the terminal dumb.
func (n Notifier) Waiting(subject string) string {
	if n.term.Dumb {
		return ""
	}
	var b strings.Builder
	if n.mode == Both || n.mode == Bell {
		b.WriteByte('\a')
	}
	if n.mode == Both || n.mode == Desktop {
		body := "waiting for you: " + printable(subject)
		var seq string
		switch n.term.Desktop {
		case OSC9:
			seq = "\x1b]9;mcphost " + body + "\a"
		case OSC777:
			seq = "\x1b]777;notify;mcphost;" + strings.ReplaceAll(body, ";", ",") + "\a"
		}
		if seq != "" {
			seq = n.term.Passthrough(seq)
		}
		b.WriteString(seq)
	}
	return b.String()
}

// Title returns the window title while a question about subject waits:
// "mcphost — waiting: SUBJECT"; the idle title when the mode is Off, and
// "" for a dumb terminal.
func (n Notifier) Title(subject string) string {
	if n.term.Dumb || n.mode == Off {
		return n.IdleTitle()
	}
	return "mcphost — waiting: " + printable(subject)
}

// IdleTitle returns the window title while nothing waits: "mcphost"; ""
// for a dumb terminal.
func (n Notifier) IdleTitle() string {
	if n.term.Dumb {
		return ""
	}
	return "mcphost"
}

// printable keeps s to printable ASCII, at most maxSubject bytes. A subject
// from Subject is printable ASCII already; this holds the line for any
// other caller, since a title or a notification is an escape sequence that
// a control character would end or extend.
func printable(s string) string {
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < maxSubject; i++ {
		if c := s[i]; c >= 0x20 && c < 0x7f {
			b.WriteByte(c)
		} else {
			b.WriteByte('?')
		}
	}
	if len(s) > maxSubject {
		return b.String() + "…"
	}
	return b.String()
}
