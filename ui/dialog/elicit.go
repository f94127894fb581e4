package dialog

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/textinput"
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

type fieldKind uint8

const (
	fieldString fieldKind = iota
	fieldNumber
	fieldInteger
	fieldBool
	fieldEnum
)

// field is one top-level property of the requested schema.
type field struct {
	name, title, desc string
	kind              fieldKind
	required          bool
	enum              []string
	choice            int // enum: index into enum, -1 when none chosen
	on                bool
	input             textinput.Model
	min, max          *float64 // minimum/maximum, or minLength/maxLength for strings
	err               string
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
		e.fields, e.unsupported = parseForm(r.Schema, o)
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

func parseForm(raw json.RawMessage, o Options) ([]*field, string) {
	var s struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, "the requested schema is not a JSON object"
		}
	}
	req := map[string]bool{}
	for _, r := range s.Required {
		req[r] = true
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	var fields []*field
	for _, n := range names {
		var p struct {
			Type        string            `json:"type"`
			Title       string            `json:"title"`
			Description string            `json:"description"`
			Enum        []json.RawMessage `json:"enum"`
			Default     json.RawMessage   `json:"default"`
			Minimum     *float64          `json:"minimum"`
			Maximum     *float64          `json:"maximum"`
			MinLength   *float64          `json:"minLength"`
			MaxLength   *float64          `json:"maxLength"`
		}
		if err := json.Unmarshal(s.Properties[n], &p); err != nil {
			return nil, fmt.Sprintf("the field %s is not described by a JSON object", strconv.Quote(sanitize.Line(n)))
		}
		f := &field{name: n, title: p.Title, desc: p.Description, required: req[n], choice: -1, min: p.Minimum, max: p.Maximum}
		switch {
		case p.Type == "string" && len(p.Enum) > 0:
			f.kind = fieldEnum
			for _, v := range p.Enum {
				var s string
				if json.Unmarshal(v, &s) != nil {
					return nil, fmt.Sprintf("the field %s has a choice that is not a string", strconv.Quote(sanitize.Line(n)))
				}
				f.enum = append(f.enum, s)
			}
			var d string
			if json.Unmarshal(p.Default, &d) == nil {
				for i, v := range f.enum {
					if v == d {
						f.choice = i
					}
				}
			}
		case p.Type == "string":
			f.kind = fieldString
			f.min, f.max = p.MinLength, p.MaxLength
		case p.Type == "number":
			f.kind = fieldNumber
		case p.Type == "integer":
			f.kind = fieldInteger
		case p.Type == "boolean":
			f.kind = fieldBool
			_ = json.Unmarshal(p.Default, &f.on)
		default:
			return nil, fmt.Sprintf("the field %s has the type %s, which mcphost cannot show as a form",
				strconv.Quote(sanitize.Line(n)), strconv.Quote(sanitize.Line(p.Type)))
		}
		if f.kind == fieldString || f.kind == fieldNumber || f.kind == fieldInteger {
			f.input = textinput.New()
			f.input.Prompt = ""
			f.input.CharLimit = 4000
			f.input.KeyMap.Paste.SetEnabled(false)
			f.input.SetStyles(inputStyles(o))
			f.input.SetVirtualCursor(true)
			var d any
			if json.Unmarshal(p.Default, &d) == nil && d != nil {
				switch d := d.(type) {
				case string:
					f.input.SetValue(sanitize.Line(d)) // what is shown is what is sent
				case float64:
					f.input.SetValue(strconv.FormatFloat(d, 'f', -1, 64))
				}
			}
		}
		fields = append(fields, f)
	}
	return fields, ""
}

func (e *Elicit) setFocus(i int) {
	n := len(e.fields) + len(e.buttons)
	e.focus = (i%n + n) % n
	for j, f := range e.fields {
		if f.kind == fieldString || f.kind == fieldNumber || f.kind == fieldInteger {
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
		if f := e.focused(); f == nil || f.kind == fieldBool || f.kind == fieldEnum || km.String() == "enter" {
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
	f.err = ""
	switch f.kind {
	case fieldBool:
		switch km.String() {
		case "space", "left", "right", "x":
			f.on = !f.on
		case "enter":
			e.setFocus(e.focus + 1)
		}
		return nil
	case fieldEnum:
		switch km.String() {
		case "space", "right":
			f.choice = (f.choice + 1) % len(f.enum)
		case "left":
			f.choice = (f.choice - 1 + len(f.enum)) % len(f.enum)
			if f.choice < 0 {
				f.choice = len(f.enum) - 1
			}
		case "enter":
			e.setFocus(e.focus + 1)
		}
		return nil
	}
	if km.String() == "enter" {
		e.setFocus(e.focus + 1)
		return nil
	}
	if len(km.Text) > 1 {
		return nil // several characters at once is a paste in disguise
	}
	var cmd tea.Cmd
	f.input, cmd = f.input.Update(km)
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

// value returns the field's value for the server, nil for an optional
// field left empty, or what is wrong with it.
func (f *field) value() (any, string) {
	switch f.kind {
	case fieldBool:
		return f.on, ""
	case fieldEnum:
		if f.choice < 0 {
			if f.required {
				return nil, "choose one"
			}
			return nil, ""
		}
		return f.enum[f.choice], ""
	}
	text := f.input.Value()
	if text == "" {
		if f.required {
			return nil, "required"
		}
		return nil, ""
	}
	switch f.kind {
	case fieldNumber, fieldInteger:
		n, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			return nil, "not a number"
		}
		if f.kind == fieldInteger && n != math.Trunc(n) {
			return nil, "not a whole number"
		}
		if f.min != nil && n < *f.min {
			return nil, "at least " + strconv.FormatFloat(*f.min, 'f', -1, 64)
		}
		if f.max != nil && n > *f.max {
			return nil, "at most " + strconv.FormatFloat(*f.max, 'f', -1, 64)
		}
		if f.kind == fieldInteger {
			return int64(n), ""
		}
		return n, ""
	}
	n := float64(len([]rune(text)))
	if f.min != nil && n < *f.min {
		return nil, "at least " + strconv.FormatFloat(*f.min, 'f', -1, 64) + " characters"
	}
	if f.max != nil && n > *f.max {
		return nil, "at most " + strconv.FormatFloat(*f.max, 'f', -1, 64) + " characters"
	}
	return text, ""
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
	foot = append(foot, styled(st.Muted, wrapText("tab/↑↓ move · space toggles or picks · enter next/choose · esc cancel", w))...)

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
	st := e.st
	marker := "  "
	if focused {
		marker = "› "
	}
	label := sanitize.Line(f.name)
	if f.required {
		label += " *"
	}
	head := marker + st.Label.Render(label)
	if k, ok := map[fieldKind]string{fieldNumber: "number", fieldInteger: "whole number"}[f.kind]; ok {
		head += st.Muted.Render(" (" + k + ")")
	}
	if f.title != "" {
		head += st.Muted.Render(" “" + oneLine(f.title) + "”")
	}
	out := []string{clip(head, w)}
	if f.desc != "" {
		out = append(out, styled(st.Muted, hanging("    ", oneLine(f.desc), w))...)
	}
	var val string
	switch f.kind {
	case fieldBool:
		val = "[ ] no"
		if f.on {
			val = "[x] yes"
		}
	case fieldEnum:
		var opts []string
		for i, v := range f.enum {
			if i == f.choice {
				opts = append(opts, "("+sanitize.Line(v)+")")
			} else {
				opts = append(opts, " "+sanitize.Line(v)+" ")
			}
		}
		for _, l := range flow(opts, " ", w-4) {
			out = append(out, "    "+l)
		}
	default:
		f.input.SetWidth(max(w-8, 4))
		val = "[" + f.input.View() + "]"
	}
	if val != "" {
		out = append(out, clip("    "+val, w))
	}
	if f.err != "" {
		out = append(out, st.Error.Render(clip("    ! "+f.err, w)))
	}
	return out
}
