package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/host"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCardPreviewsFiveLines: a folded card shows up to five lines of its
// result, then how many more there are; a short result shows all of it.
func TestCardPreviewsFiveLines(t *testing.T) {
	rc := &renderCtx{st: newStyles(true, true), md: &answerMarkdown{}}
	for _, tc := range []struct {
		lines int
		want  []string
	}{
		{3, []string{"⎿ row 1", "  row 2", "  row 3"}},
		{5, []string{"⎿ row 1", "  row 2", "  row 3", "  row 4", "  row 5"}},
		{8, []string{"⎿ row 1", "  row 2", "  row 3", "  row 4", "  row 5", "  +3 lines"}},
	} {
		rows := make([]string, tc.lines)
		for i := range rows {
			rows[i] = fmt.Sprintf("row %d", i+1)
		}
		text := strings.Join(rows, "\n")
		c := &card{server: "s", tool: "t", done: true, status: host.StatusSuccess, resultBytes: 100,
			result: &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}}
		var got []string
		for _, l := range c.render(rc, 80, false) {
			l = strings.TrimSpace(stripped(l))
			if i := strings.Index(l, " ("); strings.HasPrefix(l, "⎿") && i > 0 {
				l = l[:i] // the size note
			}
			if strings.HasPrefix(l, "⎿") || strings.HasPrefix(l, "row") || strings.HasPrefix(l, "+") {
				if !strings.HasPrefix(l, "⎿") {
					l = "  " + l
				}
				got = append(got, l)
			}
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%d lines (-want +got):\n%s", tc.lines, d)
		}
	}
}

// TestManualCardSaysTheModelDidNotGetIt: a call made from the tools panel
// is not in the conversation, and its card says so rather than "the model
// got all of it"; the model's own call still says it got all of it.
func TestManualCardSaysTheModelDidNotGetIt(t *testing.T) {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}
	manual := &card{manual: true, done: true, status: host.StatusSuccess, result: res, resultBytes: 2}
	if got := manual.bodyTitle(); !strings.Contains(got, "the model did not get it") {
		t.Errorf("manual card title %q, want it to say the model did not get it", got)
	}
	byModel := &card{done: true, status: host.StatusSuccess, result: res, resultBytes: 2}
	if got := byModel.bodyTitle(); !strings.Contains(got, "the model got all of it") {
		t.Errorf("model's card title %q, want it to say the model got all of it", got)
	}
}
