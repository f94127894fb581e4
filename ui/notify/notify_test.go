package notify

import (
	"strings"
	"testing"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  func(string) string
		want Terminal
	}{
		{"dumb", env("TERM", "dumb", "TERM_PROGRAM", "iTerm.app", "TMUX", "tmux-sock,1,0"), Terminal{Dumb: true}},
		{"xterm", env("TERM", "xterm-256color"), Terminal{}},
		{"nothing set", env(), Terminal{}},
		{"iTerm2", env("TERM", "xterm-256color", "TERM_PROGRAM", "iTerm.app"), Terminal{Desktop: OSC9}},
		{"iTerm2 over ssh", env("TERM", "xterm-256color", "LC_TERMINAL", "iTerm2"), Terminal{Desktop: OSC9}},
		{"WezTerm", env("TERM", "xterm-256color", "TERM_PROGRAM", "WezTerm"), Terminal{Desktop: OSC9}},
		{"kitty", env("TERM", "xterm-kitty"), Terminal{Desktop: OSC9}},
		{"ghostty", env("TERM", "xterm-ghostty", "TERM_PROGRAM", "ghostty"), Terminal{Desktop: OSC9}},
		{"GNOME Terminal", env("TERM", "xterm-256color", "VTE_VERSION", "7600"), Terminal{Desktop: OSC777}},
		{"foot", env("TERM", "foot"), Terminal{Desktop: OSC777}},
		{"foot-extra", env("TERM", "foot-extra"), Terminal{Desktop: OSC777}},
		{"tmux in kitty", env("TERM", "tmux-256color", "TERM_PROGRAM", "tmux", "TMUX", "tmux-sock,1,0", "KITTY_WINDOW_ID", "3"), Terminal{Desktop: OSC9, Tmux: true}},
		{"tmux in WezTerm", env("TERM", "screen-256color", "TMUX", "tmux-sock,1,0", "WEZTERM_PANE", "0"), Terminal{Desktop: OSC9, Tmux: true}},
		{"tmux in VTE", env("TERM", "tmux-256color", "TMUX", "tmux-sock,1,0", "VTE_VERSION", "7600"), Terminal{Desktop: OSC777, Tmux: true}},
		{"tmux elsewhere", env("TERM", "tmux-256color", "TERM_PROGRAM", "tmux", "TMUX", "tmux-sock,1,0"), Terminal{Tmux: true}},
	} {
		if got := Detect(tc.env); got != tc.want {
			t.Errorf("%s: Detect = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestWaiting: the exact bytes for each setting and kind of terminal.
func TestWaiting(t *testing.T) {
	const (
		bel    = "\a"
		osc9   = "\x1b]9;mcphost waiting for you: tasks/delete_task\a"
		osc777 = "\x1b]777;notify;mcphost;waiting for you: tasks/delete_task\a"
		tmux9  = "\x1bPtmux;\x1b\x1b]9;mcphost waiting for you: tasks/delete_task\a\x1b\\"
		tmux7  = "\x1bPtmux;\x1b\x1b]777;notify;mcphost;waiting for you: tasks/delete_task\a\x1b\\"
	)
	kitty, vte := Terminal{Desktop: OSC9}, Terminal{Desktop: OSC777}
	plain, dumb := Terminal{}, Terminal{Dumb: true}
	for _, tc := range []struct {
		name string
		mode Mode
		term Terminal
		want string
	}{
		{"both, kitty", Both, kitty, bel + osc9},
		{"both, VTE", Both, vte, bel + osc777},
		{"both, plain xterm", Both, plain, bel},
		{"both, tmux in kitty", Both, Terminal{Desktop: OSC9, Tmux: true}, bel + tmux9},
		{"both, tmux in foot", Both, Terminal{Desktop: OSC777, Tmux: true}, bel + tmux7},
		{"both, tmux in an unknown terminal", Both, Terminal{Tmux: true}, bel},
		{"bell, kitty", Bell, kitty, bel},
		{"bell, VTE", Bell, vte, bel},
		{"desktop, kitty", Desktop, kitty, osc9},
		{"desktop, VTE", Desktop, vte, osc777},
		{"desktop, plain xterm", Desktop, plain, ""},
		{"off, kitty", Off, kitty, ""},
		{"off, tmux in VTE", Off, Terminal{Desktop: OSC777, Tmux: true}, ""},
		{"both, dumb", Both, dumb, ""},
		{"bell, dumb", Bell, dumb, ""},
		{"desktop, dumb", Desktop, dumb, ""},
	} {
		if got := New(tc.mode, tc.term).Waiting(Subject("tasks", "delete_task")); got != tc.want {
			t.Errorf("%s: Waiting = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestTitle(t *testing.T) {
	n := New(Both, Terminal{})
	if got, want := n.Title(Subject("tasks", "delete_task")), "mcphost — waiting: tasks/delete_task"; got != want {
		t.Errorf("Title = %q, want %q", got, want)
	}
	if got := n.IdleTitle(); got != "mcphost" {
		t.Errorf("IdleTitle = %q, want mcphost", got)
	}
	for _, mode := range []Mode{Both, Bell, Desktop} {
		if got := New(mode, Terminal{}).Title("fs/read"); got != "mcphost — waiting: fs/read" {
			t.Errorf("%v: Title = %q", mode, got)
		}
	}
	if got := New(Off, Terminal{Desktop: OSC9}).Title("fs/read"); got != "mcphost" {
		t.Errorf("off: Title = %q, want the idle title", got)
	}
	d := New(Both, Terminal{Dumb: true})
	if d.Title("fs/read") != "" || d.IdleTitle() != "" {
		t.Errorf("a dumb terminal got a title: %q, %q", d.Title("fs/read"), d.IdleTitle())
	}
}

// A server's names cannot end the sequence, start another, or pass for
// other letters: the title and the notification hold printable ASCII only.
func TestHostileNames(t *testing.T) {
	subject := Subject("evil", "wipe\x1b]0;pwned\a\x07\u202e\x9b2J\nреаd;x")
	for _, want := range []string{`\x1b`, `\x07`, `\u202e`, `\x9b`, `\x0a`, `\u0440`} {
		if !strings.Contains(subject, want) {
			t.Errorf("subject %q does not show %s", subject, want)
		}
	}
	n := New(Both, Terminal{Desktop: OSC777, Tmux: true})
	title := n.Title(subject)
	if !strings.HasPrefix(title, "mcphost — waiting: evil/wipe") {
		t.Errorf("title = %q", title)
	}
	checkPrintable(t, "title", strings.TrimPrefix(title, "mcphost — waiting: "))
	w := n.Waiting(subject)
	inner := strings.TrimSuffix(strings.TrimPrefix(w, "\a\x1bPtmux;\x1b\x1b]777;notify;mcphost;"), "\a\x1b\\")
	if inner == w {
		t.Fatalf("notification not framed as expected: %q", w)
	}
	checkPrintable(t, "notification", inner)
	if strings.Contains(inner, ";") {
		t.Errorf("the OSC 777 body holds a ';', which would start another field: %q", inner)
	}

	// a caller that passes raw text is held to printable ASCII too
	raw := New(Both, Terminal{Desktop: OSC9}).Waiting("a\x1b\\b\a" + strings.Repeat("x", 500))
	body := strings.TrimSuffix(strings.TrimPrefix(raw, "\a\x1b]9;mcphost waiting for you: "), "\a")
	if strings.ContainsAny(body, "\x1b\a") || len(body) > maxSubject+len("…") {
		t.Errorf("raw subject reached the sequence: %q", raw)
	}
}

func checkPrintable(t *testing.T, what, s string) {
	t.Helper()
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			t.Fatalf("%s has byte %#x at %d: %q", what, s[i], i, s)
		}
	}
}

func TestParseMode(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Mode
	}{{"", Both}, {"bell", Bell}, {"desktop", Desktop}, {"off", Off}} {
		if got, err := ParseMode(tc.in); err != nil || got != tc.want {
			t.Errorf("ParseMode(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	_, err := ParseMode("loud\x1b")
	if err == nil || !strings.Contains(err.Error(), `expected one of bell, desktop, off`) || strings.Contains(err.Error(), "\x1b") {
		t.Errorf("ParseMode(bad) error = %v", err)
	}
}
