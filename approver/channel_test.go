package approver

import (
	"context"
	"testing"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
)

// TestAnswersComeThroughApprove: an approver's answer is recorded as given
// in mcphost approve, whatever the approver's side of it held, and the
// session grant it gives names that way to the calls it lets run.
func TestAnswersComeThroughApprove(t *testing.T) {
	w := newWorld(t, true, Options{})
	c := w.approver()
	var _ host.ChannelAsker = w.b
	res := w.call(context.Background(), "set_value", `{"key":"k","value":"v"}`)
	q := next[*Question](t, c)
	if err := c.Answer(q, host.Answer{Approve: true, Scope: decide.ScopeSession, Via: audit.ChannelWebPasskey}); err != nil {
		t.Fatal(err)
	}
	first := result(t, res)
	if first.Status != host.StatusSuccess || first.Via != audit.ChannelApprove {
		t.Fatalf("approved call: %s via %q, want success via approve", first.Status, first.Via)
	}
	second := result(t, w.call(context.Background(), "set_value", `{"key":"k2","value":"v"}`))
	if second.Status != host.StatusSuccess || second.Via != audit.ChannelGrant || second.Grant == nil ||
		second.Grant.Via != audit.ChannelApprove || second.Grant.CallID != first.CallID {
		t.Fatalf("call under the grant: %s via %q grant %+v; want success via grant, given in approve for %s", second.Status, second.Via, second.Grant, first.CallID)
	}
}
