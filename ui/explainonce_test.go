package ui

import (
	"strings"
	"testing"
)

// TestExplainAllowedSaysItOnce: /explain of a read that runs without
// asking says so once; a call that asks still says how it asks.
func TestExplainAllowedSaysItOnce(t *testing.T) {
	cfg, _ := tasksConfig(t, "tasks")
	h := newHarness(t, cfg)
	h.send(teaSize(140, 40))
	h.ready()
	h.command("/explain tasks/list_tasks")
	s := h.screen()
	if n := strings.Count(s, "runs without asking"); n != 1 {
		t.Errorf("\"runs without asking\" %d times, want once:\n%s", n, s)
	}
	h.command("/explain tasks/delete_task {\"id\":\"T-1\"}")
	if s := h.screen(); !strings.Contains(s, "ASK: a dialog asks you first — destructive: confirmation with the focus on Deny") {
		t.Errorf("the ask does not say how it asks:\n%s", s)
	}
}

// TestExplainSplitsTheReasons: /explain lists the reasons to ask under
// "why it asks" and what lowers the risk under "in its favour", never the
// other way round.
func TestExplainSplitsTheReasons(t *testing.T) {
	cfg, _ := tasksConfig(t, "tasks")
	h := newHarness(t, cfg)
	h.send(teaSize(140, 40))
	h.ready()
	h.command("/explain tasks/delete_task {\"id\":\"T-1\"}")
	s := h.screen()
	why, fav := strings.Index(s, "why it asks"), strings.Index(s, "in its favour")
	destr, closed := strings.Index(s, "- destructive:"), strings.Index(s, "- closed-world:")
	if why < 0 || fav < why || destr < why || destr > fav || closed < fav {
		t.Errorf("the reasons are not split (why %d, destructive %d, favour %d, closed-world %d):\n%s", why, destr, fav, closed, s)
	}
}
