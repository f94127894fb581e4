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
	"github.com/mcphost/mcphost/llm"
)

// processWorld is a world whose fixture is a real subprocess (the test
// binary serving fixtures.Main's arguments args on stdio), with the given
// allow rules. The fixture's server name is "f".
func processWorld(t *testing.T, args string, trusted bool, asker Asker, mode decide.Mode, o GateOptions, allow ...string) *world {
	t.Helper()
	dir := t.TempDir()
	w := &world{t: t, audit: filepath.Join(dir, "audit.jsonl"), execLog: filepath.Join(dir, "exec.jsonl")}
	spec := client.Spec{Name: "f", Command: os.Args[0], Env: map[string]string{hostFixtureEnv: args + " --log " + w.execLog}}
	w.m = client.New([]client.Spec{spec}, client.Options{Backoff: func(int) time.Duration { return time.Millisecond }})
	t.Cleanup(func() { w.m.Close() })
	w.m.Start(context.Background())
	if st := w.m.Servers()[0]; st.State != client.StateReady {
		t.Fatalf("fixture did not start: %+v", st)
	}
	var rules []decide.RuleSpec
	for i, a := range allow {
		raw, _ := json.Marshal(a)
		rules = append(rules, decide.RuleSpec{Effect: decide.Allow, Source: "test", Index: i, Raw: raw})
	}
	auto, err := decide.ParseAutoApprove("") // the default
	if err != nil {
		t.Fatal(err)
	}
	p, err := decide.Compile(rules, decide.Options{AutoApprove: auto})
	if err != nil {
		t.Fatal(err)
	}
	l, err := audit.Open(w.audit, audit.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	o.Catalog, o.Policy, o.Asker, o.Mode, o.Audit = w.m, p, asker, mode, l
	o.Trusted = func(string) bool { return trusted }
	o.Backoff = func(int) time.Duration { return time.Millisecond }
	o.CallOptions = client.CallOptions{Timeout: 10 * time.Second}
	w.gate = NewGate(o)
	return w
}

// A gate restored with a resumed session's taint decides as the tainted
// gate did: the open-world call an allow rule lets through in a clean
// session needs a person, with the reason tainted-session.
func TestRestoredTaintStillAsks(t *testing.T) {
	clean := processWorld(t, "tasks", true, nil, decide.Headless, GateOptions{}, "f/read_context")
	if r := clean.call("read_context", `{"ref":"drive:1"}`); r.Status == StatusBlocked {
		t.Fatalf("in a clean session the allowed call is %s (%v)", r.Status, r.Decision.Reasons)
	}
	w := processWorld(t, "tasks", true, nil, decide.Headless, GateOptions{Taint: Taint{OpenWorld: true, PrivateRead: true}}, "f/read_context")
	if open, priv := w.gate.Taint(); !open || !priv {
		t.Fatalf("the restored gate's taint is %v/%v, want both", open, priv)
	}
	r := w.call("read_context", `{"ref":"drive:1"}`)
	if r.Status != StatusBlocked || !r.Decision.Has(decide.CodeTaintedSession) {
		t.Errorf("in the resumed tainted session the open-world call is %s with %v, want blocked for tainted-session", r.Status, r.Decision.Reasons)
	}
	// Restoring never clears.
	w.gate.RestoreTaint(Taint{})
	if open, priv := w.gate.Taint(); !open || !priv {
		t.Errorf("restoring a clean state cleared the taint: %v/%v", open, priv)
	}
}

// An open-world call that returns a tool error still brings outside
// content into the session: it counts toward taint, and each growth of the
// taint is reported (to be saved with the session) before the call returns.
func TestToolErrorFromOpenWorldTaints(t *testing.T) {
	var mu sync.Mutex
	var seen []Taint
	o := GateOptions{OnTaint: func(t Taint) { mu.Lock(); seen = append(seen, t); mu.Unlock() }}
	w := processWorld(t, "tasks", true, nil, decide.Headless, o, "f/read_context")
	if r := w.call("get_task", `{"id":"T-1"}`); r.Status != StatusSuccess {
		t.Fatalf("get_task: %s %v %v", r.Status, r.Decision.Reasons, r.Err)
	}
	if r := w.call("read_context", `{"ref":"nowhere"}`); r.Status != StatusToolError {
		t.Fatalf("read_context of nothing: %s, want a tool error", r.Status)
	}
	if open, priv := w.gate.Taint(); !open || !priv {
		t.Errorf("after a private read and an open-world tool error the taint is %v/%v, want both", open, priv)
	}
	mu.Lock()
	got := append([]Taint(nil), seen...)
	mu.Unlock()
	want := []Taint{{PrivateRead: true}, {OpenWorld: true, PrivateRead: true}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("OnTaint saw %+v, want %+v", got, want)
	}
	if r := w.call("read_context", `{"ref":"drive:1"}`); r.Status != StatusBlocked || !r.Decision.Has(decide.CodeTaintedSession) {
		t.Errorf("after the taint the allowed open-world call is %s with %v, want blocked for tainted-session", r.Status, r.Decision.Reasons)
	}
}

// The record of unknown outcomes is mcphost's, per call: a later call that
// the model gives the same id does not clear an earlier unknown outcome,
// and a loop resumed from the history knows it again (LoopOptions.Past).
func TestUnknownOutcomeKeptPerCallAndAfterResume(t *testing.T) {
	w := processWorld(t, "flaky --fail-first 3", true, nil, decide.Headless, GateOptions{})
	args := json.RawMessage(`{"key":"k"}`)
	l, _ := recordedLoop(w, []llm.ScriptTurn{
		{ToolCalls: []llm.ScriptCall{{ID: "dup", Name: "f__read_value", Args: args}}},
		{ToolCalls: []llm.ScriptCall{{ID: "dup", Name: "f__read_value", Args: args}}},
		{Text: "Read it."},
	}, LoopOptions{Summarizer: &summarizer{}})
	// Long enough that a summary shrinks it.
	out, err := l.Run(context.Background(), "read k"+strings.Repeat(", and mind the details", 40))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Calls) != 2 || out.Calls[0].Status != StatusUnknown || out.Calls[1].Status != StatusSuccess {
		t.Fatalf("calls %+v %+v, want the first unknown and the second a success", out.Calls[0], out.Calls[len(out.Calls)-1])
	}
	if out.Calls[0].CallID == "" || out.Calls[0].CallID == out.Calls[1].CallID {
		t.Fatalf("mcphost's call ids %q and %q, want two different ones", out.Calls[0].CallID, out.Calls[1].CallID)
	}
	history := append([]llm.Message(nil), l.messages...)
	c, err := l.Compact(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c.Unknown != 1 {
		t.Errorf("the summary named %d unknown outcomes, want 1: the later call with the same id cleared it", c.Unknown)
	}

	resumed := NewLoop(LoopOptions{Model: llm.NewScript(nil), Gate: w.gate, Tools: w.m.Tools(), Summarizer: &summarizer{},
		History: history, Past: out.Calls})
	c, err = resumed.Compact(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c.Unknown != 1 || !strings.Contains(resumed.messages[0].Text, "⟦f/read_value⟧ (call dup)") {
		t.Errorf("after a resume the summary named %d unknown outcomes, want 1:\n%s", c.Unknown, resumed.messages[0].Text)
	}
}

// A call with an unknown outcome keeps its result whole through
// compaction, however large it is (here a result carrying the arguments
// the person edited), so that the model can still see what may have run.
func TestUnknownOutcomeResultIsNeverElided(t *testing.T) {
	big := json.RawMessage(`{"key":"` + strings.Repeat("k", 2000) + `"}`)
	asker := NewScriptAsker(t,
		ScriptedAnswer{Tool: "f/read_value", Answer: Answer{Approve: true, Args: big}},
		ScriptedAnswer{Tool: "f/read_value", Answer: Answer{Approve: true, Scope: decide.ScopeOnce}},
		ScriptedAnswer{Tool: "f/read_value", Answer: Answer{Approve: true, Scope: decide.ScopeOnce}},
	)
	w := processWorld(t, "flaky --fail-first 1", false, asker, decide.Interactive, GateOptions{})
	l, _ := recordedLoop(w, []llm.ScriptTurn{
		{ToolCalls: []llm.ScriptCall{{ID: "a", Name: "f__read_value", Args: json.RawMessage(`{"key":"k"}`)}}},
		{ToolCalls: []llm.ScriptCall{{ID: "b", Name: "f__read_value", Args: json.RawMessage(`{"key":"k"}`)}}},
		{Text: "Done."},
	}, LoopOptions{Summarizer: &summarizer{}})
	out, err := l.Run(context.Background(), "read")
	if err != nil {
		t.Fatal(err)
	}
	if out.Calls[0].Status != StatusUnknown {
		t.Fatalf("the first call is %s, want unknown", out.Calls[0].Status)
	}
	first := l.messages[2].ToolResults[0].Content
	if len(first) < elideMin {
		t.Fatalf("the unknown call's result is %d bytes, under the %d an elision needs; the test proves nothing", len(first), elideMin)
	}
	c, err := l.Compact(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c.Elided != 0 {
		t.Errorf("compaction elided %d result(s); the unknown outcome's must stay whole", c.Elided)
	}
}

// Calls saved before they had mcphost's ids are each remembered on a
// resume: two unknown outcomes are two.
func TestPastCallsWithoutIDsKeptApart(t *testing.T) {
	history := []llm.Message{
		// Long enough that a summary shrinks it.
		{Role: llm.RoleUser, Text: "go" + strings.Repeat(", and mind the details", 40)},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "a", Name: "f__w"}, {ID: "b", Name: "f__w"}}},
		{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "a", Content: "unknown"}, {CallID: "b", Content: "unknown"}}},
		{Role: llm.RoleAssistant, Text: "Both unknown."},
		{Role: llm.RoleUser, Text: "and?"},
	}
	past := []*CallEntry{
		{ID: "a", Server: "f", Tool: "w", Status: StatusUnknown},
		{ID: "b", Server: "f", Tool: "w", Status: StatusUnknown},
	}
	l := NewLoop(LoopOptions{Model: llm.NewScript(nil), Summarizer: &summarizer{}, History: history, Past: past})
	c, err := l.Compact(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c.Unknown != 2 {
		t.Errorf("the summary named %d unknown outcomes of the resumed history, want 2", c.Unknown)
	}
}
