package ui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/host"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type elicited struct {
	res *mcp.ElicitResult
	err error
}

func (h *harness) elicit(ctx context.Context, server string, p *mcp.ElicitParams) chan elicited {
	ch := make(chan elicited, 1)
	go func() {
		res, err := h.m.elicit(ctx, server, &mcp.ElicitRequest{Params: p})
		ch <- elicited{res, err}
	}()
	return ch
}

func waitElicited(t *testing.T, ch chan elicited) elicited {
	t.Helper()
	select {
	case e := <-ch:
		return e
	case <-time.After(10 * time.Second):
		t.Fatal("the elicitation was never answered")
	}
	return elicited{}
}

// TestElicitationFormInTUI: a server's form is shown (its words labelled
// and escaped), filled in, and the accepted values go back to the server.
func TestElicitationFormInTUI(t *testing.T) {
	tasks, _ := fixtureSpec(t, "tasks", fixtures.Options{})
	clk := newClock()
	h := newHarness(t, Config{Servers: []client.Spec{tasks}, Gate: host.GateOptions{Policy: policy(t)}, Now: clk.Now, Dark: dark(true)})
	h.ready()
	if h.m.mgr == nil {
		t.Fatal("no manager")
	}
	ch := h.elicit(context.Background(), "tasks", &mcp.ElicitParams{
		Message: "Name the\x1b[31m list",
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{
			"name": map[string]any{"type": "string", "title": "List name"},
		}, "required": []string{"name"}},
	})
	h.until("the form is shown", func() bool { return shown[*elicitDialog](h.m) != nil })
	h.typeText("ab") // typed before it could be read: ignored
	s := h.screen()
	if !strings.Contains(s, `Name the\x1b[31m list`) || !strings.Contains(s, "The server's message") || !strings.Contains(s, "tasks") {
		t.Errorf("the form does not show the server and its escaped message:\n%s", s)
	}
	clk.Add(time.Second)
	h.typeText("groceries")
	h.key("enter") // next: the Accept button
	h.key("enter")
	got := waitElicited(t, ch)
	if got.err != nil || got.res.Action != "accept" {
		t.Fatalf("result %+v, %v; want accept", got.res, got.err)
	}
	if d := cmp.Diff(map[string]any{"name": "groceries"}, got.res.Content); d != "" {
		t.Errorf("content (-want +got):\n%s", d)
	}
	if shown[*elicitDialog](h.m) != nil || len(h.m.asks) != 0 {
		t.Error("the dialog stayed open")
	}
}

// TestElicitationURLAndCancel: a URL is opened only after the person
// agrees, through the injected opener; Esc cancels; a withdrawn request
// leaves the queue.
func TestElicitationURLAndCancel(t *testing.T) {
	clk := newClock()
	h := newHarness(t, Config{Gate: host.GateOptions{Policy: policy(t)}, Now: clk.Now, Dark: dark(true)})
	h.ready()
	var opened []string
	h.m.openURL = func(u string) error { opened = append(opened, u); return nil }

	ch := h.elicit(context.Background(), "auth", &mcp.ElicitParams{Mode: "url", URL: "https://example.com/sign-in", Message: "Sign in"})
	h.until("the URL is shown", func() bool { return shown[*elicitDialog](h.m) != nil })
	if len(opened) != 0 {
		t.Fatal("opened before the person agreed")
	}
	clk.Add(time.Second)
	h.key("enter")
	if got := waitElicited(t, ch); got.err != nil || got.res.Action != "accept" {
		t.Fatalf("result %+v, %v", got.res, got.err)
	}
	if len(opened) != 1 || opened[0] != "https://example.com/sign-in" {
		t.Errorf("opened %q", opened)
	}

	// Plain http to another machine is refused like a bad scheme: enter
	// declines, nothing is opened.
	ch = h.elicit(context.Background(), "auth", &mcp.ElicitParams{Mode: "url", URL: "http://example.com/sign-in"})
	h.until("the plain http URL is shown", func() bool { return shown[*elicitDialog](h.m) != nil })
	if s := h.screen(); !strings.Contains(s, "plain http") {
		t.Errorf("the refusal is not shown:\n%s", s)
	}
	clk.Add(time.Second)
	h.key("enter")
	if got := waitElicited(t, ch); got.err != nil || got.res.Action != "decline" || len(opened) != 1 {
		t.Errorf("plain http: %+v, %v, opened %q", got.res, got.err, opened)
	}

	ch = h.elicit(context.Background(), "auth", &mcp.ElicitParams{Mode: "url", URL: "file:///etc/passwd"})
	h.until("the refused URL is shown", func() bool { return shown[*elicitDialog](h.m) != nil })
	clk.Add(time.Second)
	h.key("esc")
	if got := waitElicited(t, ch); got.err != nil || got.res.Action != "cancel" || len(opened) != 1 {
		t.Errorf("esc: %+v, %v, opened %q", got.res, got.err, opened)
	}

	ctx, cancel := context.WithCancel(context.Background())
	ch = h.elicit(ctx, "auth", &mcp.ElicitParams{Message: "x"})
	h.until("the form is shown", func() bool { return shown[*elicitDialog](h.m) != nil })
	cancel()
	h.until("the withdrawn request leaves", func() bool { return shown[*elicitDialog](h.m) == nil && len(h.m.asks) == 0 })
	if got := waitElicited(t, ch); !errors.Is(got.err, context.Canceled) {
		t.Errorf("withdrawn: %+v %v", got.res, got.err)
	}
}
