package dialog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/textinput"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/sanitize"
)

// ApproveWord is what a person types to approve a T3 call when the tool's
// raw name is not easy and unambiguous to type.
const ApproveWord = "approve"

// Bounds of a tool name that a T3 confirmation asks to be typed.
const (
	minTypedName = 4
	maxTypedName = 32
)

type mode uint8

const (
	modeButtons mode = iota
	modeReason       // typing a reason for the model
	modeEdit         // editing the arguments
	modeTyped        // typing the T3 confirmation
	modeTrust        // the step that trusts the server: its own key again, or back
)

type button struct {
	label   string
	approve bool
	scope   decide.Scope
}

// Confirm asks a person whether one tool call may run. Create it with
// NewConfirm, feed it messages with Update, draw View over the transcript,
// and read Result once the person has decided. After that it ignores every
// message.
type Confirm struct {
	q    *host.Question
	o    Options
	st   Styles
	keys ConfirmKeyMap
	wait grace

	tier    decide.Tier
	danger  bool // T2 or T3: red, focus on Deny
	name    string
	title   string
	desc    string
	poison  []string // the poisoned-description heuristics that fire
	own     bool     // title and description are mcphost's words (host.OwnWords)
	reasons []string // the reasons to ask
	favour  []string // the facts that lower the risk (decide.Decision.InFavour)
	args    string
	argsOK  bool
	word    string // what a T3 approval must type

	buttons []button
	focus   int
	mode    mode

	vp     viewport.Model
	vpKey  string
	reason textinput.Model
	editor textarea.Model
	typed  []rune
	scope  decide.Scope // the approval a T3 confirmation gives
	hint   string       // under a field: a mismatch, invalid JSON

	header, footer []string
	reasonsInBody  bool
	compact        bool // a small screen: see relayout

	answer host.Answer
	done   bool

	// trusting: the person chose, in the trust step, to trust the server
	// (and so to run this call); before is the mode the step came from.
	trusting bool
	before   mode

	// check, when set, tests edited arguments against the tool's input
	// schema before they go back to the gate.
	check func([]byte) error
}

// SetArgsCheck sets how edited arguments are checked (against the tool's
// input schema) before the edit is returned; an error is shown under the
// editor and the edit stays open.
func (c *Confirm) SetArgsCheck(f func([]byte) error) { c.check = f }

// NewConfirm returns a dialog for q. A nil q, or one without scopes, can
// only be denied.
func NewConfirm(q *host.Question, o Options) *Confirm {
	if q == nil {
		q = &host.Question{}
	}
	o = o.withDefaults()
	c := &Confirm{
		q:    q,
		o:    o,
		st:   NewStyles(o.Dark, o.NoColor),
		keys: DefaultConfirmKeyMap(),
		wait: newGrace(o),
		tier: q.Decision.Tier,
	}
	c.danger = c.tier >= decide.T2

	server, tool := q.Server, ""
	if q.Tool != nil {
		tool = q.Tool.Name
		c.title = oneLine(q.Tool.Title)
		c.desc = oneLine(q.Tool.Description)
		c.poison = decide.PoisonFlags(q.Tool.Description)
		c.own = host.OwnWords(q.Tool)
	}
	c.name = sanitize.Name(server) + "/" + sanitize.Name(tool)
	c.word = typedWord(tool)
	ask, favour := q.Decision.Split()
	for _, r := range ask {
		c.reasons = append(c.reasons, reasonText(r))
	}
	for _, r := range favour {
		c.favour = append(c.favour, reasonText(r))
	}
	c.args, c.argsOK = prettyArgs(q.Args)

	scopeKeys := map[decide.Scope]*key.Binding{
		decide.ScopeOnce: &c.keys.Once, decide.ScopeArgs: &c.keys.Args,
		decide.ScopeSession: &c.keys.Session, decide.ScopeAlways: &c.keys.Always,
	}
	labels := map[decide.Scope]string{
		decide.ScopeOnce: "Allow once", decide.ScopeArgs: "These args",
		decide.ScopeSession: "This session", decide.ScopeAlways: "Always",
	}
	for _, s := range []decide.Scope{decide.ScopeOnce, decide.ScopeArgs, decide.ScopeSession, decide.ScopeAlways} {
		b := scopeKeys[s]
		if !c.offers(s) {
			b.SetEnabled(false)
			continue
		}
		if c.tier >= decide.T3 {
			// letters are typed into the name field: no key is a scope
			b.SetEnabled(false)
		}
		c.buttons = append(c.buttons, button{label: labels[s], approve: true, scope: s})
	}
	c.buttons = append(c.buttons, button{label: "Deny"})
	if c.danger {
		c.focus = len(c.buttons) - 1
	}
	if c.tier >= decide.T3 {
		// The single-key actions would take letters of the name.
		c.keys.Deny = withKeys(c.keys.Deny, "esc")
		c.keys.Reason.SetEnabled(false)
		c.keys.Edit.SetEnabled(false)
	} else {
		c.keys.FieldReason.SetEnabled(false)
		c.keys.FieldEdit.SetEnabled(false)
	}
	if !q.TrustLifts || !c.offers(decide.ScopeOnce) {
		c.keys.TrustServer.SetEnabled(false)
	}
	c.mode = c.home()
	if c.mode == modeTyped {
		// the field has the focus; the scope defaults to the narrowest offered
		c.scope = c.buttons[0].scope
	}

	c.vp = viewport.New()
	c.vp.KeyMap = viewport.KeyMap{} // the dialog's keymap scrolls it

	c.reason = textinput.New()
	c.reason.Prompt = "> "
	c.reason.Placeholder = "why not; the model reads this"
	c.reason.CharLimit = 500
	c.reason.KeyMap.Paste.SetEnabled(false)
	c.reason.SetStyles(inputStyles(o))

	c.relayout()
	return c
}

// offers reports whether the dialog offers approval at scope s: the gate
// listed it, and it is not "always" at T3, whatever the gate listed.
func (c *Confirm) offers(s decide.Scope) bool {
	if s == decide.ScopeAlways && c.tier >= decide.T3 {
		return false
	}
	for _, x := range c.q.Scopes {
		if x == s {
			return true
		}
	}
	return false
}

// home is the mode the dialog rests in: at T3, when approval is offered
// at all, the name field, so that every letter typed goes into it; the
// buttons otherwise.
func (c *Confirm) home() mode {
	if c.tier >= decide.T3 && len(c.buttons) > 1 {
		return modeTyped
	}
	return modeButtons
}

// typedWord is what approving a T3 call asks the person to type: the raw
// tool name when it is plain printable ASCII of a sensible length, so the
// person reads and repeats what will run; ApproveWord otherwise (names with
// escapes, spaces, look-alike letters, or too short to be deliberate).
func typedWord(name string) string {
	if len(name) < minTypedName || len(name) > maxTypedName {
		return ApproveWord
	}
	for i := 0; i < len(name); i++ {
		if name[i] <= ' ' || name[i] > '~' {
			return ApproveWord
		}
	}
	return name
}

// TypedWord is what approving a T3 call of the tool name asks the person
// to type, in every approver that asks (this dialog, the web page): the
// same rule everywhere, so no front is easier to satisfy than another.
func TypedWord(name string) string { return typedWord(name) }

// reasonText is the sentence for one reason. A rule's sentence says its id
// follows the colon, so the code is shown with it.
func reasonText(r decide.Reason) string {
	text := r.Text
	if text == "" {
		text = decide.ReasonText(r.Code)
	}
	switch {
	case text == "":
		return sanitize.Line(r.Code)
	case strings.HasPrefix(r.Code, decide.CodeRulePrefix):
		return sanitize.Line(r.Code) + " — " + oneLine(text)
	}
	return oneLine(text)
}

// Question returns the question the dialog asks.
func (c *Confirm) Question() *host.Question { return c.q }

// KeyMap returns the dialog's keymap; approvals it does not offer are
// disabled, so help rendered from it lists only what works.
func (c *Confirm) KeyMap() ConfirmKeyMap { return c.keys }

// Result returns the person's answer, and true once they have decided.
// An approval carries the scope chosen, one of Question.Scopes. An edit
// returns Approve with Args set to the edited arguments (compact JSON) and
// ScopeOnce: it approves nothing by itself, the gate decides the edited
// call again from the start and asks again if it must.
func (c *Confirm) Result() (host.Answer, bool) { return c.answer, c.done }

// SetSize sets the size of the whole box, border included.
func (c *Confirm) SetSize(width, height int) {
	c.o.Width, c.o.Height = max(width, minWidth), max(height, minHeight)
	c.relayout()
}

// Update handles a message. Keys are ignored during the grace period and
// pastes always; once the person has decided, everything is ignored.
func (c *Confirm) Update(msg tea.Msg) (*Confirm, tea.Cmd) {
	if c.done {
		return c, nil
	}
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.PasteMsg:
		if c.mode == modeTyped {
			c.hint = pastedHint // and nothing of it is inserted
			c.relayout()
		}
		return c, nil
	case tea.PasteStartMsg, tea.PasteEndMsg:
		return c, nil
	case tea.KeyPressMsg:
		if c.wait.holds() {
			return c, nil
		}
		cmd = c.key(msg)
	default:
		// cursor blinks and the like, for the open field
		switch c.mode {
		case modeReason:
			c.reason, cmd = c.reason.Update(msg)
		case modeEdit:
			c.editor, cmd = c.editor.Update(msg)
		}
	}
	c.relayout()
	return c, cmd
}

func (c *Confirm) key(msg tea.KeyPressMsg) tea.Cmd {
	k := c.keys
	if c.mode != modeEdit && c.scroll(msg) {
		return nil
	}
	if msg.IsRepeat && (c.mode == modeButtons || c.mode == modeTyped || c.mode == modeTrust) {
		return nil // a held key is not an answer
	}
	if (c.mode == modeButtons || c.mode == modeTyped) && key.Matches(msg, k.TrustServer) {
		c.before, c.mode = c.mode, modeTrust
		return nil
	}
	switch c.mode {
	case modeTrust:
		c.trustKey(msg)
	case modeButtons:
		switch {
		case key.Matches(msg, k.Once):
			c.approve(decide.ScopeOnce)
		case key.Matches(msg, k.Args):
			c.approve(decide.ScopeArgs)
		case key.Matches(msg, k.Session):
			c.approve(decide.ScopeSession)
		case key.Matches(msg, k.Always):
			c.approve(decide.ScopeAlways)
		case key.Matches(msg, k.Deny):
			c.finish(host.Answer{})
		case key.Matches(msg, k.Reason):
			c.mode = modeReason
			c.reason.Reset()
			return c.reason.Focus()
		case key.Matches(msg, k.Edit):
			return c.startEdit()
		case key.Matches(msg, k.Next):
			c.focus = (c.focus + 1) % len(c.buttons)
		case key.Matches(msg, k.Prev):
			c.focus = (c.focus + len(c.buttons) - 1) % len(c.buttons)
		case key.Matches(msg, k.Choose):
			if b := c.buttons[c.focus]; b.approve {
				c.approve(b.scope)
			} else {
				c.finish(host.Answer{})
			}
		}
	case modeTyped:
		return c.typedKey(msg)
	case modeReason:
		switch {
		case key.Matches(msg, k.Back):
			c.mode = c.home()
			c.reason.Blur()
		case key.Matches(msg, k.Confirm):
			c.finish(host.Answer{Reason: strings.TrimSpace(c.reason.Value())})
		default:
			var cmd tea.Cmd
			c.reason, cmd = c.reason.Update(msg)
			return cmd
		}
	case modeEdit:
		switch {
		case key.Matches(msg, k.Back):
			c.mode, c.hint = c.home(), ""
			c.editor.Blur()
		case key.Matches(msg, k.Submit):
			c.submitEdit()
		default:
			c.hint = ""
			var cmd tea.Cmd
			c.editor, cmd = c.editor.Update(msg)
			return cmd
		}
	}
	return nil
}

// trustKey handles a key in the trust step. Only the trust key again
// trusts the server; Esc and Enter go back, and every other key does
// nothing, so that no stray key trusts.
func (c *Confirm) trustKey(msg tea.KeyPressMsg) {
	k := c.keys
	switch {
	case key.Matches(msg, k.TrustServer):
		// Trusting the server lifts the only reason this call asks, so
		// the call runs, as the step says.
		c.trusting = true
		c.finish(host.Answer{Approve: true, Scope: decide.ScopeOnce})
	case key.Matches(msg, k.Back), key.Matches(msg, k.Choose):
		c.mode = c.before
	}
}

// TrustsServer reports whether the person chose, in the trust step, to
// trust the call's server; the dialog's answer then approves this call
// once, and the caller records the trust.
func (c *Confirm) TrustsServer() bool { return c.done && c.trusting }

// pastedHint answers a paste into the T3 name field.
const pastedHint = "pasted text does not count: type it"

// typedKey handles a key in the T3 name field, which has the focus from
// the moment the dialog takes keys. Every printable character goes into
// the field and none is a button: only Enter with the exact name approves,
// at the scope chosen with the arrows or Tab; Esc denies.
func (c *Confirm) typedKey(msg tea.KeyPressMsg) tea.Cmd {
	k := c.keys
	switch {
	case key.Matches(msg, k.Deny):
		c.finish(host.Answer{})
	case key.Matches(msg, k.Confirm):
		if string(c.typed) == c.word {
			c.finish(host.Answer{Approve: true, Scope: c.scope})
		} else {
			c.hint = missingHint(string(c.typed), c.word)
		}
	case key.Matches(msg, k.Next):
		c.nextScope(1)
	case key.Matches(msg, k.Prev):
		c.nextScope(-1)
	case key.Matches(msg, k.FieldReason):
		c.mode = modeReason
		c.reason.Reset()
		return c.reason.Focus()
	case key.Matches(msg, k.FieldEdit):
		return c.startEdit()
	case msg.Code == tea.KeyBackspace && msg.Mod == 0:
		if len(c.typed) > 0 {
			c.typed = c.typed[:len(c.typed)-1]
		}
		c.hint = ""
	case msg.String() == "ctrl+u" || msg.String() == "ctrl+w": // as in a shell: the line, the last word
		c.typed, c.hint = rubOut(c.typed, msg.String() == "ctrl+w"), ""
	default:
		if r, ok := typedRune(msg); ok {
			if len(c.typed) < maxTypedName+8 {
				c.typed = append(c.typed, r)
			}
			c.hint = ""
		} else if msg.Mod&^tea.ModShift == 0 && len([]rune(msg.Text)) > 1 {
			c.hint = pastedHint // a paste the terminal did not bracket
		}
	}
	return nil
}

// nextScope moves the T3 scope by step among the approvals offered.
func (c *Confirm) nextScope(step int) {
	n := len(c.buttons) - 1 // the last button is Deny
	for i, b := range c.buttons[:n] {
		if b.scope == c.scope {
			c.scope = c.buttons[(i+step+n)%n].scope
			return
		}
	}
}

// missingHint says why typed does not approve: what is still to type, or
// where it stops matching word.
func missingHint(typed, word string) string {
	switch {
	case typed == "":
		return "Type " + word + " to allow this call, then press enter; esc denies."
	case strings.HasPrefix(word, typed):
		rest := word[len(typed):]
		return fmt.Sprintf("Not yet: %q is still missing (%d more of %d characters).", rest, len(rest), len(word))
	}
	same := 0
	for same < len(typed) && same < len(word) && typed[same] == word[same] {
		same++
	}
	if same == len(word) {
		return fmt.Sprintf("Too long: %q comes after %s; backspace removes it.", typed[same:], word)
	}
	return fmt.Sprintf("That is not %s: it differs from character %d on; backspace to fix it, esc denies.", word, same+1)
}

// scroll moves the arguments for the scroll keys and reports whether msg
// was one.
func (c *Confirm) scroll(msg tea.KeyPressMsg) bool {
	k := c.keys
	switch {
	case key.Matches(msg, k.Up):
		c.vp.ScrollUp(1)
	case key.Matches(msg, k.Down):
		c.vp.ScrollDown(1)
	case key.Matches(msg, k.PageUp):
		c.vp.PageUp()
	case key.Matches(msg, k.PageDown):
		c.vp.PageDown()
	default:
		return false
	}
	return true
}

// typedRune accepts a key press as one typed character of the T3
// confirmation: exactly one printable rune, with no modifier but shift.
// Anything that delivers several characters at once is refused.
func typedRune(msg tea.KeyPressMsg) (rune, bool) {
	if msg.Mod&^tea.ModShift != 0 {
		return 0, false
	}
	rs := []rune(msg.Text)
	if len(rs) != 1 || !unicode.IsPrint(rs[0]) || sanitize.Unsafe(rs[0]) {
		return 0, false
	}
	return rs[0], true
}

func (c *Confirm) approve(s decide.Scope) {
	if !c.offers(s) || c.tier >= decide.T3 {
		return // T3 approves only from the name field
	}
	c.finish(host.Answer{Approve: true, Scope: s})
}

func (c *Confirm) finish(a host.Answer) {
	c.answer, c.done = a, true
	c.reason.Blur()
	c.editor.Blur()
}

func (c *Confirm) startEdit() tea.Cmd {
	c.editor = textarea.New()
	c.editor.ShowLineNumbers = false
	c.editor.Prompt = ""
	c.editor.CharLimit = 0
	c.editor.MaxHeight = 0
	c.editor.MaxWidth = 0
	c.editor.KeyMap.Paste.SetEnabled(false)
	c.editor.SetStyles(editorStyles(c.o))
	c.editor.SetValue(c.args)
	if c.editor.Value() != c.args {
		// the textarea has a line limit; editing a cut copy would send it
		c.hint = "These arguments are too large to edit here."
		return nil
	}
	c.editor.MoveToBegin()
	c.mode, c.hint = modeEdit, ""
	c.relayout()
	return c.editor.Focus()
}

func (c *Confirm) submitEdit() {
	text := []byte(c.editor.Value())
	if err := checkObject(text); err != nil {
		c.hint = sanitize.Line(err.Error())
		return
	}
	if c.check != nil {
		if err := c.check(text); err != nil {
			c.hint = sanitize.Line(err.Error())
			return
		}
	}
	orig := c.q.Args
	if len(bytes.TrimSpace(orig)) == 0 {
		orig = json.RawMessage("{}")
	}
	a, errA := decide.Canonical(text)
	b, errB := decide.Canonical(orig)
	if errA == nil && errB == nil && bytes.Equal(a, b) {
		c.hint = "The arguments did not change; press esc to go back."
		return
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, text); err != nil {
		c.hint = sanitize.Line(err.Error())
		return
	}
	c.finish(host.Answer{Approve: true, Scope: decide.ScopeOnce, Args: json.RawMessage(buf.Bytes())})
}

// checkObject reports why text is not one JSON object, saying where.
func checkObject(text []byte) error {
	trimmed := bytes.TrimSpace(text)
	var v any
	if err := json.Unmarshal(trimmed, &v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := lineCol(trimmed, se.Offset)
			return fmt.Errorf("Not valid JSON (line %d, column %d): %s", line, col, se.Error())
		}
		return fmt.Errorf("Not valid JSON: %s", err.Error())
	}
	if _, ok := v.(map[string]any); !ok {
		return errors.New("The arguments must be a JSON object: { … }")
	}
	return nil
}

func lineCol(b []byte, off int64) (int, int) {
	off = min(max(off, 0), int64(len(b)))
	prefix := b[:off]
	line := bytes.Count(prefix, []byte("\n")) + 1
	col := len([]rune(string(prefix[bytes.LastIndexByte(prefix, '\n')+1:])))
	return line, max(col, 1)
}

// relayout lays the dialog out for its size and mode: the header, the
// footer, and the height of the scrolling body between them. When the
// reasons and the arguments do not fit beside the description, space is
// short: the arguments come first in the body, then the reasons, then the
// server's description, so what will run is read before what the server
// says of it. When even the header, the arguments and the footer do not
// fit (a small screen), the dialog turns compact: the header keeps the
// verdict line and the raw name, the footer the buttons and one short line
// of keys, and everything else scrolls in the body, the arguments first.
// The description is in the body in full whenever the header's one line
// cuts it, so an instruction hidden in it can be read.
func (c *Confirm) relayout() {
	st := c.st
	w, h := c.o.Width-4, c.o.Height-2

	base := spread(Badge(c.q.Decision.Class, c.tier, st), st.Muted.Render(position(c.o)), w)
	base = append(base, hardWrap(st.Heading.Render(c.name), w)...)
	var titleLines, descLines, fullDesc, warns []string
	switch {
	case c.own:
		// A stand-in for a request that is not a tool call: the words
		// are mcphost's, and never shown as the server's.
		if c.desc != "" {
			descLines = hanging(st.Muted.Render("What it does (mcphost): "), c.desc, w)
		}
	default:
		if c.title != "" {
			titleLines = []string{quotedLine(st, "Server's title: ", c.title, w)}
		}
		// The description: in the header when three lines hold it, else
		// one cut line there and the whole of it in the body, after the
		// arguments.
		if c.desc != "" {
			descLines = hanging(st.Muted.Render("Server's description: "), `"`+c.desc+`"`, w)
			if len(descLines) > 3 {
				descLines = []string{quotedLine(st, "Server's description: ", c.desc, w)}
				full := strings.TrimSpace(expandTabs(sanitize.Text(c.q.Tool.Description)))
				fullDesc = append([]string{"", st.Label.Render("Server's description, in full")}, wrapText(full, w)...)
			}
		}
	}
	if len(c.poison) > 0 {
		warns = append(warns, styled(st.Warn, hanging("! ", "Poisoned description: it gives the model orders ("+strings.Join(c.poison, ", ")+"). Read it before allowing; the model may be acting on it.", w))...)
	}
	switch {
	case c.keys.TrustServer.Enabled():
		// One line, like the warning it replaces: the arguments keep
		// their room. The reason below says what untrusted means.
		warns = append(warns, styled(st.Warn, hanging("! ", "Untrusted server: that alone makes it ask. "+c.keys.TrustServer.Help().Key+" trusts "+sanitize.Name(c.q.Server)+".", w))...)
	case !c.q.Trusted:
		warns = append(warns, styled(st.Warn, hanging("! ", "Untrusted server: mcphost ignores what it says about its tools.", w))...)
	}
	if c.q.Changed {
		warns = append(warns, styled(st.Warn, hanging("! ", "This tool's definition changed since it was approved or first seen; allowing the call accepts the new definition.", w))...)
		if len(c.q.ChangedFields) > 0 {
			fields := make([]string, len(c.q.ChangedFields))
			for i, f := range c.q.ChangedFields {
				fields[i] = sanitize.Line(f)
			}
			warns = append(warns, styled(st.Warn, hanging("  What changed: ", strings.Join(fields, ", "), w))...)
		}
	}
	// Why it asks lists only the reasons to ask; what speaks for the call
	// (it only reads, a grant covers it) has a heading of its own.
	var why []string
	if len(c.reasons) > 0 {
		why = append(why, st.Label.Render("Why it asks"))
		for _, r := range c.reasons {
			why = append(why, hanging("• ", r, w)...)
		}
	}
	if len(c.favour) > 0 {
		if len(why) > 0 {
			why = append(why, "")
		}
		why = append(why, st.Label.Render("In its favour"))
		for _, r := range c.favour {
			why = append(why, hanging("• ", r, w)...)
		}
	}
	argLabel := "Arguments"
	if !c.argsOK {
		argLabel += " (not valid JSON)"
	}
	argLines := hardWrap(c.args, w)
	// section appends lines to body after a blank line.
	section := func(body []string, lines ...string) []string {
		if len(lines) == 0 {
			return body
		}
		if len(body) > 0 {
			body = append(body, "")
		}
		return append(body, lines...)
	}

	// The usual layout first.
	c.compact = false
	head := append(append(append(append([]string{}, base...), titleLines...), descLines...), warns...)
	foot := c.footerLines(w)
	room := h - len(head) - len(foot) - 2 // a blank line and the body label
	short := room-len(why)-1 < min(len(argLines), 5)
	body := argLines
	if short {
		// The arguments first, then why it asks, then what the server
		// says of its tool.
		c.reasonsInBody = true
		head = append(append(append([]string{}, base...), titleLines...), warns...)
		room = h - len(head) - len(foot) - 2
		body = append([]string{st.Label.Render(argLabel)}, argLines...)
		body = section(body, why...)
		if fullDesc == nil {
			body = section(body, descLines...)
		}
	} else {
		c.reasonsInBody = false
		if len(why) > 0 {
			head = append(head, "")
			head = append(head, why...)
			room -= len(why) + 1
		}
	}
	if room < 3 || short && room < 5 {
		// Compact: only the essentials stay put; the arguments lead.
		c.compact, c.reasonsInBody = true, true
		head = base
		foot = c.footerLines(w)
		room = h - len(head) - len(foot) - 1 // the body label, no blank line
		body = append([]string{st.Label.Render(argLabel)}, argLines...)
		body = section(body, warns...)
		body = section(body, titleLines...)
		body = section(body, why...)
		if fullDesc == nil {
			body = section(body, descLines...)
		}
	}
	body = append(body, fullDesc...)
	if room < 1 {
		// keep the verdict line, the name, one line of body and the footer
		head = head[:max(min(2, len(head)), len(head)-(1-room))]
		room = 1
	}
	c.header, c.footer = head, foot

	vpKey := fmt.Sprint(w, c.reasonsInBody, c.compact, len(body))
	c.vp.SetWidth(w)
	c.vp.SetHeight(room)
	if vpKey != c.vpKey {
		c.vp.SetContent(strings.Join(body, "\n"))
		c.vpKey = vpKey
	}
	if c.mode == modeEdit {
		c.editor.SetWidth(w)
		c.editor.SetHeight(room)
	}
}

// footerLines lays out what sits under the body for the current mode. The
// scroll keys are not listed: the body's label line names them when the
// body scrolls. A compact footer has no blank line and short key hints.
func (c *Confirm) footerLines(w int) []string {
	st, k := c.st, c.keys
	var foot []string
	gap := func() {
		if !c.compact {
			foot = append(foot, "")
		}
	}
	switch c.mode {
	case modeButtons:
		gap()
		if c.hint != "" {
			foot = append(foot, styled(st.Error, wrapText(c.hint, w))...)
		}
		foot = append(foot, c.buttonLines(w)...)
		if c.compact {
			foot = append(foot, helpLines(st, w, withHelp(k.Once, "once"), withHelp(k.Args, "args"), withHelp(k.Session, "session"),
				withHelp(k.Always, "always"), withHelp(k.Deny, "deny"), withHelp(k.Reason, "reason"), withHelp(k.Edit, "edit"))...)
		} else {
			foot = append(foot, helpLines(st, w, k.Once, k.Args, k.Session, k.Always,
				k.Deny, k.Reason, k.Edit, k.Next, k.Choose)...)
		}
	case modeTyped:
		what := map[decide.Scope]string{
			decide.ScopeOnce: "allow this call once", decide.ScopeArgs: "allow these exact arguments",
			decide.ScopeSession: "allow this tool for the session",
		}[c.scope]
		gap()
		if c.compact {
			foot = append(foot, wrapText("Type "+st.Heading.Render(c.word)+", then enter.", w)...)
		} else {
			foot = append(foot, wrapText("To "+what+", type "+st.Heading.Render(c.word)+" and press enter.", w)...)
		}
		foot = append(foot, c.scopeLines(w)...)
		foot = append(foot, "> "+sanitize.Line(string(c.typed))+"▏")
		foot = append(foot, styled(st.Error, wrapText(c.hint, w))...)
		if c.compact {
			scope := k.Next
			scope.SetHelp("tab", "scope")
			foot = append(foot, helpLines(st, w, withHelp(k.Confirm, "allow"), k.Deny, scope)...)
		} else {
			foot = append(foot, helpLines(st, w, withHelp(k.Confirm, "allow"), k.Deny, k.FieldReason, k.FieldEdit)...)
		}
	case modeReason:
		c.reason.SetWidth(max(w-4, 1))
		gap()
		foot = append(foot, st.Label.Render("Deny, and tell the model why"), c.reason.View())
		foot = append(foot, helpLines(st, w, withHelp(k.Confirm, "deny with this reason"), k.Back)...)
	case modeEdit:
		foot = append(foot, styled(st.Error, wrapText(c.hint, w))...)
		foot = append(foot, helpLines(st, w, k.Submit, withHelp(k.Back, "discard edits"))...)
	case modeTrust:
		server := sanitize.Name(c.q.Server)
		gap()
		foot = append(foot, st.Heading.Render("Trust "+server+"?"))
		foot = append(foot, wrapText("Its annotations then count for every tool it has: the reads and additive writes it declares run without asking, this call included. "+
			"Remembered for its exact command or URL, as /trust "+server+" does; /untrust "+server+" takes it back.", w)...)
		foot = append(foot, helpLines(st, w, withHelp(k.TrustServer, "trust "+server+" and run the call"), withHelp(k.Back, "back"))...)
	}
	return foot
}

// scopeLines shows the approvals a T3 confirmation can give, the chosen
// one marked; the arrows and Tab move between them.
func (c *Confirm) scopeLines(w int) []string {
	var items []string
	if !c.compact {
		items = append(items, c.st.Muted.Render("Scope ("+c.keys.Next.Help().Key+"):"))
	}
	short := map[decide.Scope]string{decide.ScopeOnce: "once", decide.ScopeArgs: "args", decide.ScopeSession: "session"}
	for _, b := range c.buttons[:len(c.buttons)-1] {
		label := b.label
		if c.compact {
			label = short[b.scope]
		}
		if b.scope == c.scope {
			items = append(items, c.st.FocusedDanger.Render("[ "+label+" ]"))
		} else {
			items = append(items, c.st.Button.Render("  "+label+"  "))
		}
	}
	return flow(items, " ", w)
}

func (c *Confirm) buttonLines(w int) []string {
	focused := c.st.Focused
	if c.danger {
		focused = c.st.FocusedDanger
	}
	items := make([]string, len(c.buttons))
	for i, b := range c.buttons {
		if i == c.focus {
			items[i] = focused.Render("[ " + b.label + " ]")
		} else {
			items[i] = c.st.Button.Render("  " + b.label + "  ")
		}
	}
	return flow(items, " ", w)
}

// View renders the dialog as a box of exactly Width×Height cells.
func (c *Confirm) View() string {
	st := c.st
	w := c.o.Width - 4
	label := "Arguments"
	if !c.argsOK {
		label += " (not valid JSON)"
	}
	if c.reasonsInBody {
		label = "" // the body has its own headings
	}
	var body []string
	if c.mode == modeEdit {
		label = "Edit the arguments (a JSON object); the edited call is decided again"
		body = strings.Split(c.editor.View(), "\n")
	} else {
		body = strings.Split(c.vp.View(), "\n")
	}
	lines := append([]string{}, c.header...)
	if !c.compact {
		lines = append(lines, "")
	}
	lines = append(lines, spread(st.Label.Render(clip(label, w)), st.Muted.Render(scrollState(c.vp, c.mode != modeEdit)), w)[0])
	lines = append(lines, body...)
	lines = append(lines, c.footer...)
	frame := st.Frame
	if c.danger {
		frame = st.Danger
	}
	return box(frame, c.o.Width, c.o.Height, lines)
}

// scrollState says which lines of the body are shown, when not all are.
func scrollState(vp viewport.Model, show bool) string {
	total, h := vp.TotalLineCount(), vp.Height()
	if !show || total <= h {
		return ""
	}
	y := vp.YOffset()
	return fmt.Sprintf("lines %d–%d of %d · ↑/↓/pgup/pgdn", y+1, min(y+h, total), total)
}

// flow joins items with sep into lines of at most width cells.
func flow(items []string, sep string, width int) []string {
	var lines []string
	cur := ""
	for _, it := range items {
		switch {
		case cur == "":
			cur = it
		case ansi.StringWidth(cur+sep+it) <= width:
			cur += sep + it
		default:
			lines = append(lines, cur)
			cur = it
		}
	}
	return append(lines, cur)
}

func styled(s lipgloss.Style, lines []string) []string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		if l != "" {
			l = s.Render(l)
		}
		out = append(out, l)
	}
	if len(out) == 1 && out[0] == "" {
		return nil
	}
	return out
}

// withKeys returns b answering only to keys, its help naming them.
func withKeys(b key.Binding, keys ...string) key.Binding {
	b.SetKeys(keys...)
	b.SetHelp(strings.Join(keys, "/"), b.Help().Desc)
	return b
}

func withHelp(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}

func inputStyles(o Options) textinput.Styles {
	if o.NoColor {
		return textinput.Styles{}
	}
	return textinput.DefaultStyles(o.Dark)
}

func editorStyles(o Options) textarea.Styles {
	if o.NoColor {
		return textarea.Styles{}
	}
	return textarea.DefaultStyles(o.Dark)
}
