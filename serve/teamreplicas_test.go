package serve

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/pgtest"
	"github.com/mcphost/mcphost/later"
	"github.com/mcphost/mcphost/pgstore"
	"github.com/mcphost/mcphost/serve/internal/oidctest"
)

// TestTeamApprovalAcrossReplicas: two replicas on one store, behind one
// issuer. Alice's call routed to owners is held through replica A; Bob
// sees it on replica B's team page and approves it there; Alice's retry
// through B runs it once. Alice's page on B does not show it, and her
// answer to it there is refused.
func TestTeamApprovalAcrossReplicas(t *testing.T) {
	url := pgtest.DB(t)
	cfg := teamProviderConfig()
	var lns []net.Listener
	for _, id := range []string{"approve-page-a", "approve-page-b"} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		cfg.Clients = append(cfg.Clients, oidctest.Client{ID: id, Secret: "page-secret-0123456789",
			RedirectURIs: []string{"http://" + ln.Addr().String() + TeamPath + "callback"}})
	}
	p := oidctest.Start(t, cfg)
	replica := func(ln net.Listener, page string) *teamWorld {
		s, err := pgstore.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return buildTeamWorld(t, p, ln, page, s.Later(later.Options{}))
	}
	a, b := replica(lns[0], "approve-page-a"), replica(lns[1], "approve-page-b")

	// A value longer than the form shows (512 bytes), listed whole on the
	// page of the replica that did not hold the call.
	long := "v-shown-across-replicas " + strings.Repeat("<b>whole</b> ", 200) + "the end"
	args := `{"key":"k","value":"` + long + `"}`
	res := a.client(t, "alice", "alice-pw", nil).call(t, "flaky__set_value", args)
	if !res.IsError || !strings.Contains(text(res), "a member of owners") {
		t.Fatalf("Alice's routed call through A: %s", text(res))
	}
	id := teamHeldID(t, res)

	// Alice, on B: not hers to see or answer.
	ab := b.newBrowser(t)
	ab.login(p, "alice", "alice-pw")
	if _, ids, _ := ab.page(); len(ids) != 0 {
		t.Fatalf("Alice's page on B shows %v", ids)
	}
	if code, _ := ab.answer(id, "approve", csrfOf(t, ab), b.base); code == http.StatusSeeOther || code == http.StatusOK {
		t.Fatalf("Alice's own answer to her routed call on B: %d, want refused", code)
	}

	// Bob, on B: sees the call A holds, with its arguments, and approves
	// it.
	bb := b.newBrowser(t)
	bb.login(p, "bob", "bob-pw")
	csrf, ids, body := bb.page()
	if len(ids) != 1 || ids[0] != id || !strings.Contains(body, "set_value") || !strings.Contains(body, "v-shown-across-replicas") {
		t.Fatalf("Bob's page on B shows %v, want the call A holds (%s) with its arguments:\n%s", ids, id, body)
	}
	if !strings.Contains(body, "show all") || !strings.Contains(body, strings.ReplaceAll(strings.ReplaceAll(long, "<", "&lt;"), ">", "&gt;")) {
		t.Fatalf("Bob's page on B does not list the long value whole, one click away, as text:\n%s", body)
	}
	if code, body := bb.answer(id, "approve", csrf, b.base); code != http.StatusSeeOther {
		t.Fatalf("Bob's approval on B: %d %s", code, body)
	}

	// Alice's retry through B runs once.
	aliceB := b.client(t, "alice", "alice-pw", nil)
	if res := aliceB.call(t, "flaky__set_value", args); res.IsError {
		t.Fatalf("Alice's retry through B after Bob's approval: %s", text(res))
	}
	if n := a.execs("flaky", "set_value") + b.execs("flaky", "set_value"); n != 1 {
		t.Fatalf("set_value ran %d times over the replicas, want once", n)
	}
	if res := aliceB.call(t, "flaky__set_value", args); !res.IsError {
		t.Fatal("a second retry ran on the same approval")
	}

	// Arguments too large for the store: B shows the call's text, whose
	// values are cut, not its name alone.
	huge := `{"key":"k-too-large-for-the-store","value":"` + strings.Repeat("h", 1100<<10) + `"}`
	res = a.client(t, "alice", "alice-pw", nil).call(t, "flaky__set_value", huge)
	big := teamHeldID(t, res)
	_, _, body = bb.page()
	_, card, _ := strings.Cut(body, `id="call-`+big+`"`)
	card, _, _ = strings.Cut(card, "</section>")
	if !strings.Contains(card, "k-too-large-for-the-store") || strings.Contains(card, "Every argument") {
		t.Fatalf("Bob's page on B shows the call with large arguments (%s) as %.2000q, want it by its text, without the list", big, card)
	}
}

// TestMakeRoom: expired entries go, and a full map gives up the entry
// closest to its end, never a newer one.
func TestMakeRoom(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	m := map[string]time.Time{"gone": now.Add(-time.Second), "soon": now.Add(time.Minute), "later": now.Add(time.Hour), "last": now.Add(2 * time.Hour)}
	at := func(v time.Time) time.Time { return v }
	makeRoom(m, at, now, 10)
	if _, ok := m["gone"]; ok || len(m) != 3 {
		t.Fatalf("after pruning the expired: %v", m)
	}
	makeRoom(m, at, now, 3)
	if _, ok := m["soon"]; ok || len(m) != 2 || m["later"].IsZero() || m["last"].IsZero() {
		t.Fatalf("a full map gave up %v, want only the one closest to its end gone", m)
	}
}

// TestTeamLoginAcrossReplicas: behind a load balancer a browser's requests
// go to any replica. With the page's logins and sessions in the store, a
// login started on replica B finishes on replica A (the issuer's redirect
// lands there), the session it makes is known to B, and a logout through
// A ends it for B.
func TestTeamLoginAcrossReplicas(t *testing.T) {
	url := pgtest.DB(t)
	lnA, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lnB, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	public := "http://" + lnA.Addr().String() // the one origin both replicas are reached at
	cfg := teamProviderConfig()
	cfg.Clients = append(cfg.Clients, oidctest.Client{ID: "approve-page", Secret: "page-secret-0123456789", RedirectURIs: []string{public + TeamPath + "callback"}})
	p := oidctest.Start(t, cfg)
	replica := func(ln net.Listener) *teamWorld {
		s, err := pgstore.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return buildTeamWorld(t, p, ln, "approve-page", s.Later(later.Options{}), func(o *TeamOptions) {
			o.BaseURL, o.Store = public, s.TeamPage()
		})
	}
	replica(lnA)
	b := replica(lnB)

	bb := b.newBrowser(t) // starts on B; the issuer sends it back to A
	bb.login(p, "bob", "bob-pw")
	csrf, _, body := bb.page() // on B, with the session A made
	if csrf == "" || !strings.Contains(body, "Bob Example") {
		t.Fatalf("B does not know the session A made:\n%s", body)
	}
	// Log out through A: B no longer knows the session.
	ab := &browser{t: t, base: public, hc: bb.hc}
	req, _ := http.NewRequest("POST", public+TeamPath+"logout", strings.NewReader("csrf="+csrf))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", public)
	if resp, body := ab.do(req); resp.StatusCode != http.StatusOK {
		t.Fatalf("logout through A: %s %s", resp.Status, body)
	}
	resp, _ := bb.get(b.base + TeamPath)
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("after logging out through A, B answers %s, want a redirect to log in", resp.Status)
	}
}

// A held call's description in the store is read as untrusted: bounded
// and sanitized, and one that does not parse leaves the call's name.
func TestStoredTeamCallViewIsSanitized(t *testing.T) {
	s := &Server{}
	call := later.Call{Client: host.PersonCallPrefix + "desk-app\x00desk\x00https://login.example\nalice", Server: "flaky", Tool: "set_value", Tier: "T3"}
	if _, _, ok := host.LaterCaller(call.Client); !ok {
		t.Fatalf("the test's caller key does not parse: %q", call.Client)
	}
	tc := s.storedTeamCall(later.Approval{Call: call, Shown: []byte(`{"class":"write\u001b[31m","text":"set_value \u202eevil\u001b]0;x\u0007 <b>"}`)})
	if tc == nil || strings.ContainsAny(tc.text+tc.class, "\u202e\x1b\x07") || !strings.Contains(tc.text, "<b>") || !strings.Contains(tc.text, "held by another replica") {
		t.Fatalf("the stored view %+v: want it shown as text with no control or bidi character", tc)
	}
	// Arguments are listed only when they are the ones the approval
	// binds: others in the store are not what would run.
	call.ArgsHash = decide.ArgsHash(json.RawMessage(`{"key":"held"}`))
	view := func(args string) []byte {
		b, _ := json.Marshal(teamView{Class: "write", Text: "set_value", Args: args})
		return b
	}
	if tc := s.storedTeamCall(later.Approval{Call: call, Shown: view(`{"key":"held"}`)}); tc == nil || tc.args != `{"key":"held"}` {
		t.Fatalf("the stored view of the held arguments: %+v, want them listed", tc)
	}
	if tc := s.storedTeamCall(later.Approval{Call: call, Shown: view(`{"key":"other"}`)}); tc == nil || tc.args != "" || tc.text == "" {
		t.Fatalf("a stored view with other arguments: %+v, want the text only", tc)
	}
	huge := `{"key":"` + strings.Repeat("h", maxViewArgs) + `"}`
	big := call
	big.ArgsHash = decide.ArgsHash(json.RawMessage(huge))
	if tc := s.storedTeamCall(later.Approval{Call: big, Shown: view(huge)}); tc == nil || tc.args != "" {
		t.Fatal("a stored view with arguments over maxViewArgs: they were kept to list")
	}
	tc = s.storedTeamCall(later.Approval{Call: call, Shown: []byte(`not json`)})
	if tc == nil || tc.text != "flaky/set_value, held by another replica of mcphost serve" {
		t.Fatalf("a view that does not parse: %+v, want the call's name", tc)
	}
}

// TestTeamKeepsArgumentsOnlyWithinTheirBound: the team page keeps a held
// call's arguments to list them only up to maxViewArgs and only as valid
// UTF-8; past either it keeps the question's text alone, so a client
// cannot make serve keep a second copy of arguments of any size.
func TestTeamKeepsArgumentsOnlyWithinTheirBound(t *testing.T) {
	s := &Server{}
	q := func(args string) *host.Question {
		return &host.Question{Server: "flaky", Tool: &client.Tool{Server: "flaky", Name: "set_value"}, Args: json.RawMessage(args)}
	}
	fits := `{"v":"` + strings.Repeat("x", maxViewArgs-8) + `"}`
	s.keepTeam(later.Approval{ID: "fits"}, q(fits), nil)
	s.keepTeam(later.Approval{ID: "over"}, q(`{"v":"`+strings.Repeat("x", maxViewArgs)+`"}`), nil)
	s.keepTeam(later.Approval{ID: "bytes"}, q("{\"v\":\"\xff\"}"), nil)
	if tc := s.localTeamCall("fits"); tc == nil || tc.args != fits {
		t.Fatalf("arguments of %d bytes were not kept to list", len(fits))
	}
	for _, id := range []string{"over", "bytes"} {
		if tc := s.localTeamCall(id); tc == nil || tc.args != "" || tc.text == "" {
			t.Fatalf("%s: kept %+v, want the text without the arguments", id, tc)
		}
	}
}

// blindLater is a store that cannot tell which calls still wait.
type blindLater struct{ *later.Store }

func (blindLater) StillWaiting([]string) (map[string]bool, error) {
	return nil, errors.New("the database cannot be reached")
}

// TestPruneKeepsWhatTheStoreCannotTellOf: a store that cannot say which
// held calls still wait leaves serve's gates and team views of them as
// they are (pruned at the next look), where a store that says none
// waits has them forgotten.
func TestPruneKeepsWhatTheStoreCannotTellOf(t *testing.T) {
	for _, c := range []struct {
		name string
		l    Later
		kept bool
	}{
		{"a store that cannot tell", blindLater{later.New(later.Options{})}, true},
		{"a store where none waits", later.New(later.Options{}), false},
	} {
		s := &Server{o: Options{Later: c.l}, heldBy: map[string]*host.Gate{"held-1": nil}}
		s.team.m = map[string]*teamCall{"held-1": {}}
		s.pruneHeld()
		_, gate := s.heldBy["held-1"]
		if tc := s.localTeamCall("held-1"); gate != c.kept || (tc != nil) != c.kept {
			t.Errorf("%s: gate kept %v, team view kept %v; want %v", c.name, gate, tc != nil, c.kept)
		}
	}
}
