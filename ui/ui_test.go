package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/llm"
	"github.com/mcphost/mcphost/state"
)

func tasksConfig(t *testing.T, trust ...string) (Config, *clock) {
	tasks, _ := fixtureSpec(t, "tasks", fixtures.Options{})
	clk := newClock()
	return Config{
		Servers: []client.Spec{tasks},
		Gate:    host.GateOptions{Policy: policy(t), Trusted: trusted(trust...), Audit: &memAudit{}},
		Now:     clk.Now, Dark: dark(true),
	}, clk
}

func TestEnterSendsAltEnterAddsALine(t *testing.T) {
	cfg, _ := tasksConfig(t, "tasks")
	cfg.Model = llm.NewScript([]llm.ScriptTurn{{Text: "Hello back."}})
	h := newHarness(t, cfg)
	h.ready()
	h.typeText("hello")
	h.key("alt+enter")
	h.typeText("there")
	if got := h.m.input.Value(); got != "hello\nthere" {
		t.Fatalf("input = %q, want two lines", got)
	}
	start := len(h.m.tr.entries)
	if h.m.run != nil || h.m.tr.last().kind == entryUser {
		t.Fatal("alt+enter sent the message")
	}
	h.key("enter")
	if h.m.input.Value() != "" {
		t.Errorf("the input was not cleared: %q", h.m.input.Value())
	}
	h.until("the answer arrives", func() bool { return h.m.run == nil })
	got := h.m.tr.entries[start:]
	if len(got) != 2 || got[0].text != "hello\nthere" || got[1].text != "Hello back." {
		t.Fatalf("transcript:\n%s", h.screen())
	}
	if !got[1].done {
		t.Error("the finished answer is not marked done (it would not be rendered as markdown)")
	}
}

func TestNoModelSaysHowToConfigureOne(t *testing.T) {
	cfg, _ := tasksConfig(t, "tasks")
	h := newHarness(t, cfg)
	h.ready()
	h.typeText("hello")
	h.key("enter")
	s := h.screen()
	for _, want := range []string{"No model is configured", "--model PROVIDER:MODEL", noModelShort} {
		if !strings.Contains(strings.Join(strings.Fields(s), " "), want) {
			t.Errorf("screen lacks %q:\n%s", want, s)
		}
	}
	h.key("ctrl+t")
	if !strings.Contains(h.screen(), "tasks/list_tasks") {
		t.Errorf("the tools panel does not work without a model:\n%s", h.screen())
	}
}

func TestCallFormChecksAndSendsThroughTheGate(t *testing.T) {
	cfg, _ := tasksConfig(t, "tasks")
	h := newHarness(t, cfg)
	h.ready()
	h.key("ctrl+t")
	h.typeText("tasks/get_task")
	h.key("enter")
	if s := h.screen(); !strings.Contains(s, "READ · T0") || !strings.Contains(s, "Get one task") {
		t.Fatalf("the explanation lacks the badge or the description:\n%s", s)
	}
	h.key("enter")
	tp := h.m.panel.(*toolsPanel)
	form := tp.detail.form
	if got := form.editor.Value(); got != "{\n  \"id\": \"\"\n}" {
		t.Fatalf("skeleton = %q", got)
	}
	for _, bad := range []struct{ text, want string }{
		{`{"id": 5}`, "does not match the input schema"},
		{`{}`, "does not match the input schema"},
		{`{"id": "T-1",}`, "not valid JSON"},
		{`["T-1"]`, "must be a JSON object"},
	} {
		form.editor.SetValue(bad.text)
		h.key("ctrl+s")
		if !strings.Contains(form.err, bad.want) {
			t.Errorf("%s: error %q, want %q", bad.text, form.err, bad.want)
		}
		if len(h.m.calls) > 0 || form.result != nil {
			t.Fatalf("%s was sent", bad.text)
		}
	}
	form.editor.SetValue(`{"id": "T-1"}`)
	h.key("ctrl+s")
	h.until("the call ends", func() bool { return form.result != nil && form.result.done })
	if form.result.status != host.StatusSuccess || form.result.decidedBy != "auto" {
		t.Fatalf("call: %s by %s: %s", form.result.status, form.result.decidedBy, form.result.message)
	}
	if s := h.screen(); !strings.Contains(s, "Draft launch announcement") {
		t.Errorf("the result is not shown:\n%s", s)
	}
	h.key("esc")
	h.key("esc")
	h.key("esc")
	if h.m.panel != nil {
		t.Fatal("esc did not close the panel")
	}
	if s := h.screen(); !strings.Contains(s, "✓ tasks/get_task") || !strings.Contains(s, "call form") {
		t.Errorf("the manual call has no card in the transcript:\n%s", s)
	}
}

func TestSkeleton(t *testing.T) {
	for _, c := range []struct{ schema, want string }{
		{`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["b","a"]}`, "{\n  \"b\": 0,\n  \"a\": \"\"\n}"},
		{`{"type":"object","properties":{"s":{"enum":["x","y"]},"o":{"type":"object","properties":{"f":{"type":["null","boolean"]}},"required":["f"]},"l":{"type":"array"},"d":{"type":"number","default":1.5}},"required":["s","o","l","d"]}`,
			"{\n  \"s\": \"x\",\n  \"o\": {\n    \"f\": false\n  },\n  \"l\": [],\n  \"d\": 1.5\n}"},
		{`{"type":"object"}`, "{}"},
		{`"not a schema"`, "{}"},
		{`{"type":"object","required":["x",3]}`, "{\n  \"x\": \"\"\n}"},
	} {
		if got := skeleton(json.RawMessage(c.schema)); got != c.want {
			t.Errorf("skeleton(%s) = %q, want %q", c.schema, got, c.want)
		}
	}
}

func TestProjectServerConsent(t *testing.T) {
	for _, c := range []struct {
		key     string
		starts  bool
		trusted bool
		choice  state.Choice
	}{
		{"u", true, false, state.ChoiceUntrusted},
		{"t", true, true, state.ChoiceTrusted},
		{"k", false, false, state.ChoiceSkipped},
	} {
		t.Run(c.choice.String(), func(t *testing.T) {
			cfg, clk := tasksConfig(t)
			proj, _ := fixtureSpec(t, "flaky", fixtures.Options{})
			proj.Name = "proj"
			cfg.Project = []ProjectServer{{Name: "proj", File: "/repo/a/.mcp.json", Spec: proj,
				ConsentKey: "/repo/a/.mcp.json#proj", ConsentHash: "entry-hash"}}
			cfg.StatePath = filepath.Join(t.TempDir(), "state.json")
			h := newHarness(t, cfg)
			if shown[*consentDialog](h.m) == nil || h.m.mgr != nil {
				t.Fatal("no consent dialog before the servers start")
			}
			if s := h.screen(); !strings.Contains(s, "proj") {
				t.Fatalf("the consent dialog does not name the server:\n%s", s)
			}
			clk.Add(time.Second)
			h.key(c.key)
			h.ready()
			_, started := h.m.mgr.Spec("proj")
			if started != c.starts {
				t.Errorf("proj started = %v, want %v", started, c.starts)
			}
			if got := h.m.trust.trusted("proj"); got != c.trusted {
				t.Errorf("proj trusted = %v, want %v", got, c.trusted)
			}
			st, err := state.Load(cfg.StatePath)
			if err != nil {
				t.Fatal(err)
			}
			// The choice is recorded under the key and hash the caller
			// computed (the ones its headless check reads), never under
			// the bare server name.
			got, ok := st.Consent("/repo/a/.mcp.json#proj", "entry-hash")
			if !ok || got.Choice != c.choice {
				t.Errorf("recorded consent = %+v (%v), want %s", got, ok, c.choice)
			}
			if got, found := st.Consent("proj", "entry-hash"); found || got.Hash != "" {
				t.Errorf("a consent was recorded under the bare server name: %+v", got)
			}
			if _, ok := h.m.mgr.Spec("tasks"); !ok {
				t.Error("the person's own server did not start")
			}
		})
	}
}

// TestProjectConsentChangedIsPerProject: the dialog says an entry changed
// only when this project file's entry was consented to with another hash,
// not when a server of the same name was consented to elsewhere.
func TestProjectConsentChangedIsPerProject(t *testing.T) {
	for _, c := range []struct {
		name, key, hash string
		changed         bool
	}{
		{"same project, other entry", "/repo/a/.mcp.json#proj", "old-hash", true},
		{"other project, same name", "/repo/b/.mcp.json#proj", "old-hash", false},
		{"old name-only consent", "proj", "entry-hash", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, _ := tasksConfig(t)
			proj, _ := fixtureSpec(t, "flaky", fixtures.Options{})
			proj.Name = "proj"
			cfg.Project = []ProjectServer{{Name: "proj", File: "/repo/a/.mcp.json", Spec: proj,
				CommandLine: []string{"python3", "/repo/a/linter.py", "srv"},
				ConsentKey:  "/repo/a/.mcp.json#proj", ConsentHash: "entry-hash"}}
			cfg.StatePath = filepath.Join(t.TempDir(), "state.json")
			if err := state.Update(cfg.StatePath, time.Now, func(s *state.State) error {
				s.SetConsent(c.key, c.hash, state.ChoiceTrusted)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			h := newHarness(t, cfg)
			if shown[*consentDialog](h.m) == nil {
				t.Fatal("no consent dialog")
			}
			r := shown[*consentDialog](h.m).d.Request()
			if r.Changed != c.changed {
				t.Errorf("dialog says changed = %v, want %v", r.Changed, c.changed)
			}
			if !slices.Equal(r.CommandLine, []string{"python3", "/repo/a/linter.py", "srv"}) {
				t.Errorf("dialog command line = %q, want the resolved one", r.CommandLine)
			}
		})
	}
}

func TestTrustCommand(t *testing.T) {
	cfg, _ := tasksConfig(t) // tasks not trusted
	cfg.StatePath = filepath.Join(t.TempDir(), "state.json")
	h := newHarness(t, cfg)
	h.ready()
	d, _, _ := h.m.explain("tasks", "list_tasks", nil)
	if d.Verdict != decide.Ask || d.Class != decide.Unknown {
		t.Fatalf("untrusted list_tasks: %s %s", d.Verdict, d.Class)
	}
	h.typeText("/trust tasks")
	h.key("enter")
	d, _, _ = h.m.explain("tasks", "list_tasks", nil)
	if d.Verdict != decide.Allow || d.Class != decide.Read {
		t.Errorf("trusted list_tasks: %s %s, want allow read", d.Verdict, d.Class)
	}
	r := h.m.gate.Call(context.Background(), host.Call{Server: "tasks", Tool: "list_tasks"})
	if r.DecidedBy != "auto" {
		t.Errorf("the gate does not see the trust: decided by %s", r.DecidedBy)
	}
	st, err := state.Load(cfg.StatePath)
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := h.m.mgr.Spec("tasks")
	if !st.Trusted(spec.Identity()) {
		t.Error("the trust was not recorded")
	}
	h.typeText("/trust nosuch")
	h.key("enter")
	if !strings.Contains(h.screen(), `no running server named "nosuch"`) {
		t.Errorf("no error for an unknown server:\n%s", h.screen())
	}
}

func TestGrantsPanelRevokes(t *testing.T) {
	cfg, clk := tasksConfig(t, "tasks")
	h := newHarness(t, cfg)
	h.ready()
	_, _, cmd := h.m.sendCall("tasks", "update_task", json.RawMessage(`{"id":"T-2","title":"x"}`))
	h.run(cmd)
	h.until("the dialog opens", func() bool { return shown[*confirmDialog](h.m) != nil })
	clk.Add(time.Second)
	h.key("s")
	h.until("the call ends", func() bool { return len(h.m.calls) == 0 })
	if n := len(h.m.gate.Grants()); n != 1 {
		t.Fatalf("%d grants, want 1", n)
	}
	h.typeText("/grants")
	h.key("enter")
	if s := h.screen(); !strings.Contains(s, "session") || !strings.Contains(s, "tasks/update_task") {
		t.Fatalf("the grant is not listed:\n%s", s)
	}
	h.key("x")
	if n := len(h.m.gate.Grants()); n != 0 {
		t.Fatalf("%d grants after revoking, want 0", n)
	}
	h.key("esc")
	if !strings.Contains(h.screen(), "revoked the session grant for tasks/update_task") {
		t.Errorf("no notice of the revocation:\n%s", h.screen())
	}
}

func TestExplainCommand(t *testing.T) {
	cfg, _ := tasksConfig(t, "tasks")
	h := newHarness(t, cfg)
	h.ready()
	h.typeText(`/explain tasks/delete_task {"id":"T-1"}`)
	h.key("enter")
	s := h.screen()
	for _, want := range []string{"DESTRUCTIVE · T2", "ASK", "destructive:"} {
		if !strings.Contains(s, want) {
			t.Errorf("explanation lacks %q:\n%s", want, s)
		}
	}
	h.typeText("/explain tasks")
	h.key("enter")
	if !strings.Contains(h.screen(), "usage: /explain SERVER/TOOL") {
		t.Errorf("no usage:\n%s", h.screen())
	}
}

func TestServersPanelRestarts(t *testing.T) {
	cfg, _ := tasksConfig(t, "tasks")
	cfg.Held = []client.Status{{Name: "off", Transport: "stdio", State: "disabled"}}
	h := newHarness(t, cfg)
	h.ready()
	h.typeText("/servers")
	h.key("enter")
	s := h.screen()
	if !strings.Contains(s, "● ready  tasks") || !strings.Contains(s, "disabled  off") {
		t.Fatalf("servers panel:\n%s", s)
	}
	// The selected server's last messages, each answer after its request.
	if !strings.Contains(s, "messages (the last") || !regexp.MustCompile(`→ tools/list #\S+ +\d+ B`).MatchString(s) ||
		!regexp.MustCompile(`← tools/list #\S+ +[\d.]+ (B|KB)`).MatchString(s) {
		t.Errorf("servers panel lacks the server's recent messages:\n%s", s)
	}
	if !strings.Contains(h.m.statusLine(80), "servers 1/2 ready") {
		t.Errorf("status line: %q", h.m.statusLine(80))
	}
	h.key("r")
	h.until("the restart ends", func() bool {
		last := h.m.tr.last()
		return last != nil && strings.Contains(last.text, "restart")
	})
	if last := h.m.tr.last().text; last != "server tasks restarted" {
		t.Errorf("restart: %s", last)
	}
	if h.m.flash != "" {
		t.Errorf("the status line still says %q", h.m.flash)
	}
}

func TestTranscriptFocusExpandsCards(t *testing.T) {
	cfg, _ := tasksConfig(t, "tasks")
	cfg.Model = fakeModel{}
	h := newHarness(t, cfg)
	h.ready()
	playCards(h)
	h.key("f2")
	if h.m.focus != focusTranscript || h.m.tr.sel < 0 {
		t.Fatal("f2 did not select a card")
	}
	if !strings.Contains(h.screen(), "TRANSCRIPT · ↑/↓ cards") {
		t.Errorf("the focus on the transcript is not shown:\n%s", h.screen())
	}
	h.key("up") // from the newest card to the one before
	h.key("enter")
	s := h.screen()
	if !strings.Contains(s, "▶ ? tasks/save_context") {
		t.Errorf("the selected card is not marked:\n%s", s)
	}
	if !strings.Contains(s, `"app": "drive"`) {
		t.Errorf("the selected card did not expand its arguments:\n%s", s)
	}
	h.key("esc")
	if h.m.focus != focusInput || strings.Contains(h.screen(), "▶") {
		t.Error("esc did not return to the input")
	}
}

func TestHelpListsEveryBinding(t *testing.T) {
	m := NewModel(Config{})
	defer m.Close()
	text := strings.Join(m.keys.helpText(m.st, 200), "\n")
	for _, g := range m.keys.groups() {
		for _, b := range g.Bindings {
			if h := b.Help(); !strings.Contains(text, h.Key) || !strings.Contains(text, h.Desc) {
				t.Errorf("help lacks %s %q", h.Key, h.Desc)
			}
		}
	}
	for _, c := range []string{"/tools", "/servers", "/explain", "/grants", "/trust", "/clear", "/help"} {
		if !strings.Contains(text, c) {
			t.Errorf("help lacks %s", c)
		}
	}
	m.Update(keyMsg("f1"))
	if _, ok := m.panel.(*helpPanel); !ok {
		t.Fatal("f1 did not open the help")
	}
}

func TestResizeKeepsTheFrame(t *testing.T) {
	cfg, _ := tasksConfig(t, "tasks")
	cfg.Model = fakeModel{}
	h := newHarness(t, cfg)
	h.ready()
	playCards(h)
	for _, sz := range [][2]int{{80, 24}, {50, 15}, {140, 40}, {20, 6}, {80, 24}} {
		h.send(teaSize(sz[0], sz[1]))
		for _, open := range []string{"", "ctrl+t"} {
			if open != "" {
				h.key(open)
			}
			checkFrame(t, h.screen(), sz[0], sz[1])
		}
		h.key("esc")
	}
}

func TestRunRefusesWithoutATerminal(t *testing.T) {
	var in, out bytes.Buffer
	err := Run(context.Background(), Config{In: &in, Out: &out})
	if !errors.Is(err, ErrNotTerminal) || !strings.Contains(err.Error(), "mcphost run") || !strings.Contains(err.Error(), "mcphost call") {
		t.Fatalf("Run = %v, want ErrNotTerminal naming run and call", err)
	}
	if out.Len() > 0 {
		t.Errorf("Run wrote %q", out.String())
	}
}

// TestProgramQuits runs the model in a real Bubble Tea program (no
// terminal): two Ctrl-C end it, and Close leaves nothing running.
func TestProgramQuits(t *testing.T) {
	cfg, _ := tasksConfig(t, "tasks")
	m := NewModel(cfg)
	defer m.Close()
	var out bytes.Buffer
	p := tea.NewProgram(m, tea.WithInput(nil), tea.WithOutput(&out), tea.WithWindowSize(80, 24), tea.WithoutSignals())
	done := make(chan error, 1)
	go func() {
		_, err := p.Run()
		done <- err
	}()
	p.Send(keyMsg("ctrl+c"))
	p.Send(keyMsg("ctrl+c"))
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(20 * time.Second):
		p.Kill()
		t.Fatal("two ctrl+c did not end the program")
	}
	m.Close()
	if m.ctx.Err() == nil {
		t.Error("the model's context is still alive after quitting")
	}
}

func TestCardShowsProgressAndIgnoresLateReports(t *testing.T) {
	cfg, _ := tasksConfig(t, "tasks")
	h := newHarness(t, cfg)
	h.ready()
	ev := func(k host.LoopEventKind, c *host.CallEntry, p *client.Progress) {
		h.send(inboxMsg{loopEventMsg{run: 1, ev: host.LoopEvent{Kind: k, Call: c, Progress: p}}})
	}
	call := &host.CallEntry{ID: "c1", Server: "tasks", Tool: "list_tasks", Args: json.RawMessage(`{}`)}
	ev(host.EvToolCall, call, nil)
	ev(host.EvProgress, call, &client.Progress{Progress: 1, Total: 5, Message: "first"})
	ev(host.EvProgress, call, &client.Progress{Progress: 3, Total: 5, Message: "copying\x1b[2J\nfiles"})
	s := h.screen()
	if !strings.Contains(s, "progress 3/5 · copying") || strings.Contains(s, "1/5") {
		t.Fatalf("running card:\n%s", s)
	}
	if strings.Contains(h.m.View().Content, "\x1b[2J") {
		t.Fatal("the progress message reached the terminal unsanitized")
	}
	done := *call
	done.Verdict, done.Class, done.DecidedBy, done.Status = "allow", "read", "auto", host.StatusSuccess
	done.Result = textResult("three tasks", false)
	ev(host.EvDecision, &done, nil)
	ev(host.EvResult, &done, nil)
	ev(host.EvProgress, call, &client.Progress{Progress: 4, Total: 5, Message: "late"})
	s = h.screen()
	if strings.Contains(s, "progress") || strings.Contains(s, "late") || !strings.Contains(s, "three tasks") {
		t.Fatalf("finished card:\n%s", s)
	}
	if c := h.m.cards["1/c1"]; c == nil || c.progress == nil || c.progress.Progress != 3 {
		t.Fatalf("card kept %+v", c)
	}
}

func TestServersPanelShowsTheLastLogMessages(t *testing.T) {
	cfg, _ := tasksConfig(t, "tasks")
	var log []string
	for i := 1; i <= 12; i++ {
		log = append(log, fmt.Sprintf("log-%02d", i))
	}
	log[11] = "log-12 \x1b]0;evil\x07done"
	cfg.Held = []client.Status{{Name: "off", Transport: "stdio", State: "disabled", Log: log}}
	h := newHarness(t, cfg)
	h.ready()
	h.send(teaSize(80, 40))
	h.typeText("/servers")
	h.key("enter")
	h.key("down")
	s := h.screen()
	if !strings.Contains(s, "log (the last 10 messages):") || strings.Contains(s, "log-01") || strings.Contains(s, "log-02") {
		t.Fatalf("servers panel:\n%s", s)
	}
	for i := 3; i <= 11; i++ {
		if !strings.Contains(s, fmt.Sprintf("  log-%02d", i)) {
			t.Errorf("log-%02d missing:\n%s", i, s)
		}
	}
	if !strings.Contains(s, "log-12") || !strings.Contains(s, "done") || strings.Contains(h.m.View().Content, "\x1b]0;evil") {
		t.Errorf("the last message is missing or unsanitized:\n%q", h.m.View().Content)
	}
}
