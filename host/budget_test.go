package host

import (
	"context"
	"encoding/json"
	"path/filepath"
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

// A typical session's calls, by what a person would want asked about them.
const (
	catRead        = "trusted read"
	catAdditive    = "additive write"
	catIdempotent  = "idempotent write"
	catOpenWorld   = "open-world"
	catTainted     = "open-world, tainted session"
	catDestructive = "destructive"
	catUnannotated = "unannotated"
	catChanged     = "changed definition"
)

// mustAsk are the categories in which every call must reach a person.
var mustAsk = []string{catDestructive, catUnannotated, catChanged, catTainted}

type plannedCall struct {
	cat, server, tool, args string
}

// typicalSession is 200 calls: mostly trusted reads, some additive and
// idempotent writes, a few destructive, open-world and unannotated calls,
// one call to a tool whose definition changed, and one open-world call
// after the session took in both private data and outside content.
func typicalSession() []plannedCall {
	var plan []plannedCall
	add := func(n int, cat, server, tool, args string) {
		for range n {
			plan = append(plan, plannedCall{cat, server, tool, args})
		}
	}
	add(1, catOpenWorld, "tasks", "search_context", `{"query":"launch"}`) // approved for the session
	reads := []struct{ tool, args string }{
		{"list_tasks", `{}`}, {"get_task", `{"id":"T-1"}`}, {"get_digest", `{}`},
		{"fleet_status", `{}`}, {"context_bootstrap", `{}`}, {"snapshot_generate", `{}`},
	}
	for i := range 157 {
		r := reads[i%len(reads)]
		add(1, catRead, "tasks", r.tool, r.args)
		switch i {
		case 20, 60, 100:
			add(1, catDestructive, "tasks", "update_task", `{"id":"T-2","title":"renamed"}`)
		case 40, 80:
			add(1, catDestructive, "tasks", "delete_last_comment", `{"id":"T-1"}`)
		case 30, 90, 130:
			add(1, catUnannotated, "bare", "list_tasks", `{}`)
		case 50:
			add(1, catChanged, "hostile", "fetch_notes", `{}`)
		case 70:
			add(1, catTainted, "tasks", "search_context", `{"query":"retro"}`) // the grant no longer counts
		case 110:
			add(1, catOpenWorld, "tasks", "save_context", `{"app":"drive","title":"notes","body":"b"}`)
		}
	}
	for i := range 16 {
		if i%2 == 0 {
			add(1, catAdditive, "tasks", "create_task", `{"title":"t"}`)
		} else {
			add(1, catAdditive, "tasks", "comment_on_task", `{"id":"T-1","body":"c"}`)
		}
	}
	for i := range 15 {
		tools := []struct{ tool, args string }{
			{"set_step_status", `{"id":"T-1","step":"T-1.1","status":"done"}`},
			{"block_task", `{"id":"T-4","reason":"waiting"}`},
			{"task_start", `{"id":"T-1"}`},
		}
		c := tools[i%len(tools)]
		add(1, catIdempotent, "tasks", c.tool, c.args)
	}
	return plan
}

// budgetAsker approves everything, open-world reads for the session and the
// rest once, and notes which planned call each question was about.
type budgetAsker struct {
	mu      sync.Mutex
	current int
	asked   map[int]bool
	tainted map[int]bool // the question said the session is tainted
}

func (a *budgetAsker) Ask(_ context.Context, q *Question) (Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked[a.current] = true
	a.tainted[a.current] = q.Decision.Has(decide.CodeTaintedSession)
	scope := decide.ScopeOnce
	if q.Decision.Class == decide.Read && q.Decision.Effective.OpenWorld == decide.True && !q.Decision.Has(decide.CodeTaintedSession) {
		scope = decide.ScopeSession
	}
	return Answer{Approve: true, Scope: scope}, nil
}

type budgetReport struct {
	calls, prompts int
	byCat          map[string][2]int // calls, prompts
	taintNoted     int               // tainted-category calls whose question said why
}

// runTypicalSession replays the plan through the model loop with a
// scripted model.
func runTypicalSession(tb testing.TB) budgetReport {
	plan := typicalSession()
	dial := func(name string) func(ctx context.Context) (mcp.Transport, error) {
		return func(ctx context.Context) (mcp.Transport, error) {
			f, err := fixtures.New(name, fixtures.Options{})
			if err != nil {
				return nil, err
			}
			return f.InMemory(ctx)
		}
	}
	m := client.New([]client.Spec{
		{Name: "tasks", Dial: dial("tasks")},
		{Name: "bare", Dial: dial("bare")},
		{Name: "hostile", Dial: dial("hostile")},
	}, client.Options{RelistInterval: time.Millisecond})
	defer m.Close()
	events, unsub := m.Subscribe()
	defer unsub()
	m.Start(context.Background())
	log, err := audit.Open(filepath.Join(tb.TempDir(), "audit.jsonl"), audit.Options{NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	defer log.Close()
	policy, err := decide.Compile(nil, decide.Options{AutoApprove: decide.ApproveAdditive})
	if err != nil {
		tb.Fatal(err)
	}
	asker := &budgetAsker{asked: map[int]bool{}, tainted: map[int]bool{}}
	trusted := map[string]bool{"tasks": true, "hostile": true}
	gate := NewGate(GateOptions{Catalog: m, Policy: policy, Trusted: func(s string) bool { return trusted[s] },
		Asker: asker, Mode: decide.Interactive, Audit: log})

	// The person saw fetch_notes before its server changed it.
	deadline := time.After(20 * time.Second)
	for {
		if ch, ok := m.LastChange("hostile", "fetch_notes"); ok {
			spec, _ := m.Spec("hostile")
			gate.o.Pins.Set(spec.Identity(), &client.Tool{Name: "fetch_notes", Hash: ch.OldHash}, false)
			break
		}
		select {
		case <-events:
		case <-deadline:
			tb.Fatal("hostile never changed fetch_notes")
		}
	}

	tools := m.Tools()
	names := client.BuildNames(tools)
	var turns []llm.ScriptTurn
	for _, p := range plan {
		t, ok := m.Tool(p.server, p.tool)
		if !ok {
			tb.Fatalf("no tool %s/%s", p.server, p.tool)
		}
		turns = append(turns, llm.ScriptTurn{ToolCalls: []llm.ScriptCall{{Name: names.Model(t), Args: json.RawMessage(p.args)}}})
	}
	turns = append(turns, llm.ScriptTurn{Text: "done"})
	n := -1
	loop := NewLoop(LoopOptions{Model: llm.NewScript(turns), Gate: gate, Tools: tools, Names: names, MaxSteps: len(turns) + 1,
		OnEvent: func(e LoopEvent) {
			if e.Kind == EvToolCall {
				n++
				asker.mu.Lock()
				asker.current = n
				asker.mu.Unlock()
			}
		}})
	if _, err := loop.Run(context.Background(), "work through the day"); err != nil {
		tb.Fatal(err)
	}
	rep := budgetReport{calls: len(plan), byCat: map[string][2]int{}}
	for i, p := range plan {
		c := rep.byCat[p.cat]
		c[0]++
		if asker.asked[i] {
			c[1]++
			rep.prompts++
		}
		if p.cat == catTainted && asker.tainted[i] {
			rep.taintNoted++
		}
		rep.byCat[p.cat] = c
	}
	return rep
}

// TestPromptBudget: in a typical session every destructive, unannotated,
// changed-definition and tainted open-world call reaches a person, and the
// person is asked about few calls overall (the rate is a benchmark figure,
// see BenchmarkPromptBudget).
func TestPromptBudget(t *testing.T) {
	rep := runTypicalSession(t)
	t.Logf("calls %d, prompts %d, prompt rate %.1f%%", rep.calls, rep.prompts, 100*float64(rep.prompts)/float64(rep.calls))
	for _, cat := range []string{catRead, catAdditive, catIdempotent, catOpenWorld, catTainted, catDestructive, catUnannotated, catChanged} {
		c := rep.byCat[cat]
		t.Logf("  %-28s %3d calls, %3d prompted", cat, c[0], c[1])
	}
	for _, cat := range mustAsk {
		if c := rep.byCat[cat]; c[0] == 0 || c[0] != c[1] {
			t.Errorf("%s: %d of %d calls prompted, want all", cat, c[1], c[0])
		}
	}
	if c := rep.byCat[catTainted]; rep.taintNoted != c[0] {
		t.Errorf("%d of %d tainted open-world calls were asked about because of the taint; the session grant must not count", rep.taintNoted, c[0])
	}
	for _, cat := range []string{catRead, catAdditive, catIdempotent} {
		if c := rep.byCat[cat]; c[1] != 0 {
			t.Errorf("%s: prompted %d times, want none", cat, c[1])
		}
	}
	// Every prompt is one a person would want: the must-ask categories and
	// the two open-world calls (one approved for the session), nothing else,
	// so the rate is what the plan makes it.
	want := rep.byCat[catOpenWorld][0]
	for _, cat := range mustAsk {
		want += rep.byCat[cat][0]
	}
	if rep.prompts != want || 100*rep.prompts > 6*rep.calls {
		t.Errorf("%d prompts in %d calls, want exactly %d and a rate of at most 6%%", rep.prompts, rep.calls, want)
	}
}

func BenchmarkPromptBudget(b *testing.B) {
	var rep budgetReport
	for b.Loop() {
		rep = runTypicalSession(b)
	}
	b.ReportMetric(100*float64(rep.prompts)/float64(rep.calls), "prompt-%")
	b.ReportMetric(float64(rep.calls), "calls")
}
