package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/approver"
)

// TestCallTheApproversCannotBeShownIsNotHeld: `mcphost call --wait` of a
// call whose arguments are too large to show an approver does not wait
// for an approval no one could give: the call is withdrawn as it is held,
// the command ends at once (exit 3) saying why nothing waits, and the log
// records it held and withdrawn.
func TestCallTheApproversCannotBeShownIsNotHeld(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	id := strings.Repeat("T", approver.MaxArguments)
	hc := startHeldCall(ctx, t, "--wait", "10s", "tasks/delete_task", `{"id":"`+id+`"}`)
	code, stderr := hc.exit()
	if code != exitBlocked || strings.Contains(stderr, "approval id") || strings.Contains(stderr, "waits for a person's approval") ||
		!strings.Contains(stderr, "could not be held for a person's later approval (`mcphost approve` and the approval page cannot be shown it: the arguments") ||
		!strings.Contains(stderr, "are larger than an approver shows") {
		t.Fatalf("a call the approvers cannot be shown: exit %d, stderr:\n%.2000s\nwant exit %d at once, saying why nothing waits", code, stderr, exitBlocked)
	}
	if states, intents := hc.approvalStates(t); states != "held,withdrawn" || intents != 0 {
		t.Errorf("audit: approvals %s and %d intents of delete_task, want held,withdrawn and none", states, intents)
	}
}
