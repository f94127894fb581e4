package host

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/later"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
	"pgregory.net/rapid"
)

// hostFixtureEnv makes the test binary serve fixtures.Main's arguments
// (split on spaces) on stdio, so subprocess tests need no separate build.
const hostFixtureEnv = "MCPHOST_HOST_TEST_FIXTURE"

func TestMain(m *testing.M) {
	if args := os.Getenv(hostFixtureEnv); args != "" {
		os.Exit(fixtures.Main(strings.Fields(args), os.Stdin, os.Stdout, os.Stderr))
	}
	// client.starterLoop lives as long as the process: servers are started from its thread.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/mcphost/mcphost/client.starterLoop"))
}

// world is a gate over in-process fixtures, with an audit log and the
// fixture's execution log in a temp dir.
type world struct {
	t       *testing.T
	m       *client.Manager
	gate    *Gate
	audit   string
	execLog string
}

type worldOpts struct {
	fixture  string
	fopts    fixtures.Options
	trusted  bool
	asker    Asker
	headless bool
	auto     string // "" is the default, additive
	rules    []decide.RuleSpec
	timeout  time.Duration
	noAudit  bool
	// later, mayApprove, onHold and client: GateOptions.Later,
	// MayApprove, OnHold and Client (later_test.go).
	later      Later
	mayApprove func(decide.Tier, audit.Channel) bool
	onHold     func(later.Approval, *Question) error
	client     *audit.Client
	// state is GateOptions.State (sessionstate_test.go).
	state SessionState
	// store is GateOptions.Store (sharedgrants_test.go).
	store Store
}

func newWorld(t *testing.T, o worldOpts) *world {
	t.Helper()
	dir := t.TempDir()
	w := &world{t: t, audit: filepath.Join(dir, "audit.jsonl"), execLog: filepath.Join(dir, "exec.jsonl")}
	o.fopts.LogFile = w.execLog
	spec := client.Spec{Name: "f", Dial: func(ctx context.Context) (mcp.Transport, error) {
		f, err := fixtures.New(o.fixture, o.fopts)
		if err != nil {
			return nil, err
		}
		return f.InMemory(ctx)
	}}
	w.m = client.New([]client.Spec{spec}, client.Options{Backoff: func(int) time.Duration { return time.Millisecond }, RelistInterval: time.Millisecond})
	t.Cleanup(func() { w.m.Close() })
	w.m.Start(context.Background())
	if st := w.m.Servers()[0]; st.State != client.StateReady {
		t.Fatalf("fixture did not start: %+v", st)
	}
	auto, err := decide.ParseAutoApprove(o.auto)
	if err != nil {
		t.Fatal(err)
	}
	p, err := decide.Compile(o.rules, decide.Options{AutoApprove: auto})
	if err != nil {
		t.Fatal(err)
	}
	mode := decide.Interactive
	if o.headless {
		mode = decide.Headless
	}
	var log AuditLog
	if !o.noAudit {
		l, err := audit.Open(w.audit, audit.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		log = l
	}
	if o.headless && o.asker == nil {
		o.asker = HeadlessAsker{}
	}
	timeout := o.timeout
	if timeout == 0 {
		timeout = 5 * time.Second
	}
	w.gate = NewGate(GateOptions{
		Catalog: w.m, Policy: p, Trusted: func(string) bool { return o.trusted }, Asker: o.asker, Mode: mode, Audit: log,
		CallOptions: client.CallOptions{Timeout: timeout},
		Backoff:     func(int) time.Duration { return time.Millisecond },
		Later:       o.later, MayApprove: o.mayApprove, OnHold: o.onHold, Client: o.client, State: o.state, Store: o.store,
	})
	return w
}

func (w *world) call(tool, args string) *Result {
	w.t.Helper()
	return w.gate.Call(context.Background(), Call{Server: "f", Tool: tool, Args: json.RawMessage(args)})
}

// count returns how many times the fixture logged event for tool.
func (w *world) count(event, tool string) int {
	w.t.Helper()
	entries, err := fixtures.ReadLog(w.execLog)
	if err != nil {
		w.t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if e.Event == event && e.Tool == tool {
			n++
		}
	}
	return n
}

// records returns the audit records for tool, and checks the chain.
func (w *world) records(tool string) (intents, outcomes []audit.Record) {
	w.t.Helper()
	f, err := os.Open(w.audit)
	if err != nil {
		w.t.Fatal(err)
	}
	defer f.Close()
	rep, err := audit.Verify(f)
	if err != nil || len(rep.Problems) > 0 {
		w.t.Fatalf("audit log does not verify: %v %+v", err, rep.Problems)
	}
	recs, err := audit.Tail(w.audit, 1<<20)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, r := range recs {
		if r.Tool != tool {
			continue
		}
		if r.Kind == audit.Intent {
			intents = append(intents, r)
		} else {
			outcomes = append(outcomes, r)
		}
	}
	return intents, outcomes
}

func TestReadRetriedAtMostTwice(t *testing.T) {
	// The server answers -32603 (outcome unknown) to every call, counting
	// each one it receives: no timeouts, so load cannot change the count.
	w := newWorld(t, worldOpts{fixture: "flaky", trusted: true, fopts: fixtures.Options{FailFirst: 10, FailWith: fixtures.FailRPC}})
	r := w.call("read_value", `{"key":"k"}`)
	if r.Status != StatusUnknown || len(r.Attempts) != 3 {
		t.Fatalf("read_value: %s after %d attempts, want unknown after 3", r.Status, len(r.Attempts))
	}
	if n := w.count(fixtures.EventFail, "read_value"); n != 3 {
		t.Errorf("the read reached the server %d times, want 3 (one try and two retries)", n)
	}
	intents, _ := w.records("read_value")
	if len(intents) != 3 {
		t.Errorf("%d intent records for 3 executions", len(intents))
	}
}

// A call that times out is cancelled, and its outcome is unknown.
func TestTimedOutReadIsUnknown(t *testing.T) {
	// Long enough that each request reaches the server before it times
	// out, so that every execution is counted before the test waits for
	// its cancellation (a request still queued when the call gives up
	// would run, and log, after the test's files are gone).
	w := newWorld(t, worldOpts{fixture: "flaky", trusted: true, timeout: 300 * time.Millisecond})
	w.gate.o.RetryBudget = 1 // at most one retry, so the test stays short
	r := w.call("hang", `{}`)
	if r.Status != StatusUnknown || len(r.Attempts) == 0 || len(r.Attempts) > 2 {
		t.Fatalf("hang: %s after %+v, want unknown after one or two attempts", r.Status, r.Attempts)
	}
	for _, a := range r.Attempts {
		if a.Outcome != client.OutcomeUnknown {
			t.Errorf("attempt %+v, want every timed-out attempt unknown", a)
		}
	}
	// Each attempt that reached the server is cancelled there; wait until
	// the server has logged them, so nothing writes to the test's files
	// after it ends.
	w.waitCount(fixtures.EventCancelled, "hang", w.count(fixtures.EventExec, "hang"))
}

func TestIdempotentWriteRetriedAtMostOnce(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "flaky", trusted: true, fopts: fixtures.Options{FailFirst: 10, FailWith: fixtures.FailRPC}})
	r := w.call("mark", `{"key":"k"}`)
	if r.Status != StatusUnknown || len(r.Attempts) != 2 {
		t.Fatalf("mark: %s after %d attempts, want unknown after 2", r.Status, len(r.Attempts))
	}
	if n := w.count(fixtures.EventFail, "mark"); n != 2 {
		t.Errorf("the idempotent write was sent %d times, want 2", n)
	}
}

func TestNonIdempotentWriteRunsOnce(t *testing.T) {
	faults := map[string]fixtures.Options{
		"internal error": {FailFirst: 10, FailWith: fixtures.FailRPC},
		"crash after":    {CrashOn: []string{"write_record"}},
	}
	for name, fo := range faults {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, worldOpts{fixture: "flaky", trusted: true, fopts: fo})
			r := w.call("write_record", `{"key":"k","value":"v"}`)
			if r.Status != StatusUnknown || len(r.Attempts) != 1 {
				t.Fatalf("write_record: %s after %d attempts, want unknown after exactly 1", r.Status, len(r.Attempts))
			}
			if !strings.Contains(r.Message(), "outcome of f/write_record is unknown") {
				t.Errorf("message %q does not say the outcome is unknown", r.Message())
			}
			sent := w.count(fixtures.EventExec, "write_record") + w.count(fixtures.EventFail, "write_record")
			if sent != 1 {
				t.Errorf("write_record reached the server %d times, want 1", sent)
			}
		})
	}
}

func TestToolErrorNeverRetried(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "flaky", trusted: true, fopts: fixtures.Options{FailFirst: 10, FailWith: fixtures.FailTool}})
	r := w.call("read_value", `{"key":"k"}`)
	if r.Status != StatusToolError || len(r.Attempts) != 1 {
		t.Fatalf("read_value: %s after %d attempts, want tool-error after 1", r.Status, len(r.Attempts))
	}
}

func TestCrashedReadRunsAgainAfterRestart(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "flaky", trusted: true, fopts: fixtures.Options{CrashOn: []string{"read_value"}}})
	r := w.call("read_value", `{"key":"k"}`)
	// An attempt sent before the manager saw the crash finds the connection
	// gone and is not sent (nothing reached the server); the retry after the
	// restart then runs. So: two attempts that reached the server, the second
	// a success, and any others not sent.
	sent := 0
	for _, a := range r.Attempts {
		if a.Outcome != client.OutcomeNotSent {
			sent++
		}
	}
	if r.Status != StatusSuccess || sent != 2 || len(r.Attempts) > 3 {
		t.Fatalf("read_value: %s after %d attempts %+v (%v), want success after 2 that reached the server", r.Status, len(r.Attempts), r.Attempts, r.Err)
	}
	if n := w.count(fixtures.EventExec, "read_value"); n != 2 {
		t.Errorf("read ran %d times, want 2", n)
	}
}

func TestEveryExecutionHasOneIntentBeforeIt(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "flaky", trusted: true, fopts: fixtures.Options{CrashOn: []string{"read_value"}}})
	w.call("read_value", `{"key":"a"}`)
	w.call("mark", `{"key":"a"}`)
	w.call("write_record", `{"key":"a","value":"1"}`)
	for _, tool := range []string{"read_value", "mark", "write_record"} {
		intents, outcomes := w.records(tool)
		execs := w.count(fixtures.EventExec, tool)
		// An attempt that never reached the server (the connection was
		// being restarted) has its intent and outcome but no execution;
		// an execution never lacks its intent.
		if len(intents) < execs || len(outcomes) != len(intents) {
			t.Errorf("%s: %d executions, %d intents, %d outcomes; want an intent for every execution and one outcome per intent", tool, execs, len(intents), len(outcomes))
		}
		for _, rec := range intents {
			if rec.ArgsHash == "" || rec.Args != nil {
				t.Errorf("%s: intent stores raw args or no hash: %+v", tool, rec)
			}
		}
	}
}

func TestNoAuditNoWrites(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "flaky", trusted: true, noAudit: true})
	if r := w.call("write_record", `{"key":"k","value":"v"}`); r.Status != StatusError || w.count(fixtures.EventExec, "write_record") != 0 {
		t.Errorf("write without an audit log: %s (%v), want refused and never run", r.Status, r.Err)
	}
	if r := w.call("read_value", `{"key":"k"}`); r.Status != StatusSuccess {
		t.Errorf("read without an audit log: %s (%v), want it to run", r.Status, r.Err)
	}
}

func TestAskAndGrants(t *testing.T) {
	asker := NewScriptAsker(t,
		ScriptedAnswer{Tool: "f/set_value", Answer: Answer{Approve: true, Scope: decide.ScopeSession}},
		ScriptedAnswer{Tool: "f/write_record", Answer: Answer{Approve: false, Reason: "not today"}},
	)
	w := newWorld(t, worldOpts{fixture: "flaky", trusted: true, asker: asker, auto: "reads"})
	if r := w.call("set_value", `{"key":"a","value":"1"}`); r.Status != StatusSuccess || r.DecidedBy != "user:session" {
		t.Fatalf("set_value: %s by %s", r.Status, r.DecidedBy)
	}
	// The session grant covers the next call without asking.
	if r := w.call("set_value", `{"key":"b","value":"2"}`); r.Status != StatusSuccess || r.DecidedBy != "user:session" {
		t.Fatalf("second set_value: %s by %s", r.Status, r.DecidedBy)
	}
	r := w.call("write_record", `{"key":"a","value":"1"}`)
	if r.Status != StatusDenied || r.DenyReason != "not today" || !strings.Contains(r.Message(), "not today") {
		t.Errorf("denied call: %s %q", r.Status, r.Message())
	}
	if w.count(fixtures.EventExec, "write_record") != 0 {
		t.Error("a denied call ran")
	}
	asker.Done()
}

func TestHeadlessBlocksAndRulesDeny(t *testing.T) {
	deny := decide.RuleSpec{Effect: decide.Deny, Source: "test", Raw: json.RawMessage(`"f/write_*"`)}
	w := newWorld(t, worldOpts{fixture: "flaky", trusted: true, headless: true, rules: []decide.RuleSpec{deny}})
	if r := w.call("set_value", `{"key":"a","value":"1"}`); r.Status != StatusBlocked || r.DecidedBy != "headless" {
		t.Errorf("destructive write headless: %s by %s, want blocked", r.Status, r.DecidedBy)
	}
	if r := w.call("write_record", `{"key":"a","value":"1"}`); r.Status != StatusDenied || !strings.HasPrefix(r.DecidedBy.String(), "rule:") {
		t.Errorf("write_record with a deny rule: %s by %s", r.Status, r.DecidedBy)
	}
	_, outcomes := w.records("write_record")
	if len(outcomes) != 1 || outcomes[0].Status != audit.StatusDenied {
		t.Errorf("a denial is audited once as denied, got %+v", outcomes)
	}
}

func TestHostileLiesAreAskedAbout(t *testing.T) {
	asker := NewScriptAsker(t, ScriptedAnswer{Tool: "f/delete_everything", Answer: Answer{Approve: false}})
	w := newWorld(t, worldOpts{fixture: "hostile", trusted: true, asker: asker})
	r := w.call("delete_everything", `{}`)
	if r.Status != StatusDenied || !r.Decision.Has(decide.CodeNameSuggestsWrite) {
		t.Errorf("delete_everything: %s %v", r.Status, r.Decision.Reasons)
	}
	asker.Done()
}

func TestChangedDefinitionIsAskedAgain(t *testing.T) {
	asker := NewScriptAsker(t,
		ScriptedAnswer{Tool: "f/fetch_notes", Answer: Answer{Approve: true, Scope: decide.ScopeOnce}},
		ScriptedAnswer{Tool: "f/fetch_notes", Answer: Answer{Approve: false}},
	)
	w := newWorld(t, worldOpts{fixture: "hostile", trusted: true, asker: asker})
	events, unsub := w.m.Subscribe()
	defer unsub()
	// The server changes fetch_notes right after the first listing and says
	// so; once mcphost has listed it again, pin the first definition, as a
	// person who saw it before the change would have.
	w.pinOriginal(events, "fetch_notes")
	r := w.call("fetch_notes", `{}`)
	if !r.Decision.Has(decide.CodeDefinitionChanged) || r.Status != StatusSuccess {
		t.Fatalf("fetch_notes after a change: %s %v", r.Status, r.Decision.Reasons)
	}
	// Approving accepted the new definition: the next call is decided on
	// the new annotations (now open-world, so it still asks), not as changed.
	r = w.call("fetch_notes", `{}`)
	if r.Decision.Has(decide.CodeDefinitionChanged) || !r.Decision.Has(decide.CodeOpenWorld) {
		t.Errorf("after acceptance: %v, want the new hints to count", r.Decision.Reasons)
	}
	q := asker.Asked()
	if len(q) != 2 || !q[0].Changed || q[1].Changed {
		t.Fatalf("questions changed=%v,%v; want the first to say the definition changed and the second not", len(q) > 0 && q[0].Changed, len(q) > 1 && q[1].Changed)
	}
	if got := strings.Join(q[0].ChangedFields, ","); got != "description,inputSchema,annotations" {
		t.Errorf("the question shows changed fields %q, want description,inputSchema,annotations", got)
	}
	asker.Done()
}

// pinOriginal waits until the fixture changed tool's definition and pins
// the definition it had before.
func (w *world) pinOriginal(events <-chan client.Event, tool string) {
	w.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		if ch, ok := w.m.LastChange("f", tool); ok {
			spec := mustSpec(w.t, w.m)
			w.gate.o.Pins.Set(spec.Identity(), &client.Tool{Name: tool, Hash: ch.OldHash}, false)
			return
		}
		select {
		case <-events:
		case <-deadline:
			w.t.Fatalf("the definition of %s never changed", tool)
		}
	}
}

func mustSpec(t *testing.T, m *client.Manager) client.Spec {
	s, ok := m.Spec("f")
	if !ok {
		t.Fatal("no spec")
	}
	return s
}

func TestParallelCalls(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "flaky", trusted: true})
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tool, args := "read_value", `{"key":"k"}`
			if i%2 == 0 {
				tool, args = "write_record", `{"key":"k","value":"v"}`
			}
			if r := w.gate.Call(context.Background(), Call{Server: "f", Tool: tool, Args: json.RawMessage(args)}); r.Status != StatusSuccess {
				t.Errorf("%s: %s %v", tool, r.Status, r.Err)
			}
		}()
	}
	wg.Wait()
	if n := w.count(fixtures.EventExec, "write_record"); n != 8 {
		t.Errorf("write_record ran %d times, want 8", n)
	}
}

// countingAsker approves everything once and counts approvals.
type countingAsker struct {
	mu        sync.Mutex
	approvals int
}

func (c *countingAsker) Ask(context.Context, *Question) (Answer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.approvals++
	return Answer{Approve: true, Scope: decide.ScopeOnce}, nil
}

// For any faults, a non-idempotent tool never runs more often than a person
// approved it.
func TestPropNonIdempotentExecutionsAtMostApprovals(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		fo := fixtures.Options{
			FailFirst: rapid.IntRange(0, 3).Draw(rt, "failFirst"),
			FailWith:  fixtures.FailMode(rapid.IntRange(0, 1).Draw(rt, "failWith")),
		}
		if rapid.Bool().Draw(rt, "crash") {
			fo.CrashOn = []string{"write_record"}
		}
		calls := rapid.IntRange(1, 4).Draw(rt, "calls")
		asker := &countingAsker{}
		w := newWorld(t, worldOpts{fixture: "flaky", trusted: true, fopts: fo, asker: asker, auto: "none"})
		for range calls {
			w.call("write_record", `{"key":"k","value":"v"}`)
		}
		execs := w.count(fixtures.EventExec, "write_record") + w.count(fixtures.EventFail, "write_record")
		if execs > asker.approvals {
			rt.Fatalf("write_record reached the server %d times with %d approvals", execs, asker.approvals)
		}
		w.m.Close()
	})
}

func TestGrantsRevokeAndTaint(t *testing.T) {
	asker := NewScriptAsker(t,
		ScriptedAnswer{Tool: "f/set_value", Answer: Answer{Approve: true, Scope: decide.ScopeSession}},
		ScriptedAnswer{Tool: "f/set_value", Answer: Answer{Approve: false}},
	)
	w := newWorld(t, worldOpts{fixture: "flaky", trusted: true, asker: asker})
	w.call("set_value", `{"key":"a","value":"1"}`)
	gs := w.gate.Grants()
	if len(gs) != 1 || gs[0].Scope != decide.ScopeSession || gs[0].Tool != "set_value" {
		t.Fatalf("grants %+v, want one session grant for set_value", gs)
	}
	if n := w.gate.Revoke(gs[0]); n != 1 || len(w.gate.Grants()) != 0 {
		t.Fatalf("Revoke removed %d, %d left", n, len(w.gate.Grants()))
	}
	if r := w.call("set_value", `{"key":"a","value":"1"}`); r.Status != StatusDenied {
		t.Errorf("after revoking, the call must ask again (and be denied), got %s", r.Status)
	}
	if open, priv := w.gate.Taint(); open || priv {
		t.Errorf("taint before any read: %v %v", open, priv)
	}
	w.call("read_value", `{"key":"a"}`)
	if open, priv := w.gate.Taint(); open || !priv {
		t.Errorf("taint after a closed-world read: open=%v private=%v, want false true", open, priv)
	}
	asker.Done()
}

func TestEditedArgumentsAreDecidedAgain(t *testing.T) {
	edit := func(args string) ScriptedAnswer {
		return ScriptedAnswer{Tool: "f/set_value", Answer: Answer{Approve: true, Args: json.RawMessage(args)}}
	}
	asker := NewScriptAsker(t,
		edit(`{"key":"b","value":"2"}`),
		ScriptedAnswer{Tool: "f/set_value", Answer: Answer{Approve: true, Scope: decide.ScopeOnce}},
	)
	w := newWorld(t, worldOpts{fixture: "flaky", trusted: true, asker: asker})
	r := w.call("set_value", `{"key":"a","value":"1"}`)
	if r.Status != StatusSuccess || string(r.Args) != `{"key":"b","value":"2"}` {
		t.Fatalf("%s with %s, want the edited call to run", r.Status, r.Args)
	}
	asker.Done()

	// Editing without end never runs anything the person was not shown.
	asker = NewScriptAsker(t, edit(`{"key":"c","value":"1"}`), edit(`{"key":"c","value":"2"}`),
		edit(`{"key":"c","value":"3"}`), edit(`{"key":"c","value":"4"}`))
	w = newWorld(t, worldOpts{fixture: "flaky", trusted: true, asker: asker})
	if r := w.call("set_value", `{"key":"c","value":"0"}`); r.Status != StatusDenied || w.count(fixtures.EventExec, "set_value") != 0 {
		t.Errorf("after four edits: %s, %d executions; want denied and none", r.Status, w.count(fixtures.EventExec, "set_value"))
	}
	asker.Done()
}

func TestExplainIsTheDecisionCallMakes(t *testing.T) {
	asker := NewScriptAsker(t, ScriptedAnswer{Tool: "f/set_value", Answer: Answer{Approve: true, Scope: decide.ScopeSession}})
	w := newWorld(t, worldOpts{fixture: "flaky", trusted: false, asker: asker, auto: "reads"})
	args := json.RawMessage(`{"key":"a","value":"1"}`)
	d, err := w.gate.Explain("f", "set_value", args)
	if err != nil {
		t.Fatal(err)
	}
	if d.Verdict != decide.Ask {
		t.Errorf("before any grant: %s, want ask", d.Verdict)
	}
	if n := w.count(fixtures.EventExec, "set_value"); n != 0 || len(asker.Asked()) != 0 {
		t.Fatalf("Explain ran the tool (%d) or asked (%d)", n, len(asker.Asked()))
	}
	if _, err := os.Stat(w.audit); err == nil {
		if i, o := w.records("set_value"); len(i)+len(o) != 0 {
			t.Errorf("Explain wrote audit records: %d intents, %d outcomes", len(i), len(o))
		}
	}
	r := w.call("set_value", string(args))
	if r.Decision.Verdict != d.Verdict || r.Decision.Tier != d.Tier || r.Decision.Class != d.Class {
		t.Errorf("Call decided %s/%s/%s, Explain said %s/%s/%s", r.Decision.Verdict, r.Decision.Tier, r.Decision.Class, d.Verdict, d.Tier, d.Class)
	}
	// The session grant now in force is part of the explanation.
	d, err = w.gate.Explain("f", "set_value", json.RawMessage(`{"key":"b","value":"2"}`))
	if err != nil || d.Verdict != decide.Allow || d.Grant == nil {
		t.Errorf("after a session grant: %s grant=%v err=%v, want allow by the grant", d.Verdict, d.Grant, err)
	}
	if _, err := w.gate.Explain("f", "no_such_tool", nil); err == nil {
		t.Error("Explain of an unknown tool: no error")
	}
	if _, err := w.gate.Explain("nobody", "x", nil); err == nil || !strings.Contains(err.Error(), "no server") {
		t.Errorf("Explain of an unknown server: %v", err)
	}
	asker.Done()
}

func TestExplainNeverPins(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "flaky", trusted: true, headless: true})
	if _, err := w.gate.Explain("f", "read_value", json.RawMessage(`{"key":"k"}`)); err != nil {
		t.Fatal(err)
	}
	w.gate.o.Pins.mu.Lock()
	n := len(w.gate.o.Pins.mem)
	w.gate.o.Pins.mu.Unlock()
	if n != 0 {
		t.Errorf("Explain set %d pins, want none", n)
	}
}

// progressGate is a gate over an in-process go-sdk server whose tool
// "steps" reports two steps of progress with the request's token, then
// waits for release before it answers.
func progressGate(t *testing.T, release <-chan struct{}) (*Gate, *client.Manager) {
	t.Helper()
	m := memManager(t, "p", func() *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "progress", Version: "1"}, nil)
		s.AddTool(&mcp.Tool{
			Name: "steps", InputSchema: map[string]any{"type": "object"},
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: bptr(false)},
		}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for i := range 2 {
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: req.Params.GetProgressToken(), Progress: float64(i + 1), Total: 2, Message: "step\x1b[2J",
				}); err != nil {
					return nil, err
				}
			}
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
		return s
	})
	auto, err := decide.ParseAutoApprove("")
	if err != nil {
		t.Fatal(err)
	}
	p, err := decide.Compile(nil, decide.Options{AutoApprove: auto})
	if err != nil {
		t.Fatal(err)
	}
	gateSaw := make(chan client.Progress, 4)
	g := NewGate(GateOptions{
		Catalog: m, Policy: p, Trusted: func(string) bool { return true }, Asker: HeadlessAsker{}, Mode: decide.Headless,
		CallOptions: client.CallOptions{Timeout: 5 * time.Second, Progress: func(pr client.Progress) { gateSaw <- pr }},
	})
	t.Cleanup(func() {
		if len(gateSaw) != 2 {
			t.Errorf("the gate's own progress receiver saw %d reports, want 2", len(gateSaw))
		}
	})
	return g, m
}

func TestCallProgressSeesTheServersReports(t *testing.T) {
	release := make(chan struct{})
	g, _ := progressGate(t, release)
	var (
		mu  sync.Mutex
		got []client.Progress
	)
	r := g.Call(context.Background(), Call{Server: "p", Tool: "steps", Args: json.RawMessage(`{}`), Progress: func(p client.Progress) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, p)
		if len(got) == 2 {
			close(release)
		}
	}})
	if r.Status != StatusSuccess {
		t.Fatalf("status %s: %v", r.Status, r.Err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0].Progress != 1 || got[1].Progress != 2 || got[1].Total != 2 || got[1].Message != "step\x1b[2J" {
		t.Fatalf("progress %+v", got)
	}
}

// TestACallsOwnAskerIsAsked: a call with its own Asker puts its question to
// that asker, not the gate's; a call without one asks the gate's.
func TestACallsOwnAskerIsAsked(t *testing.T) {
	gates, own := &approveAsker{}, &approveAsker{}
	w := newWorld(t, worldOpts{fixture: "flaky", trusted: true, asker: gates, auto: "reads"})
	c := Call{Server: "f", Tool: "set_value", Args: json.RawMessage(`{"key":"a","value":"1"}`), Asker: own}
	if r := w.gate.Call(context.Background(), c); r.Status != StatusSuccess || r.DecidedBy != "user:once" {
		t.Fatalf("set_value: %s by %s", r.Status, r.DecidedBy)
	}
	if own.asked.Load() != 1 || gates.asked.Load() != 0 {
		t.Fatalf("the call's asker was asked %d times, the gate's %d; want 1 and 0", own.asked.Load(), gates.asked.Load())
	}
	if r := w.call("set_value", `{"key":"b","value":"2"}`); r.Status != StatusSuccess || gates.asked.Load() != 1 {
		t.Fatalf("without its own asker: %s, the gate's asked %d times", r.Status, gates.asked.Load())
	}
}
