package host

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// coverGate is a gate over an in-process server, trusted, whose working
// directory is a temporary directory with notes/old.md in it and a
// protected directory .cfg. Its tools: write_file (destructive,
// idempotent, closed world: it writes a file under the directory),
// fetch_page (an open-world read), read_note (a closed-world read) and
// post_note (an open-world additive write).
func coverGate(t *testing.T, asker Asker) (*Gate, string) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"notes", ".cfg"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "notes", "old.md"), []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	spec := memSpec("c", func() *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "cover", Version: "1"}, nil)
		s.AddTool(&mcp.Tool{
			Name: "write_file", InputSchema: map[string]any{"type": "object"},
			Annotations: &mcp.ToolAnnotations{DestructiveHint: bptr(true), IdempotentHint: true, OpenWorldHint: bptr(false)},
		}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ Path, Content string }
			if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
				return nil, err
			}
			if err := os.WriteFile(filepath.Join(dir, a.Path), []byte(a.Content), 0o600); err != nil {
				return nil, err
			}
			return text("written"), nil
		})
		s.AddTool(&mcp.Tool{Name: "fetch_page", InputSchema: map[string]any{"type": "object"},
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: bptr(true)},
		}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("a page"), nil })
		s.AddTool(&mcp.Tool{Name: "read_note", InputSchema: map[string]any{"type": "object"},
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: bptr(false)},
		}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("private"), nil })
		s.AddTool(&mcp.Tool{Name: "post_note", InputSchema: map[string]any{"type": "object"},
			Annotations: &mcp.ToolAnnotations{DestructiveHint: bptr(false), OpenWorldHint: bptr(true)},
		}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("posted"), nil })
		return s
	})
	spec.Cwd = dir
	m := startManager(t, spec)
	p, err := decide.Compile(nil, decide.Options{AutoApprove: decide.ApproveAdditive, ProtectedPaths: []string{filepath.Join(dir, ".cfg")}, Home: dir})
	if err != nil {
		t.Fatal(err)
	}
	g := NewGate(GateOptions{
		Catalog: m, Policy: p, Trusted: func(string) bool { return true }, Asker: asker, Mode: decide.Interactive,
		Audit: &memLog{}, CallOptions: client.CallOptions{Timeout: 5 * time.Second},
	})
	return g, dir
}

// memLog is an audit log in memory that takes every record.
type memLog struct{ n int }

func (l *memLog) Append(*audit.Record) error { l.n++; return nil }

func coverCall(t *testing.T, g *Gate, tool, args string) *Result {
	t.Helper()
	return g.Call(context.Background(), Call{Server: "c", Tool: tool, Args: json.RawMessage(args)})
}

func session(tool string) ScriptedAnswer {
	return ScriptedAnswer{Tool: "c/" + tool, Answer: Answer{Approve: true, Scope: decide.ScopeSession}}
}

// A session grant for an open-world read given before the session was
// tainted does not cover the tool's calls once it is; one given after,
// with the taint warning in the question, does. A write in the same state
// is still offered only "once".
func TestTaintedReadGrantGivenInTaintCovers(t *testing.T) {
	asker := NewScriptAsker(t,
		session("fetch_page"), // before the taint
		session("fetch_page"), // asked again once tainted
		ScriptedAnswer{Tool: "c/post_note", Answer: Answer{Approve: true, Scope: decide.ScopeOnce}},
	)
	g, _ := coverGate(t, asker)
	if r := coverCall(t, g, "fetch_page", `{"url":"https://a.example"}`); r.DecidedBy != "user:session" {
		t.Fatalf("first fetch_page: %s by %s", r.Status, r.DecidedBy)
	}
	if r := coverCall(t, g, "fetch_page", `{"url":"https://b.example"}`); r.DecidedBy != "user:session" || len(asker.Asked()) != 1 {
		t.Fatalf("before the taint the session grant covers fetch_page: %s by %s after %d questions", r.Status, r.DecidedBy, len(asker.Asked()))
	}
	coverCall(t, g, "read_note", `{}`)
	if open, priv := g.Taint(); !open || !priv {
		t.Fatalf("the session is not tainted: open=%v private=%v", open, priv)
	}
	r := coverCall(t, g, "fetch_page", `{"url":"https://c.example"}`)
	if len(asker.Asked()) != 2 || r.Status != StatusSuccess {
		t.Fatalf("a grant from before the taint covered a tainted open-world read: %s by %s", r.Status, r.DecidedBy)
	}
	q := asker.Asked()[1]
	if !q.Decision.Has(decide.CodeTaintedSession) || !slices.Contains(q.Scopes, decide.ScopeSession) || slices.Contains(q.Scopes, decide.ScopeAlways) {
		t.Fatalf("the tainted read's question: reasons %v, scopes %v; want tainted-session, with this session and without always", q.Decision.Reasons, q.Scopes)
	}
	var tainted *decide.Grant
	for _, gr := range g.Grants() {
		if gr.Tainted {
			tainted = &gr
		}
	}
	if tainted == nil || tainted.Tool != "fetch_page" || tainted.Tier != decide.T1 {
		t.Fatalf("grants %+v: want a session grant for fetch_page at T1 given in taint", g.Grants())
	}
	r = coverCall(t, g, "fetch_page", `{"url":"https://d.example"}`)
	if r.Status != StatusSuccess || r.DecidedBy != "user:session" || !r.Decision.Has(decide.CodeTaintedSession) || len(asker.Asked()) != 2 {
		t.Fatalf("the grant given in taint does not cover the next read: %s by %s (%d questions)", r.Status, r.DecidedBy, len(asker.Asked()))
	}
	// An open-world write in a tainted session is offered once only.
	r = coverCall(t, g, "post_note", `{"text":"x"}`)
	if qs := asker.Asked(); len(qs) != 3 || !slices.Equal(qs[2].Scopes, []decide.Scope{decide.ScopeOnce}) || r.Status != StatusSuccess {
		t.Fatalf("post_note in taint: %s, questions %d, scopes %v; want asked, once only", r.Status, len(qs), qs[len(qs)-1].Scopes)
	}
	asker.Done()
}

// write_file of a path that does not exist yet asks at T1, and approving
// it for the session covers the next new file; a file that exists, the
// same path once written, a link to an existing file and a protected path
// still ask, at their own tier.
func TestNewPathsWriteAsksPlainlyAndItsGrantCoversNoOverwrite(t *testing.T) {
	asker := NewScriptAsker(t,
		session("write_file"), // notes/a.md, at T1
		ScriptedAnswer{Tool: "c/write_file", Answer: Answer{Approve: true, Scope: decide.ScopeOnce}}, // notes/old.md, at T2
		ScriptedAnswer{Tool: "c/write_file", Answer: Answer{Approve: false}},                         // notes/a.md again, at T2
		ScriptedAnswer{Tool: "c/write_file", Answer: Answer{Approve: false}},                         // the link
		ScriptedAnswer{Tool: "c/write_file", Answer: Answer{Approve: false}},                         // .cfg/new.json, at T3
	)
	g, dir := coverGate(t, asker)
	r := coverCall(t, g, "write_file", `{"path":"notes/a.md","content":"a"}`)
	if r.Status != StatusSuccess || r.Decision.Tier != decide.T1 || !r.Decision.Has(decide.CodeNewPaths) {
		t.Fatalf("a new file: %s at %s %v, want asked at T1 for new-paths", r.Status, r.Decision.Tier, r.Decision.Reasons)
	}
	if q := asker.Asked()[0]; slices.Contains(q.Scopes, decide.ScopeAlways) {
		t.Errorf("a call lowered for new paths offers %v: never always", q.Scopes)
	}
	if r := coverCall(t, g, "write_file", `{"path":"notes/b.md","content":"b"}`); r.Status != StatusSuccess || r.DecidedBy != "user:session" {
		t.Fatalf("the next new file: %s by %s, want covered by the session grant", r.Status, r.DecidedBy)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes", "b.md")); err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct{ args, tier string }{
		{`{"path":"notes/old.md","content":"x"}`, "T2"},
		{`{"path":"notes/a.md","content":"x"}`, "T2"},
		{`{"path":"notes/link.md","content":"x"}`, "T2"},
		{`{"path":".cfg/new.json","content":"{}"}`, "T3"},
	} {
		if i == 2 {
			if err := os.Symlink(filepath.Join(dir, "notes", "old.md"), filepath.Join(dir, "notes", "link.md")); err != nil {
				t.Fatal(err)
			}
		}
		before := len(asker.Asked())
		r := coverCall(t, g, "write_file", c.args)
		if len(asker.Asked()) != before+1 || r.Decision.Tier.String() != c.tier || r.Decision.Has(decide.CodeNewPaths) {
			t.Errorf("write_file %s: %s by %s at %s %v; want asked at %s", c.args, r.Status, r.DecidedBy, r.Decision.Tier, r.Decision.Reasons, c.tier)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "notes", "a.md")); string(b) != "a" {
		t.Errorf("notes/a.md holds %q: an overwrite the person denied ran", b)
	}
	asker.Done()
}

func TestNewPaths(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"build", "notes"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "gone"), filepath.Join(dir, "notes", "dangling.md")); err != nil {
		t.Fatal(err)
	}
	local := &client.Spec{Name: "s", Command: "srv", Cwd: dir}
	remote := &client.Spec{Name: "s", URL: "https://example.com/mcp"}
	many := map[string]string{}
	for i := range maxPathStrings + 1 {
		many[strings.Repeat("k", i+1)] = "notes/new.md"
	}
	manyArgs, _ := json.Marshal(many)
	// A new path, then two strings of more new words than there are
	// lookups for: past the bound a word is not looked at, so it may exist.
	var words [2][]string
	for i := range maxLookups + 1 {
		words[i%2] = append(words[i%2], fmt.Sprintf("w%d", i))
	}
	wordyArgs := `{"path":"notes/new.md","a":"` + strings.Join(words[0], " ") + `","b":"` + strings.Join(words[1], " ") + `"}`
	cases := []struct {
		spec *client.Spec
		args string
		want bool
	}{
		{local, `{"path":"notes/new.md","content":"a note\n"}`, true},
		{local, `{"path":"` + dir + `/notes/new.md"}`, true},
		{local, `{"path":"~/notes/new.md"}`, true},
		{local, `{"path":"notes/new/deeper.md"}`, false},                    // its directory is not here either
		{local, `{"project":"apps/web"}`, false},                            // an identifier, not a place here
		{local, `{"repo":"owner/name","branch":"feature/x"}`, false},        // nor these
		{local, `{"cmd":"echo hi > notes/x"}`, false},                       // a command line is no path
		{local, `{"path":"README.md","content":"x"}`, false},                // exists
		{local, `{"path":"notes/new.md","content":"see README.md"}`, false}, // a word names what exists
		{local, `{"cmd":"rm -rf build && echo > out/x"}`, false},            // so does a command's
		{local, `{"id":"T-2","title":"Renamed"}`, false},                    // no path at all
		{local, `{"path":"notes/dangling.md"}`, false},                      // a link is there
		{local, `{"path":"."}`, false},
		{local, `{}`, false},
		{local, string(manyArgs), false},              // more strings than are looked at
		{local, wordyArgs, false},                     // more lookups than the bound
		{local, `{"path":"README.md/new.md"}`, false}, // its "directory" is a file
		{remote, `{"path":"notes/new.md"}`, false},
	}
	for _, c := range cases {
		if got := newPaths(c.spec, nil, dir, json.RawMessage(c.args)); got != c.want {
			t.Errorf("newPaths(%s, %.80s) = %v, want %v", c.spec.Name+c.spec.URL, c.args, got, c.want)
		}
	}
}
