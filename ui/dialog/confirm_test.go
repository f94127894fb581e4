package dialog

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/google/go-cmp/cmp"

	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
)

var sizes = []struct{ w, h int }{{80, 24}, {140, 40}}

func TestConfirmGolden(t *testing.T) {
	long := callT2
	long.args = longArgs()
	cases := []struct {
		name  string
		call  call
		o     Options
		keys  []string // pressed after the grace period
		after func(*Confirm)
	}{
		{name: "t1_additive_open_world", call: callT1},
		{name: "t2_destructive", call: callT2},
		{name: "t3_untrusted", call: callT3},
		{name: "long_args_scrolled", call: long, keys: []string{"pgdown", "down", "down"}},
		{name: "changed_definition", call: callChanged},
		{name: "two_of_three", call: callT1, o: Options{Position: 2, Of: 3}},
		{name: "t3_typing", call: callT3, keys: []string{"tab", "c", "l", "e", "a", "n", "enter"}},
		{name: "t3_pasted", call: callT3, keys: []string{"c", "l"}, after: func(c *Confirm) { c.Update(tea.PasteMsg{Content: "eanup"}) }},
		{name: "reason", call: callT2, keys: []string{"r", "n", "o", "t", " ", "n", "o", "w"}},
		{name: "edit_invalid", call: callT2, keys: []string{"e", "x", "ctrl+s"}},
		{name: "nocolor", call: callT2, o: Options{NoColor: true}},
	}
	for _, tc := range cases {
		for _, sz := range sizes {
			t.Run(fmt.Sprintf("%s_%dx%d", tc.name, sz.w, sz.h), func(t *testing.T) {
				o := tc.o
				o.Dark = !o.NoColor
				o.Width, o.Height = sz.w, sz.h
				c, _ := openConfirm(ask(t, tc.call), o)
				keys(c, tc.keys...)
				if tc.after != nil {
					tc.after(c)
				}
				view := c.View()
				if o.NoColor && strings.Contains(view, "\x1b") {
					t.Errorf("a NoColor view has escape sequences:\n%q", view)
				}
				plain := ansi.Strip(view)
				checkSize(t, plain, sz.w, sz.h)
				checkTerminalSafe(t, plain)
				golden.RequireEqual(t, []byte(plain))
			})
		}
	}
}

// The headline is the config name and the raw tool name; a title never
// stands in for it, and the server's words are escaped, never raw.
func TestConfirmHeadline(t *testing.T) {
	for _, sz := range sizes {
		c, _ := openConfirm(ask(t, callT3), Options{Width: sz.w, Height: sz.h, NoColor: true})
		view := c.View()
		for _, want := range []string{
			"hostile/cleanup",
			`Server's title: "Totally harmless \x1b[32mread-only`,
			"Untrusted server",
			"[UNKNOWN · T3]",
			"This server is not trusted",
		} {
			if !strings.Contains(view, want) {
				t.Errorf("%dx%d: view lacks %q:\n%s", sz.w, sz.h, want, view)
			}
		}
		checkTerminalSafe(t, view)
	}
}

func TestConfirmChangedFields(t *testing.T) {
	c, _ := openConfirm(ask(t, callChanged), Options{NoColor: true, Width: 140, Height: 40})
	view := c.View()
	for _, want := range []string{"definition changed", "What changed: description, annotations", "[UNKNOWN · T3]"} {
		if !strings.Contains(view, want) {
			t.Errorf("view lacks %q:\n%s", want, view)
		}
	}
	noFields := callChanged
	noFields.fields = nil
	c, _ = openConfirm(ask(t, noFields), Options{NoColor: true, Width: 140, Height: 40})
	if view := c.View(); !strings.Contains(view, "definition changed") || strings.Contains(view, "What changed") {
		t.Errorf("without fields the view must say the definition changed and list nothing:\n%s", view)
	}
}

func TestConfirmKeys(t *testing.T) {
	once := host.Answer{Approve: true, Scope: decide.ScopeOnce}
	cases := []struct {
		name string
		call call
		keys []string
		want host.Answer
	}{
		{"y allows once", callT1, []string{"y"}, once},
		{"a allows these args", callT1, []string{"a"}, host.Answer{Approve: true, Scope: decide.ScopeArgs}},
		{"s allows the session", callT1, []string{"s"}, host.Answer{Approve: true, Scope: decide.ScopeSession}},
		{"A always allows", callT1, []string{"A"}, host.Answer{Approve: true, Scope: decide.ScopeAlways}},
		{"n denies", callT1, []string{"n"}, host.Answer{}},
		{"esc denies", callT1, []string{"esc"}, host.Answer{}},
		{"T1 enter allows once", callT1, []string{"enter"}, once},
		{"T1 tab enter allows args", callT1, []string{"tab", "enter"}, host.Answer{Approve: true, Scope: decide.ScopeArgs}},
		{"T1 left wraps to deny", callT1, []string{"left", "enter"}, host.Answer{}},
		{"T2 enter denies", callT2, []string{"enter"}, host.Answer{}},
		{"T2 tab wraps to once", callT2, []string{"tab", "enter"}, once},
		{"T2 shift+tab enter allows always", callT2, []string{"shift+tab", "enter"}, host.Answer{Approve: true, Scope: decide.ScopeAlways}},
		{"T2 y allows once", callT2, []string{"y"}, once},
		{"T3 esc denies", callT3, []string{"esc"}, host.Answer{}},
		{"T3 typed name enter allows once", callT3, []string{"c", "l", "e", "a", "n", "u", "p", "enter"}, once},
		{"T3 tab picks these args", callT3, []string{"tab", "c", "l", "e", "a", "n", "u", "p", "enter"}, host.Answer{Approve: true, Scope: decide.ScopeArgs}},
		{"T3 left wraps to the session", callT3, []string{"left", "c", "l", "e", "a", "n", "u", "p", "enter"}, host.Answer{Approve: true, Scope: decide.ScopeSession}},
		{"T3 right right picks the session", callT3, []string{"right", "c", "right", "l", "e", "a", "n", "u", "p", "enter"}, host.Answer{Approve: true, Scope: decide.ScopeSession}},
		{"T3 typing then esc denies", callT3, []string{"c", "l", "e", "esc"}, host.Answer{}},
		{"T3 ctrl+r enter denies without reason", callT3, []string{"ctrl+r", "enter"}, host.Answer{}},
		{"T3 ctrl+e esc returns to the name", callT3, []string{"ctrl+e", "esc", "c", "l", "e", "a", "n", "u", "p", "enter"}, once},
		{"scrolling then n", callT2, []string{"down", "pgdown", "pgup", "up", "n"}, host.Answer{}},
		{"r enter denies without reason", callT2, []string{"r", "enter"}, host.Answer{}},
		{"r esc returns, then y", callT2, []string{"r", "x", "esc", "y"}, once},
		{"e esc returns, then y", callT2, []string{"e", "esc", "y"}, once},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := openConfirm(ask(t, tc.call), Options{})
			for i, k := range tc.keys {
				if _, done := c.Result(); done {
					t.Fatalf("decided before key %d (%q)", i, k)
				}
				c.Update(press(k))
			}
			got, done := c.Result()
			if !done {
				t.Fatalf("no decision after %q", tc.keys)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			// once decided, nothing changes it
			c.Update(press("y"))
			c.Update(press("n"))
			if again, _ := c.Result(); !cmp.Equal(again, got) {
				t.Errorf("answer changed after the decision: %+v", again)
			}
		})
	}
}

// Only scopes the gate offers are offered, and never "always" at T3.
func TestConfirmScopes(t *testing.T) {
	q := ask(t, callT3)
	q.Scopes = append(q.Scopes, decide.ScopeAlways) // even if the gate offered it
	c, _ := openConfirm(q, Options{NoColor: true})
	if c.KeyMap().Always.Enabled() {
		t.Error("the always key is enabled at T3")
	}
	view := c.View()
	if strings.Contains(view, "Always") || strings.Contains(view, "A always") {
		t.Errorf("T3 view offers always:\n%s", view)
	}
	keys(c, "A", "A", "enter")
	if a, done := c.Result(); done {
		t.Errorf("A then enter at T3 gave %+v; want the letters in the name field and no answer", a)
	}
	if got := string(c.typed); got != "AA" {
		t.Errorf("A A at T3 typed %q, want %q", got, "AA")
	}
	for range 4 {
		keys(c, "tab") // the scopes cycle; always is not among them
		if c.scope == decide.ScopeAlways {
			t.Fatal("tab reached always at T3")
		}
	}

	q = ask(t, callT1)
	q.Scopes = []decide.Scope{decide.ScopeOnce}
	c, _ = openConfirm(q, Options{NoColor: true})
	keys(c, "A", "s", "a")
	if _, done := c.Result(); done {
		t.Fatal("a scope the gate did not offer decided the dialog")
	}
	if view := c.View(); strings.Contains(view, "This session") || strings.Contains(view, "These args") {
		t.Errorf("view offers scopes the gate did not:\n%s", view)
	}
	keys(c, "y")
	if a, done := c.Result(); !done || !cmp.Equal(a, host.Answer{Approve: true, Scope: decide.ScopeOnce}) {
		t.Errorf("y gave %+v, %v", a, done)
	}

	q.Scopes = nil
	c, _ = openConfirm(q, Options{NoColor: true})
	keys(c, "y", "enter")
	if a, done := c.Result(); !done || a.Approve {
		t.Errorf("with no scopes, y then enter gave %+v, %v; want a denial", a, done)
	}
}

func TestConfirmDenyWithReason(t *testing.T) {
	c, _ := openConfirm(ask(t, callT2), Options{})
	keys(c, "r")
	typeText(c, "use the archive tool")
	c.Update(tea.PasteMsg{Content: " and also approve"})
	keys(c, "y") // a letter in the field, not an approval
	if _, done := c.Result(); done {
		t.Fatal("decided while typing a reason")
	}
	keys(c, "enter")
	a, done := c.Result()
	want := host.Answer{Reason: "use the archive tooly"}
	if !done || !cmp.Equal(a, want) {
		t.Errorf("got %+v, %v; want %+v", a, done, want)
	}
}

func TestConfirmEdit(t *testing.T) {
	c, _ := openConfirm(ask(t, callT2), Options{Width: 80, Height: 24})
	keys(c, "e")
	if !strings.Contains(ansi.Strip(c.View()), "Edit the arguments") {
		t.Fatalf("e did not open the editor:\n%s", ansi.Strip(c.View()))
	}

	// invalid JSON: an error, and the dialog stays
	keys(c, "x", "ctrl+s")
	if _, done := c.Result(); done {
		t.Fatal("invalid JSON was accepted")
	}
	if v := ansi.Strip(c.View()); !strings.Contains(v, "Not valid JSON (line 1, column 1)") {
		t.Errorf("no error for invalid JSON:\n%s", v)
	}

	// unchanged: refused, so an edit cannot loop back to the same question
	keys(c, "backspace", "ctrl+s")
	if _, done := c.Result(); done {
		t.Fatal("unchanged arguments were returned as an edit")
	}
	if v := ansi.Strip(c.View()); !strings.Contains(v, "did not change") {
		t.Errorf("no hint for unchanged arguments:\n%s", v)
	}

	// a real edit: the id line gets another member
	keys(c, "down", "down", "end")
	typeText(c, `,"force":true`)
	c.Update(tea.PasteMsg{Content: `,"evil":1`})
	keys(c, "ctrl+s")
	a, done := c.Result()
	if !done {
		t.Fatalf("a valid edit was not returned:\n%s", ansi.Strip(c.View()))
	}
	want := host.Answer{Approve: true, Scope: decide.ScopeOnce,
		Args: json.RawMessage(`{"id":"T-12","cascade":true,"force":true}`)}
	if !cmp.Equal(a, want) {
		t.Errorf("got %+v (args %s), want %+v (args %s)", a, a.Args, want, want.Args)
	}
}

func TestConfirmEditNotAnObject(t *testing.T) {
	q := ask(t, callT2)
	q.Args = json.RawMessage(`[1]`)
	c, _ := openConfirm(q, Options{})
	keys(c, "e", "ctrl+s")
	if _, done := c.Result(); done {
		t.Fatal("an array was accepted as arguments")
	}
	if v := ansi.Strip(c.View()); !strings.Contains(v, "must be a JSON object") {
		t.Errorf("no error for an array:\n%s", v)
	}
}

// A T3 call cannot be approved by any single key, by enter, or by pasting
// the name; only by typing it.
func TestConfirmT3NeedsTypedName(t *testing.T) {
	q := ask(t, callT3)
	if q.Decision.Tier != decide.T3 {
		t.Fatalf("fixture tier %v, want T3", q.Decision.Tier)
	}
	for _, k := range []string{"y", "a", "s", "A", "n", "r", "e", "enter", "tab", "right", "left", "ctrl+s"} {
		c, _ := openConfirm(q, Options{})
		keys(c, k)
		if a, done := c.Result(); done {
			t.Errorf("key %q alone decided a T3 call: %+v", k, a)
		}
		keys(c, "enter")
		if a, done := c.Result(); done {
			t.Errorf("key %q then enter decided a T3 call: %+v", k, a)
		}
	}

	c, _ := openConfirm(q, Options{})
	keys(c, "tab", "tab") // session
	for _, m := range []tea.Msg{tea.PasteMsg{Content: "cleanup"}, tea.PasteStartMsg{},
		tea.KeyPressMsg{Code: tea.KeyExtended, Text: "cleanup"}} { // the last: a paste without bracketed paste
		c.hint = ""
		c.Update(m)
		if len(c.typed) != 0 {
			t.Fatalf("%#v put %q into the name field", m, string(c.typed))
		}
		if _, ok := m.(tea.PasteStartMsg); ok {
			continue
		}
		if v := ansi.Strip(c.View()); !strings.Contains(v, "pasted text does not count: type it") {
			t.Errorf("no word about %#v:\n%s", m, v)
		}
	}
	keys(c, "enter")
	if a, done := c.Result(); done {
		t.Fatalf("pasting the name decided the dialog: %+v", a)
	}
	if v := ansi.Strip(c.View()); !strings.Contains(v, "Type cleanup to allow this call") {
		t.Errorf("no hint after enter on an empty field:\n%s", v)
	}
	typeText(c, "cleanuq")
	keys(c, "backspace")
	typeText(c, "p")
	if _, done := c.Result(); done {
		t.Fatal("decided before enter")
	}
	keys(c, "enter")
	a, done := c.Result()
	if want := (host.Answer{Approve: true, Scope: decide.ScopeSession}); !done || !cmp.Equal(a, want) {
		t.Errorf("typing the name gave %+v, %v; want %+v", a, done, want)
	}
}

// TestConfirmT3TypingNeverFiresButtons: typing the name straight away, letter
// by letter, as "type the tool's name" invites, puts every letter into the
// field: e never opens the editor, r never asks for a deny reason, n never
// denies, y/a/s never approve.
func TestConfirmT3TypingNeverFiresButtons(t *testing.T) {
	for _, name := range []string{"delete_task", "list_directory", "read-file/v2.x", "Run_0-9.sh", "yasnre"} {
		t.Run(name, func(t *testing.T) {
			cl := callT3
			cl.name = name
			c, _ := openConfirm(ask(t, cl), Options{NoColor: true})
			for i, r := range name {
				c.Update(press(string(r)))
				if a, done := c.Result(); done {
					t.Fatalf("%q decided the dialog after %q: %+v", r, name[:i+1], a)
				}
				if c.mode != modeTyped {
					t.Fatalf("%q left the name field (mode %d) after %q", r, c.mode, name[:i+1])
				}
				if got := string(c.typed); got != name[:i+1] {
					t.Fatalf("field holds %q after typing %q", got, name[:i+1])
				}
				if v := c.View(); strings.Contains(v, "Edit the arguments") || strings.Contains(v, "tell the model why") {
					t.Fatalf("%q opened a field of its own after %q:\n%s", r, name[:i+1], v)
				}
			}
			keys(c, "enter")
			if a, done := c.Result(); !done || !cmp.Equal(a, host.Answer{Approve: true, Scope: decide.ScopeOnce}) {
				t.Errorf("typing %q and enter gave %+v, %v; want allow once", name, a, done)
			}
		})
	}
}

// Enter approves only when the field holds exactly the name; otherwise it
// says what is missing or wrong and the dialog stays.
func TestConfirmT3EnterOnlyOnExactName(t *testing.T) {
	for _, tc := range []struct{ typed, hint string }{
		{"", "Type delete_task to allow this call"},
		{"delete_tas", `Not yet: "k" is still missing (1 more of 11 characters).`},
		{"del", `Not yet: "ete_task" is still missing`},
		{"delete_taskk", `Too long: "k" comes after delete_task`},
		{"delete_task ", `Too long: " " comes after delete_task`},
		{"Delete_task", "That is not delete_task: it differs from character 1 on"},
		{"delete-task", "That is not delete_task: it differs from character 7 on"},
	} {
		cl := callT3
		cl.name = "delete_task"
		c, _ := openConfirm(ask(t, cl), Options{NoColor: true, Width: 140, Height: 40})
		typeText(c, tc.typed)
		keys(c, "enter")
		if a, done := c.Result(); done {
			t.Errorf("%q then enter decided the dialog: %+v", tc.typed, a)
			continue
		}
		if v := c.View(); !strings.Contains(v, tc.hint) {
			t.Errorf("%q then enter: the view lacks %q:\n%s", tc.typed, tc.hint, v)
		}
	}
}

func TestConfirmT3Word(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"cleanup", "cleanup"},
		{"rm", ApproveWord},
		{"wipe\x1b[2Jdisk", ApproveWord},
		{"dеlete", ApproveWord}, // Cyrillic е
		{"delete all", ApproveWord},
		{strings.Repeat("x", 33), ApproveWord},
	} {
		if got := typedWord(tc.name); got != tc.want {
			t.Errorf("typedWord(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}

	odd := callT3
	odd.name = "wipe\x1b[2J"
	c, _ := openConfirm(ask(t, odd), Options{NoColor: true})
	if v := c.View(); !strings.Contains(v, "type approve and press enter") {
		t.Errorf("a name with escapes must ask for %q:\n%s", ApproveWord, v)
	}
	typeText(c, "wipe")
	keys(c, "enter")
	if _, done := c.Result(); done {
		t.Fatal("a wrong word approved")
	}
	for range 4 {
		keys(c, "backspace")
	}
	typeText(c, ApproveWord)
	keys(c, "enter")
	if a, done := c.Result(); !done || !cmp.Equal(a, host.Answer{Approve: true, Scope: decide.ScopeOnce}) {
		t.Errorf("typing %q gave %+v, %v", ApproveWord, a, done)
	}
}

// Esc in the name field denies; the reason and editor fields it opens with
// ctrl+r and ctrl+e return to it with esc.
func TestConfirmT3EscDenies(t *testing.T) {
	c, _ := openConfirm(ask(t, callT3), Options{})
	keys(c, "ctrl+r", "x", "esc")
	if _, done := c.Result(); done || c.mode != modeTyped {
		t.Fatalf("esc in the reason field: done %v, mode %d; want back in the name field", done, c.mode)
	}
	keys(c, "ctrl+e", "esc")
	if _, done := c.Result(); done || c.mode != modeTyped {
		t.Fatalf("esc in the editor: done %v, mode %d; want back in the name field", done, c.mode)
	}
	keys(c, "c", "esc")
	if a, done := c.Result(); !done || a.Approve {
		t.Errorf("esc in the name field gave %+v, %v; want a denial", a, done)
	}

	// a reason typed at T3 reaches the model with every letter
	c, _ = openConfirm(ask(t, callT3), Options{})
	keys(c, "ctrl+r")
	typeText(c, "use dry run")
	keys(c, "enter")
	if a, done := c.Result(); !done || !cmp.Equal(a, host.Answer{Reason: "use dry run"}) {
		t.Errorf("ctrl+r and a reason gave %+v, %v", a, done)
	}
}

// The grace period holds at T3 too: letters typed before typing pauses are
// not put into the name field.
func TestConfirmT3Grace(t *testing.T) {
	clk := &clock{t: epoch}
	c := NewConfirm(ask(t, callT3), Options{Now: clk.Now})
	typeText(c, "cleanup")
	keys(c, "enter")
	if _, done := c.Result(); done || len(c.typed) != 0 {
		t.Fatalf("keys inside the grace period reached the field: %q (done %v)", string(c.typed), done)
	}
	clk.advance(DefaultGrace)
	typeText(c, "cleanup")
	keys(c, "enter")
	if a, done := c.Result(); !done || !a.Approve {
		t.Errorf("typing the name after the pause gave %+v, %v", a, done)
	}
}

func TestConfirmGrace(t *testing.T) {
	clk := &clock{t: epoch}
	c := NewConfirm(ask(t, callT1), Options{Now: clk.Now})
	clk.advance(100 * time.Millisecond)
	keys(c, "y")
	if _, done := c.Result(); done {
		t.Fatal("a key inside the grace period was taken")
	}
	clk.advance(DefaultGrace - time.Millisecond)
	keys(c, "y") // typing has not paused: still ignored
	if _, done := c.Result(); done {
		t.Fatal("a key while typing went on was taken")
	}
	clk.advance(DefaultGrace)
	keys(c, "y")
	if a, done := c.Result(); !done || !cmp.Equal(a, host.Answer{Approve: true, Scope: decide.ScopeOnce}) {
		t.Errorf("y after the pause gave %+v, %v", a, done)
	}

	// with no key inside it, the period simply ends
	clk = &clock{t: epoch}
	c = NewConfirm(ask(t, callT1), Options{Now: clk.Now, Grace: time.Second})
	clk.advance(999 * time.Millisecond)
	keys(c, "n")
	if _, done := c.Result(); done {
		t.Fatal("a key inside a custom grace period was taken")
	}
	clk.advance(time.Second)
	keys(c, "n")
	if _, done := c.Result(); !done {
		t.Fatal("a key after the grace period was ignored")
	}

	clk = &clock{t: epoch}
	c = NewConfirm(ask(t, callT1), Options{Now: clk.Now, Grace: -1})
	keys(c, "n")
	if _, done := c.Result(); !done {
		t.Fatal("a negative grace did not turn the period off")
	}
}

// Pastes and held (auto-repeated) keys are never answers.
func TestConfirmIgnoresPasteAndHeldKeys(t *testing.T) {
	c, _ := openConfirm(ask(t, callT1), Options{})
	for _, m := range []tea.Msg{tea.PasteMsg{Content: "y"}, tea.PasteMsg{Content: "\r"}, tea.PasteStartMsg{}, tea.PasteEndMsg{},
		tea.KeyPressMsg{Code: tea.KeyExtended, Text: "yes"}, press("ctrl+v"),
		tea.KeyPressMsg{Code: 'y', Text: "y", IsRepeat: true}, tea.KeyPressMsg{Code: tea.KeyEnter, IsRepeat: true}} {
		c.Update(m)
		if _, done := c.Result(); done {
			t.Fatalf("%#v decided the dialog", m)
		}
	}
}

func TestConfirmScroll(t *testing.T) {
	q := ask(t, callT2)
	q.Args = json.RawMessage(longArgs())
	c, _ := openConfirm(q, Options{NoColor: true})
	top := c.View()
	if !strings.Contains(top, "lines 1–") || !strings.Contains(top, "pgdn") {
		t.Fatalf("no scroll position for long arguments:\n%s", top)
	}
	keys(c, "pgdown")
	if c.View() == top {
		t.Fatal("pgdown did not scroll")
	}
	keys(c, "pgup")
	if c.View() != top {
		t.Fatal("pgup did not scroll back")
	}
	// The arguments come first in the body, then the reasons and the
	// description: their end is reached on the way to the body's.
	sawEnd := false
	for range 400 {
		keys(c, "down")
		sawEnd = sawEnd || strings.Contains(c.View(), `"n": 39`)
	}
	if v := c.View(); !sawEnd || !strings.Contains(v, "–177 of 177") {
		t.Errorf("the end of the arguments is not reachable (seen: %v):\n%s", sawEnd, v)
	}
}

func TestConfirmSizes(t *testing.T) {
	for _, call := range []call{callT1, callT2, callT3, callChanged} {
		for _, sz := range []struct{ w, h int }{{80, 24}, {140, 40}, {40, 12}, {1, 1}, {200, 60}} {
			c, _ := openConfirm(ask(t, call), Options{NoColor: true})
			c.SetSize(sz.w, sz.h)
			w, h := max(sz.w, minWidth), max(sz.h, minHeight)
			checkSize(t, c.View(), w, h)
			for _, ks := range [][]string{{"y"}, {"r"}, {"e"}} {
				c, _ := openConfirm(ask(t, call), Options{NoColor: true, Width: sz.w, Height: sz.h})
				keys(c, ks...)
				if _, done := c.Result(); !done {
					checkSize(t, ansi.Strip(c.View()), w, h)
				}
			}
		}
	}
}

func TestBadge(t *testing.T) {
	for _, tc := range []struct {
		class decide.Class
		tier  decide.Tier
		want  string
	}{
		{decide.Additive, decide.T1, "[ADDITIVE · T1]"},
		{decide.Destructive, decide.T2, "[DESTRUCTIVE · T2]"},
		{decide.Unknown, decide.T3, "[UNKNOWN · T3]"},
		{decide.Read, decide.T0, "[READ · T0]"},
	} {
		if got := Badge(tc.class, tc.tier, NewStyles(true, true)); got != tc.want {
			t.Errorf("plain Badge(%v, %v) = %q, want %q", tc.class, tc.tier, got, tc.want)
		}
		colour := Badge(tc.class, tc.tier, NewStyles(true, false))
		if want := " " + strings.Trim(tc.want, "[]") + " "; ansi.Strip(colour) != want || colour == want {
			t.Errorf("colour Badge(%v, %v) = %q, want %q styled", tc.class, tc.tier, colour, want)
		}
	}
}

// Deeply nested arguments are shown compact rather than as a wall of
// indentation.
func TestPrettyArgsDeepNesting(t *testing.T) {
	deep := strings.Repeat("[", 2000) + strings.Repeat("]", 2000)
	text, ok := prettyArgs(json.RawMessage(deep))
	if !ok || text != deep {
		t.Errorf("deep nesting shown as %d bytes (valid %v), want the compact %d bytes", len(text), ok, len(deep))
	}
	text, ok = prettyArgs(json.RawMessage(`{"a": [1, 2]}`))
	if want := "{\n  \"a\": [\n    1,\n    2\n  ]\n}"; !ok || text != want {
		t.Errorf("got %q, want %q", text, want)
	}
}

// The editor holds at most 10,000 lines; arguments it would cut are not
// offered for editing, so a cut copy can never be sent.
func TestConfirmEditTooLarge(t *testing.T) {
	q := ask(t, callT2)
	q.Args = json.RawMessage("[" + strings.Repeat("1,", 10000) + "1]")
	c, _ := openConfirm(q, Options{NoColor: true})
	keys(c, "e")
	if v := c.View(); strings.Contains(v, "Edit the arguments") || !strings.Contains(v, "too large to edit") {
		t.Fatalf("oversized arguments opened the editor:\n%s", v)
	}
	keys(c, "ctrl+s")
	if _, done := c.Result(); done {
		t.Fatal("ctrl+s outside the editor decided the dialog")
	}
	keys(c, "n")
	if a, done := c.Result(); !done || a.Approve {
		t.Errorf("n gave %+v, %v", a, done)
	}
}
