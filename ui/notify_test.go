package ui

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/llm"
	"github.com/mcphost/mcphost/ui/dialog"
	"github.com/mcphost/mcphost/ui/notify"
)

// TestWaitingCallsThePerson: a confirmation that opens rings the bell and
// sends the desktop notification once, the window title names the call
// until it is answered, and then says mcphost again.
func TestWaitingCallsThePerson(t *testing.T) {
	tasks, _ := fixtureSpec(t, "tasks", fixtures.Options{})
	model := llm.NewScript([]llm.ScriptTurn{
		{Text: "Deleting T-1.", ToolCalls: []llm.ScriptCall{{Name: "tasks__delete_task", Args: json.RawMessage(`{"id":"T-1"}`)}}},
		{ExpectError: yes(), Text: "Refused."},
	})
	clk := newClock()
	h := newHarness(t, Config{
		Servers: []client.Spec{tasks}, Model: model,
		Gate: host.GateOptions{Policy: policy(t), Trusted: trusted("tasks"), Audit: &memAudit{}},
		Now:  clk.Now, Dark: dark(true),
		Notify: notify.New(notify.Both, notify.Terminal{Desktop: notify.OSC9}),
	})
	h.ready()
	if got := h.m.View().WindowTitle; got != "mcphost" {
		t.Errorf("title before any question = %q, want mcphost", got)
	}
	if len(h.raw) != 0 {
		t.Fatalf("wrote %q before any question", h.raw)
	}
	h.typeText("delete T-1")
	h.key("enter")
	h.until("the dialog opens and the person is called", func() bool { return shown[*confirmDialog](h.m) != nil && len(h.raw) > 0 })
	want := "\a\x1b]9;mcphost waiting for you: tasks/delete_task\a"
	if len(h.raw) != 1 || h.raw[0] != want {
		t.Fatalf("wrote %q when the dialog opened, want [%q]", h.raw, want)
	}
	if got := h.m.View().WindowTitle; got != "mcphost — waiting: tasks/delete_task" {
		t.Errorf("title while the dialog waits = %q", got)
	}
	h.send(teaSize(100, 30)) // a redraw, a resize: no second call
	h.key("x")               // a key in the grace period
	if h.m.called != 1 {
		t.Errorf("called the person %d times while one dialog waited, want once", h.m.called)
	}
	clk.Add(time.Second)
	h.key("n")
	h.until("the run ends", func() bool { return h.m.run == nil })
	if got := h.m.View().WindowTitle; got != "mcphost" {
		t.Errorf("title after the answer = %q, want mcphost", got)
	}
	if h.m.called != 1 {
		t.Errorf("called the person %d times in all, want once", h.m.called)
	}
}

// question is a confirmation for a call to server/tool at T3.
func question(t *testing.T, server, tool string) *host.Question {
	t.Helper()
	p := policy(t)
	d := p.Decide(decide.Input{Server: decide.Server{Name: server, Identity: "id"}, Tool: decide.Tool{Name: tool, DefinitionHash: "h"},
		Mode: decide.Interactive})
	return &host.Question{Server: server, Tool: &client.Tool{Server: server, Name: tool, Hash: "h"}, Decision: d, Scopes: decide.AllowedScopes(d)}
}

// TestWaitingSubjects: each kind of question is named in the title, a
// server's names escaped, and nothing but the idle title is left when the
// person turned notifications off or the terminal is dumb.
func TestWaitingSubjects(t *testing.T) {
	osc777 := notify.New(notify.Both, notify.Terminal{Desktop: notify.OSC777})
	m := NewModel(Config{Notify: osc777, Dark: dark(true)})
	t.Cleanup(m.Close)

	m.dialogs.put(-1, dialogEntry{d: &confirmDialog{d: dialog.NewConfirm(question(t, "evil", "wipe\x1b]2;pwned\a\u202e"), dialog.Options{})}})
	wantTitle := `mcphost — waiting: evil/wipe\x1b]2;pwned\x07\u202e`
	if got := m.View().WindowTitle; got != wantTitle {
		t.Errorf("title = %q, want %q", got, wantTitle)
	}
	raw := m.callPerson()()
	wantRaw := "\a\x1b]777;notify;mcphost;waiting for you: evil/wipe\\x1b]2,pwned\\x07\\u202e\a"
	if got := rawText(raw); got != wantRaw {
		t.Errorf("notification = %q, want %q", got, wantRaw)
	}
	m.dialogs = dialogStack{}

	m.dialogs.put(-1, dialogEntry{d: &elicitDialog{d: dialog.NewElicit(dialog.ElicitRequest{Server: "ev", Message: "name?"}, dialog.Options{})}})
	if got := m.View().WindowTitle; got != "mcphost — waiting: ev (a question)" {
		t.Errorf("elicitation title = %q", got)
	}
	m.dialogs = dialogStack{}
	m.dialogs.put(-1, dialogEntry{d: &sampleDialog{d: dialog.NewSample(dialog.SampleRequest{Server: "ev", Model: "m"}, dialog.Options{})}})
	if got := m.View().WindowTitle; got != "mcphost — waiting: ev (use of the model)" {
		t.Errorf("sampling title = %q", got)
	}
	m.dialogs = dialogStack{}
	m.dialogs.put(-1, dialogEntry{d: &consentDialog{d: dialog.NewConsent(dialog.ConsentRequest{Server: "proj"}, dialog.Options{})}})
	if got := m.View().WindowTitle; got != "mcphost — waiting: proj (consent to start it)" {
		t.Errorf("consent title = %q", got)
	}

	for _, tc := range []struct {
		name        string
		n           notify.Notifier
		title, idle string
	}{
		{"off", notify.New(notify.Off, notify.Terminal{Desktop: notify.OSC9, Tmux: true}), "mcphost", "mcphost"},
		{"dumb", notify.New(notify.Both, notify.Terminal{Dumb: true}), "", ""},
	} {
		m := NewModel(Config{Notify: tc.n, Dark: dark(true)})
		t.Cleanup(m.Close)
		if got := m.View().WindowTitle; got != tc.idle {
			t.Errorf("%s: idle title = %q, want %q", tc.name, got, tc.idle)
		}
		m.dialogs.put(-1, dialogEntry{d: &confirmDialog{d: dialog.NewConfirm(question(t, "tasks", "delete_task"), dialog.Options{})}})
		if cmd := m.callPerson(); cmd != nil {
			t.Errorf("%s: wrote %q", tc.name, rawText(cmd()))
		}
		if got := m.View().WindowTitle; got != tc.title {
			t.Errorf("%s: title while waiting = %q, want %q", tc.name, got, tc.title)
		}
	}
}

// TestConsentCallsThePerson: the consent asked before a project server
// starts calls the person as the TUI opens.
func TestConsentCallsThePerson(t *testing.T) {
	cfg, _ := tasksConfig(t)
	proj, _ := fixtureSpec(t, "flaky", fixtures.Options{})
	proj.Name = "proj"
	cfg.Project = []ProjectServer{{Name: "proj", File: "/repo/.mcp.json", Spec: proj}}
	cfg.Notify = notify.New(notify.Bell, notify.Terminal{Desktop: notify.OSC9})
	h := newHarness(t, cfg)
	h.until("the bell rings", func() bool { return len(h.raw) > 0 })
	if strings.Join(h.raw, "|") != "\a" {
		t.Errorf("wrote %q for the consent, want the bell alone", h.raw)
	}
	if got := h.m.View().WindowTitle; got != "mcphost — waiting: proj (consent to start it)" {
		t.Errorf("title = %q", got)
	}
}

// rawText is what a tea.Raw command writes.
func rawText(msg tea.Msg) string {
	r, ok := msg.(tea.RawMsg)
	if !ok {
		return fmt.Sprintf("(not a RawMsg: %#v)", msg)
	}
	return fmt.Sprint(r.Msg)
}
