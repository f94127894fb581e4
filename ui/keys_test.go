package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/termtest"
	"github.com/mcphost/mcphost/llm"
)

// hangingModel streams a few words, then waits for its context: an answer
// that is still streaming until it is interrupted.
type hangingModel struct {
	mu        sync.Mutex
	cancelled int
}

func (*hangingModel) Name() string { return "script:hang" }

func (h *hangingModel) Stream(ctx context.Context, _ *llm.Request, emit func(llm.Event)) error {
	emit(llm.Event{Kind: llm.EventTextDelta, Text: "Thinking out loud"})
	<-ctx.Done()
	h.mu.Lock()
	h.cancelled++
	h.mu.Unlock()
	return ctx.Err()
}

func (h *hangingModel) cancels() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cancelled
}

// TestEscInterruptsStreamingAnswer: esc in the input cancels the answer
// being streamed, like ctrl+c; a second esc on the idle, empty input
// changes nothing and never quits.
func TestEscInterruptsStreamingAnswer(t *testing.T) {
	model := &hangingModel{}
	h := newHarness(t, Config{Model: model, Now: newClock().Now, Dark: dark(true)})
	h.ready()
	h.typeText("talk")
	h.key("enter")
	h.until("the answer streams", func() bool { return strings.Contains(h.screen(), "Thinking out loud") })
	h.key("esc")
	if h.quit {
		t.Fatal("esc quit")
	}
	h.until("the run ends", func() bool { return h.m.run == nil })
	if model.cancels() != 1 {
		t.Fatalf("the model's stream was cancelled %d times, want 1", model.cancels())
	}
	if s := h.screen(); !strings.Contains(s, "cancelled") {
		t.Fatalf("the transcript does not say the answer was cancelled:\n%s", s)
	}
	before := h.screen()
	entries := len(h.m.tr.entries)
	h.key("esc")
	h.key("esc")
	if h.quit || len(h.m.tr.entries) != entries || h.m.input.Value() != "" || h.screen() != before {
		t.Fatalf("esc on an idle empty input did something: quit %v, entries %d→%d, input %q\n%s", h.quit, entries, len(h.m.tr.entries), h.m.input.Value(), h.screen())
	}
}

// TestEscInterruptsRunningCall: esc cancels a call in flight; the server
// sees the cancellation.
func TestEscInterruptsRunningCall(t *testing.T) {
	flaky, f := fixtureSpec(t, "flaky", fixtures.Options{})
	model := llm.NewScript([]llm.ScriptTurn{{Text: "Waiting.", ToolCalls: []llm.ScriptCall{{Name: "flaky__hang"}}}})
	h := newHarness(t, Config{Servers: []client.Spec{flaky}, Model: model,
		Gate: host.GateOptions{Policy: policy(t), Trusted: trusted("flaky")}, Now: newClock().Now, Dark: dark(true)})
	h.ready()
	h.typeText("hang")
	h.key("enter")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := f.WaitLog(ctx, func(e fixtures.LogEntry) bool { return e.Event == fixtures.EventExec && e.Tool == "hang" }); err != nil {
		t.Fatalf("the hang tool never started: %v", err)
	}
	h.key("esc")
	if _, err := f.WaitLog(ctx, func(e fixtures.LogEntry) bool { return e.Event == fixtures.EventCancelled && e.Tool == "hang" }); err != nil {
		t.Fatalf("the server never saw the cancellation: %v", err)
	}
	h.until("the run ends", func() bool { return h.m.run == nil })
	if h.quit {
		t.Fatal("esc quit")
	}
}

// TestEscOnConfirmationDeniesAndNeverInterrupts: while a call waits for
// the person, esc belongs to the dialog: it denies the call and the run
// goes on (the model hears of the denial); it does not cancel the run.
func TestEscOnConfirmationDeniesAndNeverInterrupts(t *testing.T) {
	tasks, _ := fixtureSpec(t, "tasks", fixtures.Options{})
	model := llm.NewScript([]llm.ScriptTurn{
		{Text: "Deleting T-1.", ToolCalls: []llm.ScriptCall{{Name: "tasks__delete_task", Args: json.RawMessage(`{"id":"T-1"}`)}}},
		{ExpectError: yes(), Text: "The delete was refused."},
	})
	clk := newClock()
	h := newHarness(t, Config{Servers: []client.Spec{tasks}, Model: model,
		Gate: host.GateOptions{Policy: policy(t), Trusted: trusted("tasks"), Audit: &memAudit{}}, Now: clk.Now, Dark: dark(true)})
	h.ready()
	h.typeText("delete it")
	h.key("enter")
	h.until("the dialog opens", func() bool { return shown[*confirmDialog](h.m) != nil })
	h.key("esc") // in the grace period: the dialog ignores it, and so does everything else
	if shown[*confirmDialog](h.m) == nil || h.m.cancelling {
		t.Fatalf("esc in the grace period left the dialog (open %v) or cancelled the run (%v)", shown[*confirmDialog](h.m) != nil, h.m.cancelling)
	}
	clk.Add(time.Second)
	h.key("esc")
	if h.m.cancelling {
		t.Fatal("esc on the dialog cancelled the run")
	}
	h.until("the run ends", func() bool { return h.m.run == nil })
	s := h.screen()
	for _, want := range []string{"denied by you", "The delete was refused."} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "cancelled") {
		t.Errorf("the run was cancelled instead of the call denied:\n%s", s)
	}
}

// TestCtrlZSuspends: ctrl+z asks the program to suspend (Bubble Tea then
// restores the terminal and stops the process; fg resumes it), from the
// input and from over a dialog alike.
func TestCtrlZSuspends(t *testing.T) {
	h := newHarness(t, Config{Now: newClock().Now, Dark: dark(true)})
	h.ready()
	h.typeText("draft")
	_, cmd := h.m.Update(keyMsg("ctrl+z"))
	if cmd == nil {
		t.Fatal("ctrl+z returned no command")
	}
	if _, ok := cmd().(tea.SuspendMsg); !ok {
		t.Fatal("ctrl+z did not suspend")
	}
	if v := h.m.input.Value(); v != "draft" {
		t.Fatalf("ctrl+z changed the input to %q", v)
	}
	h.send(tea.ResumeMsg{})
	if !strings.Contains(h.screen(), "resumed") || h.m.input.Value() != "draft" {
		t.Fatalf("after resuming:\n%s", h.screen())
	}
}

// TestCtrlDOnlyQuitsTwiceInARow: another key between two ctrl+d disarms
// the second; ctrl+d on a draft deletes instead.
func TestCtrlDOnlyQuitsTwiceInARow(t *testing.T) {
	clk := newClock()
	h := newHarness(t, Config{Now: clk.Now, Dark: dark(true)})
	h.ready()
	if _, cmd := h.m.Update(keyMsg("ctrl+d")); quits(cmd) {
		t.Fatal("the first ctrl+d quit")
	}
	clk.Add(2 * time.Second)
	if _, cmd := h.m.Update(keyMsg("ctrl+d")); quits(cmd) {
		t.Fatal("a ctrl+d two seconds after the first quit")
	}
	h.key("x")
	h.key("backspace")
	if _, cmd := h.m.Update(keyMsg("ctrl+d")); quits(cmd) {
		t.Fatal("a ctrl+d after another key quit")
	}
	if _, cmd := h.m.Update(keyMsg("ctrl+d")); !quits(cmd) {
		t.Fatal("two ctrl+d in a row did not quit")
	}
}

// TestSlashMenu: "/" opens the menu of every command with its help;
// typing filters it, arrows move, tab takes the highlighted command into
// the input, enter runs one that needs no argument, esc closes it.
func TestSlashMenu(t *testing.T) {
	h := newHarness(t, Config{Now: newClock().Now, Dark: dark(true)})
	h.ready()
	h.typeText("/")
	if h.m.menu == nil || len(h.m.menu.entries) != len(commandHelp) {
		t.Fatalf("the menu after / : %+v", h.m.menu)
	}
	s := h.screen()
	for _, want := range []string{"› /tools [FILTER]", "every tool with its badges", "/compact", "1 of 17"} {
		if !strings.Contains(s, want) {
			t.Errorf("the menu lacks %q:\n%s", want, s)
		}
	}
	h.typeText("t")
	var names []string
	for _, e := range h.m.menu.entries {
		names = append(names, e.insert)
	}
	if got := strings.Join(names, " "); got != "/tools /trust" {
		t.Fatalf("/t shows %s", got)
	}
	h.m.resetInput()
	h.typeText("/ompa") // no name starts so: a name holding it matches
	if h.m.menu == nil || len(h.m.menu.entries) != 1 || h.m.menu.entries[0].insert != "/compact" {
		t.Fatalf("/ompa shows %+v, want /compact", h.m.menu)
	}
	h.m.resetInput()
	h.typeText("/t")
	h.key("down")
	h.key("tab")
	if v := h.m.input.Value(); v != "/trust " || h.m.menu != nil {
		t.Fatalf("tab took %q (menu %v), want /trust", v, h.m.menu != nil)
	}
	h.m.resetInput()
	h.typeText("/he")
	h.key("enter")
	if _, ok := h.m.panel.(*helpPanel); !ok {
		t.Fatalf("enter on /help did not run it; panel %T", h.m.panel)
	}
	h.key("esc")
	h.typeText("/ex")
	h.key("down")
	h.key("up")
	h.key("up") // wraps to the last match
	if e := h.m.menu.entries[h.m.menu.at]; e.insert != "/export" {
		t.Fatalf("the highlight is on %s after down, up, up", e.insert)
	}
	h.key("esc")
	if h.m.menu != nil || h.m.input.Value() != "/ex" {
		t.Fatalf("esc: menu %v, input %q", h.m.menu != nil, h.m.input.Value())
	}
	h.typeText("p")
	if h.m.menu != nil {
		t.Fatal("the menu closed with esc opened again while typing the same word")
	}
	h.m.resetInput()
	h.typeText("/explain")
	h.key("enter")
	if v := h.m.input.Value(); v != "/explain " {
		t.Fatalf("enter on a command that needs an argument: input %q", v)
	}
}

// TestSlashMenuGolden draws the menu: every command, and filtered.
func TestSlashMenuGolden(t *testing.T) {
	for _, typed := range []string{"/", "/e"} {
		for _, sz := range sizes {
			name := strings.ReplaceAll(strings.ReplaceAll(typed, "/", "slash"), " ", "_")
			t.Run(fmt.Sprintf("%s_%dx%d", name, sz.w, sz.h), func(t *testing.T) {
				h := newHarness(t, Config{Model: fakeModel{}, Now: newClock().Now, Dark: dark(true)})
				h.ready()
				h.send(tea.WindowSizeMsg{Width: sz.w, Height: sz.h})
				h.typeText(typed)
				h.key("down")
				s := h.screen()
				checkFrame(t, s, sz.w, sz.h)
				golden.RequireEqual(t, []byte(s))
			})
		}
	}
}

func lines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d of the paste\n", i)
	}
	return b.String()
}

// TestLongPasteIsOneToken: a paste over ten lines shows as one token, is
// sent whole, and goes with one backspace; a short paste is inserted as it
// is.
func TestLongPasteIsOneToken(t *testing.T) {
	model := &recordingModel{Model: llm.NewScript([]llm.ScriptTurn{{Text: "Got it."}})}
	h := newHarness(t, Config{Model: model, Now: newClock().Now, Dark: dark(true)})
	h.ready()
	h.send(tea.PasteMsg{Content: "two\nlines"})
	if v := h.m.input.Value(); v != "two\nlines" {
		t.Fatalf("a short paste became %q", v)
	}
	h.m.resetInput()
	h.typeText("Look: ")
	h.send(tea.PasteMsg{Content: lines(12)})
	if v := h.m.input.Value(); v != "Look: [pasted 12 lines]" {
		t.Fatalf("the input holds %q", v)
	}
	if s := h.screen(); !strings.Contains(s, "› Look: [pasted 12 lines]") {
		t.Fatalf("the token is not shown:\n%s", s)
	}
	h.key("backspace")
	if v := h.m.input.Value(); v != "Look: " || len(h.m.pastes) != 0 {
		t.Fatalf("backspace after the token left %q and %d pastes", v, len(h.m.pastes))
	}
	h.send(tea.PasteMsg{Content: lines(12)})
	h.send(tea.PasteMsg{Content: lines(12)})
	if v := h.m.input.Value(); v != "Look: [pasted 12 lines][pasted 12 lines #2]" {
		t.Fatalf("two pastes: %q", v)
	}
	h.typeText(" end")
	h.key("enter")
	h.until("the run ends", func() bool { return h.m.run == nil && len(model.reqs) == 1 })
	want := "Look: " + lines(12) + lines(12) + " end"
	if got := model.lastUser(); got != want {
		t.Fatalf("the model got\n%q\nwant\n%q", got, want)
	}
	if h.m.pastes != nil {
		t.Fatal("the pastes outlived the message")
	}
}

// runNow stands in for tea.ExecProcess: it runs the command at once
// (without the terminal) and returns its callback's message.
func runNow(c *exec.Cmd, fn tea.ExecCallback) tea.Cmd {
	return func() tea.Msg { return fn(c.Run()) }
}

// TestCtrlGEditsInEditor: ctrl+g runs $VISUAL (before $EDITOR) on the
// message, long pastes expanded; what it saves replaces the input. A
// missing editor says how to set one; a failing one keeps the input.
func TestCtrlGEditsInEditor(t *testing.T) {
	if _, err := exec.LookPath("sed"); err != nil {
		t.Skip("no sed to stand in for an editor")
	}
	h := newHarness(t, Config{Now: newClock().Now, Dark: dark(true)})
	h.ready()
	env := map[string]string{}
	h.m.getenv = func(k string) string { return env[k] }
	h.m.execProcess = runNow

	h.typeText("a draft")
	h.key("ctrl+g")
	if s := h.screen(); !strings.Contains(s, "set $VISUAL or $EDITOR") || h.m.input.Value() != "a draft" {
		t.Fatalf("without an editor:\n%s", s)
	}
	env["EDITOR"] = "false"
	env["VISUAL"] = "sed -i s/draft/finished/"
	h.send(tea.PasteMsg{Content: lines(11)})
	h.key("ctrl+g")
	h.until("the editor is done", func() bool { return strings.Contains(h.screen(), "message edited") })
	if v, want := h.m.input.Value(), "a finished"+strings.TrimRight(lines(11), "\n"); v != want {
		t.Fatalf("after the editor the input holds %q, want %q", v, want)
	}
	env["VISUAL"] = "false"
	h.key("ctrl+g")
	h.until("the editor fails", func() bool { return strings.Contains(h.screen(), "the editor failed") })
	if !strings.HasPrefix(h.m.input.Value(), "a finished") {
		t.Fatalf("a failing editor changed the input to %q", h.m.input.Value())
	}
}

// TestArgumentMenu: after /explain the menu lists SERVER/TOOL, after
// /trust the servers; tab takes the highlighted one, and a second tab
// after moving takes another (no more cut-off lists in the status line).
func TestArgumentMenu(t *testing.T) {
	cfg, _ := tasksConfig(t, "tasks")
	h := newHarness(t, cfg)
	h.ready()
	h.typeText("/explain tasks/")
	if h.m.menu == nil || h.m.menu.kind != menuToolRefs || len(h.m.menu.entries) < 3 {
		t.Fatalf("the menu after /explain: %+v", h.m.menu)
	}
	for _, e := range h.m.menu.entries {
		if !strings.HasPrefix(e.insert, "tasks/") {
			t.Errorf("the menu offers %s", e.insert)
		}
	}
	second := h.m.menu.entries[1].insert
	h.key("down")
	h.key("tab")
	if got := h.m.input.Value(); got != "/explain "+second+" " {
		t.Fatalf("tab took %q, want %s", got, second)
	}
	h.m.resetInput()
	h.typeText("/trust ")
	if h.m.menu == nil || h.m.menu.kind != menuServers || len(h.m.menu.entries) != 1 || h.m.menu.entries[0].insert != "tasks" {
		t.Fatalf("the menu after /trust: %+v", h.m.menu)
	}
	h.m.resetInput()
	h.typeText("/explain nosuch")
	if h.m.menu != nil {
		t.Fatal("a menu with no match stays open")
	}
}

// TestArgumentMenuHostileNames: a hostile server's tool names and titles
// never reach the terminal through the menu, and only names that can be
// typed back as shown are offered.
func TestArgumentMenuHostileNames(t *testing.T) {
	spec, _ := fixtureSpec(t, "hostile", fixtures.Options{Hostile: fixtures.HostileEscapes})
	h := newHarness(t, Config{Servers: []client.Spec{spec}, Gate: host.GateOptions{Policy: policy(t)}, Now: newClock().Now, Dark: dark(true)})
	h.ready()
	if len(h.m.mgr.Tools()) == 0 {
		t.Fatal("the hostile fixture lists no tools")
	}
	h.typeText("/explain ")
	if h.m.menu != nil {
		for _, e := range h.m.menu.entries {
			if !completable(e.insert) {
				t.Errorf("the menu offers %q", e.insert)
			}
		}
	}
	if u := termtest.Unsafe(h.m.View().Content); u != "" {
		t.Fatalf("unsafe output: %s", u)
	}
	h.typeText("hostile/sh") // show_banner, whose title writes to the clipboard
	if h.m.menu == nil || len(h.m.menu.entries) != 1 {
		t.Fatalf("the menu for hostile/sh: %+v", h.m.menu)
	}
	if u := termtest.Unsafe(h.m.View().Content); u != "" {
		t.Fatalf("unsafe output: %s", u)
	}
}
