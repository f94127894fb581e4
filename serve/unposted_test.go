package serve

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	approve "github.com/mcphost/mcphost/approver"
	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/pgtest"
	"github.com/mcphost/mcphost/later"
	"github.com/mcphost/mcphost/pgstore"
	"github.com/mcphost/mcphost/serve/internal/oidctest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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
	tw, store := teamWorldWithApprover(t)
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

// TestAHeldCallTheTeamPageMayNotApproveIsWithdrawn: the team page is no
// way to wait when askVia lets no answer there approve the call's tier: a
// call the approvers cannot be shown is then withdrawn, as with no team
// page, rather than left waiting on a page whose answers approve nothing.
func TestAHeldCallTheTeamPageMayNotApproveIsWithdrawn(t *testing.T) {
	tw, store := teamWorldWithApprover(t)
	only := []string{config.ChannelApprove}
	tw.srv.o.MayApprove = host.AskViaPolicy(config.AskVia{"T1": only, "T2": only, "T3": only})
	alice := tw.client(t, "alice", "alice-pw", nil)
	res := alice.call(t, "rogue__write_record", `{"key":"a","value":"`+strings.Repeat("x", approve.MaxArguments)+`"}`)
	if txt := text(res); !res.IsError || approvalID.MatchString(txt) || !strings.Contains(txt, "could not be held for a person's approval") {
		t.Fatalf("the refusal of a call neither the approvers nor the team page may approve:\n%s", txt)
	}
	if n := len(store.Waiting()); n != 0 {
		t.Fatalf("%d calls wait on a page whose answers approve nothing, want none", n)
	}
}

// teamWorldWithApprover is a team world (the team page's login client
// "approve-page") whose serve also has an approver socket, and its store
// of held calls.
func teamWorldWithApprover(t *testing.T) (*teamWorld, *later.Store) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	cfg := teamProviderConfig()
	cfg.Clients = append(cfg.Clients, oidctest.Client{ID: "approve-page", Secret: "page-secret-0123456789", RedirectURIs: []string{base + TeamPath + "callback"}})
	p := oidctest.Start(t, cfg)
	store := later.New(later.Options{})
	return buildTeamWorldWith(t, p, ln, "approve-page", store, approverSocket(t)), store
}

// TestARetryOfACallAnotherServeHeldNeverAdvisesApprove: a 2026-07-28
// client's call held through replica A, retried through B (as after a
// restart on the store), is refused under its approval id; B never showed
// it to its approvers, so B's refusal does not send the person to
// `mcphost approve` and says why.
func TestARetryOfACallAnotherServeHeldNeverAdvisesApprove(t *testing.T) {
	db := pgtest.DB(t)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	lb := &balancer{next: tr}
	var ws []*world
	for range 2 {
		st, err := pgstore.Open(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		sessions := st.Sessions(pgstore.SessionOptions{})
		w, _, _ := laterWorld(t, nil, func(o *Options) {
			o.Later, o.Audit = st.Later(later.Options{}), audit.OpenChain(st, audit.Options{})
			o.SessionState = func(key string) host.SessionState { return sessions.For(key) }
		})
		ts := httptest.NewServer(w.srv.Handler("tok"))
		t.Cleanup(ts.Close)
		u, _ := url.Parse(ts.URL)
		lb.replicas = append(lb.replicas, u)
		ws = append(ws, w)
	}
	cs := connectVia(t, lb, "desk", nil)
	call := func() string {
		return text(callArgs(t, cs, &mcp.CallToolParams{Name: "rogue__set_value", Arguments: map[string]any{"key": "k", "value": "v"}}))
	}
	lb.to.Store(0)
	first := call()
	m := approvalID.FindStringSubmatch(first)
	if m == nil || !strings.Contains(first, "run `mcphost approve`") {
		t.Fatalf("through A, which shows it to its approvers: %s; want the approval id and `mcphost approve`", first)
	}
	lb.to.Store(1)
	again := call()
	if !strings.Contains(again, "approval id "+m[1]) || strings.Contains(again, "run `mcphost approve`") ||
		!strings.Contains(again, "`mcphost approve` on this serve does not list it") || strings.Contains(again, "has no approver socket") ||
		!strings.Contains(again, "`mcphost approve` of the serve that held it can") {
		t.Fatalf("the retry through B, whose approvers were never shown it:\n%s\nwant the approval id %s, no advice to run `mcphost approve`, why, and who can approve it", again, m[1])
	}
	if ws[0].execs("rogue", "set_value")+ws[1].execs("rogue", "set_value") != 0 {
		t.Fatal("the held call ran")
	}
}
