package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
)

// Input schemas the providers refuse, and what is sent instead. Both APIs
// want a tool's schema to be an object schema at the top level: Anthropic
// refuses a missing "type": "object" and a top-level anyOf, oneOf or allOf;
// OpenAI refuses an object schema without "properties". One such tool fails
// every turn, so normalizeSchema fixes what it can and reports the rest.
// The host's gate validates calls against the server's own schema, never
// against this one.

// member is one member of a JSON object, in the order it was written.
type member struct {
	key string
	val json.RawMessage
}

// objectMembers returns the members of the JSON object b in order.
func objectMembers(b []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		out = append(out, member{key, val})
	}
	if _, err := dec.Token(); err != nil && err != io.EOF {
		return nil, err
	}
	return out, nil
}

func writeObject(ms []member) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		_ = appendString(&b, m.key)
		b.WriteByte(':')
		b.Write(m.val)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func lookup(ms []member, key string) (json.RawMessage, int) {
	for i, m := range ms {
		if m.key == key {
			return m.val, i
		}
	}
	return nil, -1
}

// maxCombinatorNote bounds the copy of a flattened combinator kept in the
// schema's description.
const maxCombinatorNote = 2048

// normalizeSchema returns schema (compact JSON) as the providers accept it,
// and whether it changed; an error says why the tool cannot be offered at
// all. A schema that needs nothing is returned as given, byte for byte.
//
//   - no "type": "object" is added; a type other than object is an error;
//   - a top-level allOf is merged into the schema (properties and required
//     of every branch); anyOf and oneOf are merged too, their properties
//     made optional (required only if every branch requires them), and
//     the branches are kept as text in the description so the model still
//     reads them;
//   - no "properties": an empty object is added.
func normalizeSchema(schema []byte) ([]byte, bool, error) {
	ms, err := objectMembers(schema)
	if err != nil {
		return nil, false, err
	}
	changed := false
	if typ, _ := lookup(ms, "type"); typ == nil {
		ms = append([]member{{"type", json.RawMessage(`"object"`)}}, ms...)
		changed = true
	} else if string(typ) != `"object"` {
		var types []string
		if json.Unmarshal(typ, &types) != nil || !slices.Contains(types, "object") {
			return nil, false, fmt.Errorf("its input schema's top-level type is %s; the providers accept only an object", clean(string(typ)))
		}
		ms[slices.IndexFunc(ms, func(m member) bool { return m.key == "type" })].val = json.RawMessage(`"object"`)
		changed = true
	}
	for _, comb := range []string{"allOf", "anyOf", "oneOf"} {
		val, i := lookup(ms, comb)
		if i < 0 {
			continue
		}
		ms, err = flatten(ms, i, comb, val)
		if err != nil {
			return nil, false, err
		}
		changed = true
	}
	if _, i := lookup(ms, "properties"); i < 0 {
		at := slices.IndexFunc(ms, func(m member) bool { return m.key == "type" }) + 1
		ms = slices.Insert(ms, at, member{"properties", json.RawMessage(`{}`)})
		changed = true
	}
	if !changed {
		return schema, false, nil
	}
	return writeObject(ms), true, nil
}

// flatten merges the branches of the combinator comb (at index i of ms)
// into ms and removes it.
func flatten(ms []member, i int, comb string, val json.RawMessage) ([]member, error) {
	var branches []json.RawMessage
	if err := json.Unmarshal(val, &branches); err != nil {
		return nil, fmt.Errorf("its input schema's %s is not an array", comb)
	}
	props, _ := lookup(ms, "properties")
	merged, err := objectMembersOrEmpty(props)
	if err != nil {
		return nil, fmt.Errorf("its input schema's properties are not an object")
	}
	var required []string
	if r, _ := lookup(ms, "required"); r != nil {
		_ = json.Unmarshal(r, &required)
	}
	var common []string // required by every branch, for anyOf and oneOf
	for n, b := range branches {
		var br struct {
			Properties json.RawMessage `json:"properties"`
			Required   []string        `json:"required"`
			Type       json.RawMessage `json:"type"`
		}
		if json.Unmarshal(b, &br) != nil {
			return nil, fmt.Errorf("its input schema's %s has a branch that is not an object", comb)
		}
		if br.Type != nil && string(br.Type) != `"object"` {
			return nil, fmt.Errorf("its input schema's %s has a branch of type %s; the providers accept only an object", comb, clean(string(br.Type)))
		}
		bp, err := objectMembersOrEmpty(br.Properties)
		if err != nil {
			return nil, fmt.Errorf("its input schema's %s has a branch whose properties are not an object", comb)
		}
		for _, p := range bp {
			if _, j := lookup(merged, p.key); j >= 0 {
				merged[j] = p
			} else {
				merged = append(merged, p)
			}
		}
		switch {
		case comb == "allOf":
			required = appendNew(required, br.Required...)
		case n == 0:
			common = br.Required
		default:
			common = slices.DeleteFunc(common, func(s string) bool { return !slices.Contains(br.Required, s) })
		}
	}
	required = appendNew(required, common...)
	ms = slices.Delete(ms, i, i+1)
	ms = set(ms, "properties", writeObject(merged))
	if len(required) > 0 {
		r, _ := json.Marshal(required)
		ms = set(ms, "required", r)
	}
	if comb != "allOf" && len(val) <= maxCombinatorNote {
		desc := "Arguments must match one of these schemas (" + comb + "): " + string(val)
		if d, j := lookup(ms, "description"); j >= 0 {
			var s string
			if json.Unmarshal(d, &s) == nil && s != "" {
				desc = s + "\n" + desc
			}
		}
		var b bytes.Buffer
		_ = appendString(&b, desc)
		ms = set(ms, "description", b.Bytes())
	}
	return ms, nil
}

func objectMembersOrEmpty(b json.RawMessage) ([]member, error) {
	if !present(b) {
		return nil, nil
	}
	return objectMembers(b)
}

// set replaces the value of key in ms, or appends it.
func set(ms []member, key string, val []byte) []member {
	if _, i := lookup(ms, key); i >= 0 {
		ms[i].val = val
		return ms
	}
	return append(ms, member{key, val})
}

func appendNew(list []string, items ...string) []string {
	for _, s := range items {
		if !slices.Contains(list, s) {
			list = append(list, s)
		}
	}
	return list
}
