// Package dialog holds mcphost's modal dialogs: the confirmation a person
// answers before a risky tool call runs (Confirm), the consent asked
// before a server from a project file starts (Consent), and the form or
// address a server asks the person about (Elicit).
//
// Both are small Bubble Tea models. The parent owns them: it feeds them
// messages through Update, draws View as a layer over the transcript, and
// reads Result once the person has decided. Neither decides policy; they
// only show the gate's question and return the person's answer.
//
// # What the person sees
//
// Every string a server supplied (tool name, title, description, reasons'
// inputs, arguments) and every string from a project file passes through
// package sanitize before it is drawn, so control sequences, bidi overrides
// and invisible characters appear as visible escapes. The headline is
// always the server's config name and the raw tool name; a server's title
// is shown as the server's words, quoted and labelled, never in place of
// the name. Tier and class are written out in a badge, and tiers T2 and
// T3 draw a thick red border, so colour is never the only signal: with
// Options.NoColor the dialogs emit no escape sequences at all, except the
// cursor of an open text field.
//
// # Keys that arrive too early
//
// A dialog that opens while the person is typing elsewhere must not take
// those keystrokes as answers. Each dialog ignores key presses during a
// grace period (Options.Grace, 600ms by default) after it opens, and every
// key ignored that way restarts the period: the dialog listens once typing
// pauses. Pasted text (tea.PasteMsg) is ignored everywhere in both dialogs,
// and a held, auto-repeating key never answers one.
//
// # Tier T3
//
// Approving a T3 call takes a deliberate act that no single key, Enter or
// paste can produce: the person types the tool's raw name and presses
// Enter. The name field has the focus from the moment the dialog takes
// keys (after the grace period), so every printable character typed goes
// into it and none is a button: typing the name straight away can never
// open the editor, deny, or start a deny reason. The scope (once, these
// arguments, the session; never "always") is chosen with Tab or the
// arrows and starts at once. Enter with anything but the exact name says
// what is missing and does nothing; Esc denies; Ctrl-R denies with a
// reason and Ctrl-E edits the arguments. A paste is not inserted: the
// field says "pasted text does not count: type it". When the raw name is
// not easy and unambiguous to type — shorter than 4 or longer than 32
// characters, or containing anything other than printable ASCII without
// spaces — the field asks for the word "approve" instead. Tiers T1 and T2
// keep their single keys.
package dialog
