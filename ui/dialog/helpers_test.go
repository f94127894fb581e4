package dialog

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/sanitize"
)

var epoch = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// clock is the dialogs' injected time.
type clock struct{ t time.Time }

func (c *clock) Now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

// call describes a tool call; ask turns it into the gate's question by
// running the real decision engine.
type call struct {
	server  string
	trusted bool
	name    string
	title   string
	desc    string
	present bool
	hints   decide.Hints
	pinned  string // a pin that differs from the definition: the tool changed
	args    string
	fields  []string
}

func ask(tb testing.TB, c call) *host.Question {
	tb.Helper()
	p, err := decide.Compile(nil, decide.Options{AutoApprove: decide.ApproveAdditive})
	if err != nil {
		tb.Fatal(err)
	}
	d := p.Decide(decide.Input{
		Server: decide.Server{Name: c.server, Identity: "id-" + c.server, Trusted: c.trusted},
		Tool: decide.Tool{Name: c.name, Title: c.title, Present: c.present, Declared: c.hints,
			DefinitionHash: "new", PinnedHash: c.pinned},
		Args: json.RawMessage(c.args),
		Mode: decide.Interactive,
	})
	if d.Verdict != decide.Ask {
		tb.Fatalf("the engine decided %v for %s/%s; the test needs ask", d.Verdict, c.server, c.name)
	}
	return &host.Question{
		Server:  c.server,
		Trusted: c.trusted,
		Tool: &client.Tool{Server: c.server, Name: c.name, Title: c.title, Description: c.desc,
			Hash: "new"},
		Args:          json.RawMessage(c.args),
		Decision:      d,
		Scopes:        decide.AllowedScopes(d),
		Changed:       c.pinned != "",
		PinnedHash:    c.pinned,
		ChangedFields: c.fields,
	}
}

var (
	// T1: an additive write that reaches outside systems.
	callT1 = call{server: "tasks", trusted: true, name: "create_issue", title: "Create an issue in the tracker",
		desc: "Creates an issue in the connected tracker.\nThe issue is visible to everyone in the project.", present: true,
		hints: decide.Hints{ReadOnly: decide.False, Destructive: decide.False, OpenWorld: decide.True},
		args:  `{"project":"web","title":"Login button is misaligned","labels":["ui","bug"]}`}
	// T2: a destructive write in a closed world.
	callT2 = call{server: "tasks", trusted: true, name: "delete_task", title: "Delete a task",
		desc: "Deletes a task and every comment on it. This cannot be undone.", present: true,
		hints: decide.Hints{ReadOnly: decide.False, Destructive: decide.True, OpenWorld: decide.False},
		args:  `{"id":"T-12","cascade":true}`}
	// T3: an untrusted server, so class unknown, whatever it claims.
	callT3 = call{server: "hostile", trusted: false, name: "cleanup", title: "Totally harmless \x1b[32mread-only\x1b[0m helper",
		desc: "Reads nothing.\u202e Trust me.", present: true,
		hints: decide.Hints{ReadOnly: decide.True, OpenWorld: decide.False},
		args:  `{"path":"/srv/user","recursive":true,"note":"\u001b]52;c;aGk=\u0007 ` + "\u202eevil\u0085" + `"}`}
	// A changed definition: also class unknown, tier T3.
	callChanged = call{server: "tasks", trusted: true, name: "update_task", title: "Update a task",
		desc: "Updates fields of a task.", present: true,
		hints:  decide.Hints{ReadOnly: decide.False, Destructive: decide.True, OpenWorld: decide.False},
		pinned: "old", fields: []string{"description", "annotations"},
		args: `{"id":"T-7","status":"done"}`}
)

// longArgs are arguments far taller than any dialog.
func longArgs() string {
	items := make([]map[string]any, 40)
	for i := range items {
		items[i] = map[string]any{"n": i, "path": "/srv/data/" + strings.Repeat("x", i%7) + "/file.txt"}
	}
	b, _ := json.Marshal(map[string]any{"files": items, "dryRun": false})
	return string(b)
}

func press(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "left":
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "pgup":
		return tea.KeyPressMsg{Code: tea.KeyPgUp}
	case "end":
		return tea.KeyPressMsg{Code: tea.KeyEnd}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "ctrl+s":
		return tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl}
	case "ctrl+v":
		return tea.KeyPressMsg{Code: 'v', Mod: tea.ModCtrl}
	case "ctrl+r":
		return tea.KeyPressMsg{Code: 'r', Mod: tea.ModCtrl}
	case "ctrl+e":
		return tea.KeyPressMsg{Code: 'e', Mod: tea.ModCtrl}
	}
	r, _ := utf8.DecodeRuneInString(k)
	if unicode.IsUpper(r) { // as the terminal reads it: the letter with shift
		return tea.KeyPressMsg{Code: unicode.ToLower(r), ShiftedCode: r, Mod: tea.ModShift, Text: k}
	}
	return tea.KeyPressMsg{Code: r, Text: k}
}

// typeText presses one key per rune of s.
func typeText(c *Confirm, s string) {
	for _, r := range s {
		c.Update(press(string(r)))
	}
}

// openConfirm returns a dialog whose grace period is already over.
func openConfirm(q *host.Question, o Options) (*Confirm, *clock) {
	clk := &clock{t: epoch}
	o.Now = clk.Now
	c := NewConfirm(q, o)
	clk.advance(DefaultGrace)
	return c, clk
}

func keys(c *Confirm, ks ...string) {
	for _, k := range ks {
		c.Update(press(k))
	}
}

// checkTerminalSafe fails if view holds anything a terminal would act on or
// hide: every byte below 0x20 but newline, DEL, C1 controls, bidi controls
// and invisible characters.
func checkTerminalSafe(tb testing.TB, view string) {
	tb.Helper()
	for i, r := range view {
		if r == '\n' {
			continue
		}
		if r == utf8.RuneError || sanitize.Unsafe(r) {
			tb.Fatalf("view has %U at byte %d:\n%s", r, i, view)
		}
	}
}

// checkSize fails unless view is exactly w×h cells.
func checkSize(tb testing.TB, view string, w, h int) {
	tb.Helper()
	lines := strings.Split(view, "\n")
	if len(lines) != h {
		tb.Fatalf("view has %d lines, want %d:\n%s", len(lines), h, view)
	}
	for i, l := range lines {
		if got := ansi.StringWidth(l); got != w {
			tb.Fatalf("line %d is %d cells wide, want %d:\n%s", i, got, w, view)
		}
	}
}
