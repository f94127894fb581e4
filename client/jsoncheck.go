package client

import (
	"encoding/json"
	"errors"
	"fmt"
)

// duplicateKey returns the first key that occurs twice in the top level of
// the JSON object raw, and whether there is one (the key may be ""). Parsers
// disagree on which of two duplicates counts (first or last), so a server
// could show one reading to one component and another to the next; such
// objects are not believed. raw that is not a valid JSON object has no
// duplicate keys.
func duplicateKey(raw json.RawMessage) (string, bool) {
	var s scanner
	root, ok := s.scan(raw)
	if !ok || raw[root.val.start] != '{' {
		return "", false
	}
	return s.firstRepeat(s.node(root))
}

// Schema bounds: deeper or larger schemas are refused rather than handed to
// a model or a validator.
const (
	maxSchemaDepth = 64
	maxSchemaNodes = 20000
)

var (
	errSchemaTooBig  = errors.New("schema too large")
	errTooManyValues = fmt.Errorf("%w: more than %d values", errSchemaTooBig, maxSchemaNodes)
	errTooDeep       = fmt.Errorf("%w: nested deeper than %d", errSchemaTooBig, maxSchemaDepth)
)

func errExternalRef(ref string) error {
	return fmt.Errorf("$ref %q points outside the schema", ref)
}

// checkSchema refuses a JSON schema that nests deeper than maxSchemaDepth,
// holds more than maxSchemaNodes values (counting delimiters and keys), has
// a $ref that is not local to the document, or has a number out of the
// range of a float64: mcphost never fetches a schema from the network, so a
// tool that needs one cannot be described faithfully.
//
// The first fault in document order is reported. Note that a $ref key
// stays in force until the next scalar, so {"$ref":["x"]} is refused too.
func checkSchema(raw json.RawMessage) error {
	var s scanner
	root, ok := s.scan(raw)
	if !ok {
		return errors.New("schema is not valid JSON")
	}
	return s.checkSchema(root)
}

// checkSchema checks the scanned value it; see the function checkSchema.
func (s *scanner) checkSchema(it item) error {
	w := schemaWalk{s: s}
	return w.value(it)
}
