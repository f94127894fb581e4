package dialog

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/google/go-cmp/cmp"
)

// everyField is the whole requested schema of MCP 2025-11-25, written in
// an order that is not the names' order.
var everyField = ElicitRequest{
	Server:  "everything",
	Message: "Please provide inputs for the following fields:",
	Schema: json.RawMessage(`{"type":"object","properties":{
		"name":{"type":"string","title":"String","description":"Your full, legal name","minLength":2,"maxLength":40},
		"check":{"type":"boolean","title":"Boolean"},
		"email":{"type":"string","format":"email"},
		"homepage":{"type":"string","format":"uri"},
		"birthdate":{"type":"string","format":"date"},
		"meeting":{"type":"string","format":"date-time"},
		"integer":{"type":"integer","minimum":1,"maximum":100,"default":42},
		"number":{"type":"number","minimum":0,"maximum":1000,"default":3.14},
		"friend":{"type":"string","enum":["Monica","Rachel","Joey"],"default":"Monica"},
		"instruments":{"type":"array","minItems":1,"maxItems":2,"items":{"type":"string","enum":["Guitar","Piano","Violin"]},"default":["Guitar"]},
		"hero":{"type":"string","oneOf":[{"const":"hero-1","title":"Superman"},{"const":"hero-2","title":"Green Lantern"}],"default":"hero-1"},
		"fish":{"type":"array","items":{"anyOf":[{"const":"fish-1","title":"Tuna"},{"const":"fish-2","title":"Salmon"}]},"default":["fish-2"]},
		"pet":{"type":"string","enum":["pet-1","pet-2"],"enumNames":["Cats","Dogs"],"default":"pet-2"}
	},"required":["name","email"]}`),
	Order: []string{"name", "check", "email", "homepage", "birthdate", "meeting", "integer", "number", "friend", "instruments", "hero", "fish", "pet"},
}

func fieldNames(e *Elicit) []string {
	var out []string
	for _, f := range e.fields {
		out = append(out, f.name)
	}
	return out
}

func focusField(e *Elicit, name string) {
	for i, f := range e.fields {
		if f.name == name {
			e.setFocus(i)
			return
		}
	}
	panic("no field " + name)
}

func typeInto(e *Elicit, name, text string) {
	focusField(e, name)
	f := e.fields[e.focus]
	f.input.SetValue("")
	for _, r := range text {
		e.Update(press(string(r)))
	}
}

func accept(e *Elicit) (ElicitResult, bool) {
	e.setFocus(len(e.fields))
	e.Update(press("enter"))
	return e.Result()
}

// TestElicitEveryFieldGolden: every kind of field at the two sizes a
// person uses most.
func TestElicitEveryFieldGolden(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{80, 24}, {140, 40}} {
		for _, tc := range []struct {
			name  string
			focus string
		}{{"top", "name"}, {"multi", "instruments"}} {
			t.Run(fmt.Sprintf("%s_%dx%d", tc.name, sz.w, sz.h), func(t *testing.T) {
				e, _ := openElicit(everyField, Options{Dark: true, Width: sz.w, Height: sz.h})
				focusField(e, tc.focus)
				plain := ansi.Strip(e.View())
				checkSize(t, plain, sz.w, sz.h)
				checkTerminalSafe(t, plain)
				golden.RequireEqual(t, []byte(plain))
			})
		}
	}
}

// TestElicitServerOrderAndDefaults: fields come in the server's order;
// defaults of every kind are what an untouched form sends.
func TestElicitServerOrderAndDefaults(t *testing.T) {
	e, _ := openElicit(everyField, Options{})
	if diff := cmp.Diff(everyField.Order, fieldNames(e)); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	typeInto(e, "name", "Ada Lovelace")
	typeInto(e, "email", "ada@example.com")
	got, done := accept(e)
	if !done || got.Action != ElicitAccept {
		t.Fatalf("not accepted: %s", e.View())
	}
	want := map[string]any{"name": "Ada Lovelace", "email": "ada@example.com", "check": false, "integer": int64(42), "number": 3.14,
		"friend": "Monica", "instruments": []string{"Guitar"}, "hero": "hero-1", "fish": []string{"fish-2"}, "pet": "pet-2"}
	if diff := cmp.Diff(want, got.Content); diff != "" {
		t.Errorf("content (-want +got):\n%s", diff)
	}
}

// TestElicitMultiSelect: space toggles the choice under the cursor, ←→
// move it; the count is checked against minItems and maxItems; the values
// sent are the server's, not the titles shown.
func TestElicitMultiSelect(t *testing.T) {
	e, _ := openElicit(everyField, Options{})
	typeInto(e, "name", "Ada")
	typeInto(e, "email", "ada@example.com")
	focusField(e, "instruments")
	elicitKeys(e, "space") // Guitar off: none chosen, minItems 1
	if _, done := accept(e); done {
		t.Fatal("accepted no instrument with minItems 1")
	}
	if f := e.fields[e.focus]; f.name != "instruments" || f.err != "choose at least 1" {
		t.Errorf("focus on %s with error %q", f.name, f.err)
	}
	elicitKeys(e, "space", "right", "space", "right", "space") // all three, maxItems 2
	if _, done := accept(e); done {
		t.Fatal("accepted three instruments with maxItems 2")
	}
	elicitKeys(e, "left", "space") // Piano off
	focusField(e, "fish")
	elicitKeys(e, "space") // Tuna on (Salmon was the default)
	got, done := accept(e)
	if !done {
		t.Fatalf("not accepted:\n%s", e.View())
	}
	if diff := cmp.Diff([]string{"Guitar", "Violin"}, got.Content["instruments"]); diff != "" {
		t.Errorf("instruments (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"fish-1", "fish-2"}, got.Content["fish"]); diff != "" {
		t.Errorf("fish (-want +got):\n%s", diff)
	}
}

// TestElicitValidatesBeforeSending: no answer leaves the dialog while a
// field breaks its format, length or bound; each says what is wrong.
func TestElicitValidatesBeforeSending(t *testing.T) {
	for _, tc := range []struct {
		field, text, want string
	}{
		{"name", "A", "at least 2 characters"},
		{"name", strings.Repeat("x", 41), "at most 40 characters"},
		{"email", "ada", "not an email address"},
		{"email", "Ada <ada@example.com>", "not an email address"},
		{"homepage", "example.com", "not an address with a scheme"},
		{"birthdate", "1815-13-10", "not a date"},
		{"meeting", "2026-12-01 10:00", "not a date and time"},
		{"integer", "4.5", "not a whole number"},
		{"integer", "101", "at most 100"},
		{"number", "-1", "at least 0"},
		{"number", "NaN", "not a number"},
	} {
		t.Run(tc.field+"="+tc.text, func(t *testing.T) {
			e, _ := openElicit(everyField, Options{Width: 100, Height: 60})
			typeInto(e, "name", "Ada")
			typeInto(e, "email", "ada@example.com")
			typeInto(e, tc.field, tc.text)
			if r, done := accept(e); done {
				t.Fatalf("sent %+v", r)
			}
			f := e.fields[e.focus]
			if f.name != tc.field || !strings.Contains(f.err, tc.want) {
				t.Errorf("focus on %s with %q, want %s with %q", f.name, f.err, tc.field, tc.want)
			}
			if !strings.Contains(ansi.Strip(e.View()), tc.want) {
				t.Errorf("the view does not say %q", tc.want)
			}
		})
	}
	// And the good values pass.
	e, _ := openElicit(everyField, Options{})
	typeInto(e, "name", "Ada")
	typeInto(e, "email", "ada@example.com")
	typeInto(e, "homepage", "https://example.com/ada")
	typeInto(e, "birthdate", "1815-12-10")
	typeInto(e, "meeting", "2026-12-01T10:00:00+01:00")
	if r, done := accept(e); !done || r.Content["birthdate"] != "1815-12-10" || r.Content["meeting"] != "2026-12-01T10:00:00+01:00" {
		t.Errorf("good values: %+v %v\n%s", r, done, e.View())
	}
}

// TestElicitRefusesWhatItCannotShow: a schema outside the protocol's
// subset can only be declined, and says which field is the problem.
func TestElicitRefusesWhatItCannotShow(t *testing.T) {
	for _, tc := range []struct{ schema, want string }{
		{`{"properties":{"a":{"type":"array","items":{"type":"integer"}}}}`, `"a" is a list of something other than text choices`},
		{`{"properties":{"a":{"type":"array"}}}`, `"a" is a list without its choices`},
		{`{"properties":{"a":{"type":["string","null"]}}}`, `"a" has a type that is not a single name`},
		{`{"properties":{"a":{"type":"string","oneOf":[{"const":1}]}}}`, `"a" has a choice that is not text`},
	} {
		e, _ := openElicit(ElicitRequest{Server: "s", Schema: json.RawMessage(tc.schema)}, Options{Width: 120})
		if !strings.Contains(e.unsupported, tc.want) || len(e.fields) != 0 || e.buttons[0] != ElicitDecline {
			t.Errorf("%s: unsupported %q, want %q", tc.schema, e.unsupported, tc.want)
		}
	}
}
