package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// duplicateKey returns the first key that occurs twice in the top level of
// the JSON object raw, or "". Parsers disagree on which of two duplicates
// counts (first or last), so a server could show one reading to one
// component and another to the next; such objects are not believed.
func duplicateKey(raw json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return ""
		}
		k, _ := t.(string)
		if seen[k] {
			return k
		}
		seen[k] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return ""
		}
	}
	return ""
}

// Schema bounds: deeper or larger schemas are refused rather than handed to
// a model or a validator.
const (
	maxSchemaDepth = 64
	maxSchemaNodes = 20000
)

var errSchemaTooBig = errors.New("schema too large")

// checkSchema walks a JSON schema once and refuses it when it nests deeper
// than maxSchemaDepth, holds more than maxSchemaNodes values, or has a $ref
// that is not local to the document: mcphost never fetches a schema from
// the network, so a tool that needs one cannot be described faithfully.
func checkSchema(raw json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	depth, nodes := 0, 0
	var inObject []bool // per level: is it an object (so the next string may be a key)
	expectKey := false
	lastKey := ""
	for {
		t, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		nodes++
		if nodes > maxSchemaNodes {
			return fmt.Errorf("%w: more than %d values", errSchemaTooBig, maxSchemaNodes)
		}
		if d, ok := t.(json.Delim); ok {
			switch d {
			case '{', '[':
				depth++
				if depth > maxSchemaDepth {
					return fmt.Errorf("%w: nested deeper than %d", errSchemaTooBig, maxSchemaDepth)
				}
				inObject = append(inObject, d == '{')
				expectKey = d == '{'
			case '}', ']':
				depth--
				inObject = inObject[:len(inObject)-1]
				expectKey = len(inObject) > 0 && inObject[len(inObject)-1]
			}
			continue
		}
		if expectKey {
			lastKey, _ = t.(string)
			expectKey = false
			continue
		}
		if lastKey == "$ref" {
			if ref, ok := t.(string); ok && !strings.HasPrefix(ref, "#") {
				return fmt.Errorf("$ref %q points outside the schema", ref)
			}
		}
		lastKey = ""
		expectKey = len(inObject) > 0 && inObject[len(inObject)-1]
	}
}
