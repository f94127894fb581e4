//go:build unix

package interop

import (
	"strings"
	"testing"
)

// With --tool-search=always, the official TypeScript client sees only the
// search tool, finds a tool by its words, and calls it at once without
// listing again (as Codex, which never re-lists, does); its next listing
// holds the tool found.
func TestServeToolSearchDrivenByTheTypeScriptClient(t *testing.T) {
	w := newServeWorld(t)
	plan := w.stdioPlan(nil,
		list,
		tsCall("mcphost__search_tools", map[string]any{"query": "read a value by its key"}),
		tsCall("flaky__read_value", map[string]any{"key": "a"}),
		list,
	)
	plan["args"] = []string{"--config", w.config, "serve", "--tool-search=always"}
	res := w.runTS(plan)
	if first := res.Steps[0].Tools; len(first) != 1 || first[0].Name != "mcphost__search_tools" ||
		first[0].hints() != "ro=true destr=false idem=true open=false" {
		t.Fatalf("first listing %+v, want only the read-only search tool", first)
	}
	if s := res.Steps[1]; s.Result.IsError || !strings.Contains(s.text(), "- flaky__read_value (server flaky, trusted, class read") {
		t.Fatalf("search: %s, want flaky__read_value found", s.text())
	}
	if s := res.Steps[2]; s.Result.IsError {
		t.Fatalf("the found tool, called before any re-list: %s", s.text())
	}
	if n := w.execs("read_value"); n != 1 {
		t.Errorf("read_value ran %d times, want 1", n)
	}
	last := res.Steps[3].Tools
	if find(last, "flaky__read_value") == nil || find(last, "tasks__delete_task") != nil {
		t.Errorf("last listing %d tools, want the search tool and what it found", len(last))
	}
}
