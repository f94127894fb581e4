package dialog

import (
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/mcphost/mcphost/decide"
)

// TestT3NameFieldLineKeys: in the typed T3 confirmation, Ctrl-W removes
// the last word and Ctrl-U the whole line, as in a shell; what is left is
// still checked against the name.
func TestT3NameFieldLineKeys(t *testing.T) {
	c, _ := openConfirm(ask(t, callT3), Options{})
	if c.mode != modeTyped {
		t.Fatalf("the name field does not have the focus (mode %d)", c.mode)
	}
	typeText(c, "not the name")
	c.Update(tea.KeyPressMsg{Code: 'w', Mod: tea.ModCtrl})
	if got := string(c.typed); got != "not the " {
		t.Errorf("after ctrl+w: %q", got)
	}
	c.Update(tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl})
	if len(c.typed) != 0 {
		t.Errorf("after ctrl+u: %q", string(c.typed))
	}
	typeText(c, "wrong")
	c.Update(tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl})
	typeText(c, c.word)
	c.Update(press("enter"))
	if got, done := c.Result(); !done || !got.Approve || got.Scope != decide.ScopeOnce {
		t.Errorf("typing the name after ctrl+u: %+v %v", got, done)
	}
}

func TestRubOut(t *testing.T) {
	for _, tc := range []struct {
		in   string
		word bool
		want string
	}{
		{"delete_all", true, ""},
		{"a b  ", true, "a "},
		{"a b", false, ""},
		{"", true, ""},
	} {
		if got := string(rubOut([]rune(tc.in), tc.word)); got != tc.want {
			t.Errorf("rubOut(%q, %v) = %q, want %q", tc.in, tc.word, got, tc.want)
		}
	}
}
