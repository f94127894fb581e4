package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/llm"
)

// summarizer answers every request with the same summary.
type summarizer struct{ asked int }

func (s *summarizer) Name() string { return "script:summary" }

func (s *summarizer) Stream(ctx context.Context, req *llm.Request, emit func(llm.Event)) error {
	s.asked++
	emit(llm.Event{Kind: llm.EventTextDelta, Text: "The person asked about a task many times; it has a long title."})
	emit(llm.Event{Kind: llm.EventUsage})
	emit(llm.Event{Kind: llm.EventDone, StopReason: llm.StopEndTurn})
	return nil
}

// A 300-turn session whose every second turn reads a 20 KB result stays
// under a 32k window: old results are elided, older turns summarised, and
// each compaction is reported.
func TestCompactionLongSessionStaysUnderTheWindow(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "tasks", trusted: true, headless: true})
	title := "Long " + strings.Repeat("abcdefghij", 2000)
	created := w.call("create_task", fmt.Sprintf(`{"title":%q}`, title))
	if created.Status != StatusSuccess {
		t.Fatalf("create_task: %s %s", created.Status, created.Message())
	}
	id := "T-5"
	if !strings.Contains(ResultText(created.Result), id) {
		t.Fatalf("the new task is not %s: %s", id, ResultText(created.Result)[:200])
	}
	const runs = 150 // two model turns each
	var turns []llm.ScriptTurn
	for range runs {
		turns = append(turns,
			llm.ScriptTurn{ToolCalls: []llm.ScriptCall{call("f__get_task", `{"id":"`+id+`"}`)}},
			llm.ScriptTurn{ExpectResult: &llm.ResultExpectation{Contains: "abcdefghij"}, Text: "It has a long title. " + strings.Repeat("Noted. ", 40)})
	}
	var compactions []*Compaction
	sum := &summarizer{}
	l, rec := recordedLoop(w, turns, LoopOptions{ContextWindow: 32000, Summarizer: sum, OnEvent: func(e LoopEvent) {
		if e.Kind == EvCompaction {
			compactions = append(compactions, e.Compaction)
		}
	}})
	for i := range runs {
		if _, err := l.Run(context.Background(), fmt.Sprintf("Question %d: what is the title of %s? %s", i, id, strings.Repeat("Please be thorough. ", 20))); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
	}
	if len(rec.reqs) != 2*runs {
		t.Fatalf("%d model turns, want %d", len(rec.reqs), 2*runs)
	}
	markers := 0
	for i, r := range rec.reqs {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if tokens := len(b) / 4; tokens > 32000 {
			t.Fatalf("request %d is about %d tokens, past the 32k window", i+1, tokens)
		}
		markers += strings.Count(string(b), "[mcphost: removed the output of ⟦f/get_task⟧")
	}
	if markers == 0 {
		t.Error("no request carried a marker in place of an old result")
	}
	var elided, summarised, named int
	ids := map[string]bool{}
	for _, e := range l.Transcript {
		if e.Call != nil {
			ids[e.Call.CallID] = true
		}
	}
	for _, c := range compactions {
		elided += c.Elided
		summarised += c.Summarised
		if c.After >= c.Before {
			t.Errorf("a compaction did not shrink the request: %+v", c)
		}
		if len(c.ElidedCalls) != c.Elided {
			t.Errorf("a compaction elided %d results and named %d calls: %v", c.Elided, len(c.ElidedCalls), c.ElidedCalls)
		}
		for _, id := range append(c.ElidedCalls, c.SummarisedCalls...) {
			if !ids[id] {
				t.Fatalf("a compaction names %q, not a call of the run (mcphost's ids)", id)
			}
		}
		named += len(c.SummarisedCalls)
	}
	if summarised > 0 && named == 0 {
		t.Error("the summaries replaced results and named no call")
	}
	if elided == 0 || summarised == 0 || sum.asked == 0 {
		t.Errorf("compactions %d: %d results elided, %d messages summarised, %d summaries asked; want both kinds", len(compactions), elided, summarised, sum.asked)
	}
	n := 0
	for _, e := range l.Transcript {
		if e.Role == "compaction" && e.Compaction != nil {
			n++
		}
	}
	if n != len(compactions) {
		t.Errorf("%d compaction entries on the transcript, %d events", n, len(compactions))
	}
	t.Logf("%d turns, %d compactions, %d results elided, %d messages summarised in %d summaries", len(rec.reqs), len(compactions), elided, summarised, sum.asked)
}

// After a compaction the model is told again which calls have an unknown
// outcome.
func TestCompactionKeepsUnknownOutcomes(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "flaky", trusted: true, headless: true, fopts: fixtures.Options{FailFirst: 10, FailWith: fixtures.FailRPC}})
	var events []LoopEvent
	l, rec := recordedLoop(w, []llm.ScriptTurn{
		{ToolCalls: []llm.ScriptCall{call("f__read_value", `{"key":"k"}`)}},
		{Text: "I do not know."},
		{Text: "Fine."},
		{Text: "After."},
	}, LoopOptions{Summarizer: &summarizer{}, OnEvent: func(e LoopEvent) { events = append(events, e) }})
	// A long first prompt, so that a summary shrinks what it replaces.
	out, err := l.Run(context.Background(), "read k"+strings.Repeat(", and mind the details", 40))
	if err != nil {
		t.Fatal(err)
	}
	if out.Calls[0].Status != StatusUnknown {
		t.Fatalf("the call is %s, want unknown", out.Calls[0].Status)
	}
	if _, err := l.Run(context.Background(), "ok"); err != nil {
		t.Fatal(err)
	}
	c, err := l.Compact(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c.Summarised == 0 || c.Unknown != 1 {
		t.Fatalf("compaction %+v, want a summary that names one unknown outcome", c)
	}
	if _, err := l.Run(context.Background(), "and now?"); err != nil {
		t.Fatal(err)
	}
	first := rec.reqs[len(rec.reqs)-1].Messages[0].Text
	if !strings.Contains(first, "outcome of these calls is unknown") || !strings.Contains(first, "⟦f/read_value⟧ (call call_1_1)") {
		t.Errorf("after the compaction the model was not told of the unknown outcome:\n%s", first)
	}
	seen := false
	for _, e := range events {
		seen = seen || (e.Kind == EvCompaction && e.Compaction == c)
	}
	if !seen {
		t.Error("no compaction event")
	}
}

// The gate's taint is not part of the history: a compaction leaves it, and
// the decisions it drives, as they were.
func TestTaintSurvivesCompaction(t *testing.T) {
	allow := decide.RuleSpec{Effect: decide.Allow, Source: "test", Raw: json.RawMessage(`"f/search_context"`)}
	w := newWorld(t, worldOpts{fixture: "tasks", trusted: true, headless: true, rules: []decide.RuleSpec{allow}})
	l, _ := recordedLoop(w, []llm.ScriptTurn{
		{ToolCalls: []llm.ScriptCall{call("f__search_context", `{"query":"plans"}`), call("f__get_task", `{"id":"T-1"}`)}},
		{Text: "Read both."},
		{Text: "Yes."},
	}, LoopOptions{Summarizer: &summarizer{}})
	if _, err := l.Run(context.Background(), "read"+strings.Repeat(", and mind the details", 40)); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Run(context.Background(), "more"); err != nil {
		t.Fatal(err)
	}
	open, priv := w.gate.Taint()
	before, err := w.gate.Explain("f", "save_context", json.RawMessage(`{"app":"drive","title":"x","body":"y"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !open || !priv {
		t.Fatalf("taint before the compaction: open %v, private %v; want both", open, priv)
	}
	if c, err := l.Compact(context.Background()); err != nil || c.Summarised == 0 {
		t.Fatalf("compact: %+v, %v", c, err)
	}
	o2, p2 := w.gate.Taint()
	after, _ := w.gate.Explain("f", "save_context", json.RawMessage(`{"app":"drive","title":"x","body":"y"}`))
	if o2 != open || p2 != priv || after.Verdict != before.Verdict || after.Tier != before.Tier {
		t.Errorf("after the compaction taint %v/%v and %s tier %d; before %v/%v and %s tier %d", o2, p2, after.Verdict, after.Tier, open, priv, before.Verdict, before.Tier)
	}
}

// A request that cannot fit even after compaction is refused before it is
// sent, with an error that says what to do.
func TestContextFullIsAClearError(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "tasks", trusted: true, headless: true})
	l, rec := recordedLoop(w, []llm.ScriptTurn{{Text: "never"}}, LoopOptions{ContextWindow: 500, ToolSearch: SearchNever, Summarizer: &summarizer{}})
	out, err := l.Run(context.Background(), "hello")
	if !errors.Is(err, ErrContextFull) || out.Status != "context-full" {
		t.Fatalf("got %v, status %q; want ErrContextFull", err, out.Status)
	}
	if !strings.Contains(err.Error(), "contextWindow") || len(rec.reqs) != 0 {
		t.Errorf("error %q after %d requests; want advice and nothing sent", err, len(rec.reqs))
	}
}

// wordySummarizer answers every summary request with its text.
type wordySummarizer struct{ text string }

func (s *wordySummarizer) Name() string { return "script:wordy" }

func (s *wordySummarizer) Stream(ctx context.Context, req *llm.Request, emit func(llm.Event)) error {
	emit(llm.Event{Kind: llm.EventTextDelta, Text: s.text})
	emit(llm.Event{Kind: llm.EventDone, StopReason: llm.StopEndTurn})
	return nil
}

// countingSummarizer answers every summary request with its text, and
// counts them.
type countingSummarizer struct {
	wordySummarizer
	n int
}

func (s *countingSummarizer) Stream(ctx context.Context, req *llm.Request, emit func(llm.Event)) error {
	s.n++
	return s.wordySummarizer.Stream(ctx, req, emit)
}

// After the model's summary was refused (it did not shrink the history),
// the turns that follow do not each pay for another one: it is asked for
// again only once the request has grown by summaryRetry of the window.
func TestARefusedSummaryIsNotAskedForEveryTurn(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "tasks", trusted: true, headless: true})
	sum := &countingSummarizer{wordySummarizer: wordySummarizer{text: strings.Repeat("a long-winded summary ", 2000)}}
	const n = 17 // the first refusal comes at about turn 12, past 80%; 17 stays under 95%
	turns := make([]llm.ScriptTurn, n)
	for i := range turns {
		turns[i] = llm.ScriptTurn{Text: "ok"}
	}
	const window = 4000 // tokens: the prompts below pass compactShare of it after a few turns
	l, _ := recordedLoop(w, turns, LoopOptions{ContextWindow: window, ToolSearch: SearchNever, Summarizer: sum})
	prompt := strings.Repeat("p", window*bytesPerToken/40) // 2.5% of the window each
	for i := range n {
		if _, err := l.Run(context.Background(), fmt.Sprint(i, prompt)); err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
	}
	if l.summaryRefused == 0 {
		t.Fatal("no summary was refused: the test did not reach compaction")
	}
	// From the first refusal (past 80%) five more turns of 2.5% each grow
	// the request by about 12% of the window: two summary requests at
	// most, where asking every turn past 80% would make six.
	if sum.n > 2 {
		t.Fatalf("%d summary requests over %d turns; want each refusal to hold until the request grows by %d%% of the window", sum.n, n, summaryRetry)
	}
}

// A summary that is not smaller than what it would replace is refused: the
// history is kept as it was, and the error says so.
func TestCompactionRefusesASummaryThatDoesNotShrink(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "tasks", trusted: true, headless: true})
	var warnings []string
	l, rec := recordedLoop(w, []llm.ScriptTurn{{Text: "Hello."}, {Text: "Sure."}, {Text: "Still here."}},
		LoopOptions{Summarizer: &wordySummarizer{text: strings.Repeat("a long-winded summary ", 500)}, OnEvent: func(e LoopEvent) {
			if e.Kind == EvWarning {
				warnings = append(warnings, e.Text)
			}
		}})
	for _, p := range []string{"first prompt", "second prompt"} {
		if _, err := l.Run(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	c, err := l.Compact(context.Background())
	if err != nil || c.Summarised != 0 {
		t.Fatalf("compact: %+v, %v; want no summary and no error while the request fits", c, err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "not smaller") || !strings.Contains(warnings[0], "history is kept") {
		t.Fatalf("warnings %q, want one saying the summary does not shrink the history", warnings)
	}
	if _, err := l.Run(context.Background(), "third prompt"); err != nil {
		t.Fatal(err)
	}
	if first := rec.reqs[len(rec.reqs)-1].Messages[0].Text; first != "first prompt" {
		t.Errorf("after the refused summary the history begins %q, want the first prompt", first)
	}
}
