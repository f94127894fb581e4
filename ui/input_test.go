package ui

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/llm"
)

// TestHistoryAcrossSessions: what was sent in one session comes back with
// ↑ in the next, newest first; ↓ returns to the draft; the file is the
// person's own.
func TestHistoryAcrossSessions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "history.jsonl")
	h := newHarness(t, Config{HistoryPath: path, Now: newClock().Now, Dark: dark(true)})
	h.ready()
	for _, s := range []string{"first message", "second message"} {
		h.typeText(s)
		h.key("enter")
	}
	h.m.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("no history file: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("history file mode %v, want 0600", fi.Mode().Perm())
	}

	h2 := newHarness(t, Config{HistoryPath: path, Now: newClock().Now, Dark: dark(true)})
	h2.ready()
	h2.typeText("draft")
	for _, step := range []struct{ key, want string }{
		{"up", "second message"}, {"up", "first message"}, {"up", "first message"},
		{"down", "second message"}, {"down", "draft"},
	} {
		h2.key(step.key)
		if got := h2.m.input.Value(); got != step.want {
			t.Fatalf("after %s the input holds %q, want %q", step.key, got, step.want)
		}
	}
}

// TestHistoryUpOnlyOnTheFirstLine: ↑ inside a multi-line draft moves the
// cursor, not through the history.
func TestHistoryUpOnlyOnTheFirstLine(t *testing.T) {
	h := newHarness(t, Config{Now: newClock().Now, Dark: dark(true)})
	h.ready()
	h.typeText("old")
	h.key("enter")
	h.typeText("one")
	h.key("alt+enter")
	h.typeText("two")
	h.key("up")
	if got := h.m.input.Value(); got != "one\ntwo" {
		t.Fatalf("↑ on the second line replaced the draft with %q", got)
	}
	h.key("up")
	if got := h.m.input.Value(); got != "old" {
		t.Fatalf("↑ on the first line gave %q, want the history", got)
	}
}

// TestHistorySearch: Ctrl-R finds the newest match, again an older one;
// esc puts the draft back.
func TestHistorySearch(t *testing.T) {
	h := newHarness(t, Config{Now: newClock().Now, Dark: dark(true)})
	h.ready()
	for _, s := range []string{"deploy staging", "list files", "deploy prod"} {
		h.typeText(s)
		h.key("enter")
	}
	h.typeText("draft")
	h.key("ctrl+r")
	h.typeText("depl")
	if got := h.m.input.Value(); got != "deploy prod" {
		t.Fatalf("search gave %q", got)
	}
	if !strings.Contains(h.screen(), "history search: depl") {
		t.Errorf("the search is not shown:\n%s", h.screen())
	}
	h.key("ctrl+r")
	if got := h.m.input.Value(); got != "deploy staging" {
		t.Fatalf("ctrl+r again gave %q", got)
	}
	h.key("esc")
	if got := h.m.input.Value(); got != "draft" || h.m.search != nil {
		t.Fatalf("esc left %q (searching %v)", got, h.m.search != nil)
	}
	h.key("ctrl+r")
	h.typeText("list")
	h.key("enter") // keeps the match for editing; does not send it
	if got := h.m.input.Value(); got != "list files" || h.m.search != nil {
		t.Fatalf("enter left %q", got)
	}
}

// TestTabNeverDropsKeys is the report: /gr, Tab, /foo, Enter. Tab
// completes in place; what is typed next lands in the input.
func TestTabNeverDropsKeys(t *testing.T) {
	cfg, _ := tasksConfig(t, "tasks")
	h := newHarness(t, cfg)
	h.ready()
	h.typeText("/gr")
	h.key("tab")
	if got := h.m.input.Value(); got != "/grants " {
		t.Fatalf("tab completed to %q", got)
	}
	h.typeText("/foo")
	if got := h.m.input.Value(); got != "/grants /foo" || h.m.focus != focusInput {
		t.Fatalf("after tab the input holds %q, focus %d", got, h.m.focus)
	}
	h.m.input.Reset()

	h.typeText("/explain tasks/del")
	if h.m.menu == nil || len(h.m.menu.entries) < 2 {
		t.Errorf("several matches are not listed in the menu: %+v", h.m.menu)
	}
	h.key("tab")
	if got := h.m.input.Value(); !strings.HasPrefix(got, "/explain tasks/delete_") {
		t.Fatalf("tab completed the tool to %q", got)
	}
	h.m.input.Reset()
	h.typeText("/trust ta")
	h.key("tab")
	if got := h.m.input.Value(); got != "/trust tasks " {
		t.Fatalf("tab completed the server to %q", got)
	}
	h.m.input.Reset()
	h.typeText("plain text")
	h.key("tab")
	if got := h.m.input.Value(); got != "plain text" || h.m.focus != focusInput {
		t.Fatalf("tab on a message changed it to %q or moved the focus", got)
	}
	// Taken by completion, not left to the text area: it says what Tab does.
	if !strings.Contains(h.m.flash, "tab completes /commands") {
		t.Errorf("tab on a message says %q, want what tab completes", h.m.flash)
	}
}

// blockingModel answers each turn only when released, so that a test can
// type while the model works.
type blockingModel struct {
	release chan string
	got     chan string
}

func (blockingModel) Name() string { return "test:blocking" }

func (b blockingModel) Stream(ctx context.Context, req *llm.Request, emit func(llm.Event)) error {
	last := req.Messages[len(req.Messages)-1]
	select {
	case b.got <- last.Text:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case text := <-b.release:
		emit(llm.Event{Kind: llm.EventTextDelta, Text: text})
		emit(llm.Event{Kind: llm.EventUsage, Usage: llm.Usage{InputTokens: 1500, OutputTokens: 500}})
		emit(llm.Event{Kind: llm.EventDone, StopReason: "end_turn"})
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestQueuedMessageSentWhenTheTurnEnds: Enter while the model works queues
// the message (shown as queued); it goes to the model when the turn ends.
// The status line counts the tokens and how full the context is.
func TestQueuedMessageSentWhenTheTurnEnds(t *testing.T) {
	bm := blockingModel{release: make(chan string), got: make(chan string, 4)}
	h := newHarness(t, Config{Model: bm, ContextWindow: 10000, Now: newClock().Now, Dark: dark(true)})
	h.ready()
	h.typeText("first")
	h.key("enter")
	h.until("the model has the first message", func() bool { return len(bm.got) == 1 })
	h.typeText("second")
	h.key("enter")
	if len(h.m.queue) != 1 || h.m.input.Value() != "" {
		t.Fatalf("queue %q, input %q", h.m.queue, h.m.input.Value())
	}
	if s := h.screen(); !strings.Contains(s, "⏸ queued second") || !strings.Contains(s, "1 queued") {
		t.Fatalf("the queued message is not shown:\n%s", s)
	}
	// ↑ on the empty input takes it back for editing; enter queues it again.
	h.key("up")
	if h.m.input.Value() != "second" || len(h.m.queue) != 0 {
		t.Fatalf("↑ did not take the queued message back: %q", h.m.input.Value())
	}
	h.typeText(" edited")
	h.key("enter")
	bm.release <- "one"
	h.until("the queued message reaches the model", func() bool { return len(bm.got) == 2 })
	if got := <-bm.got; got != "first" {
		t.Fatalf("first message %q", got)
	}
	if got := <-bm.got; got != "second edited" {
		t.Fatalf("the queued message reached the model as %q", got)
	}
	bm.release <- "two"
	h.until("the second run ends", func() bool { return h.m.run == nil })
	s := h.screen()
	if strings.Contains(s, "queued") {
		t.Errorf("the queue is still shown:\n%s", s)
	}
	if !strings.Contains(s, "tokens 4.0k · context 20%") {
		t.Errorf("the status line lacks the tokens and the context:\n%s", s)
	}
}

// TestCancelReturnsTheQueueToTheInput: after Ctrl-C cancels the turn, the
// queued messages are not sent; they come back to the input.
func TestCancelReturnsTheQueueToTheInput(t *testing.T) {
	bm := blockingModel{release: make(chan string), got: make(chan string, 4)}
	h := newHarness(t, Config{Model: bm, Now: newClock().Now, Dark: dark(true)})
	h.ready()
	h.typeText("first")
	h.key("enter")
	h.until("the model has the message", func() bool { return len(bm.got) == 1 })
	h.typeText("later")
	h.key("enter")
	h.key("ctrl+c")
	if !strings.Contains(h.screen(), "cancelling") {
		t.Errorf("the status does not say cancelling:\n%s", h.screen())
	}
	h.until("the run ends", func() bool { return h.m.run == nil })
	if h.m.input.Value() != "later" || len(h.m.queue) != 0 || len(bm.got) != 1 {
		t.Fatalf("input %q, queue %q, model asked %d times", h.m.input.Value(), h.m.queue, len(bm.got))
	}
	if strings.Contains(h.screen(), "cancelling") {
		t.Errorf("the status still says cancelling:\n%s", h.screen())
	}
}

// TestCtrlCOnADialogCancelsTheQuestion: the call does not run and its card
// says it was cancelled, not denied.
func TestCtrlCOnADialogCancelsTheQuestion(t *testing.T) {
	tasks, f := fixtureSpec(t, "tasks", fixtures.Options{})
	model := llm.NewScript([]llm.ScriptTurn{
		{Text: "Deleting T-1.", ToolCalls: []llm.ScriptCall{{Name: "tasks__delete_task", Args: json.RawMessage(`{"id":"T-1"}`)}}},
		{Text: "Stopped."},
	})
	clk := newClock()
	h := newHarness(t, Config{
		Servers: []client.Spec{tasks}, Model: model,
		Gate: host.GateOptions{Policy: policy(t), Trusted: trusted("tasks"), Audit: &memAudit{}},
		Now:  clk.Now, Dark: dark(true),
	})
	h.ready()
	h.typeText("delete T-1")
	h.key("enter")
	h.until("the dialog opens", func() bool { return shown[*confirmDialog](h.m) != nil })
	h.key("ctrl+c")
	if shown[*confirmDialog](h.m) != nil || h.quit {
		t.Fatal("ctrl+c did not close the dialog, or quit")
	}
	h.until("the run ends", func() bool { return h.m.run == nil })
	s := h.screen()
	if !strings.Contains(s, "cancelled by you") || strings.Contains(s, "denied by you") {
		t.Errorf("the card does not say the question was cancelled:\n%s", s)
	}
	for _, e := range f.Log() {
		if e.Event == fixtures.EventExec && e.Tool == "delete_task" {
			t.Fatal("the cancelled call ran")
		}
	}
}

// TestCompletionOffersOnlyPlainNames: a server's tool or server name with
// escapes or spaces is never typed into the input for the person.
func TestCompletionOffersOnlyPlainNames(t *testing.T) {
	for _, s := range []string{"tasks/list", "svc-1/get_item"} {
		if !completable(s) {
			t.Errorf("completable(%q) = false", s)
		}
	}
	for _, s := range []string{"", "a\x1b[2Jb/x", "a b/c", "tab\there", "x\u202e/y"} {
		if completable(s) {
			t.Errorf("completable(%q) = true", s)
		}
	}
}

// TestCancellingEndsWithTheCall: once a cancelled call from the call form
// has ended, the status no longer says cancelling, and the next call does
// not inherit it.
func TestCancellingEndsWithTheCall(t *testing.T) {
	h := newHarness(t, Config{Now: newClock().Now, Dark: dark(true)})
	h.ready()
	c := &card{started: h.m.now(), manual: true, server: "tasks", tool: "hang"}
	h.m.calls[1] = &manualCall{id: 1, cancel: func() {}, card: c, started: h.m.now()}
	h.key("ctrl+c")
	if !strings.Contains(h.screen(), "cancelling") {
		t.Fatalf("the status does not say cancelling:\n%s", h.screen())
	}
	h.send(inboxMsg{callDoneMsg{id: 1, r: &host.Result{Server: "tasks", Tool: "hang", Status: host.StatusUnknown}}})
	h.m.calls[2] = &manualCall{id: 2, cancel: func() {}, card: c, started: h.m.now()}
	if s := h.screen(); strings.Contains(s, "cancelling") || !strings.Contains(s, "running") {
		t.Fatalf("a new call inherited the cancellation:\n%s", s)
	}
}
