package dialog

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
)

var (
	consentStdio = ConsentRequest{
		Server:    "notes",
		Transport: "stdio",
		Command:   "npx",
		Args:      []string{"-y", "@example/notes-server", "--db", "my notes.db", "", `--name="x"`, "\x1b]0;pwned\x07"},
		Env:       map[string]string{"NOTES_TOKEN": "${NOTES_TOKEN}", "LOG_LEVEL": "debug", "ODD KEY": "a\nb"},
		Cwd:       "/srv/ana/src/notes",
		File:      "/srv/ana/src/notes/.mcp.json",
		Changed:   true,
		Vars:      []string{"NOTES_TOKEN"},
	}
	consentHTTP = ConsentRequest{
		Server:    "remote",
		Transport: "http",
		URL:       "https://mcp.example.com/v1?team=a",
		Headers:   map[string]string{"Authorization": "Bearer sk-secret-value", "X-Team": "a"},
		File:      "/srv/ana/src/notes/.mcp.json",
		Vars:      []string{"TEAM_TOKEN"},
	}
)

func openConsent(r ConsentRequest, o Options) (*Consent, *clock) {
	clk := &clock{t: epoch}
	o.Now = clk.Now
	c := NewConsent(r, o)
	clk.advance(DefaultGrace)
	return c, clk
}

func TestConsentGolden(t *testing.T) {
	cases := []struct {
		name string
		r    ConsentRequest
		keys []string
	}{
		{"stdio_changed", consentStdio, nil},
		{"http", consentHTTP, nil},
		{"stdio_scrolled", consentStdio, []string{"pgdown", "tab"}},
	}
	for _, tc := range cases {
		for _, sz := range sizes {
			t.Run(fmt.Sprintf("%s_%dx%d", tc.name, sz.w, sz.h), func(t *testing.T) {
				c, _ := openConsent(tc.r, Options{Dark: true, Width: sz.w, Height: sz.h})
				for _, k := range tc.keys {
					c.Update(press(k))
				}
				plain := ansi.Strip(c.View())
				checkSize(t, plain, sz.w, sz.h)
				checkTerminalSafe(t, plain)
				golden.RequireEqual(t, []byte(plain))
			})
		}
	}
}

func TestConsentShowsEverything(t *testing.T) {
	c, _ := openConsent(consentStdio, Options{NoColor: true, Width: 140, Height: 40})
	view := c.View()
	for _, want := range []string{
		`"npx" "-y" "@example/notes-server" "--db" "my notes.db" "" "--name=\"x\"" "\x1b]0;pwned\a"`,
		`"/srv/ana/src/notes"`,
		`NOTES_TOKEN="${NOTES_TOKEN}"`,
		`LOG_LEVEL="debug"`,
		`"ODD KEY"="a\nb"`,
		"${NOTES_TOKEN}",
		"changed since you last consented",
		`Defined in "/srv/ana/src/notes/.mcp.json"`,
	} {
		if !strings.Contains(view, want) {
			t.Errorf("view lacks %q:\n%s", want, view)
		}
	}
	checkTerminalSafe(t, view)

	c, _ = openConsent(consentHTTP, Options{NoColor: true, Width: 140, Height: 40})
	view = c.View()
	if strings.Contains(view, "sk-secret") || strings.Contains(view, "Bearer") {
		t.Errorf("a header value is shown:\n%s", view)
	}
	for _, want := range []string{"Authorization: ••••••", "X-Team: ••••••", `"https://mcp.example.com/v1?team=a"`, "${TEAM_TOKEN}"} {
		if !strings.Contains(view, want) {
			t.Errorf("view lacks %q:\n%s", want, view)
		}
	}
}

func TestConsentKeys(t *testing.T) {
	cases := []struct {
		keys []string
		want ConsentChoice
	}{
		{[]string{"t"}, ConsentTrusted},
		{[]string{"u"}, ConsentUntrusted},
		{[]string{"k"}, ConsentSkipped},
		{[]string{"esc"}, ConsentSkipped},
		{[]string{"enter"}, ConsentSkipped}, // focus starts on Skip
		{[]string{"tab", "enter"}, ConsentTrusted},
		{[]string{"left", "enter"}, ConsentUntrusted},
		{[]string{"pgdown", "down", "up", "pgup", "u"}, ConsentUntrusted},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.keys, " "), func(t *testing.T) {
			c, _ := openConsent(consentStdio, Options{})
			for _, k := range tc.keys {
				if _, done := c.Result(); done {
					t.Fatalf("decided before %q", k)
				}
				c.Update(press(k))
			}
			got, done := c.Result()
			if !done || got != tc.want {
				t.Errorf("got %v, %v; want %v", got, done, tc.want)
			}
			c.Update(press("t"))
			if again, _ := c.Result(); again != got {
				t.Errorf("choice changed after the decision: %v", again)
			}
		})
	}
	if (ConsentChoice(0)) != ConsentSkipped {
		t.Error("the zero ConsentChoice is not ConsentSkipped")
	}
}

func TestConsentGraceAndPaste(t *testing.T) {
	clk := &clock{t: epoch}
	c := NewConsent(consentStdio, Options{Now: clk.Now})
	clk.advance(300 * time.Millisecond)
	c.Update(press("t"))
	if _, done := c.Result(); done {
		t.Fatal("a key inside the grace period was taken")
	}
	clk.advance(DefaultGrace)
	c.Update(tea.PasteMsg{Content: "t"})
	if _, done := c.Result(); done {
		t.Fatal("a paste was taken")
	}
	c.Update(tea.KeyPressMsg{Code: 't', Text: "t", IsRepeat: true})
	if _, done := c.Result(); done {
		t.Fatal("a held key was taken")
	}
	c.Update(press("t"))
	if got, done := c.Result(); !done || got != ConsentTrusted {
		t.Errorf("t after the grace period gave %v, %v", got, done)
	}
}

func TestConsentSizes(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{80, 24}, {140, 40}, {30, 10}, {0, 0}} {
		c, _ := openConsent(consentStdio, Options{NoColor: true})
		c.SetSize(sz.w, sz.h)
		w, h := max(sz.w, minWidth), max(sz.h, minHeight)
		checkSize(t, c.View(), w, h)
	}
}

// TestConsentShowsResolvedCommandLine: the person reads the program that
// would run, with relative paths resolved against the project directory,
// and the words as the file writes them.
func TestConsentShowsResolvedCommandLine(t *testing.T) {
	r := ConsentRequest{
		Server: "linter", Transport: "stdio", Command: "python3", Args: []string{"linter.py", "srv"},
		CommandLine: []string{"python3", "/home/ana/repoB/linter.py", "srv"},
		Cwd:         "/home/ana/repoB", File: "/home/ana/repoB/.mcp.json",
	}
	c, _ := openConsent(r, Options{NoColor: true, Width: 140, Height: 40})
	view := ansi.Strip(c.View())
	for _, want := range []string{
		"relative paths resolved",
		`"python3" "/home/ana/repoB/linter.py" "srv"`,
		"As written in the project file",
		`"python3" "linter.py" "srv"`,
		`Working directory`,
		`"/home/ana/repoB"`,
	} {
		if !strings.Contains(view, want) {
			t.Errorf("the consent dialog does not show %s:\n%s", want, view)
		}
	}
}

// The rest of the entry is listed field by field, sanitized, so that a
// field the sections above do not cover is still in front of the person.
func TestConsentShowsTheRestOfTheEntry(t *testing.T) {
	r := consentStdio
	r.Fields = []Field{{Name: "alwaysLoad", Value: `"lint"`}, {Name: "tasks", Value: "\"auto\x1b[2J\""}}
	c, _ := openConsent(r, Options{NoColor: true, Width: 140, Height: 60})
	view := ansi.Strip(c.View())
	for _, want := range []string{"The rest of the entry (your consent covers all of it)", `alwaysLoad: "lint"`, `tasks: "auto\x1b[2J"`} {
		if !strings.Contains(view, want) {
			t.Errorf("view lacks %q:\n%s", want, view)
		}
	}
	checkTerminalSafe(t, view)
}
