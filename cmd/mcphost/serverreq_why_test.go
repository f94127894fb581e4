package main

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestElicitDefaultsSaysWhyItDeclines: --elicit defaults that declines a
// question says why, naming the required fields without a default.
func TestElicitDefaultsSaysWhyItDeclines(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params *mcp.ElicitParams
		want   string
	}{
		{"required field without default", &mcp.ElicitParams{Message: "Your name?", RequestedSchema: map[string]any{"type": "object",
			"properties": map[string]any{"name": map[string]any{"type": "string"}, "color": map[string]any{"type": "string", "default": "red"}},
			"required":   []any{"name", "color"}}},
			`declined a question from srv (the required field "name" has no default; --elicit defaults answers only a form whose every required field has a default): Your name?`},
		{"two fields", &mcp.ElicitParams{Message: "Who?", RequestedSchema: map[string]any{"type": "object",
			"properties": map[string]any{"a": map[string]any{"type": "string"}, "b": map[string]any{"type": "string"}},
			"required":   []any{"a", "b"}}},
			`(the required fields "a", "b" have no default;`},
		{"a web page", &mcp.ElicitParams{Mode: "url", URL: "https://example.com/pay", Message: "Pay"},
			`(it asks to open a web page, which needs a person;`},
	} {
		s, _, errb := testStreams(t)
		o, _, err := serverRequestOptions(&globalOptions{Elicit: "defaults"}, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := o.Elicitation(context.Background(), "srv", &mcp.ElicitRequest{Params: tc.params})
		if err != nil || res.Action != "decline" {
			t.Fatalf("%s: %+v %v", tc.name, res, err)
		}
		if !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%s: stderr %q, want %q", tc.name, errb, tc.want)
		}
	}
	// An accepted form says nothing of declining.
	s, _, errb := testStreams(t)
	o, _, _ := serverRequestOptions(&globalOptions{Elicit: "defaults"}, s, nil)
	res, _ := o.Elicitation(context.Background(), "srv", &mcp.ElicitRequest{Params: &mcp.ElicitParams{Message: "Go?", RequestedSchema: map[string]any{"type": "object",
		"properties": map[string]any{"ok": map[string]any{"type": "boolean", "default": true}}, "required": []any{"ok"}}}})
	if res.Action != "accept" || strings.Contains(errb.String(), "default;") {
		t.Errorf("accepted form: %+v, stderr %q", res, errb)
	}
}
