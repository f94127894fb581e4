package ui

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/approver"
	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/later"
	"github.com/mcphost/mcphost/llm"
	"github.com/mcphost/mcphost/ui/notify"
)

// noChat is a channel policy a managed file narrowed: no tier may be
// approved in the chat, only with `mcphost approve` or on the web page.
var noChat = host.AskViaPolicy(config.AskVia{"T1": {config.ChannelApprove, config.ChannelWeb},
	"T2": {config.ChannelApprove, config.ChannelWeb}, "T3": {config.ChannelApprove, config.ChannelWeb}})

// heldChat is a chat over the flaky fixture (untrusted: set_value asks at
// T3) whose dialog may approve nothing, holding its calls on a real
// approver socket of its own, as the chat's wiring does.
type heldChat struct {
	h     *harness
	f     *fixtures.Fixture
	store *later.Store
	audit *memAudit
	clk   *clock // the store's
	sock  string
}

func newHeldChat(t *testing.T, turns []llm.ScriptTurn) *heldChat {
	t.Helper()
	spec, f := fixtureSpec(t, "flaky", fixtures.Options{})
	// The store's clock starts now: the socket withdraws a held call when
	// its expiry passes on the wall clock.
	hc := &heldChat{f: f, audit: &memAudit{}, clk: &clock{now: time.Now()}}
	hc.store = later.New(later.Options{Now: hc.clk.Now})
	hc.sock = approver.SocketPath(filepath.Join(t.TempDir(), "state"))
	b, err := approver.Listen(hc.sock, approver.Options{Label: "mcphost chat in a test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	hc.h = newHarness(t, Config{
		Servers: []client.Spec{spec}, Model: llm.NewScript(turns),
		Gate: host.GateOptions{Policy: policy(t), Audit: hc.audit, MayApprove: noChat, Later: hc.store},
		PostHeld: func(g *host.Gate, a later.Approval, q *host.Question) error {
			err := b.Post(a.ID, q, a.Expires, func(ans host.Answer) error { return g.AnswerLater(a.ID, ans) })
			if err != nil {
				t.Errorf("post the held call: %v", err)
			}
			return err
		},
		Dark:   dark(true),
		Notify: notify.New(notify.Both, notify.Terminal{Desktop: notify.OSC9}),
	})
	hc.h.ready()
	return hc
}

// answer connects to the chat's approver socket as `mcphost approve`
// does and answers the held call id.
func (hc *heldChat) answer(t *testing.T, id string, ans host.Answer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := approver.Dial(ctx, hc.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Hello(); err != nil {
		t.Fatal(err)
	}
	v, err := c.NextContext(ctx)
	q, ok := v.(*approver.Question)
	if err != nil || !ok || q.ID != id || !q.Later {
		t.Fatalf("the approver got %+v (%v), want the held call %s", v, err, id)
	}
	if err := c.Answer(q, ans); err != nil {
		t.Fatal(err)
	}
	select {
	case <-hc.store.Answered(id):
	case <-ctx.Done():
		t.Fatal("the answer never reached the held call")
	}
}

// runs counts the executions of set_value on the server.
func (hc *heldChat) runs() int {
	n := 0
	for _, e := range hc.f.Log() {
		if e.Event == fixtures.EventExec && e.Tool == "set_value" {
			n++
		}
	}
	return n
}

// heldID waits for the run to end with the call held, and returns its id.
func (hc *heldChat) heldID(t *testing.T) string {
	t.Helper()
	h := hc.h
	h.until("the run ends", func() bool { return h.m.run == nil && strings.Contains(h.screen(), "Waiting.") })
	w := hc.store.Waiting()
	if len(w) != 1 {
		t.Fatalf("%d calls held, want one", len(w))
	}
	return w[0].ID
}

func (hc *heldChat) approvalStates() string {
	hc.audit.mu.Lock()
	defer hc.audit.mu.Unlock()
	var out []string
	for _, r := range hc.audit.recs {
		if r.Kind == audit.Approval {
			out = append(out, r.ApprovalState)
		}
	}
	return strings.Join(out, ",")
}

var setArgs = json.RawMessage(`{"key":"a","value":"1"}`)

// TestChatHoldsWhatItsDialogMayNotApprove: when askVia does not let the
// chat approve a call's tier, no dialog opens; the call is held on the
// chat's approver socket, the card says where and under which id it waits,
// the person is called, and the model is told to make the call again.
// Approved through the socket, the model's same call runs once.
func TestChatHoldsWhatItsDialogMayNotApprove(t *testing.T) {
	hc := newHeldChat(t, []llm.ScriptTurn{
		{ToolCalls: []llm.ScriptCall{{Name: "flaky__set_value", Args: setArgs}}},
		{ExpectError: yes(), ExpectResult: &llm.ResultExpectation{Contains: "make exactly the same call again"}, Text: "Waiting."},
		{ToolCalls: []llm.ScriptCall{{Name: "flaky__set_value", Args: setArgs}}},
		{ExpectResult: &llm.ResultExpectation{Contains: "output of the tool"}, Text: "Done now."},
		{ToolCalls: []llm.ScriptCall{{Name: "flaky__set_value", Args: setArgs}}},
		{ExpectError: yes(), Text: "Held again."},
	})
	h := hc.h
	h.typeText("set a")
	h.key("enter")
	id := hc.heldID(t)
	if d := h.m.dialogs.top(); d != nil {
		t.Fatalf("a dialog waits for an answer the chat may not give: %s", d.subject())
	}
	h.until("the person is called", func() bool { return len(h.raw) > 0 })
	want := "\a\x1b]9;mcphost waiting for you: flaky/set_value, held for your approval elsewhere\a"
	if h.m.called != 1 || len(h.raw) != 1 || h.raw[0] != want {
		t.Fatalf("called the person %d times, writing %q; want once, %q", h.m.called, h.raw, want)
	}
	screen := h.screen()
	for _, s := range []string{"waiting for your approval elsewhere", "held for your approval elsewhere, id " + id,
		"approve or deny it with `mcphost approve`", "or on the approval page (`mcphost approve --web`)"} {
		if !strings.Contains(screen, s) {
			t.Errorf("the card does not say %q:\n%s", s, screen)
		}
	}
	if n := hc.runs(); n != 0 {
		t.Fatalf("the held call ran %d times before anyone approved it", n)
	}

	hc.answer(t, id, host.Answer{Approve: true, Scope: decide.ScopeOnce})
	h.typeText("approved")
	h.key("enter")
	h.until("the retry has run", func() bool { return h.m.run == nil && strings.Contains(h.screen(), "Done now.") })
	if n := hc.runs(); n != 1 {
		t.Fatalf("set_value ran %d times after one approval, want once", n)
	}
	// The approval is spent: the next same call is held anew.
	h.typeText("again")
	h.key("enter")
	h.until("the third run ends", func() bool { return h.m.run == nil && strings.Contains(h.screen(), "Held again.") })
	if n := hc.runs(); n != 1 {
		t.Fatalf("set_value ran %d times, want once: an approval ran a second call", n)
	}
	if got := hc.approvalStates(); got != "held,approved,used,held" {
		t.Errorf("approval records %s, want held,approved,used,held", got)
	}
	if d := h.m.dialogs.top(); d != nil {
		t.Fatalf("a dialog waits: %s", d.subject())
	}
}

// TestChatHeldCallDeniedOrExpiredRunsNothing: a person's denial through
// the socket reaches the model's retry with their reason, and an approval
// whose lifetime ended runs nothing.
func TestChatHeldCallDeniedOrExpiredRunsNothing(t *testing.T) {
	hc := newHeldChat(t, []llm.ScriptTurn{
		{ToolCalls: []llm.ScriptCall{{Name: "flaky__set_value", Args: setArgs}}},
		{ExpectError: yes(), Text: "Waiting."},
		{ToolCalls: []llm.ScriptCall{{Name: "flaky__set_value", Args: setArgs}}},
		{ExpectError: yes(), ExpectResult: &llm.ResultExpectation{Contains: "not that key"}, Text: "Denied then."},
	})
	h := hc.h
	h.typeText("set a")
	h.key("enter")
	id := hc.heldID(t)
	hc.answer(t, id, host.Answer{Reason: "not that key"})
	h.typeText("retry")
	h.key("enter")
	h.until("the retry ends", func() bool { return h.m.run == nil && strings.Contains(h.screen(), "Denied then.") })
	if n := hc.runs(); n != 0 {
		t.Fatalf("a denied call ran %d times", n)
	}
	if !strings.Contains(h.screen(), "denied by you") {
		t.Errorf("the retry's card does not say the person denied it:\n%s", h.screen())
	}

	hc2 := newHeldChat(t, []llm.ScriptTurn{
		{ToolCalls: []llm.ScriptCall{{Name: "flaky__set_value", Args: setArgs}}},
		{ExpectError: yes(), Text: "Waiting."},
		{ToolCalls: []llm.ScriptCall{{Name: "flaky__set_value", Args: setArgs}}},
		{ExpectError: yes(), ExpectResult: &llm.ResultExpectation{Contains: "approval id"}, Text: "Held anew."},
	})
	h2 := hc2.h
	h2.typeText("set a")
	h2.key("enter")
	id = hc2.heldID(t)
	hc2.answer(t, id, host.Answer{Approve: true, Scope: decide.ScopeOnce})
	hc2.clk.Add(later.DefaultLifetime)
	h2.typeText("retry")
	h2.key("enter")
	h2.until("the late retry ends", func() bool { return h2.m.run == nil && strings.Contains(h2.screen(), "Held anew.") })
	if n := hc2.runs(); n != 0 {
		t.Fatalf("a call whose approval expired ran %d times", n)
	}
}
