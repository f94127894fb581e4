package dialog

import (
	"encoding/json"

	tea "charm.land/bubbletea/v2"

	"github.com/mcphost/mcphost/oauth"
	"github.com/mcphost/mcphost/sanitize"
)

// ElicitRequest is a server's question to the person (elicitation/create).
// Everything in it but Server is the server's words.
type ElicitRequest struct {
	Server  string // the server's config name
	Message string
	// URL, when set, makes this a URL-mode request: the server asks the
	// person to visit an address. Otherwise Schema describes a form.
	URL    string
	Schema json.RawMessage
	// Order lists the form's fields in the order the server wrote them,
	// when known; fields not in it follow by name.
	Order []string
}

// ElicitAction is how the person answered. The zero value cancels: a
// question never answered gives the server nothing.
type ElicitAction uint8

const (
	ElicitCancel  ElicitAction = iota // dismissed without choosing
	ElicitDecline                     // explicitly refused
	ElicitAccept                      // submitted the form, or agreed to visit the URL
)

// String returns the protocol's word for the action.
func (a ElicitAction) String() string {
	switch a {
	case ElicitAccept:
		return "accept"
	case ElicitDecline:
		return "decline"
	}
	return "cancel"
}

// ElicitResult is the person's answer. Content holds the form's values
// (strings, float64 numbers, int64 integers, booleans) when a form was
// accepted; optional fields left empty are absent.
type ElicitResult struct {
	Action  ElicitAction
	Content map[string]any
}

// Elicit asks a person to fill in a server's form, or to visit the
// address it names. Esc cancels; Decline refuses; Accept submits a form
// only once every field is valid.
type Elicit struct {
	r    ElicitRequest
	o    Options
	st   Styles
	wait grace

	fields []*field
	// unsupported names a schema mcphost cannot show as a form; the form
	// can then only be declined.
	unsupported string
	// badURL says why a URL will not be opened (oauth.CheckVisitURL).
	badURL string
	// hostNote spells a non-ASCII host name in ASCII, so that a look-alike
	// shows for what it is (oauth.HostNote).
	hostNote string

	buttons []ElicitAction
	focus   int // fields first, then buttons
	note    string

	result ElicitResult
	done   bool
}

// NewElicit returns the dialog for r. Focus starts on the first field, or
// on the first button when there is none.
func NewElicit(r ElicitRequest, o Options) *Elicit {
	o = o.withDefaults()
	e := &Elicit{r: r, o: o, st: NewStyles(o.Dark, o.NoColor), wait: newGrace(o)}
	switch {
	case r.URL != "":
		if u, err := oauth.CheckVisitURL(r.URL); err != nil {
			e.badURL = err.Error() + "; this request can only be declined"
			e.buttons = []ElicitAction{ElicitDecline, ElicitCancel}
		} else {
			e.hostNote = oauth.HostNote(u)
			e.buttons = []ElicitAction{ElicitAccept, ElicitDecline, ElicitCancel}
		}
	default:
		e.fields, e.unsupported = parseForm(r.Schema, r.Order, o)
		e.buttons = []ElicitAction{ElicitAccept, ElicitDecline, ElicitCancel}
		if e.unsupported != "" {
			e.fields = nil
			e.buttons = []ElicitAction{ElicitDecline, ElicitCancel}
		}
	}
	e.setFocus(0)
	return e
}

// Request returns what the dialog asks.
func (e *Elicit) Request() ElicitRequest { return e.r }

// Result returns the person's answer, and true once they have answered.
func (e *Elicit) Result() (ElicitResult, bool) { return e.result, e.done }

// SetSize sets the size of the whole box, border included.
func (e *Elicit) SetSize(width, height int) {
	e.o.Width, e.o.Height = max(width, minWidth), max(height, minHeight)
}

func (e *Elicit) setFocus(i int) {
	n := len(e.fields) + len(e.buttons)
	e.focus = (i%n + n) % n
	for j, f := range e.fields {
		if f.hasInput() {
			if j == e.focus {
				f.input.Focus()
			} else {
				f.input.Blur()
			}
		}
	}
}

// Update handles a message. Keys are ignored during the grace period and
// pastes always; once the person has answered, everything is ignored.
func (e *Elicit) Update(msg tea.Msg) (*Elicit, tea.Cmd) {
	if e.done {
		return e, nil
	}
	km, ok := msg.(tea.KeyPressMsg)
	if !ok || e.wait.holds() {
		return e, nil
	}
	switch km.String() {
	case "esc":
		e.finish(ElicitResult{Action: ElicitCancel})
		return e, nil
	case "tab", "down":
		e.setFocus(e.focus + 1)
		return e, nil
	case "shift+tab", "up":
		e.setFocus(e.focus - 1)
		return e, nil
	}
	if km.IsRepeat {
		if f := e.focused(); f == nil || !f.hasInput() || km.String() == "enter" {
			return e, nil // a held key is not an answer
		}
	}
	if f := e.focused(); f != nil {
		return e, e.fieldKey(f, km)
	}
	switch km.String() {
	case "left":
		e.setFocus(e.focus - 1)
	case "right":
		e.setFocus(e.focus + 1)
	case "enter", "space":
		e.press(e.buttons[e.focus-len(e.fields)])
	}
	return e, nil
}

func (e *Elicit) focused() *field {
	if e.focus < len(e.fields) {
		return e.fields[e.focus]
	}
	return nil
}

func (e *Elicit) fieldKey(f *field, km tea.KeyPressMsg) tea.Cmd {
	cmd, next := f.key(km)
	if next {
		e.setFocus(e.focus + 1)
	}
	return cmd
}

func (e *Elicit) press(a ElicitAction) {
	if a != ElicitAccept || e.r.URL != "" {
		e.finish(ElicitResult{Action: a})
		return
	}
	content := map[string]any{}
	first := -1
	for i, f := range e.fields {
		v, err := f.value()
		if err != "" {
			f.err = err
			if first < 0 {
				first = i
			}
			continue
		}
		if v != nil {
			content[f.name] = v
		}
	}
	if first >= 0 {
		e.note = "some fields need attention"
		e.setFocus(first)
		return
	}
	e.finish(ElicitResult{Action: ElicitAccept, Content: content})
}

func (e *Elicit) finish(r ElicitResult) { e.result, e.done = r, true }

// View renders the dialog as a box of exactly Width×Height cells.
func (e *Elicit) View() string {
	st, r := e.st, e.r
	w := e.o.Width - 4
	title := "A server asks you for information"
	if r.URL != "" {
		title = "A server asks you to visit an address"
	}
	lines := spread(st.Heading.Render(title), st.Muted.Render(position(e.o)), w)
	lines = append(lines, hardWrap(st.Heading.Render(sanitize.Line(r.Server)), w)...)
	if msg := oneLine(r.Message); msg != "" {
		lines = append(lines, st.Label.Render("The server's message:"))
		lines = append(lines, styled(st.Muted, wrapText(msg, w))...)
	}
	lines = append(lines, "")
	var body []string
	focusLine := 0
	switch {
	case r.URL != "":
		body = append(body, st.Label.Render("Address (the server's words):"))
		body = append(body, hardWrap(sanitize.Line(r.URL), w)...)
		if e.badURL != "" {
			body = append(body, styled(st.Warn, hanging("! ", e.badURL, w))...)
		} else {
			if e.hostNote != "" {
				body = append(body, styled(st.Warn, hanging("! ", e.hostNote, w))...)
			}
			body = append(body, styled(st.Muted, wrapText("Accept opens it in your browser; nothing is opened otherwise.", w))...)
		}
	case e.unsupported != "":
		body = append(body, styled(st.Warn, hanging("! ", e.unsupported+"; the request can only be declined.", w))...)
	default:
		for i, f := range e.fields {
			if i == e.focus {
				focusLine = len(body)
			}
			body = append(body, e.fieldLines(f, i == e.focus, w)...)
		}
	}
	var foot []string
	if e.note != "" {
		foot = append(foot, st.Error.Render(clip(e.note, w)))
	}
	items := make([]string, len(e.buttons))
	for i, b := range e.buttons {
		label := map[ElicitAction]string{ElicitAccept: "Accept", ElicitDecline: "Decline", ElicitCancel: "Cancel"}[b]
		if b == ElicitAccept && r.URL != "" {
			label = "Open in browser"
		}
		if len(e.fields)+i == e.focus {
			items[i] = st.Focused.Render("[ " + label + " ]")
		} else {
			items[i] = st.Button.Render("  " + label + "  ")
		}
	}
	foot = append(foot, flow(items, " ", w)...)
	foot = append(foot, styled(st.Muted, wrapText("tab/↑↓ move · space toggle/pick · ←→ choice · enter next · esc cancel", w))...)

	room := e.o.Height - 2 - len(lines) - len(foot)
	if room < 1 {
		room = 1
	}
	if len(body) > room { // keep the focused field in sight
		start := max(0, min(focusLine-room/2, len(body)-room))
		body = body[start : start+room]
	}
	lines = append(lines, body...)
	for len(lines) < e.o.Height-2-len(foot) {
		lines = append(lines, "")
	}
	lines = append(lines, foot...)
	return box(st.Frame, e.o.Width, e.o.Height, lines)
}

func (e *Elicit) fieldLines(f *field, focused bool, w int) []string {
	return f.lines(e.st, focused, w)
}
