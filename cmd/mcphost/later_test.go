package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mcphost/mcphost/approver"
	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/later"
)

// TestRunHoldsCallsForApprove: a headless run holds a call that needs a
// person and puts it to `mcphost approve` through its own approver socket;
// the approval reaches the held call, so the model's retry runs once.
func TestRunHoldsCallsForApprove(t *testing.T) {
	s, _, _ := testStreams(t)
	st := &setup{cfg: &config.Config{}}
	var gate *host.Gate
	defer st.holdLater(s, &gate)()
	if st.later == nil {
		t.Fatal("run holds nothing: no approver socket was made")
	}
	var o host.GateOptions
	st.later(&o)
	if o.Later == nil || o.OnHold == nil || o.MayApprove == nil {
		t.Fatalf("the gate options do not hold calls: %+v", o)
	}
	if o.MayApprove(decide.T3, audit.ChannelElicitation) || !o.MayApprove(decide.T3, audit.ChannelApprove) {
		t.Fatal("run's askVia is not the default")
	}
	// The chat's dialog is "chat" in askVia, and a passkey approval on the
	// page is a web one.
	if !o.MayApprove(decide.T3, audit.ChannelDialog) || !o.MayApprove(decide.T3, audit.ChannelWebPasskey) {
		t.Fatal("askVia's words do not name the dialog and the page as the audit log does")
	}
	gate = host.NewGate(o)
	call := later.Call{Server: "tasks", Tool: "delete_task", Definition: "d1", ArgsHash: decide.ArgsHash(json.RawMessage(`{"id":"T-1"}`)), Tier: "T2"}
	ap, _ := o.Later.Hold(call)
	o.OnHold(ap, &host.Question{Server: "tasks", Tool: &client.Tool{Server: "tasks", Name: "delete_task"}, Args: json.RawMessage(`{"id":"T-1"}`),
		Decision: decide.Decision{Verdict: decide.Ask, Tier: decide.T2, Class: decide.Destructive}, Scopes: []decide.Scope{decide.ScopeOnce}})

	approveThroughSocket(t, s, o, ap, call, "")
}

// approveThroughSocket answers the held call ap as `mcphost approve` does,
// on the approver socket of this process (whose hello says label, unless
// it is ""), and checks that the approval reaches the held call, so that
// call can run.
func approveThroughSocket(t *testing.T, s *streams, o host.GateOptions, ap later.Approval, call later.Call, label string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := approver.Dial(ctx, approver.SocketPath(config.StateDir(s.Getenv("XDG_STATE_HOME"))))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if h, err := c.Hello(); err != nil || (label != "" && h.Label != label) {
		t.Fatalf("hello %+v (%v), want the label %q", h, err, label)
	}
	v, err := c.NextContext(ctx)
	q, ok := v.(*approver.Question)
	if err != nil || !ok || q.ID != ap.ID || !q.Later {
		t.Fatalf("the approver got %+v (%v), want the held call %s", v, err, ap.ID)
	}
	if err := c.Answer(q, host.Answer{Approve: true, Scope: decide.ScopeOnce}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-o.Later.(*later.Store).Answered(ap.ID):
	case <-ctx.Done():
		t.Fatal("the approval never reached the held call")
	}
	if _, ok := o.Later.Take(call); !ok {
		t.Fatal("the approved call cannot run")
	}
}

// TestChatHoldsUnderTheManagedAskVia: the chat's gate follows askVia as
// the managed policy narrows it — its dialog may not approve a tier-3 call
// the policy sends elsewhere — and holds such a call on a socket of the
// chat's own, where `mcphost approve` answers it.
func TestChatHoldsUnderTheManagedAskVia(t *testing.T) {
	e := newManagedEnv(t)
	e.managed(`{"askVia": {"T3": ["approve", "web"]}}`)
	s, _, errOut := e.streams()
	st, err := loadSetup(&globalOptions{Demo: true}, s)
	if err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	var o host.GateOptions
	post, closeHeld := st.chatHolds(s, &o)
	defer closeHeld()
	if o.MayApprove == nil || o.MayApprove(decide.T3, audit.ChannelDialog) || !o.MayApprove(decide.T3, audit.ChannelApprove) || !o.MayApprove(decide.T2, audit.ChannelDialog) {
		t.Fatal("the chat's gate does not follow the managed askVia: its dialog may approve at T3, or not at T2")
	}
	if o.Later == nil || post == nil {
		t.Fatal("the chat holds nothing: no approver socket was made")
	}
	g := host.NewGate(o)
	call := later.Call{Server: "tasks", Tool: "delete_task", Definition: "d1", ArgsHash: decide.ArgsHash(json.RawMessage(`{"id":"T-1"}`)), Tier: "T3"}
	ap, _ := o.Later.Hold(call)
	post(g, ap, &host.Question{Server: "tasks", Tool: &client.Tool{Server: "tasks", Name: "delete_task"}, Args: json.RawMessage(`{"id":"T-1"}`),
		Decision: decide.Decision{Verdict: decide.Ask, Tier: decide.T3, Class: decide.Destructive}, Scopes: []decide.Scope{decide.ScopeOnce}})

	approveThroughSocket(t, s, o, ap, call, "mcphost chat in "+s.WorkDir)
}
