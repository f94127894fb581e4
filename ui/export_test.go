package ui

import (
	"strings"
	"testing"
)

// TestExportHeadingsAndBanner: the model's own headings sit below the
// export's turn headings, code fences keep their lines as written, and the
// notices before the first message (the start-up banner) are left out.
func TestExportHeadingsAndBanner(t *testing.T) {
	entries := []*entry{
		{kind: entryNotice, text: "2 of 2 servers ready, 5 tools · ctrl+t lists and calls them"},
		{kind: entryUser, text: "plan it"},
		{kind: entryAssistant, done: true, text: "# Plan\n\n## Step one\n\n```sh\n# a comment, not a heading\n```\n\n###### Deep\n#hashtag"},
		{kind: entryNotice, text: "a later notice"},
	}
	got := exportMarkdown(entries)
	for _, want := range []string{"## You\n", "## Model\n", "\n#### Plan\n", "\n##### Step one\n", "\n# a comment, not a heading\n",
		"\n###### Deep\n", "\n#hashtag", "> a later notice"} {
		if !strings.Contains(got, want) {
			t.Errorf("export lacks %q:\n%s", want, got)
		}
	}
	for _, bad := range []string{"servers ready", "\n## Plan", "\n# Plan"} {
		if strings.Contains(got, bad) {
			t.Errorf("export has %q:\n%s", bad, got)
		}
	}
}
