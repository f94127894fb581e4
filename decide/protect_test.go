package decide_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/decide"
)

// protBases are the directories of a filesystem server rooted at the home
// directory and started from a project inside it.
var protBases = []string{"/home/u/proj", "/home/u"}

// protOpts protect the host's config and state directories.
var protOpts = decide.Options{AutoApprove: decide.ApproveAdditive, Home: "/home/u", ProtectedPaths: []string{"~/.config/mcphost", "/home/u/.local/state/mcphost"}}

// protRules allow the tools outright and deny one argument, so that the
// table shows what rules can and cannot do to a protected path.
var protRules = map[decide.Verdict][]string{
	decide.Deny:  {`{"id":"no-secret","tool":"fs/*","args":{"path":{"glob":"*secret*"}}}`},
	decide.Allow: {`"fs/write_file"`, `"fs/create_directory"`, `"fs/read_file"`, `"fs/list_directory"`},
}

// TestProtectedResolved checks that relative paths, resolved against the
// server's directories, and the host's symbolic-link resolutions reach the
// protected paths, for reads too, and that nothing but a deny rule lowers
// or changes the verdict. Each protected row has an ordinary neighbour
// that must stay unflagged.
func TestProtectedResolved(t *testing.T) {
	rules := mustCompile(t, specs(protRules, "config.json"), protOpts)
	plain := mustCompile(t, nil, protOpts)
	cases := []struct {
		name  string
		pol   *decide.Policy
		tool  string // write_file, create_directory (additive) or read_file, list_directory (read)
		args  string
		paths []string // Input.Paths
		sess  string   // "session": a session grant for the tool
		mode  decide.Mode
		want  string
	}{
		{"relative write", rules, "write_file", `{"path":".config/mcphost/config.json","content":"{}"}`, nil, "", H, "deny T3"},
		{"ordinary relative write", rules, "write_file", `{"path":"notes.txt","content":"{}"}`, nil, "", H, "allow T0"},
		{"relative write asks", rules, "write_file", `{"path":".config/mcphost/config.json"}`, nil, "", I, "ask T3"},
		{"relative write under a grant", plain, "write_file", `{"path":".config/mcphost/config.json"}`, nil, "session", I, "ask T3"},
		{"ordinary write under a grant", plain, "write_file", `{"path":"proj/x"}`, nil, "session", I, "allow T0"},
		{"deny rule still denies", rules, "write_file", `{"path":".config/mcphost/secret"}`, nil, "", I, "deny T0"},
		{"relative directory without a rule", plain, "create_directory", `{"path":".local/state/mcphost/x"}`, nil, "", H, "deny T3"},
		{"ordinary directory without a rule", plain, "create_directory", `{"path":".local/share/x"}`, nil, "", H, "allow T0"},
		{"dot-dot from the project", rules, "write_file", `{"path":"../.config/mcphost/config.json"}`, nil, "", H, "deny T3"},
		{"dot-dot staying out", rules, "write_file", `{"path":"../other/config.json"}`, nil, "", H, "allow T0"},
		{"dot-dot through a directory", rules, "write_file", `{"path":"src/../../.local/state/mcphost/state.json"}`, nil, "", H, "deny T3"},
		{"padding that cleans away", rules, "write_file", `{"path":"a b c/../d/../.config/mcphost/config.json"}`, nil, "", H, "deny T3"},
		{"long padding that cleans away", rules, "write_file", `{"path":"` + strings.Repeat("a/../", 1000) + `.config/mcphost/config.json"}`, nil, "", H, "deny T3"},
		{"backslashes", rules, "write_file", `{"path":".config\\mcphost\\config.json"}`, nil, "", H, "deny T3"},
		{"escaped characters", rules, "write_file", `{"path":"\u002econfig\/mcphost\/config.json"}`, nil, "", H, "deny T3"},
		{"nested in arrays", rules, "write_file", `{"edits":[{"paths":["a.txt",[".config/mcphost/x"]]}]}`, nil, "", H, "deny T3"},
		{"ordinary nested", rules, "write_file", `{"edits":[{"paths":["a.txt",["b/c.txt"]]}]}`, nil, "", H, "allow T0"},
		{"object key", rules, "write_file", `{"files":{".config/mcphost/config.json":"{}"}}`, nil, "", H, "deny T3"},
		{"ordinary key", rules, "write_file", `{"files":{"config.json":"{}"}}`, nil, "", H, "allow T0"},
		{"word of a command", rules, "write_file", `{"cmd":"echo x > .config/mcphost/config.json"}`, nil, "", H, "deny T3"},
		{"dot-dot words in a text", rules, "write_file", `{"content":"cd ../ && make; see ./ and ../.. too"}`, nil, "", H, "allow T0"},
		{"a sentence", rules, "write_file", `{"content":"the config of mcphost lives in the usual place."}`, nil, "", H, "allow T0"},
		{"the protected directory itself", rules, "create_directory", `{"path":".config/mcphost"}`, nil, "", H, "deny T3"},
		{"a write to an ancestor", rules, "create_directory", `{"path":"."}`, nil, "", H, "deny T3"},
		{"a read inside", rules, "read_file", `{"path":".local/state/mcphost/tokens/srv.json"}`, nil, "", H, "deny T3"},
		{"a read of an ancestor", rules, "list_directory", `{"path":"."}`, nil, "", H, "allow T0"},
		{"a read of a sibling", rules, "read_file", `{"path":".config/other/x"}`, nil, "", H, "allow T0"},
		{"a symbolic link the host resolved", rules, "write_file", `{"path":"link/state.json"}`, []string{"/home/u/.local/state/mcphost/state.json"}, "", H, "deny T3"},
		{"a link resolved elsewhere", rules, "write_file", `{"path":"link/state.json"}`, []string{"/srv/data/state.json"}, "", H, "allow T0"},
		{"a read through a link", rules, "read_file", `{"path":"link/x"}`, []string{"/home/u/.config/mcphost/config.json"}, "", H, "deny T3"},
		{"relative host paths are ignored", rules, "write_file", `{"path":"x"}`, []string{".config/mcphost/config.json"}, "", H, "allow T0"},
		{"a file URL", rules, "write_file", `{"uri":"file:///home/u/proj/../.config/mcphost/config.json"}`, nil, "", H, "deny T3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := protInput(c.tool, c.args, c.mode)
			in.Paths = c.paths
			if c.sess == "session" {
				in.Session.Grants = []decide.Grant{{Scope: decide.ScopeSession, Server: "id:fs", Tool: c.tool, DefinitionHash: "h1"}}
			}
			d := c.pol.Decide(in)
			if got := fmt.Sprintf("%s %s", d.Verdict, d.Tier); got != c.want {
				t.Errorf("got %s, want %s (reasons %v)", got, c.want, codes(d))
			}
			if flagged := c.want[len(c.want)-2:] == "T3"; d.Has(decide.CodeProtectedPath) != flagged {
				t.Errorf("protected-path = %v, want %v (reasons %v)", !flagged, flagged, codes(d))
			}
		})
	}
}

// Without bases a relative path stays unresolved: the host supplies them.
func TestProtectedNeedsBases(t *testing.T) {
	p := mustCompile(t, nil, protOpts)
	in := protInput("write_file", `{"path":".config/mcphost/config.json"}`, decide.Headless)
	in.Bases = nil
	if d := p.Decide(in); d.Has(decide.CodeProtectedPath) {
		t.Errorf("relative path flagged without bases: %v", codes(d))
	}
	in.Bases = []string{"relative/base", "", "/home/u"}
	if d := p.Decide(in); !d.Has(decide.CodeProtectedPath) || d.Verdict != decide.Deny {
		t.Errorf("with a good base among bad ones: %s %v", d.Verdict, codes(d))
	}
}

// protInput is a call of a trusted filesystem tool, annotated as
// server-filesystem annotates it: reads read-only, writes additive, all
// closed-world.
func protInput(tool, args string, mode decide.Mode) decide.Input {
	h := decide.Hints{ReadOnly: decide.False, Destructive: decide.False, Idempotent: decide.False, OpenWorld: decide.False}
	if tool == "read_file" || tool == "list_directory" {
		h = decide.Hints{ReadOnly: decide.True, OpenWorld: decide.False}
	}
	return decide.Input{
		Server: decide.Server{Name: "fs", Identity: "id:fs", Trusted: true},
		Tool:   decide.Tool{Name: tool, Present: true, Declared: h, DefinitionHash: "h1", PinnedHash: "h1"},
		Args:   json.RawMessage(args),
		Mode:   mode,
		Bases:  protBases,
	}
}

// FuzzProtected feeds arbitrary arguments, bases and host paths through
// the protected-path check: it never panics, and a call it flags asks at
// T3 (or is denied), never runs silently, even under an allow rule and a
// grant.
func FuzzProtected(f *testing.F) {
	for _, s := range []string{`{"path":".config/mcphost/x"}`, `{"a":["\u002e\/x","~"]}`, `{"k":"` + strings.Repeat("../", 50) + `"}`,
		`{"p":"C:\\x\\..\\.."}`, `{"":""}`, `[`, `{"cmd":"a > .local/state/mcphost/x; b"}`} {
		f.Add([]byte(s), "/home/u/proj", "/home/u/.local/state/mcphost/y", false)
	}
	allowAll := mustCompile(f, specs(map[decide.Verdict][]string{decide.Allow: {`"*"`}}, "fuzz"), protOpts)
	f.Fuzz(func(t *testing.T, args []byte, base, hostPath string, read bool) {
		tool := "write_file"
		if read {
			tool = "read_file"
		}
		in := protInput(tool, string(args), decide.Interactive)
		in.Bases = []string{base, "/home/u"}
		in.Paths = []string{hostPath}
		in.Session.Grants = []decide.Grant{{Scope: decide.ScopeSession, Server: "id:fs", Tool: tool, DefinitionHash: "h1"}}
		d := allowAll.Decide(in)
		if d.Has(decide.CodeProtectedPath) && (d.Tier != decide.T3 || d.Verdict == decide.Allow) {
			t.Fatalf("protected path decided %s %s: %v", d.Verdict, d.Tier, codes(d))
		}
	})
}

// BenchmarkProtectedRelative is a write_file call with 4 KiB of prose,
// decided with two bases: the cost of resolving every string lexically.
func BenchmarkProtectedRelative(b *testing.B) {
	p := mustCompile(b, specs(protRules, "config.json"), protOpts)
	content, _ := json.Marshal(strings.Repeat("a line of prose with words and a path/like/thing. ", 80))
	in := protInput("write_file", `{"path":"notes/today.md","content":`+string(content)+`}`, decide.Headless)
	for b.Loop() {
		if d := p.Decide(in); d.Verdict != decide.Allow {
			b.Fatal(codes(d))
		}
	}
}
