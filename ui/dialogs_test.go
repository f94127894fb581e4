package ui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/mcphost/mcphost/ui/notify"
)

// probeDialog is a kind of dialog the model has never heard of: it records
// what reaches it, so that a test can see the model treat it like any
// other.
type probeDialog struct {
	name        string
	keys        []string
	cancellable bool
	cancelled   bool
	w, h        int
}

func (p *probeDialog) update(_ *Model, msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		p.keys = append(p.keys, k.String())
	}
	return nil
}
func (p *probeDialog) view() string     { return "PROBE " + p.name }
func (p *probeDialog) setSize(w, h int) { p.w, p.h = w, h }
func (p *probeDialog) subject() string  { return notify.Subject(p.name, "") + " (a probe)" }
func (p *probeDialog) keep() bool       { return false }
func (p *probeDialog) cancel(m *Model) (tea.Cmd, bool) {
	if !p.cancellable {
		return nil, false
	}
	p.cancelled = true
	m.dialogs.put(m.dialogs.find(func(e dialogEntry) bool { return e.d == p }), dialogEntry{})
	return nil, true
}

// TestDialogStackPut: put pushes, replaces in place and removes, and top
// is always the last entry.
func TestDialogStackPut(t *testing.T) {
	a, b, c := &probeDialog{name: "a"}, &probeDialog{name: "b"}, &probeDialog{name: "c"}
	is := func(d modal) func(dialogEntry) bool { return func(e dialogEntry) bool { return e.d == d } }
	names := func(s *dialogStack) string {
		var n []string
		for _, e := range s.entries {
			n = append(n, e.d.(*probeDialog).name)
		}
		return strings.Join(n, ",")
	}
	var s dialogStack
	if s.top() != nil || s.find(is(a)) != -1 {
		t.Fatalf("empty stack: top %v, find %d", s.top(), s.find(is(a)))
	}
	s.put(-1, dialogEntry{}) // nothing to put, nothing to remove
	s.put(-1, dialogEntry{d: a})
	s.put(-1, dialogEntry{d: b})
	if got := names(&s); got != "a,b" || s.top() != b {
		t.Fatalf("after two pushes: %s, top %v; want a,b with b on top", got, s.top())
	}
	s.put(s.find(is(a)), dialogEntry{d: c})
	if got := names(&s); got != "c,b" || s.top() != b {
		t.Fatalf("after replacing a with c: %s, top %v; want c,b with b on top", got, s.top())
	}
	s.put(s.find(is(b)), dialogEntry{})
	if got := names(&s); got != "c" || s.top() != c {
		t.Fatalf("after removing b: %s, top %v; want c on top", got, s.top())
	}
	s.put(s.find(is(c)), dialogEntry{})
	if s.top() != nil || len(s.entries) != 0 {
		t.Fatalf("after removing c: %d entries left", len(s.entries))
	}
}

// TestNewKindOfDialog: a kind of dialog added to the stack takes the keys,
// is drawn over the screen, sized with the window, names itself in the
// title, and is cancelled by Ctrl-C, or passed by when it
// cannot be, with no change to the model.
func TestNewKindOfDialog(t *testing.T) {
	osc777 := notify.New(notify.Both, notify.Terminal{Desktop: notify.OSC777})
	m := NewModel(Config{Notify: osc777, Dark: dark(true)})
	t.Cleanup(m.Close)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})

	p := &probeDialog{name: "web", cancellable: true}
	m.dialogs.put(-1, dialogEntry{d: p})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	if w, h := m.dialogSize(); p.w != w || p.h != h {
		t.Errorf("the dialog is %dx%d after a resize, want %dx%d", p.w, p.h, w, h)
	}
	m.Update(tea.KeyPressMsg{Code: 'y', Text: "y"})
	if len(p.keys) != 1 || p.keys[0] != "y" || m.input.Value() != "" {
		t.Errorf("the dialog got keys %q and the input %q; want the dialog to get y", p.keys, m.input.Value())
	}
	v := m.View()
	if !strings.Contains(v.Content, "PROBE web") {
		t.Errorf("the dialog is not drawn:\n%s", v.Content)
	}
	if want := "mcphost — waiting: web (a probe)"; v.WindowTitle != want {
		t.Errorf("title = %q, want %q", v.WindowTitle, want)
	}
	m.Update(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	if !p.cancelled || m.dialogs.top() != nil || m.flash != "question cancelled" {
		t.Errorf("ctrl+c: cancelled %v, stack top %v, flash %q; want the dialog cancelled and gone", p.cancelled, m.dialogs.top(), m.flash)
	}

	// A dialog Ctrl-C cannot cancel stays, and Ctrl-C goes on to arm the
	// quit.
	q := &probeDialog{name: "later"}
	m.dialogs.put(-1, dialogEntry{d: q})
	m.Update(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	if m.dialogs.top() != q || q.cancelled || m.quitAt.IsZero() {
		t.Errorf("ctrl+c on a dialog it cannot cancel: top %v, cancelled %v, quit armed %v; want it kept and the quit armed", m.dialogs.top(), q.cancelled, !m.quitAt.IsZero())
	}
}
