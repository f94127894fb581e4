package client

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// maxCheckedSchema bounds the input schemas arguments are checked against:
// a larger one is not resolved (its arguments are checked for being an
// object only).
const maxCheckedSchema = 64 << 10

// ArgsChecker checks a call's arguments against a tool's input schema
// before they are sent, so that a call that cannot be right is refused
// with the field named instead of the server's error.
type ArgsChecker struct {
	resolved *jsonschema.Resolved
	// Unchecked says why only the shape is checked, when the schema is
	// too large or cannot be used; "" when the schema is checked.
	Unchecked string
}

// NewArgsChecker prepares the checks for an input schema. It fetches
// nothing: a schema that refers outside itself is not checked.
func NewArgsChecker(schema json.RawMessage) ArgsChecker {
	if len(schema) > maxCheckedSchema {
		return ArgsChecker{Unchecked: "the input schema is too large to check"}
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		return ArgsChecker{Unchecked: "the input schema cannot be read"}
	}
	r, err := s.Resolve(nil)
	if err != nil {
		msg, _, _ := strings.Cut(err.Error(), "\n")
		return ArgsChecker{Unchecked: "the input schema cannot be used (" + msg + ")"}
	}
	return ArgsChecker{resolved: r}
}

// Check reports why args (a JSON object) do not match the schema, or nil.
func (c ArgsChecker) Check(args json.RawMessage) error {
	var shape any
	if len(args) > 0 {
		if err := json.Unmarshal(args, &shape); err != nil {
			return fmt.Errorf("not valid JSON: %v", err)
		}
	} else {
		shape = map[string]any{}
	}
	obj, ok := shape.(map[string]any)
	if !ok {
		return fmt.Errorf("the arguments must be a JSON object")
	}
	if err := c.Validate(obj); err != nil {
		return fmt.Errorf("does not match the input schema: %v", err)
	}
	return nil
}

// Validate reports why args, decoded already, do not match the schema, or
// nil; nil too when the schema is not checked (Unchecked). It does not
// modify args, and is safe for concurrent use.
func (c ArgsChecker) Validate(args map[string]any) error {
	if c.resolved == nil {
		return nil
	}
	return c.resolved.Validate(args)
}
