package decide_test

import (
	"encoding/json"
	"fmt"
	"slices"
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

// TestProtectedAncestors is the precision of the protected-path check, as
// pairs of a tool and a path: a read of a directory that merely holds a
// protected location (the project root with its .mcp.json, the home
// directory with .config) does not ask for that reason, from a trusted
// server or from an untrusted one whose tool says it only reads; a read of
// a protected file or of anything inside a protected directory, and any
// write, move or delete of a protected location or of a directory holding
// one, does. Relative paths are resolved against every base: the server's
// working directory (the project), a directory on its command line, and
// the home directory.
func TestProtectedAncestors(t *testing.T) {
	opts := decide.Options{AutoApprove: decide.ApproveAdditive, Home: "/home/u",
		ProtectedPaths: []string{"~/.config/mcphost", "/home/u/.local/state/mcphost", "/home/u/proj/.mcp.json"}}
	p := mustCompile(t, nil, opts)
	bases := []string{"/home/u/proj", "/srv/data", "/home/u"}
	read := decide.Hints{ReadOnly: decide.True, OpenWorld: decide.False}
	write := decide.Hints{ReadOnly: decide.False, Destructive: decide.True, Idempotent: decide.False, OpenWorld: decide.False}
	type tool struct {
		name    string
		hints   decide.Hints
		present bool
	}
	list := tool{"list_directory", read, true}
	readFile := tool{"read_text_file", read, true}
	move := tool{"move_file", write, true}
	del := tool{"delete_path", write, true}
	bare := tool{"list_directory", decide.Hints{}, false}                                                 // no annotations
	contra := tool{"list_directory", decide.Hints{ReadOnly: decide.True, Destructive: decide.True}, true} // contradiction
	liar := tool{"remove_directory", decide.Hints{ReadOnly: decide.True, OpenWorld: decide.False}, true}  // its name says it writes
	cases := []struct {
		name    string
		tool    tool
		args    string
		paths   []string // where the host found the strings lead (Input.Paths)
		flagged bool
	}{
		// Reads of ancestors: not protected, however the path is written.
		{"the project root as .", list, `{"path":"."}`, nil, false},
		{"the project root as ./", list, `{"path":"./"}`, nil, false},
		{"the project root as empty", list, `{"path":""}`, nil, false},
		{"the project root absolute", list, `{"path":"/home/u/proj"}`, nil, false},
		{"the project root with a slash", list, `{"path":"/home/u/proj/"}`, nil, false},
		{"the project root as a file URL", list, `{"path":"file:///home/u/proj"}`, nil, false},
		{"the project root through ..", list, `{"path":"../proj"}`, nil, false},
		{"home as ~", list, `{"path":"~"}`, nil, false},
		{"home as $HOME", list, `{"path":"$HOME"}`, nil, false},
		{"home as ..", list, `{"path":".."}`, nil, false},
		{"home absolute", list, `{"path":"/home/u"}`, nil, false},
		{"~/.config, which holds mcphost", list, `{"path":"~/.config"}`, nil, false},
		{".config relative to home", list, `{"path":".config"}`, nil, false},
		{".local/state", list, `{"path":".local/state"}`, nil, false},
		{"the root", list, `{"path":"/"}`, nil, false},
		{"a link the host resolved to home", list, `{"path":"h"}`, []string{"/home/u"}, false},
		{"the root with a pattern", list, `{"path":"/","pattern":"*.json"}`, nil, false},
		{"an ordinary file", readFile, `{"path":"src/main.go"}`, nil, false},
		{"a sibling of the project file", readFile, `{"path":"/home/u/proj/.mcp.json.bak"}`, nil, false},
		// Reads of the protected files and of what is inside.
		{"the project file", readFile, `{"path":".mcp.json"}`, nil, true},
		{"the project file absolute", readFile, `{"path":"/home/u/proj/.mcp.json"}`, nil, true},
		{"the project file from home", readFile, `{"path":"proj/.mcp.json"}`, nil, true},
		{"the project file in another case", readFile, `{"path":"/home/u/proj/.MCP.json"}`, nil, true},
		{"the config directory", list, `{"path":"~/.config/mcphost"}`, nil, true},
		{"the config directory relative", list, `{"path":".config/mcphost"}`, nil, true},
		{"the token store", list, `{"path":".local/state/mcphost/tokens"}`, nil, true},
		{"the config file by ..", readFile, `{"path":"../.config/mcphost/config.json"}`, nil, true},
		{"a link into the state", readFile, `{"path":"s/x"}`, []string{"/home/u/.local/state/mcphost/x"}, true},
		// Writes, moves and deletes of a protected location or an ancestor.
		{"move the project root", move, `{"source":".","destination":"/srv/x"}`, nil, true},
		{"move ~/.config away", move, `{"source":"~/.config","destination":"/srv/c"}`, nil, true},
		{"move onto the project file", move, `{"source":"/srv/x","destination":".mcp.json"}`, nil, true},
		{"delete home", del, `{"path":"~"}`, nil, true},
		{"delete .local", del, `{"path":".local"}`, nil, true},
		{"delete a link to home", del, `{"path":"h"}`, []string{"/home/u"}, true},
		{"delete an ordinary file", del, `{"path":"build/out.o"}`, nil, false},
		{"move ordinary files", move, `{"source":"a.txt","destination":"b.txt"}`, nil, false},
		// A read-only claim that is not believed is no read.
		{"no annotations on the project root", bare, `{"path":"."}`, nil, true},
		{"a contradiction on home", contra, `{"path":"~"}`, nil, true},
		{"a write name claiming a read", liar, `{"path":"."}`, nil, true},
	}
	for _, c := range cases {
		for _, trusted := range []bool{true, false} {
			name := c.name + map[bool]string{true: " (trusted)", false: " (untrusted)"}[trusted]
			t.Run(name, func(t *testing.T) {
				in := decide.Input{
					Server: decide.Server{Name: "fs", Identity: "id:fs", Trusted: trusted},
					Tool:   decide.Tool{Name: c.tool.name, Present: c.tool.present, Declared: c.tool.hints, DefinitionHash: "h1", PinnedHash: "h1"},
					Args:   json.RawMessage(c.args),
					Mode:   decide.Interactive,
					Bases:  bases,
					Paths:  c.paths,
					// A session grant for the tool: it applies unless the
					// protected path (or a changed definition) locks the call.
					Session: decide.Session{Grants: []decide.Grant{{Scope: decide.ScopeSession, Server: "id:fs", Tool: c.tool.name, DefinitionHash: "h1"}}},
				}
				d := p.Decide(in)
				if got := d.Has(decide.CodeProtectedPath); got != c.flagged {
					t.Fatalf("protected-path = %v, want %v (%s %s, reasons %v)", got, c.flagged, d.Verdict, d.Tier, codes(d))
				}
				if c.flagged {
					if d.Verdict != decide.Ask || d.Tier != decide.T3 || !slices.Equal(decide.AllowedScopes(d), []decide.Scope{decide.ScopeOnce}) {
						t.Errorf("got %s %s offering %v, want ask T3 offering only once", d.Verdict, d.Tier, decide.AllowedScopes(d))
					}
				} else if d.Verdict != decide.Allow {
					t.Errorf("got %s %s (reasons %v), want allow: auto or by the session grant", d.Verdict, d.Tier, codes(d))
				}
			})
		}
	}
	// A changed definition of an untrusted server's read-only tool is not
	// yet its own word: an ancestor still counts.
	in := decide.Input{Server: decide.Server{Name: "fs", Identity: "id:fs"},
		Tool: decide.Tool{Name: "list_directory", Present: true, Declared: read, DefinitionHash: "h2", PinnedHash: "h1"},
		Args: json.RawMessage(`{"path":"."}`), Mode: decide.Headless, Bases: bases}
	if d := p.Decide(in); !d.Has(decide.CodeProtectedPath) {
		t.Errorf("a changed definition read an ancestor unflagged: %v", codes(d))
	}
}
