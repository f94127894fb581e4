package dialog

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"
)

// ConfirmKeyMap is the confirmation dialog's keymap. It implements the
// bubbles help.KeyMap interface, and the dialog's own help line is
// generated from it.
type ConfirmKeyMap struct {
	Once    key.Binding // allow this call once
	Args    key.Binding // allow the tool with exactly these arguments
	Session key.Binding // allow the tool for the session
	Always  key.Binding // always allow the tool (never at T3)
	Deny    key.Binding
	Reason  key.Binding // deny with a reason for the model
	Edit    key.Binding // edit the arguments

	Next, Prev, Choose key.Binding // move between buttons, press the focused one

	Up, Down, PageUp, PageDown key.Binding // scroll the arguments

	// In a text field: Submit checks and returns edited arguments, Confirm
	// submits a reason or a typed T3 confirmation, Back leaves the field.
	Submit, Confirm, Back key.Binding

	// In the T3 name field, where every letter is typed into the field:
	// deny with a reason, edit the arguments. Disabled below T3.
	FieldReason, FieldEdit key.Binding

	// TrustServer opens the step that trusts the call's server, and
	// pressed again there, trusts it: offered only when the call asks just
	// because its server is untrusted (host.Question.TrustLifts). A key
	// with a modifier, so that no typed letter, y or Enter reaches it.
	TrustServer key.Binding
}

// DefaultConfirmKeyMap returns the confirmation dialog's default keys.
func DefaultConfirmKeyMap() ConfirmKeyMap {
	return ConfirmKeyMap{
		Once:     key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "allow once")),
		Args:     key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "these args")),
		Session:  key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "session")),
		Always:   key.NewBinding(key.WithKeys("A"), key.WithHelp("A", "always")),
		Deny:     key.NewBinding(key.WithKeys("n", "esc"), key.WithHelp("n/esc", "deny")),
		Reason:   key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "deny with reason")),
		Edit:     key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "edit args")),
		Next:     key.NewBinding(key.WithKeys("tab", "right"), key.WithHelp("tab/←/→", "move")),
		Prev:     key.NewBinding(key.WithKeys("shift+tab", "left")),
		Choose:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "select")),
		Up:       key.NewBinding(key.WithKeys("up"), key.WithHelp("↑/↓/pgup/pgdn", "scroll")),
		Down:     key.NewBinding(key.WithKeys("down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup")),
		PageDown: key.NewBinding(key.WithKeys("pgdown")),
		Submit:   key.NewBinding(key.WithKeys("ctrl+s"), key.WithHelp("ctrl+s", "check and use")),
		Confirm:  key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "confirm")),
		Back:     key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),

		FieldReason: key.NewBinding(key.WithKeys("ctrl+r"), key.WithHelp("ctrl+r", "deny with reason")),
		FieldEdit:   key.NewBinding(key.WithKeys("ctrl+e"), key.WithHelp("ctrl+e", "edit args")),
		TrustServer: key.NewBinding(key.WithKeys("ctrl+t"), key.WithHelp("ctrl+t", "trust server…")),
	}
}

// ShortHelp returns the bindings of the dialog's main view.
func (k ConfirmKeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Once, k.Args, k.Session, k.Always, k.Deny, k.Reason, k.Edit, k.Next, k.Choose, k.Up}
}

// FullHelp groups every binding.
func (k ConfirmKeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Once, k.Args, k.Session, k.Always},
		{k.Deny, k.Reason, k.Edit},
		{k.Next, k.Prev, k.Choose},
		{k.Up},
		{k.Submit, k.Confirm, k.Back},
		{k.FieldReason, k.FieldEdit},
		{k.TrustServer},
	}
}

// ConsentKeyMap is the consent dialog's keymap. It implements the bubbles
// help.KeyMap interface.
type ConsentKeyMap struct {
	Trust     key.Binding // start the server and believe its annotations
	Untrusted key.Binding // start it, treating every tool as the riskiest kind
	Skip      key.Binding // do not start it

	Next, Prev, Choose         key.Binding
	Up, Down, PageUp, PageDown key.Binding
}

// DefaultConsentKeyMap returns the consent dialog's default keys.
func DefaultConsentKeyMap() ConsentKeyMap {
	return ConsentKeyMap{
		Trust:     key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "start and trust")),
		Untrusted: key.NewBinding(key.WithKeys("u"), key.WithHelp("u", "start untrusted")),
		Skip:      key.NewBinding(key.WithKeys("k", "esc"), key.WithHelp("k/esc", "skip")),
		Next:      key.NewBinding(key.WithKeys("tab", "right"), key.WithHelp("tab/←/→", "move")),
		Prev:      key.NewBinding(key.WithKeys("shift+tab", "left")),
		Choose:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "select")),
		Up:        key.NewBinding(key.WithKeys("up"), key.WithHelp("↑/↓/pgup/pgdn", "scroll")),
		Down:      key.NewBinding(key.WithKeys("down")),
		PageUp:    key.NewBinding(key.WithKeys("pgup")),
		PageDown:  key.NewBinding(key.WithKeys("pgdown")),
	}
}

// ShortHelp returns the consent dialog's bindings.
func (k ConsentKeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Trust, k.Untrusted, k.Skip, k.Next, k.Choose, k.Up}
}

// FullHelp groups the consent dialog's bindings.
func (k ConsentKeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Trust, k.Untrusted, k.Skip}, {k.Next, k.Prev, k.Choose}, {k.Up}}
}

// helpLines renders bindings as "key desc" items separated by " · ",
// wrapped between items to width. Disabled bindings and bindings without
// help are left out.
func helpLines(st Styles, width int, bindings ...key.Binding) []string {
	var lines []string
	var line strings.Builder
	used := 0
	for _, b := range bindings {
		h := b.Help()
		if !b.Enabled() || h.Key == "" {
			continue
		}
		w := ansi.StringWidth(h.Key) + 1 + ansi.StringWidth(h.Desc)
		sep := 3
		if used == 0 {
			sep = 0
		}
		if used > 0 && used+sep+w > width {
			lines = append(lines, line.String())
			line.Reset()
			used, sep = 0, 0
		}
		if sep > 0 {
			line.WriteString(st.HelpDesc.Render(" · "))
		}
		line.WriteString(st.HelpKey.Render(h.Key) + " " + st.HelpDesc.Render(h.Desc))
		used += sep + w
	}
	if used > 0 {
		lines = append(lines, line.String())
	}
	return lines
}
