package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcphost/mcphost/client"
)

// maxSchema bounds the schemas the call form reads: a larger one is only
// checked for being an object.
const maxSchema = 64 << 10

// skeleton returns arguments for a tool's input schema, pretty-printed:
// every required property with a placeholder for its type (its default or
// first enum value when it has one), nested objects filled the same way.
func skeleton(schema json.RawMessage) string {
	var s map[string]any
	if len(schema) > maxSchema || json.Unmarshal(schema, &s) != nil {
		return "{}"
	}
	v := placeholder(s, 0)
	if _, ok := v.(orderedObject); !ok {
		return "{}"
	}
	var b bytes.Buffer
	writeJSON(&b, v, "")
	return b.String()
}

// orderedObject keeps the order of the schema's "required" list.
type orderedObject []field

type field struct {
	name  string
	value any
}

func placeholder(s map[string]any, depth int) any {
	if d, ok := s["default"]; ok {
		return d
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	if c, ok := s["const"]; ok {
		return c
	}
	switch typeOf(s) {
	case "string":
		return ""
	case "integer", "number":
		return 0
	case "boolean":
		return false
	case "array":
		return []any{}
	case "null":
		return nil
	case "object":
		obj := orderedObject{}
		if depth > 8 {
			return obj
		}
		props, _ := s["properties"].(map[string]any)
		req, _ := s["required"].([]any)
		for _, r := range req {
			name, ok := r.(string)
			if !ok {
				continue
			}
			var v any = ""
			if ps, ok := props[name].(map[string]any); ok {
				v = placeholder(ps, depth+1)
			}
			obj = append(obj, field{name, v})
		}
		return obj
	}
	return ""
}

// typeOf is the schema's type, the first that is not null when it lists
// several, and "object" for a schema with properties but no type.
func typeOf(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if x, ok := x.(string); ok && x != "null" {
				return x
			}
		}
	}
	if _, ok := s["properties"]; ok {
		return "object"
	}
	return ""
}

func writeJSON(b *bytes.Buffer, v any, indent string) {
	obj, ok := v.(orderedObject)
	if !ok {
		data, err := json.Marshal(v)
		if err != nil {
			data = []byte("null")
		}
		b.Write(data)
		return
	}
	if len(obj) == 0 {
		b.WriteString("{}")
		return
	}
	b.WriteString("{\n")
	for i, f := range obj {
		name, _ := json.Marshal(f.name)
		b.WriteString(indent + "  ")
		b.Write(name)
		b.WriteString(": ")
		writeJSON(b, f.value, indent+"  ")
		if i < len(obj)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(indent + "}")
}

// validator checks arguments against a tool's input schema before they are
// sent (client.ArgsChecker), after checking they are one JSON object.
type validator struct {
	args client.ArgsChecker
	// why says why only the shape is checked, when the schema is unusable.
	why string
}

func newValidator(schema json.RawMessage) validator {
	v := validator{args: client.NewArgsChecker(schema)}
	if v.args.Unchecked != "" {
		v.why = v.args.Unchecked + "; only the JSON is checked"
	}
	return v
}

// check returns the compacted arguments, or why they cannot be sent.
func (v validator) check(text string) (json.RawMessage, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		text = "{}"
	}
	var inst any
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&inst); err != nil {
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	if dec.More() {
		return nil, errors.New("not valid JSON: more than one value")
	}
	if err := v.args.Check(json.RawMessage(text)); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(text)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func firstSentence(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return truncBytes(s, 120)
}
