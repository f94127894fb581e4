package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// memManager starts a manager over memSpec(name, newServer) and fails the
// test unless the server is ready.
func memManager(t *testing.T, name string, newServer func() *mcp.Server) *client.Manager {
	t.Helper()
	return startManager(t, memSpec(name, newServer))
}

// memSpec is a server named name, in process and connected in memory;
// newServer makes the server for each connection.
func memSpec(name string, newServer func() *mcp.Server) client.Spec {
	return client.Spec{Name: name, Dial: func(ctx context.Context) (mcp.Transport, error) {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := newServer().Connect(ctx, st, nil)
		if err != nil {
			return nil, err
		}
		go func() { _ = ss.Wait() }()
		return ct, nil
	}}
}

// startManager starts a manager over spec and fails the test unless its
// server is ready.
func startManager(t *testing.T, spec client.Spec) *client.Manager {
	t.Helper()
	m := client.New([]client.Spec{spec}, client.Options{Backoff: func(int) time.Duration { return time.Millisecond }})
	t.Cleanup(func() { m.Close() })
	m.Start(context.Background())
	if st := m.Servers()[0]; st.State != client.StateReady {
		t.Fatalf("%s did not start: %+v", spec.Name, st)
	}
	return m
}

// docsManager is a manager over an in-process server with one resource;
// reads counts the reads the server served.
func docsManager(t *testing.T, reads *atomic.Int64) *client.Manager {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	srv.AddResource(&mcp.Resource{URI: "file:///a.md", Name: "A"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		reads.Add(1)
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "contents of A"}}}, nil
	})
	return memManager(t, "docs", func() *mcp.Server { return srv })
}

// countingObserver counts the calls and questions it is shown.
type countingObserver struct {
	NopObserver
	mu             sync.Mutex
	started, asked int
	done           []Status
}

func (o *countingObserver) CallStarted(ctx context.Context, _, _, _ string, _ json.RawMessage) context.Context {
	o.mu.Lock()
	o.started++
	o.mu.Unlock()
	return ctx
}

func (o *countingObserver) Asked(context.Context, *Question, Answer, error, time.Duration) {
	o.mu.Lock()
	o.asked++
	o.mu.Unlock()
}

func (o *countingObserver) CallDone(_ context.Context, r *Result, _ string) {
	o.mu.Lock()
	o.done = append(o.done, r.Status)
	o.mu.Unlock()
}

type approveAsker struct{ asked atomic.Int64 }

func (a *approveAsker) Ask(context.Context, *Question) (Answer, error) {
	a.asked.Add(1)
	return Answer{Approve: true, Scope: decide.ScopeOnce}, nil
}

// TestReadResourceIsGated: a read of a resource is decided like a call of
// docs/resources/read: a trusted server's read runs (and is audited, and
// taints the session as a private read); an untrusted server's asks (and
// counts as open-world content), and
// headless it is blocked; a deny rule stops it. Only reads that were let
// through reach the server.
func TestReadResourceIsGated(t *testing.T) {
	deny := decide.RuleSpec{Effect: decide.Deny, Source: "test", Raw: json.RawMessage(`"docs/resources/read"`)}
	cases := []struct {
		name      string
		trusted   bool
		mode      decide.Mode
		rules     []decide.RuleSpec
		status    Status
		decidedBy string
		asked     int64
	}{
		{"trusted reads silently", true, decide.Interactive, nil, StatusSuccess, "auto", 0},
		{"untrusted asks", false, decide.Interactive, nil, StatusSuccess, "user:once", 1},
		{"untrusted headless is blocked", false, decide.Headless, nil, StatusBlocked, "headless", 0},
		{"a deny rule wins over trust", true, decide.Interactive, []decide.RuleSpec{deny}, StatusDenied, "rule:", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var reads atomic.Int64
			m := docsManager(t, &reads)
			p, err := decide.Compile(c.rules, decide.Options{AutoApprove: decide.ApproveAdditive})
			if err != nil {
				t.Fatal(err)
			}
			log := &recLog{}
			asker := &approveAsker{}
			obs := &countingObserver{}
			g := NewGate(GateOptions{Catalog: m, Policy: p, Trusted: func(string) bool { return c.trusted }, Asker: asker, Mode: c.mode, Audit: log, Observer: obs})
			res, r := g.ReadResource(context.Background(), "docs", "file:///a.md")
			// The read is observed like a call: started, asked, ended once.
			obs.mu.Lock()
			if obs.started != 1 || len(obs.done) != 1 || obs.done[0] != r.Status || int64(obs.asked) != c.asked {
				t.Errorf("observed %d starts, %d questions, ends %v; want 1, %d, [%s]", obs.started, obs.asked, obs.done, c.asked, r.Status)
			}
			obs.mu.Unlock()
			if r.Status != c.status || !strings.HasPrefix(r.DecidedBy.String(), c.decidedBy) {
				t.Fatalf("status %s by %s (%v), want %s by %s", r.Status, r.DecidedBy, r.Err, c.status, c.decidedBy)
			}
			if asker.asked.Load() != c.asked {
				t.Errorf("asked %d times, want %d", asker.asked.Load(), c.asked)
			}
			wantReads := int64(0)
			if c.status == StatusSuccess {
				wantReads = 1
				if res == nil || len(res.Contents) != 1 || res.Contents[0].Text != "contents of A" {
					t.Fatalf("contents %+v", res)
				}
			} else if res != nil {
				t.Fatal("contents returned for a read that did not run")
			}
			if reads.Load() != wantReads {
				t.Fatalf("the server served %d reads, want %d", reads.Load(), wantReads)
			}
			var kinds []string
			for _, rec := range log.records() {
				if rec.Tool != ResourceReadTool || string(rec.Args) != `{"uri":"file:///a.md"}` {
					t.Errorf("record for %s %s", rec.Tool, rec.Args)
				}
				kinds = append(kinds, string(rec.Kind))
			}
			want := "outcome"
			if c.status == StatusSuccess {
				want = "intent outcome"
			}
			if got := strings.Join(kinds, " "); got != want {
				t.Errorf("audit records %q, want %q", got, want)
			}
			// A trusted server's resource is its private data; an untrusted
			// one's counts as open-world content, as its tools' output does.
			open, priv := g.Taint()
			if ran := c.status == StatusSuccess; priv != (ran && c.trusted) || open != (ran && !c.trusted) {
				t.Errorf("taint open %v private %v after %s (trusted %v)", open, priv, c.status, c.trusted)
			}
		})
	}
}

// recLog keeps the audit records in memory.
type recLog struct {
	mu   sync.Mutex
	recs []*audit.Record
}

func (l *recLog) Append(r *audit.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, r)
	return nil
}

func (l *recLog) records() []*audit.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*audit.Record(nil), l.recs...)
}

// errAsker answers every question with err.
type errAsker struct{ err error }

func (a errAsker) Ask(context.Context, *Question) (Answer, error) { return Answer{}, a.err }

// TestAQuestionNoOneCouldAnswerIsBlocked: a read asked about is blocked
// (decided "headless") when no person could be asked (ErrNoPerson), and
// denied by the person for any other failure of the question.
func TestAQuestionNoOneCouldAnswerIsBlocked(t *testing.T) {
	for _, c := range []struct {
		err       error
		status    Status
		decidedBy DecidedBy
	}{
		{fmt.Errorf("%w: none here", ErrNoPerson), StatusBlocked, "headless"},
		{errors.New("the dialog failed"), StatusDenied, "user"},
	} {
		var reads atomic.Int64
		m := docsManager(t, &reads)
		p, err := decide.Compile(nil, decide.Options{AutoApprove: decide.ApproveAdditive})
		if err != nil {
			t.Fatal(err)
		}
		g := NewGate(GateOptions{Catalog: m, Policy: p, Trusted: func(string) bool { return false }, Asker: errAsker{c.err}, Mode: decide.Interactive, Audit: &recLog{}})
		_, r := g.ReadResource(context.Background(), "docs", "file:///a.md")
		if r.Status != c.status || r.DecidedBy != c.decidedBy || reads.Load() != 0 {
			t.Errorf("asker error %q: %s by %s after %d reads, want %s by %s and none", c.err, r.Status, r.DecidedBy, reads.Load(), c.status, c.decidedBy)
		}
	}
}

// promptManager is a manager over an in-process server with one prompt
// and a file-like template; gets counts the requests the server served.
func promptManager(t *testing.T, gets *atomic.Int64) *client.Manager {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	srv.AddPrompt(&mcp.Prompt{Name: "review", Arguments: []*mcp.PromptArgument{{Name: "topic"}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			gets.Add(1)
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Review " + req.Params.Arguments["topic"]}}}}, nil
		})
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "file:///{+path}", Name: "files"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			gets.Add(1)
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "secret"}}}, nil
		})
	return memManager(t, "docs", func() *mcp.Server { return srv })
}

// TestGetPromptIsGatedLikeARead: prompts/get passes the same gate path as
// a read, under SERVER/prompts/get: a trusted server's prompt is got
// silently and taints the session, an untrusted one's asks, a deny rule
// stops it before the server sees it, and each is audited.
func TestGetPromptIsGatedLikeARead(t *testing.T) {
	deny := decide.RuleSpec{Effect: decide.Deny, Source: "test", Raw: json.RawMessage(`"docs/prompts/get"`)}
	for _, c := range []struct {
		name    string
		trusted bool
		rules   []decide.RuleSpec
		status  Status
		asked   int64
	}{
		{"trusted", true, nil, StatusSuccess, 0},
		{"untrusted asks", false, nil, StatusSuccess, 1},
		{"denied by rule", true, []decide.RuleSpec{deny}, StatusDenied, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var gets atomic.Int64
			m := promptManager(t, &gets)
			p, err := decide.Compile(c.rules, decide.Options{AutoApprove: decide.ApproveAdditive})
			if err != nil {
				t.Fatal(err)
			}
			log, asker := &recLog{}, &approveAsker{}
			g := NewGate(GateOptions{Catalog: m, Policy: p, Trusted: func(string) bool { return c.trusted }, Asker: asker, Mode: decide.Interactive, Audit: log})
			res, r := g.GetPrompt(context.Background(), "docs", "review", map[string]string{"topic": "gates"})
			if r.Status != c.status || asker.asked.Load() != c.asked {
				t.Fatalf("status %s (%v), asked %d; want %s, %d", r.Status, r.Err, asker.asked.Load(), c.status, c.asked)
			}
			ran := c.status == StatusSuccess
			if ran != (gets.Load() == 1) || ran != (res != nil) {
				t.Fatalf("the server served %d gets, result %v, for status %s", gets.Load(), res, r.Status)
			}
			recs := log.records()
			if len(recs) == 0 || recs[len(recs)-1].Tool != PromptGetTool || string(recs[len(recs)-1].Args) != `{"name":"review","arguments":{"topic":"gates"}}` {
				t.Fatalf("audit records %+v, want an outcome of %s with the prompt's name and arguments", recs, PromptGetTool)
			}
			if open, priv := g.Taint(); ran != (open || priv) {
				t.Errorf("taint open %v private %v after %s", open, priv, r.Status)
			}
		})
	}
}

// TestAReadOfAProtectedFileIsAsked: a read whose file:// URI leads into
// mcphost's own configuration is asked at tier 3 even from a trusted
// server that an allow rule covers, like a tool's argument naming it.
func TestAReadOfAProtectedFileIsAsked(t *testing.T) {
	var gets atomic.Int64
	m := promptManager(t, &gets)
	allow := decide.RuleSpec{Effect: decide.Allow, Source: "test", Raw: json.RawMessage(`"docs/*"`)}
	p, err := decide.Compile([]decide.RuleSpec{allow}, decide.Options{AutoApprove: decide.ApproveAdditive, Home: "/home/u", ProtectedPaths: []string{"/home/u/.config/mcphost"}})
	if err != nil {
		t.Fatal(err)
	}
	g := NewGate(GateOptions{Catalog: m, Policy: p, Trusted: func(string) bool { return true }, Asker: errAsker{ErrNoPerson}, Mode: decide.Interactive, Audit: &recLog{}})
	if _, r := g.ReadResource(context.Background(), "docs", "file:///home/u/notes.md"); r.Status != StatusSuccess {
		t.Fatalf("an ordinary file: %s by %s (%v), want it read", r.Status, r.DecidedBy, r.Err)
	}
	_, r := g.ReadResource(context.Background(), "docs", "file:///home/u/.config/mcphost/config.json")
	if r.Status == StatusSuccess || !r.Decision.Has(decide.CodeProtectedPath) || r.Decision.Tier != decide.T3 || gets.Load() != 1 {
		t.Fatalf("mcphost's config: %s, reasons %v, tier %s, %d served; want it asked at T3 for a protected path and not read", r.Status, r.Decision.Reasons, r.Decision.Tier, gets.Load())
	}
}

// lostReads is a catalog whose reads never get an answer from the server
// (not its refusal: the connection failed), counting them.
type lostReads struct {
	*client.Manager
	reads atomic.Int64
}

func (l *lostReads) ReadResource(context.Context, string, string) (*mcp.ReadResourceResult, error) {
	l.reads.Add(1)
	return nil, errors.New("connection lost")
}

// TestALostReadIsMadeOnce: a request that is not a tool call is made once,
// whatever its decision says of retries: a read that got no answer ends
// unknown after one attempt, as the one door was told (operation.once).
func TestALostReadIsMadeOnce(t *testing.T) {
	var served atomic.Int64
	cat := &lostReads{Manager: docsManager(t, &served)}
	p, err := decide.Compile(nil, decide.Options{AutoApprove: decide.ApproveAdditive})
	if err != nil {
		t.Fatal(err)
	}
	log := &recLog{}
	g := NewGate(GateOptions{Catalog: cat, Policy: p, Trusted: func(string) bool { return true }, Mode: decide.Interactive, Audit: log,
		Sleep: func(context.Context, time.Duration) error { return nil }})
	res, r := g.ReadResource(context.Background(), "docs", "file:///a.md")
	if res != nil || r.Status != StatusUnknown || len(r.Attempts) != 1 || cat.reads.Load() != 1 {
		t.Fatalf("a lost read: %s after %d attempts, %d reads (contents %v); want unknown after one attempt and one read", r.Status, len(r.Attempts), cat.reads.Load(), res)
	}
	if !r.Decision.Retry {
		t.Fatal("the read's decision allows no retry: the test shows nothing")
	}
	if n := len(log.records()); n != 2 {
		t.Errorf("%d audit records, want an intent and an outcome", n)
	}
}

// TestTheRequestsOwnAskerIsAsked: a call with its own Asker, and a read,
// prompts/get or subscription made through Asking, put their question to
// that asker and never to the gate's; without one the gate's is asked.
func TestTheRequestsOwnAskerIsAsked(t *testing.T) {
	var reads atomic.Int64
	m := docsManager(t, &reads)
	p, err := decide.Compile(nil, decide.Options{AutoApprove: decide.ApproveAdditive})
	if err != nil {
		t.Fatal(err)
	}
	gates, own := &approveAsker{}, &approveAsker{}
	g := NewGate(GateOptions{Catalog: m, Policy: p, Asker: gates, Mode: decide.Interactive, Audit: &recLog{}})
	if res, r := (Asking{Gate: g, Asker: own}).ReadResource(context.Background(), "docs", "file:///a.md"); res == nil || r.DecidedBy != "user:once" {
		t.Fatalf("read through its own asker: %s by %s (%v)", r.Status, r.DecidedBy, r.Err)
	}
	r := (Asking{Gate: g, Asker: own}).Subscribe(context.Background(), "docs", "file:///a.md", func(context.Context) error { return nil })
	if r.Status != StatusSuccess || r.DecidedBy != "user:once" {
		t.Fatalf("subscription through its own asker: %s by %s (%v)", r.Status, r.DecidedBy, r.Err)
	}
	if own.asked.Load() != 2 || gates.asked.Load() != 0 {
		t.Fatalf("own asker asked %d times, the gate's %d; want 2 and 0", own.asked.Load(), gates.asked.Load())
	}
	if res, _ := g.ReadResource(context.Background(), "docs", "file:///a.md"); res == nil || gates.asked.Load() != 1 || own.asked.Load() != 2 {
		t.Fatalf("a read without its own asker asked the gate's %d times, the other %d", gates.asked.Load(), own.asked.Load())
	}
}

// TestThePersonsOwnReadIsNotAsked: a read the person asked for themselves
// (ReadOwn: an @server:uri mention) of an untrusted server runs without a
// question, where the model's read of the same resource asks at T3; a
// protected path is still asked about (and so not read when nobody answers),
// and a deny rule still refuses it.
func TestThePersonsOwnReadIsNotAsked(t *testing.T) {
	deny := decide.RuleSpec{Effect: decide.Deny, Source: "test", Raw: json.RawMessage(`{"id":"no-b","tool":"docs/resources/read","args":{"uri":{"equals":"file:///b.md"}}}`)}
	p, err := decide.Compile([]decide.RuleSpec{deny}, decide.Options{AutoApprove: decide.ApproveAdditive, Home: "/home/u", ProtectedPaths: []string{"/home/u/.config/mcphost"}})
	if err != nil {
		t.Fatal(err)
	}
	var reads atomic.Int64
	m := docsManager(t, &reads)
	asker := &approveAsker{}
	log := &recLog{}
	g := NewGate(GateOptions{Catalog: m, Policy: p, Trusted: func(string) bool { return false }, Asker: asker, Mode: decide.Interactive, Audit: log})

	res, r := g.ReadOwn(context.Background(), "docs", "file:///a.md")
	if r.Status != StatusSuccess || asker.asked.Load() != 0 || res == nil || !r.Decision.Has(decide.CodeByPerson) {
		t.Fatalf("the person's own read: %s by %s, asked %d times, reasons %v; want it read without a question", r.Status, r.DecidedBy, asker.asked.Load(), r.Decision.Reasons)
	}
	if _, r := g.ReadResource(context.Background(), "docs", "file:///a.md"); r.Decision.Tier != decide.T3 || asker.asked.Load() != 1 {
		t.Fatalf("the model's read: tier %s, asked %d times; want it asked at T3", r.Decision.Tier, asker.asked.Load())
	}

	g = NewGate(GateOptions{Catalog: m, Policy: p, Trusted: func(string) bool { return false }, Asker: errAsker{ErrNoPerson}, Mode: decide.Interactive, Audit: log})
	before := reads.Load()
	_, r = g.ReadOwn(context.Background(), "docs", "file:///home/u/.config/mcphost/config.json")
	if r.Status == StatusSuccess || !r.Decision.Has(decide.CodeProtectedPath) || r.Decision.Tier != decide.T3 || reads.Load() != before {
		t.Fatalf("the person's read of mcphost's config: %s, reasons %v, tier %s; want it asked at T3 and not read", r.Status, r.Decision.Reasons, r.Decision.Tier)
	}
	_, r = g.ReadOwn(context.Background(), "docs", "file:///b.md")
	if r.Status != StatusDenied || reads.Load() != before {
		t.Fatalf("the person's read against a deny rule: %s by %s; want it denied and not read", r.Status, r.DecidedBy)
	}
}

// TestASubscriptionsEditMustKeepItsURI: a subscription is made to the URI it
// was decided on, so an edit that names another URI is refused, never
// decided on the other while the first is watched.
func TestASubscriptionsEditMustKeepItsURI(t *testing.T) {
	var reads atomic.Int64
	m := docsManager(t, &reads)
	p, err := decide.Compile(nil, decide.Options{AutoApprove: decide.ApproveAdditive})
	if err != nil {
		t.Fatal(err)
	}
	edit := NewScriptAsker(t,
		ScriptedAnswer{Tool: "docs/" + ResourceReadTool, Answer: Answer{Approve: true, Args: json.RawMessage(`{"subscribe":true,"uri":"file:///b.md"}`)}},
		// Would approve the edited call, were it decided.
		ScriptedAnswer{Tool: "docs/" + ResourceReadTool, Answer: Answer{Approve: true, Scope: decide.ScopeOnce}})
	g := NewGate(GateOptions{Catalog: m, Policy: p, Asker: edit, Mode: decide.Interactive, Audit: &recLog{}})
	subscribed := 0
	r := g.Subscribe(context.Background(), "docs", "file:///a.md", func(context.Context) error { subscribed++; return nil })
	if r.Status != StatusDenied || subscribed != 0 {
		t.Fatalf("a subscription edited to another URI: %s, subscribed %d times; want denied and none", r.Status, subscribed)
	}
}
