package host

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// protHome is a home directory with mcphost's config and state directories
// and a project whose "link" points into the state directory.
type protHome struct {
	home, config, state, proj string
}

func newProtHome(t *testing.T) protHome {
	t.Helper()
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := protHome{home: home, config: filepath.Join(home, ".config", "mcphost"),
		state: filepath.Join(home, ".local", "state", "mcphost"), proj: filepath.Join(home, "proj")}
	for _, d := range []string{h.config, h.state, filepath.Join(h.proj, "src")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(h.state, filepath.Join(h.proj, "link")); err != nil {
		t.Fatal(err)
	}
	return h
}

// within reports whether some path in paths is dir or inside it.
func within(paths []string, dir string) bool {
	return slices.ContainsFunc(paths, func(p string) bool {
		return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
	})
}

// TestArgPlaces checks where path-like argument strings are found to lead,
// for a server started in a project with the home directory on its
// command line. Each row that reaches a protected directory has a
// neighbour that must not.
func TestArgPlaces(t *testing.T) {
	h := newProtHome(t)
	spec := &client.Spec{Name: "fs", Command: "node", Args: []string{"server.js", h.home}, Cwd: h.proj}
	fileURL := (&url.URL{Scheme: "file", Path: filepath.Join(h.proj, "link", "x")}).String()
	cases := []struct {
		name, args string
		want       string // a protected directory some path must be in; "" for none
	}{
		{"relative to the home on the command line", `{"path":".config/mcphost/config.json"}`, h.config},
		{"an ordinary relative path", `{"path":"notes.txt"}`, ""},
		{"dot-dot from the working directory", `{"path":"../.local/state/mcphost/x"}`, h.state},
		{"dot-dot staying in the project", `{"path":"src/../notes.txt"}`, ""},
		{"tilde", `{"path":"~/.config/mcphost/x"}`, h.config},
		{"$HOME", `{"path":"$HOME/.config/mcphost/x"}`, h.config},
		{"${HOME}", `{"path":"${HOME}/.local/state/mcphost"}`, h.state},
		{"a tilde inside a name", `{"path":"a~/.config/mcphost"}`, ""},
		{"a symbolic link into the state directory", `{"path":"link/state.json"}`, h.state},
		{"a link's sibling", `{"path":"src/state.json"}`, ""},
		{"dot-dot after a link, as the kernel does", `{"path":"link/../mcphost/x"}`, h.state},
		{"nested arrays", `{"a":[{"b":[["x","link/y"]]}]}`, h.state},
		{"object keys", `{"files":{"link/y":"content"}}`, h.state},
		{"a file URL", `{"uri":"` + fileURL + `"}`, h.state},
		{"a sentence", `{"text":"please put the config of mcphost where it belongs"}`, ""},
		{"numbers and booleans", `{"n":1,"b":true,"z":null}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, paths := ArgPlaces(spec, nil, h.home, json.RawMessage(c.args))
			for _, dir := range []string{h.config, h.state} {
				if got, want := within(paths, dir), dir == c.want; got != want {
					t.Errorf("a path in %s: %v, want %v; paths %q", dir, got, want, paths)
				}
			}
		})
	}
}

// TestServerBases checks the directories a relative path is joined with.
func TestServerBases(t *testing.T) {
	h := newProtHome(t)
	root := filepath.Join(h.home, "root")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	spec := &client.Spec{Command: "/usr/bin/node", Args: []string{"src", "--dir=" + filepath.Join(h.proj, "link"), "-y"}, Cwd: "", Env: map[string]string{"HOME": h.proj}}
	bases, _ := ArgPlaces(spec, []string{root}, h.home, nil)
	for _, want := range []string{wd, root, "/usr/bin", filepath.Join(h.proj, "link"), h.state, h.home, h.proj} {
		if !slices.Contains(bases, want) {
			t.Errorf("bases %q lack %s", bases, want)
		}
	}
	if slices.Contains(bases, filepath.Join(wd, "src")) {
		t.Errorf("bases %q hold %s, which is no directory", bases, filepath.Join(wd, "src"))
	}
	var dirs []string
	for i := range 3 * maxBases {
		d := filepath.Join(h.home, fmt.Sprint("d", i))
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	if bases, _ := ArgPlaces(&client.Spec{Command: "srv", Args: dirs}, nil, h.home, nil); len(bases) != maxBases {
		t.Errorf("%d bases, want at most %d", len(bases), maxBases)
	}
}

// TestArgPlacesBounded checks that odd and huge arguments are handled
// within the bounds: no crash, at most maxPathStrings strings looked up,
// at most maxLookups file system lookups, link loops cut.
func TestArgPlacesBounded(t *testing.T) {
	h := newProtHome(t)
	if err := os.Symlink("loop2", filepath.Join(h.proj, "loop1")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop1", filepath.Join(h.proj, "loop2")); err != nil {
		t.Fatal(err)
	}
	var many strings.Builder
	many.WriteString(`{"a":[`)
	for i := range 5000 {
		fmt.Fprintf(&many, `"d%d/e/f/g/h/i/j",`, i)
	}
	many.WriteString(`"link/x"]}`)
	spec := &client.Spec{Cwd: h.proj}
	for _, args := range []string{
		`{"path":"loop1/x"}`, `{"path":"` + strings.Repeat("a/", 5000) + `"}`, `{"path":"\u0000"}`,
		`{"path":`, `[[[[`, `"just a string"`, `{"path":"` + strings.Repeat("../", 100) + `"}`, many.String(),
	} {
		_, paths := ArgPlaces(spec, []string{h.proj, h.home}, h.home, json.RawMessage(args))
		if limit := maxPathStrings * maxBases * 2; len(paths) > limit {
			t.Errorf("%d paths for %.40s..., want at most %d", len(paths), args, limit)
		}
	}
	if got := argStrings(json.RawMessage(many.String()), maxPathStrings); len(got) != maxPathStrings {
		t.Errorf("argStrings kept %d strings, want %d", len(got), maxPathStrings)
	}
	deep := filepath.Join(h.proj, "src", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k")
	if err := os.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	r := &resolver{seen: map[string]lookup{}, budget: 10}
	r.resolve(filepath.Join(deep, "x"))
	if r.budget < 0 || len(r.seen) > 10 {
		t.Errorf("resolve made %d lookups with a budget of 10", len(r.seen))
	}
	if got := RealPath(filepath.Join(h.proj, "loop1", "x")); !strings.HasPrefix(got, h.proj) {
		t.Errorf("RealPath through a link loop = %s", got)
	}
}

// TestGateProtectsResolvedPaths runs calls through a gate over a real
// fixture server, headless, with the home directory as the policy's home
// and a project offered as a root: relative, link and root-relative paths
// into the state or config directory are blocked and never sent, an
// ordinary path runs, and a path hidden behind more strings than are
// looked up on the file system is still found.
func TestGateProtectsResolvedPaths(t *testing.T) {
	h := newProtHome(t)
	spec := client.Spec{Name: "f", Dial: func(ctx context.Context) (mcp.Transport, error) {
		f, err := fixtures.New("tasks", fixtures.Options{})
		if err != nil {
			return nil, err
		}
		return f.InMemory(ctx)
	}}
	root := (&url.URL{Scheme: "file", Path: h.proj}).String()
	m := client.New([]client.Spec{spec}, client.Options{Roots: []*mcp.Root{{URI: root, Name: "proj"}}})
	t.Cleanup(func() { m.Close() })
	m.Start(context.Background())
	p, err := decide.Compile(nil, decide.Options{AutoApprove: decide.ApproveAdditive, Home: h.home, ProtectedPaths: []string{h.config, h.state}})
	if err != nil {
		t.Fatal(err)
	}
	g := NewGate(GateOptions{Catalog: m, Policy: p, Trusted: func(string) bool { return true }, Mode: decide.Headless,
		Audit: openAudit(t)})

	var padded strings.Builder
	padded.WriteString(`{"title":"x","steps":[`)
	for i := range maxPathStrings + 8 {
		fmt.Fprintf(&padded, `"tag%d",`, i)
	}
	padded.WriteString(`".config/mcphost/config.json"]}`)
	for _, c := range []struct {
		name, args string
		blocked    bool
	}{
		{"relative to the home", `{"title":".config/mcphost/config.json"}`, true},
		{"relative to the root", `{"title":"../.local/state/mcphost/x"}`, true},
		{"through a link", `{"title":"link/state.json"}`, true},
		{"past the looked-up strings", padded.String(), true},
		{"an ordinary path", `{"title":"notes.txt"}`, false},
	} {
		r := g.Call(context.Background(), Call{Server: "f", Tool: "create_task", Args: json.RawMessage(c.args)})
		if blocked := r.Status == StatusBlocked && r.Decision.Has(decide.CodeProtectedPath) && r.Decision.Tier == decide.T3; blocked != c.blocked {
			t.Errorf("%s: status %s, tier %s, reasons %v; want blocked at T3 for a protected path: %v",
				c.name, r.Status, r.Decision.Tier, r.Decision.Reasons, c.blocked)
		}
		if !c.blocked && len(r.Attempts) == 0 {
			t.Errorf("%s: never ran (%s)", c.name, r.Status)
		}
	}
}

func openAudit(t *testing.T) AuditLog {
	t.Helper()
	l, err := audit.Open(filepath.Join(t.TempDir(), "audit.jsonl"), audit.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// BenchmarkArgPlaces is a write_file call of a server started in a
// project: the file system lookups the gate adds to every call.
func BenchmarkArgPlaces(b *testing.B) {
	home, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	proj := filepath.Join(home, "proj")
	if err := os.MkdirAll(filepath.Join(proj, "notes"), 0o700); err != nil {
		b.Fatal(err)
	}
	spec := &client.Spec{Command: "node", Args: []string{"server.js", home}, Cwd: proj}
	args := json.RawMessage(`{"path":"notes/today.md","content":"a line of prose"}`)
	for b.Loop() {
		ArgPlaces(spec, nil, home, args)
	}
}

// TestArgPlacesSkipsArgsWithoutStrings checks that the gate reads the file
// system for a call's arguments only when they hold a string, and that
// skipping it changes no verdict: Decide finds a protected path only
// through a string (the same arguments with the bases of a server whose
// working directory is inside the state directory are not blocked), while
// a string, an object's key included, still gets its bases and resolved
// paths.
func TestArgPlacesSkipsArgsWithoutStrings(t *testing.T) {
	h := newProtHome(t)
	p, err := decide.Compile(nil, decide.Options{AutoApprove: decide.ApproveAdditive, Home: h.home, ProtectedPaths: []string{h.config, h.state}})
	if err != nil {
		t.Fatal(err)
	}
	g := NewGate(GateOptions{Policy: p})
	spec := &client.Spec{Name: "f", Command: "srv", Cwd: h.state}
	yes := true
	tool := &client.Tool{Server: "f", Name: "t", Annotations: client.Annotations{Present: true, ReadOnly: &yes}}
	for _, args := range []string{`{}`, `[1,true,null,[2.5e3,{}]]`, `[]`, `null`} {
		bases, paths := g.argPlaces(spec, json.RawMessage(args))
		if bases != nil || paths != nil {
			t.Errorf("argPlaces(%s) = %q, %q; want no lookups for arguments without a string", args, bases, paths)
		}
		allBases, _ := ArgPlaces(spec, nil, h.home, json.RawMessage(args))
		if !slices.Contains(allBases, h.state) {
			t.Fatalf("ArgPlaces bases %q lack the working directory %s", allBases, h.state)
		}
		in := decide.Input{Server: DecideServer(spec, true), Tool: DecideTool(tool, ""), Args: json.RawMessage(args), Mode: decide.Headless}
		without := p.Decide(in)
		in.Bases = allBases
		with := p.Decide(in)
		if with.Tier != without.Tier || with.Has(decide.CodeProtectedPath) || without.Has(decide.CodeProtectedPath) {
			t.Errorf("%s: tier %s with the bases, %s without (reasons %v, %v); want the same, no protected path",
				args, with.Tier, without.Tier, with.Reasons, without.Reasons)
		}
	}
	for _, args := range []string{`{"path":"x"}`, `{"x":1}`} {
		bases, paths := g.argPlaces(spec, json.RawMessage(args))
		if !slices.Contains(bases, h.state) || !slices.Contains(paths, filepath.Join(h.state, "x")) {
			t.Errorf("argPlaces(%s) = %q, %q; want the working directory %s among the bases and %s among the paths",
				args, bases, paths, h.state, filepath.Join(h.state, "x"))
		}
	}
}
