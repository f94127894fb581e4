package ui

import (
	"testing"

	"github.com/mcphost/mcphost/host"
)

// TestCardStaysLiveOnADecisionAlone: the loop's decision event comes before
// the call runs and has no status; the card stays live (its progress shown)
// until the result.
func TestCardStaysLiveOnADecisionAlone(t *testing.T) {
	c := &card{}
	c.fromEntry(&host.CallEntry{ID: "1", Server: "s", Tool: "slow"})
	c.fromEntry(&host.CallEntry{ID: "1", Server: "s", Tool: "slow", Verdict: "allow", Class: "read", DecidedBy: "auto"})
	if !c.live() {
		t.Fatal("a decision alone ended the card")
	}
	c.fromEntry(&host.CallEntry{ID: "1", Server: "s", Tool: "slow", Verdict: "allow", Class: "read", DecidedBy: "auto", Status: host.StatusSuccess})
	if c.live() || c.verdict != "allow" || c.status != host.StatusSuccess {
		t.Fatalf("after the result: live %v, verdict %q, status %q", c.live(), c.verdict, c.status)
	}
}
