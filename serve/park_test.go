package serve

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/audit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// label returns a label for askerServer calls that no other run of a test
// used (askerRuns counts across -count runs).
func label(name string) string { return name + "-" + rand.Text()[:10] }

// who is a client's answer to an askerServer's question.
func who(name string) *mcp.ElicitResult {
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"who": name}}
}

// relayedKey checks that res is one question of server ask1 relayed as an
// input request, its words marked as the server's, and returns its key.
func relayedKey(t *testing.T, res *mcp.CallToolResult, words string) string {
	t.Helper()
	if !res.NeedsInput() || len(res.InputRequests) != 1 || res.RequestState == "" {
		t.Fatalf("got %+v (%s), want the server's question as one input request with a request state", res, text(res))
	}
	for key, req := range res.InputRequests {
		p, ok := req.(*mcp.ElicitParams)
		if !ok || !strings.HasPrefix(p.Message, "The server ask1 asks (its words") || !strings.Contains(p.Message, words) {
			t.Fatalf("input request %q is %#v, want the server's question %q marked as its words", key, req, words)
		}
		return key
	}
	return ""
}

// successes counts the successful outcomes of tool in the audit log.
func (w *world) successes(tool string) int {
	w.t.Helper()
	n := 0
	for _, r := range w.outcomes(tool) {
		if r.Status == audit.StatusSuccess {
			n++
		}
	}
	return n
}

// A 2026-07-28 client cannot be sent the server's question, so it gets it
// as an input-required result and its retry's answer reaches the server,
// round after round, and the call's result the client; the call runs once.
func TestAServersQuestionReachesANewProtocolClientAsInputRequired(t *testing.T) {
	for _, overHTTP := range []bool{false, true} {
		t.Run(map[bool]string{false: "in-memory", true: "http"}[overHTTP], func(t *testing.T) {
			w := newWorld(t, worldOpts{serverQuestions: true, askers: true})
			var url []string
			if overHTTP {
				ts := httptest.NewServer(w.srv.Handler("tok"))
				t.Cleanup(ts.Close)
				url = append(url, ts.URL)
			}
			a := newAnswerer("alice")
			a.version = "2026-07-28"
			cs := a.connect(t, w, url...)
			if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
				t.Fatalf("negotiated %q, want 2026-07-28", v)
			}
			lb := label("rounds")
			got, err := callText(cs, "ask1__ask", `{"rounds":3,"label":"`+lb+`"}`)
			if err != nil || got != "accept alice, accept alice, accept alice" {
				t.Fatalf("ask in three rounds: %q %v, want alice's three answers", got, err)
			}
			asked := a.asked()
			if len(asked) != 3 || !strings.Contains(asked[0], "The server ask1 asks") || !strings.Contains(asked[2], "round 3") {
				t.Fatalf("alice was asked %q, want ask1's three questions marked as its words", asked)
			}
			if n := askerRan(lb); n != 1 {
				t.Fatalf("the call ran %d times across its rounds, want once", n)
			}
			if got, err := callText(cs, "sampler__summarize", `{}`); err != nil || got != "sampled by alice" {
				t.Fatalf("sampling: %q %v, want the client's own completion", got, err)
			}
		})
	}
}

// A call the gate asks about and whose server asks too: the gate's round,
// then the server's, each with its own state; a state of one kind answers
// nothing of the other, a round's answer counts once, and the call runs
// once.
func TestAParkedCallRunsOnceAcrossRounds(t *testing.T) {
	w := newWorld(t, worldOpts{serverQuestions: true, askers: true})
	c := w.connectWith(&elicitor{}, connOpts{byHand: true})
	once := label("once")
	args := map[string]any{"label": once, "rounds": 2}
	call := func(responses mcp.InputResponseMap, state string) *mcp.CallToolResult {
		return callArgs(t, c.cs, &mcp.CallToolParams{Name: "ask1__ask_write", Arguments: args, InputResponses: responses, RequestState: state})
	}
	approve := call(nil, "")
	if !approve.NeedsInput() || approve.InputRequests[approvalInput] == nil {
		t.Fatalf("first round %+v, want mcphost's own question", approve)
	}
	r1 := call(mcp.InputResponseMap{approvalInput: accept(DecisionAllowOnce, "")}, approve.RequestState)
	q1 := relayedKey(t, r1, "who is there?")
	// The gate's state answers no question of the server's.
	if res := call(mcp.InputResponseMap{q1: who("mallory"), approvalInput: accept(DecisionAllowOnce, "")}, approve.RequestState); !res.IsError || res.NeedsInput() {
		t.Fatalf("the approval's state again: %+v, want a refusal", res)
	}
	r2 := call(mcp.InputResponseMap{q1: who("alice")}, r1.RequestState)
	q2 := relayedKey(t, r2, "round 2")
	if r2.RequestState == r1.RequestState {
		t.Fatal("the second round has the first round's state")
	}
	if res := call(mcp.InputResponseMap{q1: who("mallory")}, r1.RequestState); !res.IsError || res.NeedsInput() {
		t.Fatalf("round 1's state again: %+v, want a refusal", res)
	}
	done := call(mcp.InputResponseMap{q2: who("bob")}, r2.RequestState)
	if done.IsError || done.NeedsInput() || text(done) != "accept alice, accept bob" {
		t.Fatalf("last round: %+v %q, want the call's result with the answers of each round", done, text(done))
	}
	for _, st := range []string{approve.RequestState, r1.RequestState, r2.RequestState} {
		res := call(mcp.InputResponseMap{q1: who("mallory"), q2: who("mallory"), approvalInput: accept(DecisionAllowOnce, "")}, st)
		if !res.IsError || res.NeedsInput() {
			t.Fatalf("a state replayed after the call ended: %+v, want a refusal", res)
		}
	}
	if n := askerRan(once); n != 1 {
		t.Fatalf("ask_write ran %d times, want once", n)
	}
	if n := w.successes("ask_write"); n != 1 {
		t.Fatalf("%d successful outcomes of ask_write in the audit log, want 1", n)
	}
}

// A state that does not unseal, that was given to another identity, or for
// other arguments resumes nothing and runs nothing; the parked call still
// waits for the answer of its own client.
func TestARelayedStateIsBoundToItsCall(t *testing.T) {
	w := newWorld(t, worldOpts{serverQuestions: true, askers: true})
	ts := httptest.NewServer(w.srv.Handler("tok"))
	t.Cleanup(ts.Close)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	h := &httpWorld{world: w, url: ts.URL, tr: tr}
	a := h.connect("new-a", &elicitor{}, connOpts{byHand: true})
	b := h.connect("new-b", &elicitor{}, connOpts{byHand: true})
	bound, other, tampered := label("bound"), label("other"), label("tampered")
	args := map[string]any{"label": bound}
	first := callArgs(t, a, &mcp.CallToolParams{Name: "ask1__ask", Arguments: args})
	key := relayedKey(t, first, "who is there?")
	yes := mcp.InputResponseMap{key: who("mallory")}
	for _, c := range []struct {
		name  string
		cs    *mcp.ClientSession
		args  map[string]any
		state string
	}{
		{"another identity", b, args, first.RequestState},
		{"other arguments", a, map[string]any{"label": other}, first.RequestState},
		{"forged state", a, args, first.RequestState[:len(first.RequestState)-2] + "xx"},
		{"tampered state", a, map[string]any{"label": tampered}, first.RequestState + "-TAMPERED"},
	} {
		res := callArgs(t, c.cs, &mcp.CallToolParams{Name: "ask1__ask", Arguments: c.args, InputResponses: yes, RequestState: c.state})
		if !res.IsError || res.NeedsInput() {
			t.Fatalf("%s: %+v, want a refusal", c.name, res)
		}
	}
	for _, lb := range []string{other, tampered} {
		if n := askerRan(lb); n != 0 {
			t.Fatalf("a call with a state of another call ran %d times", n)
		}
	}
	res := callArgs(t, a, &mcp.CallToolParams{Name: "ask1__ask", Arguments: args, InputResponses: mcp.InputResponseMap{key: who("alice")}, RequestState: first.RequestState})
	if res.IsError || text(res) != "accept alice" {
		t.Fatalf("the client's own answer: %+v %q, want accept alice", res, text(res))
	}
	if n := askerRan(bound); n != 1 {
		t.Fatalf("the call ran %d times, want once", n)
	}
}

// A parked call no client resumes within AskTimeout has its question
// declined upstream; it is recorded once, and its result goes to no one.
func TestAParkedCallNoOneResumesIsDeclined(t *testing.T) {
	w := newWorld(t, worldOpts{serverQuestions: true, askers: true, tweak: func(o *Options) { o.AskTimeout = 100 * time.Millisecond }})
	c := w.connectWith(&elicitor{}, connOpts{byHand: true})
	unanswered := label("unanswered")
	args := map[string]any{"label": unanswered}
	first := callArgs(t, c.cs, &mcp.CallToolParams{Name: "ask1__ask", Arguments: args})
	key := relayedKey(t, first, "who is there?")
	deadline := time.Now().Add(10 * time.Second)
	for w.successes("ask") == 0 { // the gate records it once the server answers
		if time.Now().After(deadline) {
			t.Fatal("the unanswered call never ended")
		}
		time.Sleep(10 * time.Millisecond) // polling the audit log, not waiting out a race
	}
	if got, _ := askerAnswered.Load(unanswered); got != "decline <nil>" {
		t.Fatalf("the server got %q, want its question declined", got)
	}
	res := callArgs(t, c.cs, &mcp.CallToolParams{Name: "ask1__ask", Arguments: args, InputResponses: mcp.InputResponseMap{key: who("alice")}, RequestState: first.RequestState})
	if !res.IsError || strings.Contains(text(res), "decline <nil>") {
		t.Fatalf("a late answer: %+v %q, want a refusal without the call's result", res, text(res))
	}
	if n, runs := w.successes("ask"), askerRan(unanswered); n != 1 || runs != 1 {
		t.Fatalf("%d outcomes and %d runs, want 1 and 1", n, runs)
	}

	// A server that asks again once no one waits is refused, not asked
	// again: its call ends without the answers it wanted.
	twice := map[string]any{"label": label("twice"), "rounds": 2}
	relayedKey(t, callArgs(t, c.cs, &mcp.CallToolParams{Name: "ask1__ask", Arguments: twice}), "who is there?")
	for len(w.outcomes("ask")) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the call asking twice never ended")
		}
		time.Sleep(10 * time.Millisecond) // polling the audit log, not waiting out a race
	}
	if n := w.successes("ask"); n != 1 {
		t.Fatalf("%d successful calls, want only the first: the second question after the wait ended was not refused", n)
	}
}

// A parked call whose request ends (the client cancels it) is cancelled
// upstream, as a call that was never parked would be: it does not keep
// running for no one.
func TestAParkedCallIsCancelledWithItsRequest(t *testing.T) {
	w := newWorld(t, worldOpts{serverQuestions: true, askers: true})
	c := w.connectWith(&elicitor{}, connOpts{byHand: true})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		// wait 2 with one caller: the server holds the call until cancelled.
		_, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask1__log", Arguments: map[string]any{"wait": 2, "label": label("cancelled")}})
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for w.srv.caller("ask1") == nil {
		if time.Now().After(deadline) {
			t.Fatal("the call never started on its server")
		}
		time.Sleep(10 * time.Millisecond) // polling for the call to start, not waiting out a race
	}
	cancel()
	<-done
	for len(w.outcomes("log")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the parked call kept running after its request was cancelled")
		}
		time.Sleep(10 * time.Millisecond) // polling the audit log, not waiting out a race
	}
	// Cancelled, not ended by the call's own timeout long after.
	if o := w.outcomes("log"); len(o) != 1 || len(o[0].Attempts) != 1 || o[0].Attempts[0].Detail != "cancelled" {
		t.Fatalf("the call ended as %+v, want one attempt, cancelled", o)
	}
}

// A client that calls the server again instead of answering has moved on:
// its earlier call's question is declined, and the new call's question
// goes to it.
func TestANewCallEndsTheWaitOfTheClientsIdleCall(t *testing.T) {
	w := newWorld(t, worldOpts{serverQuestions: true, askers: true})
	c := w.connectWith(&elicitor{}, connOpts{byHand: true})
	left, next := label("left"), label("next")
	old := callArgs(t, c.cs, &mcp.CallToolParams{Name: "ask1__ask", Arguments: map[string]any{"label": left}})
	oldKey := relayedKey(t, old, "who is there?")
	first := callArgs(t, c.cs, &mcp.CallToolParams{Name: "ask1__ask", Arguments: map[string]any{"label": next}})
	key := relayedKey(t, first, "who is there?")
	if got, _ := askerAnswered.Load(left); got != "decline <nil>" {
		t.Fatalf("the left call's server got %q, want its question declined", got)
	}
	res := callArgs(t, c.cs, &mcp.CallToolParams{Name: "ask1__ask", Arguments: map[string]any{"label": next},
		InputResponses: mcp.InputResponseMap{key: who("alice")}, RequestState: first.RequestState})
	if res.IsError || text(res) != "accept alice" {
		t.Fatalf("the new call: %+v %q, want accept alice", res, text(res))
	}
	res = callArgs(t, c.cs, &mcp.CallToolParams{Name: "ask1__ask", Arguments: map[string]any{"label": left},
		InputResponses: mcp.InputResponseMap{oldKey: who("alice")}, RequestState: old.RequestState})
	if !res.IsError {
		t.Fatalf("the left call resumed: %q", text(res))
	}
}

// A retry without an answer to the question puts it again, MaxAsks rounds
// in all, then declines it; an answer of another kind declines it at once.
func TestAMissingAnswerIsAskedAgainAndAMalformedOneDeclines(t *testing.T) {
	w := newWorld(t, worldOpts{serverQuestions: true, askers: true})
	c := w.connectWith(&elicitor{}, connOpts{byHand: true})
	for _, c2 := range []struct {
		name    string
		answers func(key string) mcp.InputResponseMap
	}{
		{"missing", func(string) mcp.InputResponseMap { return mcp.InputResponseMap{"other": who("alice")} }},
		{"malformed", func(key string) mcp.InputResponseMap {
			return mcp.InputResponseMap{key: &mcp.CreateMessageResult{Role: "assistant", Content: &mcp.TextContent{Text: "alice"}}}
		}},
	} {
		args := map[string]any{"label": label(c2.name)}
		res := callArgs(t, c.cs, &mcp.CallToolParams{Name: "ask1__ask", Arguments: args})
		rounds := 1
		for ; ; rounds++ {
			key := relayedKey(t, res, "who is there?")
			res = callArgs(t, c.cs, &mcp.CallToolParams{Name: "ask1__ask", Arguments: args, InputResponses: c2.answers(key), RequestState: res.RequestState})
			if !res.NeedsInput() {
				break
			}
		}
		// A missing answer is asked for again, MaxAsks rounds in all; a
		// malformed one is not.
		if want := map[string]int{"missing": MaxAsks, "malformed": 1}[c2.name]; rounds != want {
			t.Errorf("%s answer: the question was put %d times, want %d", c2.name, rounds, want)
		}
		if res.IsError || res.NeedsInput() || text(res) != "decline <nil>" {
			t.Fatalf("%s answer: %+v %q, want the question declined and the call complete", c2.name, res, text(res))
		}
	}
}

// A client that did not declare elicitation is not relayed the question:
// the headless rule declines it and the call completes in one round.
func TestAQuestionTheClientCannotAnswerIsDeclined(t *testing.T) {
	w := newWorld(t, worldOpts{serverQuestions: true, askers: true})
	c := w.connectWith(nil, connOpts{byHand: true})
	res := callArgs(t, c.cs, &mcp.CallToolParams{Name: "ask1__ask", Arguments: map[string]any{"label": "nocap"}})
	if res.IsError || res.NeedsInput() || text(res) != "decline <nil>" {
		t.Fatalf("%+v %q, want the question declined and the call complete", res, text(res))
	}
}

// Parked calls are bounded per client and in all.
func TestParkedCallsAreBounded(t *testing.T) {
	w := newWorld(t, worldOpts{askers: true, only: "ask1"})
	e := &export{server: "ask1", tool: "ask"}
	one, two := &session{client: &audit.Client{Session: "one"}}, &session{client: &audit.Client{Session: "two"}}
	var all []*parked
	for range MaxParkedPerClient {
		p := w.srv.park(one, e, []byte(`{}`), nil)
		if p == nil {
			t.Fatal("a call within the bound was not parked")
		}
		all = append(all, p)
	}
	if w.srv.park(one, e, []byte(`{}`), nil) != nil {
		t.Fatalf("more than %d calls of one client parked", MaxParkedPerClient)
	}
	p := w.srv.park(two, e, []byte(`{}`), nil)
	if p == nil {
		t.Fatal("another client's call was not parked")
	}
	all[0].abandon()
	if w.srv.park(one, e, []byte(`{}`), nil) == nil {
		t.Fatal("a call was not parked after one of the client's ended")
	}
	for i := 0; len(w.srv.parked) < MaxParked; i++ {
		if w.srv.park(&session{client: &audit.Client{Session: fmt.Sprint(i)}}, e, []byte(`{}`), nil) == nil {
			t.Fatal("a call within the bound in all was not parked")
		}
	}
	if w.srv.park(&session{client: &audit.Client{Session: "last"}}, e, []byte(`{}`), nil) != nil {
		t.Fatalf("more than %d calls parked in all", MaxParked)
	}
}

// A question the server asks during a forwarded prompts/get is not taken
// for the one call parked on that server: two requests are in flight
// there, so the headless rule answers it, and the parked call still waits
// for its own answer.
func TestAQuestionDuringAPromptIsNotTakenForTheParkedCall(t *testing.T) {
	w := newWorld(t, worldOpts{serverQuestions: true, askers: true, only: "ask1"})
	c := w.connectWith(&elicitor{}, connOpts{byHand: true})
	ctx := context.Background()
	deadline := time.After(10 * time.Second)
	for listed := false; !listed; {
		ps, err := c.cs.ListPrompts(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps.Prompts {
			listed = listed || p.Name == "greet"
		}
		if !listed {
			select {
			case <-c.changed:
			case <-deadline:
				t.Fatal("ask1's prompt greet was not forwarded within 10s")
			}
		}
	}
	args := map[string]any{"label": label("beside-prompt")}
	first := callArgs(t, c.cs, &mcp.CallToolParams{Name: "ask", Arguments: args})
	key := relayedKey(t, first, "who is there?")
	got, err := c.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet"})
	if err != nil || len(got.Messages) != 1 {
		t.Fatalf("greet beside a parked call: %v %v, want the headless rule's answer", got, err)
	}
	if tc, _ := got.Messages[0].Content.(*mcp.TextContent); tc == nil || tc.Text != "decline <nil>" {
		t.Fatalf("greet got %#v, want its question declined", got.Messages[0].Content)
	}
	res := callArgs(t, c.cs, &mcp.CallToolParams{Name: "ask", Arguments: args, InputResponses: mcp.InputResponseMap{key: who("alice")}, RequestState: first.RequestState})
	if res.IsError || text(res) != "accept alice" {
		t.Fatalf("the parked call after the prompt: %+v %q, want accept alice", res, text(res))
	}
}
