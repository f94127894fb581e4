package dialog

import (
	"encoding/json"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/mcphost/mcphost/sanitize"
)

// The form fields of an elicitation: the requested schema of MCP
// 2025-11-25, a flat object whose properties are strings (with a format
// and lengths), numbers and integers (with bounds), booleans, single-select
// enums (plain, titled with oneOf, or with the older enumNames) and
// multi-select arrays of such choices (with item counts). Defaults fill the
// fields; every field is checked before an answer is sent.

type fieldKind uint8

const (
	fieldString fieldKind = iota
	fieldNumber
	fieldInteger
	fieldBool
	fieldEnum  // pick one
	fieldMulti // pick any number, within minItems..maxItems
)

// maxChoices bounds the choices of one field that are shown.
const maxChoices = 100

// field is one top-level property of the requested schema.
type field struct {
	name, title, desc string
	kind              fieldKind
	required          bool
	format            string // strings: email, uri, date, date-time, or ""

	// Enums: the values sent and the labels shown (the server's titles,
	// or the values).
	values, labels []string
	choice         int    // fieldEnum: index into values, -1 when none chosen
	picked         []bool // fieldMulti: chosen values
	cursor         int    // fieldMulti: the value space toggles

	on    bool
	input textinput.Model
	// min and max are minimum/maximum for numbers, minLength/maxLength for
	// strings, minItems/maxItems for multi-select.
	min, max *float64
	err      string
}

// prop is a property as the schema writes it.
type prop struct {
	Type        json.RawMessage   `json:"type"`
	Title       string            `json:"title"`
	Description string            `json:"description"`
	Format      string            `json:"format"`
	Enum        []json.RawMessage `json:"enum"`
	EnumNames   []string          `json:"enumNames"`
	OneOf       []titled          `json:"oneOf"`
	AnyOf       []titled          `json:"anyOf"`
	Items       *prop             `json:"items"`
	Default     json.RawMessage   `json:"default"`
	Minimum     *float64          `json:"minimum"`
	Maximum     *float64          `json:"maximum"`
	MinLength   *float64          `json:"minLength"`
	MaxLength   *float64          `json:"maxLength"`
	MinItems    *float64          `json:"minItems"`
	MaxItems    *float64          `json:"maxItems"`
}

// titled is a choice with its label: {"const": VALUE, "title": LABEL}.
type titled struct {
	Const json.RawMessage `json:"const"`
	Title string          `json:"title"`
}

// parseForm reads the requested schema into fields, in order (the
// server's, when known; names not in it follow by name). The string it
// returns names what cannot be shown as a form.
func parseForm(raw json.RawMessage, order []string, o Options) ([]*field, string) {
	var s struct {
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
	var fields []*field
	for _, n := range fieldOrder(s.Properties, order) {
		var p prop
		if err := json.Unmarshal(s.Properties[n], &p); err != nil {
			return nil, fmt.Sprintf("the field %s is not described by a JSON object", quoteName(n))
		}
		f, why := newField(n, p, req[n], o)
		if why != "" {
			return nil, fmt.Sprintf("the field %s %s", quoteName(n), why)
		}
		fields = append(fields, f)
	}
	return fields, ""
}

func quoteName(n string) string { return strconv.Quote(sanitize.Line(n)) }

// fieldOrder lists the property names in order, each once, and only names
// that are properties.
func fieldOrder(props map[string]json.RawMessage, order []string) []string {
	var names []string
	seen := map[string]bool{}
	for _, n := range order {
		if _, ok := props[n]; ok && !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	var rest []string
	for n := range props {
		if !seen[n] {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(names, rest...)
}

func typeName(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 {
		return "", true
	}
	var t string
	err := json.Unmarshal(raw, &t)
	return t, err == nil
}

// newField builds the field for property n, or says why it cannot.
func newField(n string, p prop, required bool, o Options) (*field, string) {
	f := &field{name: n, title: p.Title, desc: p.Description, required: required, choice: -1}
	typ, ok := typeName(p.Type)
	if !ok {
		return nil, "has a type that is not a single name"
	}
	switch {
	case (typ == "string" || typ == "") && (len(p.Enum) > 0 || len(p.OneOf) > 0):
		f.kind = fieldEnum
		if why := f.setChoices(p.Enum, p.EnumNames, p.OneOf); why != "" {
			return nil, why
		}
		var d string
		if json.Unmarshal(p.Default, &d) == nil {
			f.choice = indexOf(f.values, d)
		}
	case typ == "array":
		if p.Items == nil {
			return nil, "is a list without its choices (\"items\")"
		}
		if t, _ := typeName(p.Items.Type); t != "" && t != "string" {
			return nil, "is a list of something other than text choices"
		}
		f.kind = fieldMulti
		choices := p.Items.AnyOf
		if len(choices) == 0 {
			choices = p.Items.OneOf
		}
		if why := f.setChoices(p.Items.Enum, p.Items.EnumNames, choices); why != "" {
			return nil, why
		}
		f.picked = make([]bool, len(f.values))
		var d []string
		if json.Unmarshal(p.Default, &d) == nil {
			for _, v := range d {
				if i := indexOf(f.values, v); i >= 0 {
					f.picked[i] = true
				}
			}
		}
		f.min, f.max = p.MinItems, p.MaxItems
	case typ == "string":
		f.kind = fieldString
		f.min, f.max = p.MinLength, p.MaxLength
		switch p.Format {
		case "email", "uri", "date", "date-time":
			f.format = p.Format
		}
	case typ == "number":
		f.kind = fieldNumber
		f.min, f.max = p.Minimum, p.Maximum
	case typ == "integer":
		f.kind = fieldInteger
		f.min, f.max = p.Minimum, p.Maximum
	case typ == "boolean":
		f.kind = fieldBool
		_ = json.Unmarshal(p.Default, &f.on)
	default:
		return nil, fmt.Sprintf("has the type %s, which mcphost cannot show as a form", strconv.Quote(sanitize.Line(typ)))
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
	return f, ""
}

// setChoices reads the values and labels of an enum: plain values with
// optional enumNames, or titled {const, title} choices.
func (f *field) setChoices(enum []json.RawMessage, names []string, titledChoices []titled) string {
	if len(enum) > 0 {
		for _, v := range enum {
			var s string
			if json.Unmarshal(v, &s) != nil {
				return "has a choice that is not text"
			}
			f.values = append(f.values, s)
		}
		f.labels = f.values
		if len(names) == len(enum) {
			f.labels = names
		}
	} else {
		for _, c := range titledChoices {
			var s string
			if json.Unmarshal(c.Const, &s) != nil {
				return "has a choice that is not text"
			}
			label := c.Title
			if label == "" {
				label = s
			}
			f.values = append(f.values, s)
			f.labels = append(f.labels, label)
		}
	}
	if len(f.values) == 0 {
		return "has no choices"
	}
	if len(f.values) > maxChoices {
		return fmt.Sprintf("has %d choices, more than the %d a form shows", len(f.values), maxChoices)
	}
	return ""
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

func (f *field) hasInput() bool {
	return f.kind == fieldString || f.kind == fieldNumber || f.kind == fieldInteger
}

// key handles a key for the focused field; next says to move to the next
// field.
func (f *field) key(km tea.KeyPressMsg) (cmd tea.Cmd, next bool) {
	f.err = ""
	k := km.String()
	switch f.kind {
	case fieldBool:
		switch k {
		case "space", "left", "right", "x":
			f.on = !f.on
		case "enter":
			return nil, true
		}
		return nil, false
	case fieldEnum:
		n := len(f.values)
		switch k {
		case "space", "right":
			f.choice = (f.choice + 1) % n
		case "left":
			f.choice = ((f.choice-1)%n + n) % n
		case "enter":
			return nil, true
		}
		return nil, false
	case fieldMulti:
		n := len(f.values)
		switch k {
		case "right":
			f.cursor = (f.cursor + 1) % n
		case "left":
			f.cursor = (f.cursor - 1 + n) % n
		case "space", "x":
			f.picked[f.cursor] = !f.picked[f.cursor]
		case "enter":
			return nil, true
		}
		return nil, false
	}
	if k == "enter" {
		return nil, true
	}
	if len(km.Text) > 1 {
		return nil, false // several characters at once is a paste in disguise
	}
	f.input, cmd = f.input.Update(km)
	return cmd, false
}

// value returns the field's value for the server, nil for an optional
// field left empty, or what is wrong with it.
func (f *field) value() (any, string) {
	switch f.kind {
	case fieldBool:
		return f.on, ""
	case fieldEnum:
		if f.choice < 0 || f.choice >= len(f.values) {
			if f.required {
				return nil, "choose one"
			}
			return nil, ""
		}
		return f.values[f.choice], ""
	case fieldMulti:
		chosen := []string{}
		for i, p := range f.picked {
			if p {
				chosen = append(chosen, f.values[i])
			}
		}
		if len(chosen) == 0 && !f.required && f.min == nil {
			return nil, ""
		}
		if len(chosen) == 0 && f.required {
			return nil, "choose at least one"
		}
		n := float64(len(chosen))
		if f.min != nil && n < *f.min {
			return nil, "choose at least " + formatNum(*f.min)
		}
		if f.max != nil && n > *f.max {
			return nil, "choose at most " + formatNum(*f.max)
		}
		return chosen, ""
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
		if f.kind == fieldInteger && (n != math.Trunc(n) || math.Abs(n) > 1<<53) {
			return nil, "not a whole number"
		}
		if f.min != nil && n < *f.min {
			return nil, "at least " + formatNum(*f.min)
		}
		if f.max != nil && n > *f.max {
			return nil, "at most " + formatNum(*f.max)
		}
		if f.kind == fieldInteger {
			return int64(n), ""
		}
		return n, ""
	}
	n := float64(len([]rune(text)))
	if f.min != nil && n < *f.min {
		return nil, "at least " + formatNum(*f.min) + " characters"
	}
	if f.max != nil && n > *f.max {
		return nil, "at most " + formatNum(*f.max) + " characters"
	}
	if why := checkFormat(f.format, text); why != "" {
		return nil, why
	}
	return text, ""
}

func formatNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// checkFormat says what is wrong with text for a string format.
func checkFormat(format, text string) string {
	switch format {
	case "email":
		a, err := mail.ParseAddress(text)
		if err != nil || a.Address != text || a.Name != "" || strings.ContainsAny(text, " \t") {
			return "not an email address (name@example.com)"
		}
	case "uri":
		u, err := url.Parse(text)
		if err != nil || u.Scheme == "" || (u.Host == "" && u.Opaque == "" && u.Path == "") || strings.ContainsAny(text, " \t") {
			return "not an address with a scheme (https://example.com/…)"
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, text); err != nil {
			return "not a date (YYYY-MM-DD)"
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, text); err != nil {
			return "not a date and time (YYYY-MM-DDTHH:MM:SSZ, with Z or an offset)"
		}
	}
	return ""
}

// formatHint is what the heading says of a string format.
var formatHint = map[string]string{
	"email":     "email address",
	"uri":       "web address",
	"date":      "date, YYYY-MM-DD",
	"date-time": "date and time, YYYY-MM-DDTHH:MM:SSZ",
}

// lines renders the field at width w.
func (f *field) lines(st Styles, focused bool, w int) []string {
	marker := "  "
	if focused {
		marker = "› "
	}
	label := sanitize.Line(f.name)
	if f.required {
		label += " *"
	}
	head := marker + st.Label.Render(label)
	hint := map[fieldKind]string{fieldNumber: "number", fieldInteger: "whole number", fieldMulti: "choose any"}[f.kind]
	if f.format != "" {
		hint = formatHint[f.format]
	}
	if r := f.rangeHint(); r != "" {
		if hint != "" {
			hint += ", "
		}
		hint += r
	}
	if hint != "" {
		head += st.Muted.Render(" (" + hint + ")")
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
		for i, v := range f.labels {
			if i == f.choice {
				opts = append(opts, "("+oneLine(v)+")")
			} else {
				opts = append(opts, " "+oneLine(v)+" ")
			}
		}
		for _, l := range flow(opts, " ", w-4) {
			out = append(out, "    "+l)
		}
	case fieldMulti:
		var opts []string
		for i, v := range f.labels {
			box := "[ ] "
			if f.picked[i] {
				box = "[x] "
			}
			item := " " + box + oneLine(v)
			if focused && i == f.cursor {
				item = st.Focused.Render("›" + box + oneLine(v))
			}
			opts = append(opts, item)
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

// rangeHint states the bounds, so that a person need not guess them.
func (f *field) rangeHint() string {
	unit := map[fieldKind]string{fieldString: " characters", fieldMulti: ""}[f.kind]
	switch {
	case f.min != nil && f.max != nil:
		return formatNum(*f.min) + "–" + formatNum(*f.max) + unit
	case f.min != nil:
		return "at least " + formatNum(*f.min) + unit
	case f.max != nil:
		return "at most " + formatNum(*f.max) + unit
	}
	return ""
}
