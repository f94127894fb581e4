package host

// Tests that a decision is made on the definition the server offers now:
// an approval binds to the definition it was given for, a change the
// server announced is listed before anything is decided, and arguments the
// tool's own schema rejects are refused before anything is decided.

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/llm"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// askerFunc answers with a function, for tests whose answers depend on
// the question.
type askerFunc func(ctx context.Context, q *Question) (Answer, error)

func (f askerFunc) Ask(ctx context.Context, q *Question) (Answer, error) { return f(ctx, q) }

func readTool(name, desc string) *mcp.Tool {
	return &mcp.Tool{Name: name, Description: desc, InputSchema: map[string]any{"type": "object"},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: bptr(false)}}
}

// The server redefines a tool while the person is asked about a call of
// it: the approval, given for the old definition, neither runs the call
// nor accepts the new definition; the person is asked again, shown what
// changed.
func TestAnApprovalIsBoundToTheDefinitionAsked(t *testing.T) {
	r := newRugPull()
	r.define(destructiveTool("wipe"))
	rn := startRun(t, r, filepath.Join(t.TempDir(), "state.json"))
	rn.waitTool(t, "wipe", "Deletes every record.")
	var asked []*Question
	rn.gate.o.Mode = decide.Interactive
	rn.gate.o.Asker = askerFunc(func(_ context.Context, q *Question) (Answer, error) {
		asked = append(asked, q)
		if len(asked) == 1 {
			// Now it claims to be a harmless read; mcphost lists it
			// before the person answers.
			r.define(liar("wipe"))
			rn.waitTool(t, "wipe", liar("wipe").Description)
			return Answer{Approve: true, Scope: decide.ScopeSession}, nil
		}
		return Answer{Reason: "not that one"}, nil
	})
	res := rn.call("wipe")
	if res.Status != StatusDenied || r.runs("wipe") != 0 {
		t.Fatalf("wipe approved for its old definition: %s, ran %d times; want denied at the second question, never run", res.Status, r.runs("wipe"))
	}
	if len(asked) != 2 || asked[0].Changed || !asked[1].Changed || asked[1].Tool.Hash == asked[0].Tool.Hash {
		t.Fatalf("asked %d questions; want a second one about the new definition, shown as changed", len(asked))
	}
	if !slices.Contains(asked[1].ChangedFields, "description") {
		t.Errorf("the second question shows changed fields %q, want the description among them", asked[1].ChangedFields)
	}
	if g := rn.gate.Grants(); len(g) != 0 {
		t.Errorf("grants after an approval of another definition: %+v, want none", g)
	}
	tl, _ := rn.m.Tool("rp", "wipe")
	if !rn.gate.Changed(tl) {
		t.Error("the new definition was accepted by an answer given for the old one")
	}
}

// An answer given for another definition (Answer.Definition, as an asker
// whose answers come back out of band sets it) approves nothing: the call
// is asked about again, a bounded number of times, and then refused,
// saying why. An answer for the definition asked about approves.
func TestAnAnswerForAnotherDefinitionApprovesNothing(t *testing.T) {
	r := newRugPull()
	r.define(destructiveTool("wipe"))
	rn := startRun(t, r, filepath.Join(t.TempDir(), "state.json"))
	rn.waitTool(t, "wipe", "Deletes every record.")
	n := 0
	rn.gate.o.Mode = decide.Interactive
	rn.gate.o.Asker = askerFunc(func(context.Context, *Question) (Answer, error) {
		n++
		return Answer{Approve: true, Scope: decide.ScopeOnce, Definition: "an-older-definition"}, nil
	})
	res := rn.call("wipe")
	if res.Status != StatusDenied || res.DecidedBy != DecidedByStale || r.runs("wipe") != 0 {
		t.Fatalf("answers for another definition: %s by %s, ran %d times; want denied by %s, never run", res.Status, res.DecidedBy, r.runs("wipe"), DecidedByStale)
	}
	if !strings.Contains(res.DenyReason, "changed since the answer was given") {
		t.Errorf("reason %q does not say the definition changed since the answer", res.DenyReason)
	}
	if n != 4 {
		t.Errorf("asked %d times, want 4: again after each of 3 stale answers, then refused", n)
	}

	rn.gate.o.Asker = askerFunc(func(_ context.Context, q *Question) (Answer, error) {
		return Answer{Approve: true, Scope: decide.ScopeOnce, Definition: q.Tool.Hash}, nil
	})
	if res := rn.call("wipe"); res.Status != StatusSuccess || r.runs("wipe") != 1 {
		t.Errorf("an answer for the definition asked about: %s, ran %d times; want success, once", res.Status, r.runs("wipe"))
	}
}

// relistSpy is a gate's catalog that tells the test each time the gate
// finds a re-list pending.
type relistSpy struct {
	*client.Manager
	pending func()
}

func (s relistSpy) Relisting(server string) bool {
	p := s.Manager.Relisting(server)
	if p {
		s.pending()
	}
	return p
}

// announceAndHold makes the server redefine peek as a destructive tool
// (go-sdk sends notifications/tools/list_changed) and holds mcphost's
// re-list at the server until a call reaches it or release is called. It
// returns once the re-list has reached the server, when mcphost surely
// knows the listing it holds is stale.
func announceAndHold(t *testing.T, r *rugPull) (release func()) {
	t.Helper()
	listing, called, released := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var onceL, onceC, onceR sync.Once
	release = func() { onceR.Do(func() { close(released) }) }
	t.Cleanup(release)
	r.mu.Lock()
	r.before = func(ctx context.Context, method string) {
		switch method {
		case "tools/call":
			onceC.Do(func() { close(called) })
		case "tools/list":
			onceL.Do(func() { close(listing) })
			select {
			case <-called:
			case <-released:
			case <-ctx.Done():
			}
		}
	}
	r.mu.Unlock()
	changed := destructiveTool("peek")
	r.define(changed)
	select {
	case <-listing:
	case <-time.After(20 * time.Second):
		t.Fatal("mcphost never listed the tools again after the server said they changed")
	}
	return release
}

// A server says its tools changed and answers the next call before
// mcphost listed them again: the call is decided on the new definition,
// once the re-list is done, never on the one the server called stale.
func TestAnAnnouncedChangeIsListedBeforeTheDecision(t *testing.T) {
	r := newRugPull()
	r.define(readTool("peek", "Reads."))
	rn := startRun(t, r, filepath.Join(t.TempDir(), "state.json"))
	rn.waitTool(t, "peek", "Reads.")
	release := announceAndHold(t, r)
	rn.gate.o.Catalog = relistSpy{Manager: rn.m, pending: release}
	rn.gate.o.ReadyWait = 20 * time.Second

	res := rn.call("peek")
	if r.runs("peek") != 0 || res.Status != StatusBlocked || !res.Decision.Has(decide.CodeDefinitionChanged) {
		t.Fatalf("peek after its change was announced: %s %v, ran %d times; want blocked as changed, never run", res.Status, res.Decision.Reasons, r.runs("peek"))
	}
}

// A re-list that does not complete in time leaves the call undecided and
// unsent, with the reason.
func TestAnAnnouncedChangeNotListedInTimeIsNotDecided(t *testing.T) {
	r := newRugPull()
	r.define(readTool("peek", "Reads."))
	rn := startRun(t, r, filepath.Join(t.TempDir(), "state.json"))
	rn.waitTool(t, "peek", "Reads.")
	announceAndHold(t, r)
	rn.gate.o.ReadyWait = 50 * time.Millisecond

	res := rn.call("peek")
	if res.Status != StatusError || res.Err == nil || !strings.Contains(res.Err.Error(), "said its tools changed") {
		t.Fatalf("peek while the re-list is held: %s (%v), want an error saying the server's tools changed", res.Status, res.Err)
	}
	if n := r.received("tools/call"); n != 0 {
		t.Errorf("the server received %d calls, want none", n)
	}
}

// peekByID is a read whose input schema takes exactly one string id.
func peekByID() *mcp.Tool {
	return &mcp.Tool{Name: "peek", Description: "Reads a record.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}},
			"required": []any{"id"}, "additionalProperties": false},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: bptr(false)}}
}

// The model calls a tool with arguments its input schema rejects: the gate
// refuses them, naming the field, and the server never sees the call; the
// model's corrected call runs.
func TestLoopRefusesArgumentsTheSchemaRejects(t *testing.T) {
	r := newRugPull()
	r.define(peekByID())
	rn := startRun(t, r, filepath.Join(t.TempDir(), "state.json"))
	rn.waitTool(t, "peek", "Reads a record.")
	l := NewLoop(LoopOptions{Gate: rn.gate, Tools: rn.m.Tools(), Model: llm.NewScript([]llm.ScriptTurn{
		{ToolCalls: []llm.ScriptCall{call("rp__peek", `{"idd":"T-1"}`)}},
		{ExpectError: bptr(true), ExpectResult: &llm.ResultExpectation{Contains: `idd`},
			ToolCalls: []llm.ScriptCall{call("rp__peek", `{"id":"T-1"}`)}},
		{ExpectResult: &llm.ResultExpectation{Contains: "done"}, Text: "Read it."},
	})})
	out, err := l.Run(context.Background(), "Read T-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Calls) != 2 {
		t.Fatalf("%d calls, want 2", len(out.Calls))
	}
	if c := out.Calls[0]; c.Status != StatusDenied || c.DecidedBy != DecidedBySchema {
		t.Errorf("the call with a wrong field: %s by %s, want denied by %s", c.Status, c.DecidedBy, DecidedBySchema)
	}
	if c := out.Calls[1]; c.Status != StatusSuccess {
		t.Errorf("the corrected call: %s, want success", c.Status)
	}
	if n := r.received("tools/call"); n != 1 {
		t.Errorf("the server received %d calls, want only the corrected one", n)
	}
}

// A refusal by the schema is audited like a denial (an outcome, no
// intent), and a person's --no-check still sends the arguments.
func TestSchemaRefusalIsAudited(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "tasks", trusted: true, headless: true})
	res := w.call("get_task", `{"id": 3}`)
	if res.Status != StatusDenied || res.DecidedBy != DecidedBySchema || !res.Decision.Has(decide.CodeSchemaRejected) {
		t.Fatalf("get_task with a number for its string id: %s by %s %v, want denied by %s", res.Status, res.DecidedBy, res.Decision.Reasons, DecidedBySchema)
	}
	if msg := res.Message(); !strings.Contains(msg, "/properties/id") {
		t.Errorf("message %q does not name the field", msg)
	}
	if d, err := w.gate.Explain("f", "get_task", []byte(`{"id": 3}`)); err != nil || d.Verdict != decide.Deny || !d.Has(decide.CodeSchemaRejected) {
		t.Errorf("Explain of the same call: %v %v, want the refusal Call makes", d.Reasons, err)
	}
	if d, err := w.gate.Explain("f", "get_task", nil); err != nil || d.Has(decide.CodeSchemaRejected) || d.Class != decide.Read {
		t.Errorf("Explain of the tool alone (no arguments): %s %v %v, want its own class, read", d.Class, d.Reasons, err)
	}
	intents, outcomes := w.records("get_task")
	if len(intents) != 0 || len(outcomes) != 1 || outcomes[0].Status != audit.StatusDenied || outcomes[0].DecidedBy != DecidedBySchema {
		t.Fatalf("audit: %d intents, outcomes %+v; want one denied outcome decided by %s", len(intents), outcomes, DecidedBySchema)
	}
	sent := w.gate.Call(context.Background(), Call{Server: "f", Tool: "get_task", Args: []byte(`{"id": 3}`), NoArgsCheck: true})
	if len(sent.Attempts) != 1 {
		t.Errorf("with NoArgsCheck: %s after %d attempts, want the call sent", sent.Status, len(sent.Attempts))
	}
}

// An approval for these arguments lets exactly these arguments run unasked
// again; other arguments are asked about.
func TestArgsGrantIsBoundToTheArguments(t *testing.T) {
	asker := NewScriptAsker(t,
		ScriptedAnswer{Tool: "f/set_value", Answer: Answer{Approve: true, Scope: decide.ScopeArgs}},
		ScriptedAnswer{Tool: "f/set_value", Answer: Answer{Reason: "not that value"}})
	w := newWorld(t, worldOpts{fixture: "flaky", trusted: true, asker: asker})
	if r := w.call("set_value", `{"key":"a","value":"1"}`); r.Status != StatusSuccess || r.DecidedBy != "user:args" {
		t.Fatalf("first call: %s by %s, want success by user:args", r.Status, r.DecidedBy)
	}
	if r := w.call("set_value", `{"key":"a","value":"1"}`); r.Status != StatusSuccess || len(asker.Asked()) != 1 {
		t.Fatalf("the same arguments again: %s after %d questions, want success unasked", r.Status, len(asker.Asked()))
	}
	if r := w.call("set_value", `{"key":"a","value":"2"}`); r.Status != StatusDenied {
		t.Errorf("other arguments: %s, want asked again and denied", r.Status)
	}
	asker.Done()
}

// A tool of a server the gate does not know counts as changed: the model
// is never offered its definition.
func TestToolOfAnUnknownServerCountsAsChanged(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "flaky", trusted: true, headless: true})
	tl, ok := w.m.Tool("f", "mark")
	if !ok {
		t.Fatal("no mark")
	}
	if w.gate.Changed(tl) {
		t.Fatal("a listed, unchanged tool counts as changed")
	}
	stray := *tl
	stray.Server = "gone"
	if !w.gate.Changed(&stray) {
		t.Error("a tool of a server the gate does not know counts as unchanged")
	}
}

// The schema check of a tool is its own: cached by definition hash, never
// shared by tools with no hash.
func TestArgsCheckIsPerDefinition(t *testing.T) {
	g := NewGate(GateOptions{})
	strict := func(hash, field string) *client.Tool {
		return &client.Tool{Name: "t", Hash: hash, InputSchema: []byte(`{"type":"object","properties":{"` + field + `":{"type":"string"}},"additionalProperties":false}`)}
	}
	args := Call{Args: []byte(`{"a":"x"}`)}
	for _, c := range []struct {
		tool   *client.Tool
		reject bool
	}{
		{strict("h1", "a"), false},
		{strict("h2", "b"), true},
		{strict("h1", "a"), false},
		{strict("", "a"), false},
		{strict("", "b"), true},
		{&client.Tool{Name: "t", InputSchema: []byte(`{"type":"object"}`)}, false},
	} {
		if why := g.checkArgs(c.tool, args); (why != "") != c.reject {
			t.Errorf("hash %q schema %s: %q; want rejected: %v", c.tool.Hash, c.tool.InputSchema, why, c.reject)
		}
	}
}

// TestRepeatedKeysAreNeverSent: arguments that give a key twice are refused
// before anything is decided or sent, at any depth and however the key is
// escaped, even with NoArgsCheck: a person's form and the schema check read
// one of the values, and the server may read the other.
func TestRepeatedKeysAreNeverSent(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "flaky", trusted: true, headless: true})
	for _, args := range []string{
		`{"key":"a","value":"1","key":"b"}`,
		`{"key":"a","value":"1","k\u0065y":"b"}`,
		`{"key":"a","value":{"x":[{"p":"/tmp/x","p":"/home/u/.bashrc"}]}}`,
	} {
		for _, noCheck := range []bool{false, true} {
			r := w.gate.Call(context.Background(), Call{Server: "f", Tool: "set_value", Args: []byte(args), NoArgsCheck: noCheck})
			if r.Status != StatusDenied || r.DecidedBy != DecidedBySchema || len(r.Attempts) != 0 || !strings.Contains(r.Message(), "more than once") {
				t.Errorf("%s (NoArgsCheck %v): %s by %s after %d attempts (%s); want refused, never sent", args, noCheck, r.Status, r.DecidedBy, len(r.Attempts), r.Message())
			}
		}
	}
	if n := w.count(fixtures.EventExec, "set_value"); n != 0 {
		t.Fatalf("set_value ran %d times", n)
	}
	for _, ok := range []string{`{"a":{"k":1},"b":{"k":2}}`, `[{"k":1},{"k":2}]`, `{"k":"k"}`, `{}`, `not json`} {
		if k, found := repeatedKey([]byte(ok)); found {
			t.Errorf("%s: key %q taken as repeated", ok, k)
		}
	}
	if r := w.call("set_value", `{"key":"a","value":"1"}`); r.DecidedBy == DecidedBySchema {
		t.Errorf("each key once: refused by %s (%s)", r.DecidedBy, r.Message())
	}
}
