package ui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"
	"github.com/mcphost/mcphost/ui/dialog"
)

// keyGroup is one keymap, as the help view lists it.
type keyGroup struct {
	Title    string
	Bindings []key.Binding
}

// chatKeys work on the main screen.
type chatKeys struct {
	Send, Newline, Cancel, Quit, Close, Tools, Help, Focus, PageUp, PageDown, Expand key.Binding
	Complete, Prev, Next, Search, Mouse                                              key.Binding
	Interrupt, Suspend, Editor                                                       key.Binding

	// EditLast is esc twice on an empty input when nothing runs; it is
	// handled with Close (habits.go) and listed for the help.
	EditLast key.Binding
}

func newChatKeys() chatKeys {
	return chatKeys{
		Send:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "send the message or /command; while the model works: queue it")),
		Newline: key.NewBinding(key.WithKeys("alt+enter", "shift+enter", "ctrl+j"), key.WithHelp("alt+enter", "new line (also shift+enter, ctrl+j)")),
		Cancel:  key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "cancel what runs or the question on screen; else clear the input (kept in the history); on an empty input twice within a second: quit")),
		Quit:    key.NewBinding(key.WithKeys("ctrl+d"), key.WithHelp("ctrl+d", "on an empty input: quit, pressed twice within a second (also /quit); else delete the character under the cursor")),
		Close:   key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close the menu, the top dialog or panel; on a confirmation: deny; in the input: interrupt what runs, else drop the attached resource, else the last queued message")),
		// Interrupt is esc in the input while something runs: the same
		// cancellation as ctrl+c. It never reaches a dialog (esc there
		// denies) nor a panel.
		Interrupt: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "interrupt the streaming answer or the running call (as ctrl+c does)")),
		EditLast:  key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc esc", "on an empty input when nothing runs: edit your last message; sending it runs its turn again in place of the old one")),
		Suspend:   key.NewBinding(key.WithKeys("ctrl+z"), key.WithHelp("ctrl+z", "suspend mcphost and give the terminal back; fg resumes it")),
		Editor:    key.NewBinding(key.WithKeys("ctrl+g"), key.WithHelp("ctrl+g", "edit the message in $VISUAL or $EDITOR; saving replaces the input")),
		Tools:     key.NewBinding(key.WithKeys("ctrl+t"), key.WithHelp("ctrl+t", "tools panel (also /tools)")),
		Help:      key.NewBinding(key.WithKeys("f1"), key.WithHelp("f1", "help (also /help)")),
		Focus:     key.NewBinding(key.WithKeys("f2"), key.WithHelp("f2", "move the focus to the transcript and back")),
		Complete:  key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "take the highlighted entry of the menu (/commands, @server:uri resources); after a command: complete a server or a tool name")),
		Prev:      key.NewBinding(key.WithKeys("up", "ctrl+p"), key.WithHelp("↑/ctrl+p", "on the first line: the previous message from the history (an empty input with queued messages: edit the last one)")),
		Next:      key.NewBinding(key.WithKeys("down", "ctrl+n"), key.WithHelp("↓/ctrl+n", "on the last line: the next message from the history, then your draft")),
		Search:    key.NewBinding(key.WithKeys("ctrl+r"), key.WithHelp("ctrl+r", "search the history; again: an older match")),
		Mouse:     key.NewBinding(key.WithKeys("f3"), key.WithHelp("f3", "mouse wheel scrolling on/off; while on, shift+drag still selects text in most terminals")),
		PageUp:    key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup", "scroll up")),
		PageDown:  key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("pgdown", "scroll down")),
		Expand:    key.NewBinding(key.WithKeys("ctrl+o"), key.WithHelp("ctrl+o", "expand the selected tool card")),
	}
}

// transcriptKeys work while the transcript has the focus.
type transcriptKeys struct {
	Prev, Next, Toggle, Open, Top, Bottom, Back key.Binding
}

func newTranscriptKeys() transcriptKeys {
	return transcriptKeys{
		Prev:   key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "previous tool card")),
		Next:   key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "next tool card")),
		Toggle: key.NewBinding(key.WithKeys("enter", "space"), key.WithHelp("enter", "expand the card: arguments, reasons, result")),
		Open:   key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "open the card's full result in the pager: scroll, / search, s save")),
		Top:    key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("home", "first entry")),
		Bottom: key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("end", "last entry, follow new output")),
		Back:   key.NewBinding(key.WithKeys("esc", "f2"), key.WithHelp("esc/f2", "back to the input")),
	}
}

// listKeys work in the tools, servers and grants panels.
type listKeys struct {
	Up, Down, Open, Restart, Revoke, Attach, Back key.Binding
}

func newListKeys() listKeys {
	return listKeys{
		Up:      key.NewBinding(key.WithKeys("up", "ctrl+p"), key.WithHelp("↑", "previous")),
		Down:    key.NewBinding(key.WithKeys("down", "ctrl+n"), key.WithHelp("↓", "next")),
		Open:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open")),
		Restart: key.NewBinding(key.WithKeys("r", "ctrl+r"), key.WithHelp("r", "restart (servers)")),
		Revoke:  key.NewBinding(key.WithKeys("x", "delete"), key.WithHelp("x", "revoke (grants)")),
		Attach:  key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "attach to the next message (a resource, once read)")),
		Back:    key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
	}
}

// formKeys work in the call form.
type formKeys struct {
	Send, Reset, Back key.Binding
}

func newFormKeys() formKeys {
	return formKeys{
		Send:  key.NewBinding(key.WithKeys("ctrl+s"), key.WithHelp("ctrl+s", "send (checks the JSON first)")),
		Reset: key.NewBinding(key.WithKeys("ctrl+r"), key.WithHelp("ctrl+r", "reset to the skeleton")),
		Back:  key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
	}
}

type keyMaps struct {
	chat       chatKeys
	transcript transcriptKeys
	list       listKeys
	form       formKeys
}

func newKeyMaps() keyMaps {
	return keyMaps{chat: newChatKeys(), transcript: newTranscriptKeys(), list: newListKeys(), form: newFormKeys()}
}

// groups lists every binding, in the order the help view shows them: the
// UI's own, then the dialogs'.
func (k keyMaps) groups() []keyGroup {
	c, t, l, f := k.chat, k.transcript, k.list, k.form
	return []keyGroup{
		{"Chat", []key.Binding{c.Send, c.Newline, c.Cancel, c.Interrupt, c.EditLast, c.Quit, c.Suspend, c.Close, c.Complete, c.Prev, c.Next, c.Search, c.Editor, c.Tools, c.Help, c.Focus, c.PageUp, c.PageDown, c.Expand, c.Mouse}},
		{"Transcript (f2)", []key.Binding{t.Prev, t.Next, t.Toggle, t.Open, t.Top, t.Bottom, t.Back}},
		{"Panels", []key.Binding{l.Up, l.Down, l.Open, l.Restart, l.Revoke, l.Attach, l.Back}},
		{"Call form", []key.Binding{f.Send, f.Reset, f.Back}},
		{"Confirmation dialog, tiers 1–2 (keys wait until typing pauses)", confirmKeys()},
		{"Confirmation dialog, tier 3: type the tool's name (letters never act)", t3Keys()},
		{"Project server consent", flatten(dialog.DefaultConsentKeyMap().FullHelp())},
	}
}

// confirmKeys are the single keys of a tier 1 or 2 confirmation.
func confirmKeys() []key.Binding {
	k := dialog.DefaultConfirmKeyMap()
	return flatten([][]key.Binding{{k.Once, k.Args, k.Session, k.Always, k.Deny, k.Reason, k.Edit, k.Next, k.Choose, k.Up},
		{k.Submit, withDesc(k.Back, "leave a field")}})
}

// t3Keys are the keys of a tier 3 confirmation, whose name field takes
// every letter.
func t3Keys() []key.Binding {
	k := dialog.DefaultConfirmKeyMap()
	return []key.Binding{withDesc(k.Confirm, "allow, once the field holds the name"), withDesc(k.Back, "deny"),
		withDesc(k.Next, "scope: once, these args, session"), k.FieldReason, k.FieldEdit, k.Up}
}

func withDesc(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}

// flatten joins binding groups, leaving out those without help.
func flatten(groups [][]key.Binding) []key.Binding {
	var out []key.Binding
	for _, g := range groups {
		for _, b := range g {
			if b.Help().Key != "" {
				out = append(out, b)
			}
		}
	}
	return out
}

// commandHelp describes the slash commands.
var commandHelp = [][2]string{
	{"/tools [FILTER]", "every tool with its badges; pick one to explain it and call it"},
	{"/resources [FILTER]", "every ready server's resources; read one and attach it to the next message"},
	{"/prompts [FILTER]", "every ready server's prompts; fill in the arguments and edit the result in the input"},
	{"/detach", "drop the attached resource"},
	{"/servers", "server states, stderr tails; restart a server"},
	{"/explain SERVER/TOOL [ARGS]", "the decision for a call and every reason"},
	{"/grants", "approvals in force; revoke them"},
	{"/compact", "compact the conversation: old results out, old turns summarised"},
	{"/trust [NAME | revoke NAME]", "list trust; believe a running server's annotations from now on (remembered); revoke (or /untrust NAME) takes it back"},
	{"/clear", "clear the transcript and start a new conversation (grants stay)"},
	{"/export [FILE]", "write the conversation as Markdown (never over an existing file)"},
	{"/copy [result]", "copy the last answer (or the selected card's result) to the clipboard, OSC 52"},
	{"/model [PROVIDER:MODEL]", "switch to another model for the next message (the conversation carries over); alone: pick one"},
	{"/resume [ID]", "pick a saved chat and continue it in place of this one"},
	{"/instructions [send|stop]", "the project's AGENTS.md: show it, send it to the model, or stop"},
	{"/help", "this help"},
	{"/quit", "leave mcphost"},
}

// helpText renders every keymap and command, wrapped to width.
func (k keyMaps) helpText(st styles, width int) []string {
	var lines []string
	table := func(title string, rows [][2]string) {
		lines = append(lines, st.Title.Render(title))
		w := 0
		for _, r := range rows {
			w = max(w, ansi.StringWidth(r[0]))
		}
		indent := strings.Repeat(" ", w+4)
		for _, r := range rows {
			l := "  " + st.Key.Render(r[0]) + strings.Repeat(" ", w-ansi.StringWidth(r[0])+2) + r[1]
			lines = append(lines, hang(l, width, indent)...)
		}
		lines = append(lines, "")
	}
	for _, g := range k.groups() {
		var rows [][2]string
		for _, b := range g.Bindings {
			rows = append(rows, [2]string{b.Help().Key, b.Help().Desc})
		}
		table(g.Title, rows)
	}
	table("Commands (type / for the menu)", commandHelp)
	table("In a message", [][2]string{{"@SERVER:URI", "attach that resource's text as data (read through the gate; type @ for the servers' resources)"}})
	return lines[:len(lines)-1]
}
