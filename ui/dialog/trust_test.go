package dialog

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"

	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
)

var ctrlT = tea.KeyPressMsg{Code: 't', Mod: tea.ModCtrl}

// trustLiftsT3 is a call that asks only because its server is untrusted.
func trustLiftsT3(t *testing.T) *host.Question {
	q := ask(t, callT3)
	q.TrustLifts = true
	return q
}

// TestConfirmStrayKeyNeverTrusts: no key but the trust key, pressed twice
// (once to open its step, once in it), trusts the server: not Enter, not
// y, not a letter typed into the T3 field, not Esc, not a held ctrl+t.
func TestConfirmStrayKeyNeverTrusts(t *testing.T) {
	q := trustLiftsT3(t)
	for _, k := range []string{"y", "a", "s", "A", "t", "T", "n", "enter", "tab", "right", "esc", "ctrl+s", "ctrl+r"} {
		c, _ := openConfirm(q, Options{})
		keys(c, k, "enter", "y")
		if c.TrustsServer() {
			t.Errorf("%s, enter, y trusted the server", k)
		}
		c, _ = openConfirm(q, Options{})
		c.Update(ctrlT)
		keys(c, k, "enter", "y")
		if c.TrustsServer() {
			t.Errorf("ctrl+t, %s, enter, y trusted the server", k)
		}
	}
	c, _ := openConfirm(q, Options{})
	c.Update(ctrlT)
	held := ctrlT
	held.IsRepeat = true
	c.Update(held)
	if c.TrustsServer() {
		t.Error("a held ctrl+t trusted the server")
	}
	// Within the grace period after the dialog opens, nothing counts.
	c = NewConfirm(q, Options{Now: (&clock{t: epoch}).Now})
	c.Update(ctrlT)
	c.Update(ctrlT)
	if c.TrustsServer() {
		t.Error("ctrl+t ctrl+t straight after the dialog opened trusted the server")
	}
}

// TestConfirmTrustStep: the dialog says why the call asks and how to
// trust the server; ctrl+t opens a step that says what trust means, Enter
// and Esc go back from it, and ctrl+t there trusts the server and approves
// this one call.
func TestConfirmTrustStep(t *testing.T) {
	q := trustLiftsT3(t)
	c, _ := openConfirm(q, Options{Width: 100, Height: 40})
	if v := strings.Join(strings.Fields(ansi.Strip(c.View())), " "); !strings.Contains(v, "Untrusted server: that alone makes it ask. ctrl+t trusts hostile.") {
		t.Errorf("the dialog does not say how to trust the server:\n%s", v)
	}
	for _, back := range []string{"enter", "esc"} {
		c.Update(ctrlT)
		if v := ansi.Strip(c.View()); !strings.Contains(v, "Trust hostile?") || !strings.Contains(v, "/untrust hostile takes it back") {
			t.Fatalf("ctrl+t did not open the trust step:\n%s", v)
		}
		keys(c, back)
		if _, done := c.Result(); done || c.mode != modeTyped {
			t.Fatalf("%s in the trust step: done %v, mode %v; want back in the name field", back, done, c.mode)
		}
	}
	c.Update(ctrlT)
	c.Update(ctrlT)
	a, done := c.Result()
	if !done || !c.TrustsServer() || !cmp.Equal(a, host.Answer{Approve: true, Scope: decide.ScopeOnce}) {
		t.Errorf("ctrl+t twice: %+v, done %v, trusts %v; want approve once and trust", a, done, c.TrustsServer())
	}

	// Without TrustLifts there is no such step.
	c, _ = openConfirm(ask(t, callT3), Options{Width: 100, Height: 40})
	c.Update(ctrlT)
	c.Update(ctrlT)
	if _, done := c.Result(); done || c.TrustsServer() || strings.Contains(ansi.Strip(c.View()), "ctrl+t") {
		t.Errorf("a call that asks for more than trust offered trusting the server")
	}
}
