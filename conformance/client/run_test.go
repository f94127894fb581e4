package main

import (
	"context"
	"strings"
	"testing"
)

func TestRunRefuses(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		scenario string
		context  string
		want     string
	}{
		{"no URL", nil, "initialize", "", "usage"},
		{"two URLs", []string{"http://127.0.0.1:1/mcp", "x"}, "initialize", "", "usage"},
		{"no scenario", []string{"http://127.0.0.1:1/mcp"}, "", "", `unknown scenario ""`},
		{"unknown scenario", []string{"http://127.0.0.1:1/mcp"}, "no-such", "", `unknown scenario "no-such"`},
		{"bad context", []string{"http://127.0.0.1:1/mcp"}, "auth/pre-registration", `{"client_id":`, contextVar},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr strings.Builder
			getenv := func(k string) string {
				switch k {
				case scenarioVar:
					return tc.scenario
				case contextVar:
					return tc.context
				}
				return ""
			}
			if got := run(context.Background(), tc.args, getenv, &stderr); got != exitUsage {
				t.Errorf("run = %d, want %d", got, exitUsage)
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr = %q, want it to mention %q", stderr.String(), tc.want)
			}
		})
	}
}

// Every scenario with its own steps is one the suite has; auth/ scenarios
// share theirs.
func TestLookup(t *testing.T) {
	for _, name := range []string{"initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry", "auth/metadata-default"} {
		if _, ok := lookup(name, scenarioContext{}); !ok {
			t.Errorf("lookup(%q) found nothing", name)
		}
	}
}
