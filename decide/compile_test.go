package decide_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/decide"
)

func TestCompileErrors(t *testing.T) {
	const (
		D = decide.Deny
		A = decide.Ask
		L = decide.Allow
	)
	cases := []struct {
		eff  decide.Verdict
		raw  string
		want string
	}{
		{D, `""`, "tool pattern is empty"},
		{D, `"fs/"`, "no tool after '/'"},
		{D, `"/read"`, "no server before '/'"},
		{D, `"fs/\u0007"`, "control character"},
		{D, `42`, "must be a string"},
		{D, `["fs"]`, "must be a string"},
		{D, `{"tool":"fs"`, "not valid JSON"},
		{D, ``, "empty"},
		{D, `{"tool":"fs","bogus":1}`, `unknown field "bogus"`},
		{D, `{"tool":"fs","tool":"x"}`, `field "tool" appears twice`},
		{D, `{"id":"a"}`, `missing field "tool"`},
		{D, `{"id":"x y","tool":"fs"}`, "may only contain"},
		{D, `{"id":"","tool":"fs"}`, "1 to 64"},
		{D, `{"id":7,"tool":"fs"}`, `"id" must be a string`},
		{D, `{"tool":7}`, `"tool" must be a string`},
		{D, `{"tool":"fs","args":[]}`, `"args" must be an object`},
		{D, `{"tool":"fs","args":{}}`, `"args" is empty`},
		{D, `{"tool":"fs","args":{"":{"equals":1}}}`, "argument path is empty"},
		{D, `{"tool":"fs","args":{"a..b":{"equals":1}}}`, "empty part"},
		{D, `{"tool":"fs","args":{"p":"x"}}`, "must be an object"},
		{D, `{"tool":"fs","args":{"p":{}}}`, "is empty"},
		{D, `{"tool":"fs","args":{"p":{"starts":"x"}}}`, `unknown operator "starts"`},
		{D, `{"tool":"fs","args":{"p":{"prefix":1}}}`, `"prefix" on "p" must be a string`},
		{D, `{"tool":"fs","args":{"p":{"glob":""}}}`, `"glob" on "p" is empty`},
		{D, `{"tool":"fs","args":{"p":{"equals":1,"equals":2}}}`, "appears twice"},
		{D, `{"tool":"fs","args":{"p":{"equals":1},"p":{"equals":2}}}`, "appears twice"},
		{L, `{"tool":"fs","hints":{"openWorld":true}}`, `an allow rule may only require "openWorld": false`},
		{L, `{"tool":"fs","hints":{"readOnly":false}}`, `an allow rule may only require "readOnly": true`},
		{D, `{"tool":"fs","hints":{"readOnly":true}}`, `a deny rule may only require "readOnly": false`},
		{A, `{"tool":"fs","hints":{"destructive":false}}`, `an ask rule may only require "destructive": true`},
		{D, `{"tool":"fs","hints":{"readonly":false}}`, `unknown hint "readonly"`},
		{D, `{"tool":"fs","hints":{"destructive":"yes"}}`, "true or false"},
		{D, `{"tool":"fs","hints":{}}`, `"hints" is empty`},
		{D, `{"tool":"fs","class":"write"}`, `"class" must be one of`},
		{D, `{"tool":"fs","class":["read"]}`, `"class" must be one of`},
		{decide.Verdict(7), `"fs"`, "invalid effect"},
		// Other glob dialects fail closed: a deny rule that silently
		// matched nothing would let calls through.
		{D, `"tasks/get_[task"`, `contains '[' at byte 11`},
		{D, `"tasks/get_[t]ask"`, "character classes, braces and escapes are not supported"},
		{D, `"tasks/get_t]ask"`, `contains ']'`},
		{A, `"tasks/{get,list}_*"`, `contains '{'`},
		{D, `"tasks/get\\*"`, `contains '\\'`},
		{D, `"ta[sk]s/get"`, `contains '['`},
		{L, `"tasks/get_[t]ask"`, `contains '['`},
		{D, `{"tool":"fs","args":{"p":{"glob":"/srv/[ab]*"}}}`, `the glob "/srv/[ab]*" on "p" contains '['`},
		{L, `{"tool":"fs","args":{"p":{"glob":"*.{js,ts}"}}}`, `contains '{'`},
	}
	for _, c := range cases {
		spec := decide.RuleSpec{Effect: c.eff, Source: "cfg.json", Index: 3, Raw: json.RawMessage(c.raw)}
		_, err := decide.Compile([]decide.RuleSpec{spec}, decide.Options{})
		if err == nil {
			t.Errorf("%s %s: no error, want %q", c.eff, c.raw, c.want)
			continue
		}
		msg := err.Error()
		prefix := "cfg.json: " + c.eff.String() + " rule 3: "
		if !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, c.want) {
			t.Errorf("%s %s: error %q, want prefix %q and %q", c.eff, c.raw, msg, prefix, c.want)
		}
		var re *decide.RuleError
		if !errors.As(err, &re) || re.Source != "cfg.json" || re.Index != 3 {
			t.Errorf("%s %s: error %#v is not a *RuleError for cfg.json rule 3", c.eff, c.raw, err)
		}
	}
}

func TestCompileErrorNoSource(t *testing.T) {
	_, err := decide.Compile([]decide.RuleSpec{{Effect: decide.Ask, Index: 1, Raw: json.RawMessage(`""`)}}, decide.Options{})
	if err == nil || !strings.HasPrefix(err.Error(), "ask rule 1: ") {
		t.Errorf("error %v, want it to start with %q", err, "ask rule 1: ")
	}
}

func TestCompileDuplicateIDs(t *testing.T) {
	s := []decide.RuleSpec{
		{Effect: decide.Deny, Source: "a.json", Index: 0, Raw: json.RawMessage(`{"id":"x","tool":"fs"}`)},
		{Effect: decide.Allow, Source: "--allow flag", Index: 0, Raw: json.RawMessage(`{"id":"x","tool":"gh"}`)},
	}
	_, err := decide.Compile(s, decide.Options{})
	if err == nil || !strings.Contains(err.Error(), `id "x" is already used by deny rule 0 from a.json`) ||
		!strings.HasPrefix(err.Error(), "--allow flag: allow rule 0: ") {
		t.Errorf("error %v, want the second rule blamed and the first named", err)
	}
	s[1].Source = "a.json"
	s[1].Raw = json.RawMessage(`"gh"`)
	s = append(s, decide.RuleSpec{Effect: decide.Allow, Source: "a.json", Index: 0, Raw: json.RawMessage(`"fs"`)})
	if _, err = decide.Compile(s, decide.Options{}); err == nil || !strings.Contains(err.Error(), "another allow rule from a.json has the same index 0") {
		t.Errorf("error %v, want a duplicate index error", err)
	}
}

// Derived ids are short unless two sources would give the same one.
func TestDerivedIDs(t *testing.T) {
	s := []decide.RuleSpec{
		{Effect: decide.Deny, Source: "a.json", Index: 0, Raw: json.RawMessage(`"fs/delete_*"`)},
		{Effect: decide.Deny, Source: "--deny flag", Index: 0, Raw: json.RawMessage(`"gh/delete_*"`)},
		{Effect: decide.Deny, Source: "a.json", Index: 1, Raw: json.RawMessage(`"db/drop_*"`)},
	}
	p := mustCompile(t, s, decide.Options{})
	for tool, want := range map[string]string{"fs/delete_x": "a.json:deny[0]", "gh/delete_x": "--deny flag:deny[0]", "db/drop_x": "deny[1]"} {
		r := row{trusted: tr, tool: tool, hints: "ft-f", mode: I}
		if got := p.Decide(r.input(t)).Rule; got != want {
			t.Errorf("%s: Rule = %q, want %q", tool, got, want)
		}
	}
}

func TestCompileOptionErrors(t *testing.T) {
	cases := []struct {
		o    decide.Options
		want string
	}{
		{decide.Options{ProtectedPaths: []string{"relative/dir"}}, "is not absolute"},
		{decide.Options{ProtectedPaths: []string{"~/x"}}, "no home directory"},
		{decide.Options{ProtectedPaths: []string{" "}}, "is empty"},
		{decide.Options{Home: "home/u"}, "not absolute"},
		{decide.Options{AutoApprove: 9}, "invalid AutoApprove"},
	}
	for _, c := range cases {
		if _, err := decide.Compile(nil, c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.o, err, c.want)
		}
	}
	if _, err := decide.Compile(nil, decide.Options{ProtectedPaths: []string{`C:\Users\u\AppData\mcphost\`, "/a/b/../c/"}}); err != nil {
		t.Errorf("valid protected paths: %v", err)
	}
}

// Rules keep the order they were given within an effect: the first match
// names the decision.
func TestFirstMatchOrder(t *testing.T) {
	s := specs(map[decide.Verdict][]string{
		decide.Allow: {`"*/get_*"`, `"tasks/get_task"`, `"tasks"`},
	}, "c")
	p := mustCompile(t, s, decide.Options{AutoApprove: decide.ApproveNone})
	r := row{trusted: tr, tool: "tasks/get_task", hints: "t--t", mode: I}
	if got := p.Decide(r.input(t)).Rule; got != "allow[0]" {
		t.Errorf("Rule = %q, want allow[0]", got)
	}
	s[0], s[2] = s[2], s[0]
	p = mustCompile(t, s, decide.Options{AutoApprove: decide.ApproveNone})
	if got := p.Decide(r.input(t)).Rule; got != "allow[2]" {
		t.Errorf("after reordering: Rule = %q, want allow[2]", got)
	}
}

// An argument path may have 16 parts, and no more.
func TestArgPathLimit(t *testing.T) {
	rule := func(path string) decide.RuleSpec {
		return decide.RuleSpec{Effect: decide.Deny, Source: "test", Raw: json.RawMessage(`{"tool":"fs/x","args":{"` + path + `":{"equals":"x"}}}`)}
	}
	if _, err := decide.Compile([]decide.RuleSpec{rule("a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p")}, decide.Options{}); err != nil {
		t.Errorf("16 parts: %v, want accepted", err)
	}
	if _, err := decide.Compile([]decide.RuleSpec{rule("a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q")}, decide.Options{}); err == nil || !strings.Contains(err.Error(), "more than 16 parts") {
		t.Errorf("17 parts: %v, want the limit named", err)
	}
}
