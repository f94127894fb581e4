package decide_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/decide"
)

// benchRules is a realistic policy of 50 rules: globs over several
// servers, argument conditions, hint and class conditions.
var benchRules = map[decide.Verdict][]string{
	decide.Deny: {
		`"*/drop_*"`, `"*/purge_*"`, `"k8s/delete_namespace"`, `"db/truncate*"`,
		`{"id":"no-etc","tool":"fs/write_*","args":{"path":{"prefix":"/etc/"}}}`,
		`{"id":"no-ssh","tool":"fs/*","args":{"path":{"glob":"*/.ssh/*"}}}`,
		`{"id":"no-rec-rm","tool":"fs/delete_*","args":{"options.recursive":{"equals":true}}}`,
		`{"id":"no-force-push","tool":"git/push","args":{"force":{"equals":true}}}`,
		`{"id":"no-prod","tool":"k8s/*","args":{"context":{"glob":"prod-*"}},"class":"destructive"}`,
		`{"id":"no-remote-destr","tool":"cloud/*","hints":{"destructive":true,"openWorld":true}}`,
	},
	decide.Ask: {
		`"mail/send_*"`, `"slack/post_*"`, `"gh/merge_*"`, `"docker/run"`,
		`{"tool":"fs/move_*","args":{"destination":{"prefix":"/"}}}`,
		`{"tool":"web/*","hints":{"openWorld":true}}`,
		`{"tool":"db/*","class":"destructive"}`,
		`{"tool":"git/reset","args":{"mode":{"equals":"hard"}}}`,
		`{"tool":"tasks/bulk_*","args":{"count":{"equals":100}}}`,
		`{"tool":"shell/*","args":{"cmd":{"glob":"*sudo*"}}}`,
	},
	decide.Allow: {
		`"fs/read_*"`, `"fs/list_*"`, `"fs/search_*"`, `"fs/get_*"`, `"git/status"`, `"git/log"`, `"git/diff"`,
		`"gh/get_*"`, `"gh/list_*"`, `"gh/search_*"`, `"tasks/list_*"`, `"tasks/get_*"`, `"docs"`,
		`"*/get_file_info"`, `"*/list_allowed_directories"`, `"k8s/get_*"`, `"k8s/describe_*"`, `"db/query"`,
		`{"tool":"fs/write_*","args":{"path":{"prefix":"/tmp/"}}}`,
		`{"tool":"fs/write_*","args":{"path":{"prefix":"/home/u/scratch/"}}}`,
		`{"tool":"fs/create_directory","args":{"path":{"glob":"/home/u/project/*"}}}`,
		`{"tool":"git/commit","args":{"amend":{"equals":false}}}`,
		`{"tool":"gh","class":"read"}`,
		`{"tool":"tasks/set_*","hints":{"idempotent":true,"destructive":false}}`,
		`{"tool":"notes/*","hints":{"destructive":false,"openWorld":false}}`,
		`{"tool":"web/fetch","args":{"url":{"prefix":"https://docs.example.com/"}}}`,
		`{"tool":"*","class":"read","hints":{"openWorld":false}}`,
		`{"tool":"slack/list_*","class":"read"}`,
		`{"tool":"mail/search","class":"read"}`,
		`{"tool":"fs/edit_file","args":{"path":{"prefix":"/home/u/project/"},"dryRun":{"equals":true}}}`,
	},
}

func benchPolicy(tb testing.TB) *decide.Policy {
	s := specs(benchRules, "config.json")
	if len(s) != 50 {
		tb.Fatalf("benchmark policy has %d rules, want 50", len(s))
	}
	return mustCompile(tb, s, decide.Options{
		AutoApprove: decide.ApproveAdditive,
		ProtectedPaths: []string{"/home/u/.config/mcphost", "/home/u/.local/state/mcphost",
			"/home/u/.local/state/mcphost/audit.jsonl"},
		Home: "/home/u",
	})
}

var benchSession = decide.Session{Grants: []decide.Grant{
	{Scope: decide.ScopeSession, Server: "id:fs", Tool: "move_file", DefinitionHash: "h1"},
	{Scope: decide.ScopeAlways, Server: "id:gh", Tool: "create_issue", DefinitionHash: "h1"},
}}

func benchInputs() map[string]decide.Input {
	base := func(server, tool string, h decide.Hints, args string) decide.Input {
		return decide.Input{
			Server:  decide.Server{Name: server, Identity: "id:" + server, Trusted: true},
			Tool:    decide.Tool{Name: tool, Present: true, Declared: h, DefinitionHash: "h1", PinnedHash: "h1"},
			Args:    json.RawMessage(args),
			Session: benchSession,
			Mode:    decide.Interactive,
		}
	}
	write := decide.Hints{ReadOnly: decide.False, Destructive: decide.False, Idempotent: decide.False, OpenWorld: decide.False}
	read := decide.Hints{ReadOnly: decide.True, OpenWorld: decide.False}
	untrusted := base("hostile", "get_thing", read, `{"id":"42"}`)
	untrusted.Server.Trusted = false
	openWrite := write
	openWrite.OpenWorld = decide.True
	granted := base("gh", "create_issue", openWrite, `{"repo":"mcphost/mcphost","title":"Flaky test","body":"Seen twice on CI."}`)
	return map[string]decide.Input{
		"write": base("fs", "write_file", write,
			`{"path":"/home/u/project/src/main.go","content":"package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n","options":{"recursive":false,"mode":"0644"}}`),
		"read":      base("fs", "read_text_file", read, `{"path":"/home/u/project/README.md","head":20}`),
		"untrusted": untrusted,
		"grant":     granted,
		"unmatched": base("tasks", "archive_task", write, `{"id":17,"reason":"done"}`),
	}
}

// BenchmarkDecide measures one decision against a 50-rule policy.
func BenchmarkDecide(b *testing.B) {
	p := benchPolicy(b)
	for _, name := range []string{"write", "read", "untrusted", "grant", "unmatched"} {
		in := benchInputs()[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = p.Decide(in)
			}
		})
	}
}

// TestAllocs guards the common path: one allocation, the reasons slice.
func TestAllocs(t *testing.T) {
	p := benchPolicy(t)
	for name, in := range benchInputs() {
		allocs := testing.AllocsPerRun(100, func() { _ = p.Decide(in) })
		if allocs > 1 {
			t.Errorf("%s: %v allocations per decision, want at most 1", name, allocs)
		}
	}
}

// The benchmark inputs decide as a person would expect, so the benchmark
// measures real work rather than an early exit.
func TestBenchInputs(t *testing.T) {
	p := benchPolicy(t)
	want := map[string]string{
		"write":     "allow T0 additive",
		"read":      "allow T0 read rule:allow[0]",
		"untrusted": "ask T3 unknown",
		"grant":     "allow T1 additive",
		"unmatched": "allow T0 additive",
	}
	for name, in := range benchInputs() {
		d := p.Decide(in)
		got := fmt.Sprintf("%s %s %s", d.Verdict, d.Tier, d.Class)
		if d.Rule != "" {
			got += " rule:" + d.Rule
		}
		if got != want[name] {
			t.Errorf("%s: got %s, want %s (%v)", name, got, want[name], codes(d))
		}
	}
}

// BenchmarkDecideHostileArgs keeps the cost of hostile argument shapes
// linear in their size; a quadratic walk shows up here first.
func BenchmarkDecideHostileArgs(b *testing.B) {
	p := benchPolicy(b)
	const n = 9000
	shapes := map[string]string{
		"deep-arrays":  `{"path":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`,
		"deep-objects": `{"options":` + strings.Repeat(`{"options":`, n) + "1" + strings.Repeat("}", n) + `}`,
		"long-path":    `{"path":"` + strings.Repeat("/a/../", 20000) + `"}`,
		"many-keys":    `{` + strings.Repeat(`"path":"/tmp/x",`, 20000) + `"z":1}`,
	}
	for _, name := range []string{"deep-arrays", "deep-objects", "long-path", "many-keys"} {
		in := benchInputs()["write"]
		in.Args = json.RawMessage(shapes[name])
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(in.Args)))
			for b.Loop() {
				_ = p.Decide(in)
			}
		})
	}
}
