package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/chatlog"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/llm"
)

// TestSessionSavedAndResumed: a chat is saved as it happens (messages, the
// call with its decision and result); a new TUI on the saved chat shows
// its transcript, says that session grants ended, and the model gets the
// earlier conversation with the next message; /export writes Markdown.
func TestSessionSavedAndResumed(t *testing.T) {
	dir := t.TempDir()
	tasks, _ := fixtureSpec(t, "tasks", fixtures.Options{})
	log1, err := chatlog.New(dir, chatlog.Header{ID: "s1", Dir: "/p", Model: "script:demo"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Config{
		Servers: []client.Spec{tasks}, Session: log1, Dark: dark(true),
		Model: llm.NewScript([]llm.ScriptTurn{
			{Text: "Reading the tasks.", ToolCalls: []llm.ScriptCall{{Name: "tasks__list_tasks"}}},
			{Text: "There are tasks; T-1 is the launch."},
		}),
		Gate: host.GateOptions{Policy: policy(t), Trusted: trusted("tasks"), Audit: &memAudit{}},
	})
	h.ready()
	h.typeText("what is there?")
	h.key("enter")
	h.until("the run ends", func() bool { return h.m.run == nil && len(h.m.cards) == 1 })
	h.m.Close()

	prev, err := chatlog.Load(dir, "s1")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, r := range prev.Records {
		k := r.Type
		if r.Message != nil {
			k += ":" + r.Message.Role
		}
		if r.Call != nil {
			k += ":" + r.Call.Entry.Tool + ":" + string(r.Call.Entry.Status)
			if !strings.Contains(r.Call.Result.S, "Draft launch announcement") {
				t.Errorf("the call's result was not saved: %q", r.Call.Result.S)
			}
			if c := r.Call.Content.S; !strings.HasPrefix(c, "[output of the tool tasks__list_tasks") || !strings.Contains(c, "Draft launch announcement") {
				t.Errorf("the model's copy of the result was not saved with the call: %q", c)
			}
		}
		if r.Type == chatlog.TypeNote {
			k += ":" + r.Note
		}
		kinds = append(kinds, k)
	}
	want := "message:user message:assistant note:call-started call:list_tasks:success message:tool message:assistant"
	if got := strings.Join(kinds, " "); got != want {
		t.Fatalf("saved records: %s\nwant %s", got, want)
	}

	log2, err := prev.Continue(nil)
	if err != nil {
		t.Fatal(err)
	}
	model := &recordingModel{Model: llm.NewScript([]llm.ScriptTurn{{Text: "Still the launch."}})}
	tasks2, _ := fixtureSpec(t, "tasks", fixtures.Options{})
	h2 := newHarness(t, Config{
		Servers: []client.Spec{tasks2}, Session: log2, Resumed: prev, Model: model, Dark: dark(true),
		Gate: host.GateOptions{Policy: policy(t), Trusted: trusted("tasks"), Audit: &memAudit{}},
	})
	h2.send(teaSize(140, 40))
	h2.ready()
	s := h2.screen()
	for _, w := range []string{"what is there?", "T-1 is the launch", "tasks/list_tasks", "continuing the chat s1", "ended with it"} {
		if !strings.Contains(s, w) {
			t.Errorf("resumed screen lacks %q:\n%s", w, s)
		}
	}
	h2.typeText("and now?")
	h2.key("enter")
	h2.until("the run ends", func() bool { return h2.m.run == nil && strings.Contains(h2.screen(), "Still the launch") })
	model.mu.Lock()
	sent := model.reqs[0].Messages
	model.mu.Unlock()
	if len(sent) != 5 || sent[0].Text != "what is there?" || sent[4].Text != "and now?" {
		t.Errorf("the model was sent %d messages: %+v", len(sent), sent)
	}

	out := filepath.Join(t.TempDir(), "chat.md")
	h2.typeText("/export " + out)
	h2.key("enter")
	md, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("/export: %v\n%s", err, h2.screen())
	}
	for _, w := range []string{"## You\n\nwhat is there?", "## Model\n\nThere are tasks", "### Tool call `tasks/list_tasks`", "```text\n", "## You\n\nand now?"} {
		if !strings.Contains(string(md), w) {
			t.Errorf("export lacks %q:\n%s", w, md)
		}
	}
	// An existing file is never replaced.
	h2.typeText("/export " + out)
	h2.key("enter")
	if again, _ := os.ReadFile(out); string(again) != string(md) || !strings.Contains(h2.screen(), "exists; give another name") {
		t.Errorf("a second /export to the same file: %s", h2.screen())
	}
}

// TestExportFencesServerText: a result holding a fence cannot close the
// export's fence and pass for the model's words.
func TestExportFencesServerText(t *testing.T) {
	got := fenced("text", "a\n```\n## Model\n\nfake")
	if !strings.HasPrefix(got, "````text\n") || !strings.HasSuffix(got, "\n````\n") {
		t.Errorf("fenced = %q", got)
	}
}
