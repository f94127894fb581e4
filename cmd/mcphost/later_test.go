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

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := approver.Dial(ctx, approver.SocketPath(config.StateDir(s.Getenv("XDG_STATE_HOME"))))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Hello(); err != nil {
		t.Fatal(err)
	}
	v, err := c.Next()
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
