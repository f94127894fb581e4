package serve

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	approve "github.com/mcphost/mcphost/approver"
	"github.com/mcphost/mcphost/later"
	"github.com/mcphost/mcphost/serve/internal/oidctest"
)

// TestAHeldCallTheApproversCannotBeShownIsWithdrawn: a call serve would
// hold for `mcphost approve`, when the approvers cannot be shown it (its
// arguments too large to show, a socket that is closing) and no team
// page could answer it, does not wait under an id no one sees: the refusal
// names no approval id and no `mcphost approve`, says why, and the log
// records it held and withdrawn.
func TestAHeldCallTheApproversCannotBeShownIsWithdrawn(t *testing.T) {
	w, b, store := laterWorld(t, nil)
	c := w.connectAutopilot(&autopilot{})
	large := `{"key":"k","value":"` + strings.Repeat("x", approve.MaxArguments) + `"}`
	res := c.call(t, "rogue__set_value", large)
	txt := text(res)
	if !res.IsError || w.execs("rogue", "set_value") != 0 {
		t.Fatalf("the call ran: %s", txt)
	}
	if approvalID.MatchString(txt) || strings.Contains(txt, "run `mcphost approve`") ||
		!strings.Contains(txt, "could not be held for a person's approval, and no one can approve it from here") ||
		!strings.Contains(txt, "are larger than an approver shows") {
		t.Fatalf("the refusal of a call the approvers cannot be shown does not say it was not held and why:\n%s", txt)
	}
	b.Close()
	res = c.call(t, "rogue__set_value", `{"key":"k","value":"v"}`)
	if txt := text(res); approvalID.MatchString(txt) || !strings.Contains(txt, "the approver socket is closing") {
		t.Fatalf("the refusal of a call held while the approver socket closes does not say it was not held and why:\n%s", txt)
	}
	if n := len(store.Waiting()); n != 0 {
		t.Fatalf("%d calls wait that no one can be shown, want none", n)
	}
	if got := strings.Join(approvalRecords(t, w), ","); got != "held,withdrawn,held,withdrawn" {
		t.Fatalf("approval records %s, want each call held then withdrawn", got)
	}
	w.srv.mu.Lock()
	n := len(w.srv.heldBy)
	w.srv.mu.Unlock()
	if n != 0 {
		t.Fatalf("serve keeps the gates of %d withdrawn calls, want none", n)
	}
}

// TestAHeldCallTheApproversCannotBeShownWaitsForTheTeamPage: a caller
// with a token may answer their own held call on the team page, so a call
// the approvers cannot be shown still waits there; its refusal names the
// page and says why `mcphost approve` does not show it, never advising it.
func TestAHeldCallTheApproversCannotBeShownWaitsForTheTeamPage(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	cfg := teamProviderConfig()
	cfg.Clients = append(cfg.Clients, oidctest.Client{ID: "approve-page", Secret: "page-secret-0123456789", RedirectURIs: []string{base + TeamPath + "callback"}})
	p := oidctest.Start(t, cfg)
	store := later.New(later.Options{})
	dir, err := os.MkdirTemp("", "later") // short: a socket's path is bounded
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	b, err := approve.Listen(approve.SocketPath(filepath.Join(dir, "state")), approve.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	tw := buildTeamWorldWith(t, p, ln, "approve-page", store, b)
	alice := tw.client(t, "alice", "alice-pw", nil)
	res := alice.call(t, "rogue__write_record", `{"key":"a","value":"`+strings.Repeat("x", approve.MaxArguments)+`"}`)
	txt := text(res)
	id := teamHeldID(t, res)
	if !strings.Contains(txt, "`mcphost approve` and the approval page cannot be shown it: the arguments") ||
		strings.Contains(txt, "run `mcphost approve`") || !strings.Contains(txt, TeamPath+"#call-"+id) {
		t.Fatalf("the refusal of a call only the team page shows does not say so:\n%s", txt)
	}
	if ap, ok := store.Get(id); !ok || ap.State != later.Waiting {
		t.Fatalf("the call %s is %+v (%v), want it waiting for the team page", id, ap, ok)
	}
	ab := tw.newBrowser(t)
	ab.login(tw.p, "alice", "alice-pw")
	if _, ids, _ := ab.page(); len(ids) != 1 || ids[0] != id {
		t.Fatalf("Alice's team page shows %v, want her call %s", ids, id)
	}
}
