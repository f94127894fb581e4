package decide_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/decide"
)

// A read the person asked for themselves (an @server:uri mention) is not
// asked like the model's guess, even of an untrusted server; deny and ask
// rules, invalid arguments and protected paths still hold it back, and a
// model's read of the same resource still asks.
func TestByPerson(t *testing.T) {
	pol := mustCompile(t, specs(map[decide.Verdict][]string{
		decide.Deny: {`{"id":"no-secrets","tool":"docs/resources/read","args":{"uri":{"glob":"*secret*"}}}`},
		decide.Ask:  {`{"id":"ask-wiki","tool":"wiki/resources/read"}`},
	}, "config.json"), opts(decide.ApproveNone))
	read := func(server string, trusted, person bool, uri string, mode decide.Mode) decide.Input {
		return decide.Input{
			Server: decide.Server{Name: server, Identity: "id:" + server, Trusted: trusted},
			Tool: decide.Tool{Name: "resources/read", Present: true, DefinitionHash: "resources/read@1",
				Declared: decide.Hints{ReadOnly: decide.True, Destructive: decide.False, Idempotent: decide.True, OpenWorld: decide.False}},
			Args: json.RawMessage(fmt.Sprintf(`{"uri":%q}`, uri)), Mode: mode, ByPerson: person,
		}
	}
	cases := []struct {
		name  string
		in    decide.Input
		want  string // "VERDICT TIER"
		codes string
	}{
		{"person, untrusted server", read("docs", un, true, "docs://readme", I), "allow T3", "untrusted-server by-person"},
		{"model, untrusted server", read("docs", un, false, "docs://readme", I), "ask T3", "untrusted-server"},
		{"person, trusted server, auto-approve none", read("notes", tr, true, "notes://a", I), "allow T0", "read-only closed-world"},
		{"model, trusted server, auto-approve none", read("notes", tr, false, "notes://a", I), "ask T1", "read-only closed-world auto-approve"},
		{"person, headless", read("docs", un, true, "docs://readme", H), "allow T3", "untrusted-server by-person"},
		{"person, protected path", read("docs", un, true, "file:///home/u/.config/mcphost/config.json", I), "ask T3", "untrusted-server protected-path"},
		{"person, protected path, trusted", read("notes", tr, true, "file:///home/u/.config/mcphost/config.json", I), "ask T3", "read-only closed-world protected-path"},
		{"person, protected path, headless", read("docs", un, true, "file:///home/u/.config/mcphost/config.json", H), "deny T3", "protected-path needs-approval"},
		{"person, deny rule", read("docs", un, true, "docs://secret-plans", I), "deny T3", "rule:no-secrets"},
		{"person, ask rule", read("wiki", tr, true, "wiki://home", I), "ask T0", "rule:ask-wiki"},
	}
	for _, tc := range cases {
		d := pol.Decide(tc.in)
		if got := fmt.Sprintf("%s %s", d.Verdict, d.Tier); got != tc.want {
			t.Errorf("%s: got %s, want %s (reasons %v)", tc.name, got, tc.want, codes(d))
		}
		if miss := subsequence(codes(d), strings.Fields(tc.codes)); miss != "" {
			t.Errorf("%s: reason %q missing or out of order in %v", tc.name, miss, codes(d))
		}
		if tc.in.ByPerson && d.Verdict != decide.Allow {
			for _, c := range codes(d) {
				if c == decide.CodeByPerson {
					t.Errorf("%s: by-person is listed though the call does not run without asking: %v", tc.name, codes(d))
				}
			}
		}
	}
}

// The facts in a call's favour are never listed as reasons to ask: Split
// puts every reason in exactly one list, by its kind.
func TestSplitReasons(t *testing.T) {
	pols := policies(t)
	favour := map[string]bool{
		decide.CodeReadOnly: true, decide.CodeIdempotent: true, decide.CodeClosedWorld: true, decide.CodeByPerson: true,
		decide.CodeGrantPrefix + "once": true, decide.CodeGrantPrefix + "args": true,
		decide.CodeGrantPrefix + "session": true, decide.CodeGrantPrefix + "always": true,
	}
	sawFavour, sawAsk, sawAllowRule := false, false, false
	for _, r := range table {
		d := pols[r.pol].Decide(r.input(t))
		ask, fav := d.Split()
		if len(ask)+len(fav) != len(d.Reasons) {
			t.Errorf("%s: split %d+%d reasons, want %d", r.name, len(ask), len(fav), len(d.Reasons))
		}
		for _, x := range ask {
			if favour[x.Code] {
				t.Errorf("%s: %q, a fact in the call's favour, is listed as a reason to ask", r.name, x.Code)
			}
			if x.Code == decide.CodeRulePrefix+d.Rule && d.Verdict == decide.Allow {
				t.Errorf("%s: the allow rule %q is listed as a reason to ask", r.name, x.Code)
			}
			sawAsk = true
		}
		for _, x := range fav {
			isRule := x.Code == decide.CodeRulePrefix+d.Rule
			if !favour[x.Code] && !(isRule && d.Verdict == decide.Allow) {
				t.Errorf("%s: %q is listed in the call's favour; it is a reason to ask", r.name, x.Code)
			}
			sawAllowRule = sawAllowRule || isRule
			sawFavour = true
		}
	}
	if !sawFavour || !sawAsk || !sawAllowRule {
		t.Errorf("the table lacks a case: favour %v, ask %v, allow rule %v", sawFavour, sawAsk, sawAllowRule)
	}
}
