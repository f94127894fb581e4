package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// question is a tier-2 question about write_file with args.
func question(args string) *host.Question {
	return &host.Question{Server: "files", Tool: &client.Tool{Name: "write_file", Hash: "h"}, Args: json.RawMessage(args),
		Decision: decide.Decision{Class: decide.Destructive, Tier: decide.T2},
		Scopes:   []decide.Scope{decide.ScopeOnce, decide.ScopeArgs, decide.ScopeSession}}
}

func decisions(t *testing.T, p *mcp.ElicitParams) []string {
	t.Helper()
	props := p.RequestedSchema.(map[string]any)["properties"].(map[string]any)
	return props["decision"].(map[string]any)["enum"].([]string)
}

// TestTheFormShowsEveryArgumentTheShortestFirst: a 20 KB argument does not
// push a short, decisive one out of the form: every argument is shown, the
// short ones first, and the long one is cut with its size named; such a
// form may allow the call.
func TestTheFormShowsEveryArgumentTheShortestFirst(t *testing.T) {
	long := strings.Repeat("A", 20<<10)
	args := fmt.Sprintf(`{"content":%q,"mode":"append","path":"~/.ssh/authorized_keys"}`, long)
	p := Elicitation(question(args))
	msg := p.Message
	path := strings.Index(msg, `"path": "~/.ssh/authorized_keys"`)
	mode := strings.Index(msg, `"mode": "append"`)
	content := strings.Index(msg, `"content": "AAAA`)
	if path < 0 || mode < 0 || content < 0 || content < path || content < mode {
		t.Fatalf("question %q: want every argument, the short ones before the long one", bound(msg, 2000))
	}
	if want := fmt.Sprintf("(%d bytes; %d shown)", len(long)+2, MaxShownValue); !strings.Contains(msg, want) {
		t.Errorf("question does not name the long value's size %q", want)
	}
	if len(msg) > 4<<10 {
		t.Errorf("question is %d bytes: the long value was not cut", len(msg))
	}
	if got := decisions(t, p); !slices.Contains(got, DecisionAllowOnce) {
		t.Errorf("decisions %q: a form that shows every argument may allow", got)
	}
	if a := Judge(question(args), accept(DecisionAllowOnce, "")); !a.Approve {
		t.Errorf("an allow of a question shown in full: %+v", a)
	}
}

// TestArgumentsAFormCannotShowCanOnlyBeDenied: arguments with too many
// values, nested too deep, or too long even with each value cut, are not
// approvable through the form: it offers deny only, says where the call
// can be approved, and Judge refuses an allow all the same.
func TestArgumentsAFormCannotShowCanOnlyBeDenied(t *testing.T) {
	many := map[string]int{}
	for i := range MaxShownMembers + 1 {
		many[fmt.Sprintf("k%03d", i)] = i
	}
	deep := `"~/.ssh/authorized_keys"`
	for range MaxShownDepth + 1 {
		deep = `{"a":` + deep + `}`
	}
	wide := map[string]string{}
	for i := range 40 {
		wide[fmt.Sprintf("k%02d", i)] = strings.Repeat("x", MaxShownValue)
	}
	for name, args := range map[string]string{
		"too many values": string(mustJSON(t, many)),
		"too deep":        deep,
		"too long":        string(mustJSON(t, wide)),
		"long name":       `{"` + strings.Repeat("n", maxShownKey+1) + `":1}`,
	} {
		q := question(args)
		p := Elicitation(q)
		if got := decisions(t, p); !slices.Equal(got, []string{DecisionDeny}) {
			t.Errorf("%s: decisions %q, want deny only", name, got)
		}
		if !strings.Contains(p.Message, "cannot show every argument") || !strings.Contains(p.Message, "mcphost approve") {
			t.Errorf("%s: question %q does not say where to approve it", name, bound(p.Message, 3000))
		}
		if len(p.Message) > MaxShownArgs+4<<10 {
			t.Errorf("%s: question is %d bytes, want it bounded", name, len(p.Message))
		}
		if a := Judge(q, accept(DecisionAllowSession, "")); a.Approve {
			t.Errorf("%s: an allow of arguments the form could not show approved the call", name)
		}
	}
}

// TestTheFormEscapesArguments: a value or a name that would move the
// cursor, clear the screen or reverse the text is escaped, and arguments
// that are not JSON are shown bounded.
func TestTheFormEscapesArguments(t *testing.T) {
	msg := Elicitation(question(`{"note":"ok\u202eexe.txt","x\u202ey":"\u009b2J"}`)).Message
	if strings.ContainsAny(msg, "\u202e\u009b\x1b") {
		t.Errorf("question %q carries raw control or bidi characters", msg)
	}
	junk := Elicitation(question("not json \x1b[2J" + strings.Repeat("z", 2*MaxShownArgs))).Message
	if strings.Contains(junk, "\x1b") || len(junk) > MaxShownArgs+4<<10 {
		t.Errorf("arguments that are not JSON: %d bytes, raw escape %v; want escaped and bounded", len(junk), strings.Contains(junk, "\x1b"))
	}
}

// TestAFormNoOneAnswersTimesOut: a 2025-11-25 client that never answers
// mcphost's question does not hold the call: after AskTimeout it is
// refused, and nothing runs.
func TestAFormNoOneAnswersTimesOut(t *testing.T) {
	w := newWorld(t, worldOpts{tweak: func(o *Options) { o.AskTimeout = 100 * time.Millisecond }})
	silent := make(chan struct{})
	c := w.connectWith(&elicitor{}, connOpts{version: "2025-11-25", silent: silent})
	release := sync.OnceFunc(func() { close(silent) })
	t.Cleanup(release)
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "flaky__set_value", Arguments: json.RawMessage(`{"key":"k","value":"v"}`)})
		if err != nil {
			res = errorResult(err.Error())
		}
		done <- res
	}()
	select {
	case res := <-done:
		if !res.IsError || !strings.Contains(text(res), "no answer came in time") || w.execs("flaky", "set_value") != 0 {
			t.Fatalf("a question no one answers: %q, %d runs; want it refused for want of an answer", text(res), w.execs("flaky", "set_value"))
		}
	case <-time.After(10 * time.Second):
		release() // the question ends now, so that the call and the test can
		<-done
		t.Fatal("a question no one answers held the call")
	}
}

// TestAClientThatTakesNoFormsIsNotAskedWithOne: a client that declared
// only URL elicitation is not sent mcphost's form: the call is refused as
// one no one could be asked about, saying how to get it approved.
func TestAClientThatTakesNoFormsIsNotAskedWithOne(t *testing.T) {
	w := newWorld(t, worldOpts{})
	e := &elicitor{answers: []*mcp.ElicitResult{accept(DecisionAllowOnce, "")}}
	c := w.connectWith(e, connOpts{version: "2025-11-25", urlOnly: true})
	res := c.call(t, "flaky__set_value", `{"key":"k","value":"v"}`)
	if !res.IsError || !strings.Contains(text(res), "needs a person's approval") || e.count() != 0 || w.execs("flaky", "set_value") != 0 {
		t.Fatalf("a URL-only client: %q, asked %d times; want the call refused for want of someone to ask, and no form sent", text(res), e.count())
	}
}

// TestTheFormListsOnlyReasonsToAsk: the form's "Why mcphost asks" lists the
// reasons to ask; what lowers the risk (the tool touches only local data)
// stands under "In its favour". A question about a read of a resource
// gives mcphost's own description of it as mcphost's, not as the server's.
func TestTheFormListsOnlyReasonsToAsk(t *testing.T) {
	q := question(`{"path":"a"}`)
	q.Decision.Reasons = []decide.Reason{
		{Code: decide.CodeDestructive, Text: decide.ReasonText(decide.CodeDestructive)},
		{Code: decide.CodeClosedWorld, Text: decide.ReasonText(decide.CodeClosedWorld)},
	}
	msg := Elicitation(q).Message
	why, fav := strings.Index(msg, "Why mcphost asks:\n"), strings.Index(msg, "In its favour:\n")
	destr, closed := strings.Index(msg, decide.ReasonText(decide.CodeDestructive)), strings.Index(msg, decide.ReasonText(decide.CodeClosedWorld))
	if why < 0 || fav < why || destr < why || destr > fav || closed < fav {
		t.Fatalf("the reasons are not split (why %d, destructive %d, favour %d, closed-world %d):\n%s", why, destr, fav, closed, msg)
	}

	m := client.New([]client.Spec{{Name: "docs"}}, client.Options{})
	defer m.Close()
	g := host.NewGate(host.GateOptions{Catalog: m, Trusted: func(string) bool { return false }})
	d, stand, err := g.ExplainOperation("docs", host.ResourceReadTool, host.ReadArgs("docs://readme"))
	if err != nil {
		t.Fatal(err)
	}
	read := &host.Question{Server: "docs", Tool: stand, Args: host.ReadArgs("docs://readme"), Decision: d, Scopes: []decide.Scope{decide.ScopeOnce}}
	msg = Elicitation(read).Message
	if strings.Contains(msg, "the server's words") || !strings.Contains(msg, "What it does (mcphost's words): "+stand.Description) {
		t.Fatalf("mcphost's words about a read are not given as its own:\n%s", msg)
	}
}
