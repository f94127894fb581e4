package serve

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	approve "github.com/mcphost/mcphost/approver"
	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/later"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// defaultAskVia is the default channel policy: a host's form may approve
// tiers 1–2, tier 3 needs a channel the host cannot answer.
var defaultAskVia = host.AskViaPolicy(config.DefaultAskVia())

// autopilot answers every form at once, accepting it with the most it
// offers and the tool name typed, as a host that answers its own forms
// does.
type autopilot struct {
	mu    sync.Mutex
	forms int
}

func (a *autopilot) handle(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.forms++
	content := map[string]any{"decision": DecisionAllowOnce}
	if m := regexp.MustCompile(`type the tool name (\S+)`).FindStringSubmatch(req.Params.Message); m != nil {
		content["confirm"] = m[1]
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}, nil
}

func (a *autopilot) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.forms
}

var approvalID = regexp.MustCompile(`approval id ([0-9a-f]+)`)

// approverSocket is an approver socket of the test's own, in a short
// directory (a socket's path is bounded), closed when the test ends.
func approverSocket(t *testing.T) *approve.Broker {
	t.Helper()
	dir, err := os.MkdirTemp("", "later")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	b, err := approve.Listen(approve.SocketPath(filepath.Join(dir, "state")), approve.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// laterWorld is a world whose serve holds what no one approved, with the
// default askVia and an approver socket.
func laterWorld(t *testing.T, link func(string) string, more ...func(*Options)) (*world, *approve.Broker, *later.Store) {
	t.Helper()
	b := approverSocket(t)
	store := later.New(later.Options{})
	w := newWorld(t, worldOpts{approver: b, tweak: func(o *Options) {
		o.MayApprove, o.Later, o.Link = defaultAskVia, store, link
		for _, f := range more {
			f(o)
		}
	}})
	return w, b, store
}

func TestAutopilotCannotRunTier3ApprovedLaterRunsOnce(t *testing.T) {
	w, b, store := laterWorld(t, nil)
	ap := &autopilot{}
	c := w.connectAutopilot(ap)
	const args = `{"key":"k","value":"v"}`
	// rogue is an untrusted flaky: set_value is unknown, tier 3.
	res := c.call(t, "rogue__set_value", args)
	txt := text(res)
	if !res.IsError || w.execs("rogue", "set_value") != 0 {
		t.Fatalf("a tier-3 call the autopilot would approve ran: %s", txt)
	}
	if forms := ap.count(); forms != 0 {
		t.Fatalf("the host's form was shown a tier-3 call %d times, want never", forms)
	}
	m := approvalID.FindStringSubmatch(txt)
	if m == nil || !strings.Contains(txt, "mcphost approve") || !strings.Contains(txt, "make exactly the same call again") {
		t.Fatalf("the refusal does not name the approval id, `mcphost approve` and the retry:\n%s", txt)
	}
	id := m[1]

	conn, err := approve.Dial(context.Background(), b.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Hello(); err != nil {
		t.Fatal(err)
	}
	q := nextQuestion(t, conn)
	if q.ID != id || !q.Later || q.Tool != "set_value" || q.Tier != decide.T3 {
		t.Fatalf("the approver was shown %+v, want the held call %s", q, id)
	}
	if err := conn.Answer(q, host.Answer{Approve: true, Scope: decide.ScopeOnce}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-store.Answered(id):
	case <-time.After(10 * time.Second):
		t.Fatal("the approver's answer never reached the held call")
	}
	if res := c.call(t, "rogue__set_value", args); res.IsError || w.execs("rogue", "set_value") != 1 {
		t.Fatalf("the retry after approval: %s (%d runs), want it run once", text(res), w.execs("rogue", "set_value"))
	}
	// Another retry is a new call: the approver is asked (the form never).
	done := make(chan *mcp.CallToolResult, 1)
	go func() { done <- c.call(t, "rogue__set_value", args) }()
	again := nextQuestion(t, conn)
	if again.Later {
		t.Fatalf("the second retry was shown as held: %+v", again)
	}
	if err := conn.Answer(again, host.Answer{Reason: "once was enough"}); err != nil {
		t.Fatal(err)
	}
	if res := <-done; !res.IsError || w.execs("rogue", "set_value") != 1 {
		t.Fatalf("the second retry: %s (%d runs), want refused and one run", text(res), w.execs("rogue", "set_value"))
	}
	if ap.count() != 0 {
		t.Fatal("the host's form was shown a tier-3 call")
	}
	states := approvalRecords(t, w)
	if got := strings.Join(states, ","); got != "held,approved,used" {
		t.Errorf("approval records %s, want held,approved,used", got)
	}
}

func TestTier2StillGoesToTheHostsForm(t *testing.T) {
	w, _, _ := laterWorld(t, nil)
	ap := &autopilot{}
	c := w.connectAutopilot(ap)
	// flaky is trusted: set_value is destructive, closed world, tier 2.
	if res := c.call(t, "flaky__set_value", `{"key":"k","value":"v"}`); res.IsError || w.execs("flaky", "set_value") != 1 || ap.count() != 1 {
		t.Fatalf("a tier-2 call through the form: %s (%d runs, %d forms), want it asked and run", text(res), w.execs("flaky", "set_value"), ap.count())
	}
}

func TestURLElicitationOpensTheApprovalPage(t *testing.T) {
	link := func(id string) string { return "http://127.0.0.1:8765/approve/" + id }
	heldIDs, notified := make(chan string, 4), make(chan string, 4)
	var w *world
	w, _, _ = laterWorld(t, link, func(o *Options) {
		o.OnHeld = func(ap later.Approval, q *host.Question) { heldIDs <- ap.ID }
		o.Notify = func(server, tool string) { notified <- server + "/" + tool }
	})
	var mu sync.Mutex
	var urls []string
	completed := make(chan string, 1)
	opts := &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{
			Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			defer mu.Unlock()
			if req.Params.Mode != "url" {
				// An autopilot accepts any form.
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": DecisionAllowOnce, "confirm": "set_value"}}, nil
			}
			urls = append(urls, req.Params.URL)
			id := req.Params.ElicitationID
			// The person approves on the page, after the host opened it.
			go func() {
				_ = w.srv.AnswerLater(id, host.Answer{Approve: true, Scope: decide.ScopeOnce, Via: audit.ChannelWeb})
			}()
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
		ElicitationCompleteHandler: func(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			completed <- req.Params.ElicitationID
		},
	}
	c := w.connectClient(opts, "2025-11-25")
	res := c.call(t, "rogue__set_value", `{"key":"k","value":"v"}`)
	if res.IsError || w.execs("rogue", "set_value") != 1 {
		t.Fatalf("approved on the page: %s (%d runs), want it run once", text(res), w.execs("rogue", "set_value"))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(urls) != 1 || !strings.HasPrefix(urls[0], "http://127.0.0.1:8765/approve/") {
		t.Fatalf("URL elicitations %q, want one to the approval page", urls)
	}
	select {
	case id := <-completed:
		if !strings.HasSuffix(urls[0], "/"+id) {
			t.Errorf("completed %s, want the elicitation of %s", id, urls[0])
		}
	case <-time.After(10 * time.Second):
		t.Error("no notifications/elicitation/complete after the person answered")
	}
	if id := <-heldIDs; !strings.HasSuffix(urls[0], "/"+id) {
		t.Errorf("OnHeld was told of %s, want the call the page was opened for (%s)", id, urls[0])
	}
	if n := <-notified; n != "rogue/set_value" {
		t.Errorf("the person was notified of %q, want rogue/set_value", n)
	}
	if w.srv.AnswerLater("forged", host.Answer{Approve: true, Via: audit.ChannelWeb}) == nil {
		t.Error("an unknown approval id was taken")
	}
}

// connectAutopilot connects a client whose forms ap answers.
func (w *world) connectAutopilot(ap *autopilot) *conn {
	w.t.Helper()
	return w.connectClient(&mcp.ClientOptions{ElicitationHandler: ap.handle}, "")
}

// connectClient connects a client with opts at protocol version ("" the
// SDK's newest).
func (w *world) connectClient(opts *mcp.ClientOptions, version string) *conn {
	w.t.Helper()
	cl := mcp.NewClient(&mcp.Implementation{Name: "autopilot", Version: "1.0"}, opts)
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = w.srv.Run(ctx, st)
	}()
	cs, err := cl.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() {
		cs.Close()
		cancel()
		<-done
	})
	return &conn{cs: cs}
}

// nextQuestion reads the approver's next question.
func nextQuestion(t *testing.T, c *approve.Conn) *approve.Question {
	t.Helper()
	type result struct {
		v   any
		err error
	}
	ch := make(chan result, 1)
	go func() { v, err := c.Next(); ch <- result{v, err} }()
	select {
	case r := <-ch:
		q, ok := r.v.(*approve.Question)
		if r.err != nil || !ok {
			t.Fatalf("the approver read %T %+v (%v), want a question", r.v, r.v, r.err)
		}
		return q
	case <-time.After(10 * time.Second):
		t.Fatal("no question reached the approver")
		return nil
	}
}

// approvalRecords are the states of the approval records, in order, of a
// log that verifies.
func approvalRecords(t *testing.T, w *world) []string {
	t.Helper()
	f, err := os.Open(w.audit)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := audit.Verify(f)
	if err != nil || len(rep.Problems) > 0 {
		t.Fatalf("audit log does not verify: %v %+v", err, rep.Problems)
	}
	data, err := os.ReadFile(w.audit)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r audit.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if r.Kind == audit.Approval {
			out = append(out, r.ApprovalState)
		}
	}
	if len(out) != rep.Approvals {
		t.Fatalf("verify counted %d approval records, the log has %d", rep.Approvals, len(out))
	}
	return out
}
