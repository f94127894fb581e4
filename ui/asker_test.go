package ui

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/host"
)

type asked struct {
	ans host.Answer
	err error
}

// TestAskerQueue: questions that arrive together wait in a queue, shown one
// at a time with their count; a withdrawn question leaves the queue.
func TestAskerQueue(t *testing.T) {
	tasks, _ := fixtureSpec(t, "tasks", fixtures.Options{})
	clk := newClock()
	h := newHarness(t, Config{Servers: []client.Spec{tasks}, Gate: host.GateOptions{Policy: policy(t), Trusted: trusted("tasks")}, Now: clk.Now, Dark: dark(true)})
	h.ready()
	question := func(tool, args string) *host.Question {
		tl, ok := h.m.mgr.Tool("tasks", tool)
		if !ok {
			t.Fatalf("no tool %s", tool)
		}
		d, _, err := h.m.explain("tasks", tool, json.RawMessage(args))
		if err != nil {
			t.Fatal(err)
		}
		return &host.Question{Server: "tasks", Trusted: true, Tool: tl, Args: json.RawMessage(args), Decision: d, Scopes: decide.AllowedScopes(d)}
	}
	ask := func(ctx context.Context, q *host.Question) chan asked {
		ch := make(chan asked, 1)
		go func() {
			ans, err := h.m.asker.Ask(ctx, q)
			ch <- asked{ans, err}
		}()
		return ch
	}
	first := ask(context.Background(), question("delete_task", `{"id":"T-1"}`))
	h.until("the first question is shown", func() bool { return shown[*confirmDialog](h.m) != nil })
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	second := ask(ctx2, question("update_task", `{"id":"T-2","title":"x"}`))
	h.until("both are queued", func() bool { return len(h.m.asks) == 2 })

	s := h.screen()
	if !strings.Contains(s, "1 of 2") || !strings.Contains(s, "tasks/delete_task") {
		t.Fatalf("the dialog does not show the first of two questions:\n%s", s)
	}
	if !strings.Contains(s, "question 1 of 2") {
		t.Errorf("the status line does not count the questions:\n%s", s)
	}

	clk.Add(time.Second)
	h.key("y")
	select {
	case a := <-first:
		if a.err != nil || !a.ans.Approve || a.ans.Scope != decide.ScopeOnce {
			t.Errorf("first answer = %+v, %v; want approve once", a.ans, a.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the first question was never answered")
	}
	s = h.screen()
	if !strings.Contains(s, "tasks/update_task") || strings.Contains(s, "of 2") {
		t.Errorf("after the first answer the second question is not shown alone:\n%s", s)
	}

	cancel2()
	h.until("the withdrawn question leaves", func() bool { return len(h.m.asks) == 0 && shown[*confirmDialog](h.m) == nil })
	if a := <-second; !errors.Is(a.err, context.Canceled) {
		t.Errorf("the withdrawn question returned %+v, %v; want context.Canceled", a.ans, a.err)
	}
}
