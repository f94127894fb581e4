package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
)

// What a call really does, whatever its annotations say: the ground truth
// the gate's questions are judged against.
type effect int

const (
	reads  effect = iota // changes nothing
	writes               // adds or changes something, and loses nothing
	risky                // may lose or overwrite data, or reaches mcphost's own files
)

// template is one kind of call in a session: a tool, how often it comes,
// what it really does, and its arguments.
type template struct {
	server, tool string
	weight       int
	effect       effect
	protected    bool // it reaches mcphost's own files (a read of the project file, a write of the config)
	// args returns the call's arguments, or ok false when the session's
	// state does not allow the call yet (nothing to delete, say).
	args func(w *world) (json.RawMessage, bool)
}

// world is what a session has made so far, so that later calls name it.
type world struct {
	home, proj string
	n          int      // calls so far
	notes      []string // files written under notes/, not yet moved
	entities   []string // memory entities created, not yet deleted
	tasks      []string // task ids created, not yet deleted
}

func js(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func always(v any) func(*world) (json.RawMessage, bool) {
	return func(*world) (json.RawMessage, bool) { return js(v), true }
}

// The workloads. The weights are those of a working session as an assistant
// does it: mostly reading, some additive writes, few changes that can lose
// data. Every row says what the call does in truth.
var (
	fsCalls = []template{
		{"fs", "list_directory", 8, reads, false, always(map[string]any{"path": "."})},
		{"fs", "list_directory", 4, reads, false, always(map[string]any{"path": "src"})},
		{"fs", "list_directory", 2, reads, false, func(w *world) (json.RawMessage, bool) { return js(map[string]any{"path": w.proj}), true }},
		{"fs", "list_directory", 1, reads, false, func(w *world) (json.RawMessage, bool) { return js(map[string]any{"path": w.home}), true }},
		{"fs", "list_directory_with_sizes", 2, reads, false, always(map[string]any{"path": "."})},
		{"fs", "directory_tree", 3, reads, false, always(map[string]any{"path": "src"})},
		{"fs", "read_text_file", 12, reads, false, always(map[string]any{"path": "src/main.go"})},
		{"fs", "read_text_file", 6, reads, false, always(map[string]any{"path": "README.md"})},
		{"fs", "read_multiple_files", 2, reads, false, always(map[string]any{"paths": []string{"src/main.go", "src/util.go"}})},
		{"fs", "get_file_info", 3, reads, false, always(map[string]any{"path": "src/util.go"})},
		{"fs", "search_files", 4, reads, false, always(map[string]any{"path": ".", "pattern": "*.go"})},
		{"fs", "list_allowed_directories", 1, reads, false, always(map[string]any{})},
		{"fs", "create_directory", 2, writes, false, func(w *world) (json.RawMessage, bool) {
			return js(map[string]any{"path": fmt.Sprintf("build/out-%d", w.n)}), true
		}},
		{"fs", "write_file", 3, writes, false, func(w *world) (json.RawMessage, bool) {
			p := fmt.Sprintf("notes/n-%d.md", w.n)
			w.notes = append(w.notes, p)
			return js(map[string]any{"path": p, "content": "a note\n"}), true
		}},
		{"fs", "write_file", 1, risky, false, always(map[string]any{"path": "README.md", "content": "# proj\n\nRewritten.\n"})},
		{"fs", "edit_file", 1, risky, false, always(map[string]any{"path": "src/util.go", "edits": []map[string]string{{"oldText": "package main", "newText": "package main"}}})},
		{"fs", "move_file", 1, risky, false, func(w *world) (json.RawMessage, bool) {
			if len(w.notes) == 0 {
				return nil, false
			}
			p := w.notes[0]
			w.notes = w.notes[1:]
			return js(map[string]any{"source": p, "destination": strings.Replace(p, "notes/", "archive/", 1)}), true
		}},
		{"fs", "read_text_file", 1, risky, true, always(map[string]any{"path": ".mcp.json"})},
	}
	memCalls = []template{
		{"mem", "read_graph", 8, reads, false, always(map[string]any{})},
		{"mem", "search_nodes", 8, reads, false, always(map[string]any{"query": "project"})},
		{"mem", "open_nodes", 4, reads, false, func(w *world) (json.RawMessage, bool) {
			if len(w.entities) == 0 {
				return nil, false
			}
			return js(map[string]any{"names": w.entities[:1]}), true
		}},
		{"mem", "create_entities", 4, writes, false, func(w *world) (json.RawMessage, bool) {
			name := fmt.Sprintf("e-%d", w.n)
			w.entities = append(w.entities, name)
			return js(map[string]any{"entities": []map[string]any{{"name": name, "entityType": "note", "observations": []string{"seen in the project"}}}}), true
		}},
		{"mem", "add_observations", 3, writes, false, func(w *world) (json.RawMessage, bool) {
			if len(w.entities) == 0 {
				return nil, false
			}
			return js(map[string]any{"observations": []map[string]any{{"entityName": w.entities[len(w.entities)-1], "contents": []string{fmt.Sprintf("fact %d", w.n)}}}}), true
		}},
		{"mem", "create_relations", 2, writes, false, func(w *world) (json.RawMessage, bool) {
			if len(w.entities) < 2 {
				return nil, false
			}
			return js(map[string]any{"relations": []map[string]any{{"from": w.entities[0], "to": w.entities[len(w.entities)-1], "relationType": "relates to"}}}), true
		}},
		{"mem", "delete_observations", 1, risky, false, func(w *world) (json.RawMessage, bool) {
			if len(w.entities) == 0 {
				return nil, false
			}
			return js(map[string]any{"deletions": []map[string]any{{"entityName": w.entities[0], "observations": []string{"seen in the project"}}}}), true
		}},
		{"mem", "delete_entities", 1, risky, false, func(w *world) (json.RawMessage, bool) {
			if len(w.entities) < 3 {
				return nil, false
			}
			name := w.entities[0]
			w.entities = w.entities[1:]
			return js(map[string]any{"entityNames": []string{name}}), true
		}},
	}
	taskCalls = []template{
		{"tasks", "list_tasks", 8, reads, false, always(map[string]any{})},
		{"tasks", "get_task", 8, reads, false, always(map[string]any{"id": "T-1"})},
		{"tasks", "get_digest", 3, reads, false, always(map[string]any{})},
		{"tasks", "fleet_status", 1, reads, false, always(map[string]any{})},
		{"tasks", "search_context", 2, reads, false, always(map[string]any{"query": "launch"})},
		{"tasks", "create_task", 3, writes, false, always(map[string]any{"title": "Follow up"})},
		{"tasks", "comment_on_task", 3, writes, false, always(map[string]any{"id": "T-1", "body": "Looked at it."})},
		{"tasks", "set_step_status", 1, writes, false, always(map[string]any{"id": "T-1", "step": "T-1.1", "status": "done"})},
		{"tasks", "update_task", 1, risky, false, always(map[string]any{"id": "T-2", "title": "Renamed"})},
		{"tasks", "delete_task", 1, risky, false, func(w *world) (json.RawMessage, bool) {
			if len(w.tasks) == 0 {
				return nil, false
			}
			id := w.tasks[0]
			w.tasks = w.tasks[1:]
			return js(map[string]any{"id": id}), true
		}},
	}
)

// set is one row of the table: which servers, trusted or not, and the
// workload drawn from.
type set struct {
	Name      string
	Servers   []string // of "tasks", "fs", "mem"
	Untrusted bool     // the servers are not trusted, as a project file's are
	// TrustsOnOffer: the person takes the dialog's offer to trust a
	// server, made when its being untrusted is the only reason a call
	// asks (host.Question.TrustLifts), as the chat's trust step does: the
	// server is trusted from then on and the call is approved once.
	// Without it the person never trusts, whatever the dialog offers.
	TrustsOnOffer bool
	Calls         []template
}

var sets = []set{
	{Name: "tasks fixture", Servers: []string{"tasks"}, Calls: taskCalls},
	{Name: "server-filesystem (npm)", Servers: []string{"fs"}, Calls: fsCalls},
	{Name: "server-memory (npm)", Servers: []string{"mem"}, Calls: memCalls},
	{Name: "all three", Servers: []string{"tasks", "fs", "mem"}, Calls: slices.Concat(taskCalls, fsCalls, memCalls)},
	{Name: "server-filesystem, untrusted", Servers: []string{"fs"}, Untrusted: true, TrustsOnOffer: true, Calls: fsCalls},
	{Name: "server-filesystem, untrusted, never trusted", Servers: []string{"fs"}, Untrusted: true, Calls: fsCalls},
}

// tally is what a session's calls came to.
type tally struct {
	Calls                  int      `json:"calls"`
	Prompts                int      `json:"prompts"`
	PromptsByTier          [4]int   `json:"promptsByTier"` // T0 (always 0), T1, T2, T3
	Risky                  int      `json:"risky"`
	RiskyAsked             int      `json:"riskyAsked"`
	Protected              int      `json:"protected"` // calls reaching mcphost's own files
	ProtAsked              int      `json:"protectedAsked"`
	NeedlessPrompts        int      `json:"needlessPrompts"`       // prompts for calls that only read or add
	ReadsT3NotProtected    int      `json:"readsT3NotProtected"`   // reads asked at T3 for another reason than a protected file
	ProtectedReasonOnRead  int      `json:"protectedReasonOnRead"` // reads of ordinary paths flagged protected-path (must be 0)
	Failed                 int      `json:"failed"`                // calls the server answered with an error, or that did not run
	RiskyUnasked           []string `json:"riskyUnasked,omitempty"`
	ReadsT3NotProtectedOne string   `json:"readsT3NotProtectedExample,omitempty"`
}

func (t *tally) add(o tally) {
	t.Calls += o.Calls
	t.Prompts += o.Prompts
	for i := range t.PromptsByTier {
		t.PromptsByTier[i] += o.PromptsByTier[i]
	}
	t.Risky += o.Risky
	t.RiskyAsked += o.RiskyAsked
	t.Protected += o.Protected
	t.ProtAsked += o.ProtAsked
	t.NeedlessPrompts += o.NeedlessPrompts
	t.ReadsT3NotProtected += o.ReadsT3NotProtected
	t.ProtectedReasonOnRead += o.ProtectedReasonOnRead
	t.Failed += o.Failed
	t.RiskyUnasked = append(t.RiskyUnasked, o.RiskyUnasked...)
	if t.ReadsT3NotProtectedOne == "" {
		t.ReadsT3NotProtectedOne = o.ReadsT3NotProtectedOne
	}
}

// person answers the gate's questions as a careful person does: a call the
// dialog shows at T1, or one that only reads, is approved for the session
// where the dialog offers it; anything else once, so that it asks again.
// With trust set, the person takes the dialog's offer to trust a server
// (set.TrustsOnOffer) the first time it is made.
type person struct {
	current *template
	asked   bool
	trust   func(server string)
}

func (p *person) Ask(_ context.Context, q *host.Question) (host.Answer, error) {
	p.asked = true
	if q.TrustLifts && p.trust != nil {
		p.trust(q.Server)
		return host.Answer{Approve: true, Scope: decide.ScopeOnce}, nil
	}
	scope := decide.ScopeOnce
	if (q.Decision.Tier == decide.T1 || p.current.effect == reads) && p.current.effect != risky && slices.Contains(q.Scopes, decide.ScopeSession) {
		scope = decide.ScopeSession
	}
	return host.Answer{Approve: true, Scope: scope}, nil
}

// env is the machine a session runs on: the servers' programs and a
// temporary home directory with a project in it.
type env struct {
	self string // this program, which serves the tasks fixture when re-run
	node string
	npm  string // interop/node_modules/.bin
	tmp  string
}

// runSession runs n calls drawn with seed from s's workload through a real
// gate in front of real servers, answered by a person, and counts.
func runSession(ctx context.Context, e *env, s set, seed uint64, n int) (tally, error) {
	var t tally
	dir, err := os.MkdirTemp(e.tmp, "session-")
	if err != nil {
		return t, err
	}
	w := &world{home: filepath.Join(dir, "home")}
	w.proj = filepath.Join(w.home, "proj")
	for _, d := range []string{".config/mcphost", ".local/state/mcphost/tokens", ".cache/mcphost", "proj/src", "proj/notes", "proj/archive", "proj/build"} {
		if err := os.MkdirAll(filepath.Join(w.home, d), 0o700); err != nil {
			return t, err
		}
	}
	files := map[string]string{
		"proj/src/main.go": "package main\n\nfunc main() {}\n", "proj/src/util.go": "package main\n\nfunc util() {}\n",
		"proj/README.md": "# proj\n", "proj/.mcp.json": `{"mcpServers": {}}`, ".config/mcphost/config.json": `{}`,
	}
	for p, c := range files {
		if err := os.WriteFile(filepath.Join(w.home, p), []byte(c), 0o600); err != nil {
			return t, err
		}
	}

	var specs []client.Spec
	var trustMu sync.Mutex // the person trusts while the gate may be reading
	trusted := map[string]bool{}
	for _, name := range s.Servers {
		sp := client.Spec{Name: name, Cwd: w.proj, Env: map[string]string{"HOME": w.home}}
		switch name {
		case "tasks":
			sp.Command, sp.Args = e.self, []string{fixtureArg, "tasks"}
		case "fs":
			sp.Command, sp.Args = e.node, []string{filepath.Join(e.npm, "mcp-server-filesystem"), w.proj, w.home}
		case "mem":
			sp.Command, sp.Args = e.node, []string{filepath.Join(e.npm, "mcp-server-memory")}
			sp.Env["MEMORY_FILE_PATH"] = filepath.Join(dir, "memory.jsonl")
		}
		specs = append(specs, sp)
		trusted[name] = !s.Untrusted
	}
	m := client.New(specs, client.Options{StartTimeout: 30 * time.Second})
	defer m.Close()
	m.Start(ctx)
	for _, st := range m.Servers() {
		if st.State != client.StateReady {
			return t, fmt.Errorf("server %s is %s: %s", st.Name, st.State, st.LastError)
		}
	}

	// The host's own files, as mcphost protects them (cmd/mcphost policy).
	protected := []string{
		filepath.Join(w.home, ".config", "mcphost"), filepath.Join(w.home, ".local", "state", "mcphost"),
		filepath.Join(w.home, ".cache", "mcphost"), filepath.Join(w.proj, ".mcp.json"),
	}
	policy, err := decide.Compile(nil, decide.Options{AutoApprove: decide.ApproveAdditive, ProtectedPaths: protected, Home: w.home})
	if err != nil {
		return t, err
	}
	log, err := audit.Open(filepath.Join(dir, "audit.jsonl"), audit.Options{})
	if err != nil {
		return t, err
	}
	defer log.Close()
	p := &person{}
	if s.TrustsOnOffer {
		p.trust = func(server string) { trustMu.Lock(); trusted[server] = true; trustMu.Unlock() }
	}
	gate := host.NewGate(host.GateOptions{
		Catalog: m, Policy: policy, Trusted: func(name string) bool { trustMu.Lock(); defer trustMu.Unlock(); return trusted[name] },
		Asker: p, Mode: decide.Interactive, Audit: log, SessionID: "bench",
	})

	r := rand.New(rand.NewPCG(seed, 0x6d6370686f7374))
	total := 0
	for _, c := range s.Calls {
		total += c.weight
	}
	taskID := regexp.MustCompile(`"id":"(T-\d+)"`)
	for t.Calls < n {
		c := &s.Calls[0]
		for k, x := r.IntN(total), 0; ; x++ {
			if k < s.Calls[x].weight {
				c = &s.Calls[x]
				break
			}
			k -= s.Calls[x].weight
		}
		args, ok := c.args(w)
		if !ok {
			continue
		}
		w.n++
		t.Calls++
		p.current, p.asked = c, false
		res := gate.Call(ctx, host.Call{Server: c.server, Tool: c.tool, Args: args})
		if res.Status != host.StatusSuccess {
			t.Failed++
		} else if c.tool == "create_task" {
			if mm := taskID.FindStringSubmatch(host.ResultText(res.Result)); mm != nil {
				w.tasks = append(w.tasks, mm[1])
			}
		}
		d := res.Decision
		if p.asked {
			t.Prompts++
			t.PromptsByTier[d.Tier]++
			if c.effect != risky {
				t.NeedlessPrompts++
			}
			if c.effect == reads && d.Tier == decide.T3 && !d.Has(decide.CodeProtectedPath) {
				t.ReadsT3NotProtected++
				if t.ReadsT3NotProtectedOne == "" {
					t.ReadsT3NotProtectedOne = fmt.Sprintf("%s/%s %s: %v", c.server, c.tool, args, reasonCodes(d))
				}
			}
		}
		if c.effect == reads && d.Has(decide.CodeProtectedPath) {
			t.ProtectedReasonOnRead++
		}
		if c.effect == risky {
			t.Risky++
			if p.asked {
				t.RiskyAsked++
			} else {
				t.RiskyUnasked = append(t.RiskyUnasked, fmt.Sprintf("%s/%s %s (%s by %s)", c.server, c.tool, args, d.Verdict, res.DecidedBy))
			}
		}
		if c.protected {
			t.Protected++
			if p.asked {
				t.ProtAsked++
			}
		}
	}
	return t, nil
}

func reasonCodes(d decide.Decision) []string {
	out := make([]string, len(d.Reasons))
	for i, r := range d.Reasons {
		out[i] = r.Code
	}
	return out
}
