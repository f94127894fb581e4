package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/host"
)

// managedFixtureArg makes the test binary a fixture server over stdio, so
// that in-process tests start real subprocess servers.
const managedFixtureArg = "managed-test-fixture"

func init() {
	if len(os.Args) > 2 && os.Args[1] == managedFixtureArg {
		os.Exit(fixtures.Main(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
}

// managedEnv is one machine: a user's config and state under dir, and a
// managed policy at dir/managed.json that tests write or leave out.
type managedEnv struct {
	t   *testing.T
	dir string
	exe string
}

func newManagedEnv(t *testing.T) *managedEnv {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e := &managedEnv{t: t, dir: t.TempDir(), exe: exe}
	old := managedPath
	managedPath = filepath.Join(e.dir, "managed.json")
	t.Cleanup(func() { managedPath = old })
	return e
}

func (e *managedEnv) write(name, data string) string {
	e.t.Helper()
	path := filepath.Join(e.dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return path
}

func (e *managedEnv) managed(data string) { e.write("managed.json", data) }

func (e *managedEnv) noManaged() {
	if err := os.Remove(managedPath); err != nil && !os.IsNotExist(err) {
		e.t.Fatal(err)
	}
}

// userConfig writes the user's config with a tasks fixture server, trusted,
// and the given permissions object.
func (e *managedEnv) userConfig(permissions string) {
	cfg := map[string]any{"mcpServers": map[string]any{
		"tasks": map[string]any{"command": e.exe, "args": []string{managedFixtureArg, "tasks"}, "trust": true},
	}}
	if permissions != "" {
		cfg["permissions"] = json.RawMessage(permissions)
	}
	data, _ := json.Marshal(cfg)
	e.write("config/mcphost/config.json", string(data))
}

func (e *managedEnv) streams() (*streams, *bytes.Buffer, *bytes.Buffer) {
	env := map[string]string{"XDG_STATE_HOME": filepath.Join(e.dir, "state"), "XDG_CONFIG_HOME": filepath.Join(e.dir, "config"), "NO_COLOR": "1"}
	var out, errOut bytes.Buffer
	work := filepath.Join(e.dir, "work")
	_ = os.MkdirAll(work, 0o755)
	return &streams{In: strings.NewReader(""), Out: &out, Err: &errOut, Getenv: func(k string) string { return env[k] }, WorkDir: work}, &out, &errOut
}

func (e *managedEnv) run(args ...string) (code int, stdout, stderr string) {
	e.t.Helper()
	s, out, errOut := e.streams()
	code = run(context.Background(), args, s)
	return code, out.String(), errOut.String()
}

// alwaysGrant records an "always" grant for tasks/delete_task as the
// dialog would, bound to the server's identity and the tool's definition.
func (e *managedEnv) alwaysGrant() {
	e.t.Helper()
	code, out, errOut := e.run("tools", "--json")
	if code != 0 {
		e.t.Fatalf("tools: exit %d: %s", code, errOut)
	}
	var tools []struct {
		Server, Name   string
		DefinitionHash string `json:"definitionHash"`
	}
	if err := json.Unmarshal([]byte(out), &tools); err != nil {
		e.t.Fatal(err)
	}
	hash := ""
	for _, t := range tools {
		if t.Server == "tasks" && t.Name == "delete_task" {
			hash = t.DefinitionHash
		}
	}
	code, out, errOut = e.run("servers", "--json")
	if code != 0 {
		e.t.Fatalf("servers: exit %d: %s", code, errOut)
	}
	var servers []struct{ Name, Identity string }
	if err := json.Unmarshal([]byte(out), &servers); err != nil {
		e.t.Fatal(err)
	}
	if hash == "" || len(servers) != 1 || servers[0].Identity == "" {
		e.t.Fatalf("no delete_task hash (%q) or server identity (%v)", hash, servers)
	}
	store, err := host.OpenStateStore(filepath.Join(e.dir, "state", "mcphost", "state.json"), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := store.AddAlwaysGrant(decide.Grant{Scope: decide.ScopeAlways, Server: servers[0].Identity, Tool: "delete_task", DefinitionHash: hash}, "tasks"); err != nil {
		e.t.Fatal(err)
	}
}

// TestManagedRulesBeatEveryLoosening: a call a user allow rule, --allow or
// an "always" grant lets run without asking is refused by a managed deny
// (exit 4) and needs a person under a managed ask (headless: exit 3),
// whatever the user's side says.
func TestManagedRulesBeatEveryLoosening(t *testing.T) {
	e := newManagedEnv(t)
	call := []string{"call", "tasks/delete_task", `{"id": "T-2"}`}
	for _, tc := range []struct {
		name        string
		permissions string
		flags       []string
		grant       bool
	}{
		{name: "user allow rule", permissions: `{"allow": ["tasks/delete_task"]}`},
		{name: "--allow", flags: []string{"--allow", "tasks/delete_*"}},
		{name: "always grant", grant: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.noManaged()
			e.userConfig(tc.permissions)
			if tc.grant {
				e.alwaysGrant()
			}
			args := append(append([]string{}, call...), tc.flags...)
			// The loosening works on its own ...
			if code, _, errOut := e.run(args...); code != exitOK || !strings.Contains(errOut, "tasks/delete_task: allow by") {
				t.Fatalf("without a managed policy: exit %d, %s; want it allowed", code, errOut)
			}
			// ... a managed deny refuses the call anyway ...
			e.managed(`{"permissions": {"deny": ["tasks/delete_*"]}}`)
			code, _, errOut := e.run(args...)
			if code != exitDenied || !strings.Contains(errOut, "denied by the rule managed:deny[0]") {
				t.Errorf("managed deny: exit %d, %s; want %d naming the managed policy", code, errOut, exitDenied)
			}
			// ... and a managed ask makes it need a person.
			e.managed(`{"permissions": {"ask": ["tasks/delete_task"]}}`)
			if code, _, errOut := e.run(args...); code != exitBlocked || !strings.Contains(errOut, "needs approval") {
				t.Errorf("managed ask: exit %d, %s; want %d", code, errOut, exitBlocked)
			}
			// --yes answers in the person's name without showing them the
			// call, so it does not answer a managed ask either.
			if code, _, errOut := e.run(append([]string{"call", "--yes"}, args[1:]...)...); code != exitBlocked {
				t.Errorf("managed ask with --yes: exit %d, %s; want %d", code, errOut, exitBlocked)
			}
		})
	}
}

// TestManagedRulesBeatSessionGrants: within a session, a grant for the
// session allows the call until a managed deny or ask applies.
func TestManagedRulesBeatSessionGrants(t *testing.T) {
	e := newManagedEnv(t)
	e.userConfig(`{"allow": ["tasks/*"]}`)
	in := decide.Input{
		Server: decide.Server{Name: "tasks", Identity: "id", Trusted: true},
		Tool: decide.Tool{Name: "delete_task", Present: true, DefinitionHash: "h",
			Declared: decide.Hints{ReadOnly: decide.False, Destructive: decide.True, OpenWorld: decide.False}},
		Session: decide.Session{Grants: []decide.Grant{{Scope: decide.ScopeSession, Server: "id", Tool: "delete_task", DefinitionHash: "h"}}},
		Mode:    decide.Interactive,
	}
	decideWith := func(managed string) decide.Decision {
		t.Helper()
		if managed == "" {
			e.noManaged()
		} else {
			e.managed(managed)
		}
		s, _, errOut := e.streams()
		g := &globalOptions{}
		st, err := loadSetup(g, s)
		if err != nil {
			t.Fatalf("loadSetup: %v (%s)", err, errOut)
		}
		p, err := st.policy(g, s)
		if err != nil {
			t.Fatal(err)
		}
		return p.Decide(in)
	}
	// No rule here lets the call through on its own: drop the allow rule
	// and the session grant is what allows it.
	e.userConfig("")
	if d := decideWith(""); d.Verdict != decide.Allow || d.Grant == nil {
		t.Fatalf("session grant alone: %v (grant %v), want allow by the grant", d.Verdict, d.Grant)
	}
	e.userConfig(`{"allow": ["tasks/*"]}`)
	if d := decideWith(`{"permissions": {"deny": ["*/delete_*"]}}`); d.Verdict != decide.Deny {
		t.Errorf("managed deny with a session grant and an allow rule: %v, want deny", d.Verdict)
	}
	if d := decideWith(`{"permissions": {"ask": ["tasks/delete_task"]}}`); d.Verdict != decide.Ask || d.Grant != nil {
		t.Errorf("managed ask with a session grant and an allow rule: %v (grant %v), want ask", d.Verdict, d.Grant)
	}
}

// TestManagedDeniedServerNeverStarts: a denied server does not start from
// the user's file, --server or .mcp.json (consented with --trust), and the
// message names the managed file. The server is the test binary; had it
// started, it would have written its execution log.
func TestManagedDeniedServerNeverStarts(t *testing.T) {
	e := newManagedEnv(t)
	e.managed(`{"deniedServers": [{"command": "*", "args": ["` + managedFixtureArg + `", "flaky", "--log", "*"]}]}`)
	execLog := filepath.Join(e.dir, "exec.jsonl")
	args := []string{managedFixtureArg, "flaky", "--log", execLog}
	entry, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"fl": map[string]any{"command": e.exe, "args": args}}})
	for _, tc := range []struct {
		name string
		args []string
		file string // where the entry is written
	}{
		{name: "user file", file: "config/mcphost/config.json"},
		{name: "--server", args: []string{"--server", "fl=" + e.exe + " " + strings.Join(args, " ")}},
		{name: ".mcp.json", file: "work/.mcp.json", args: []string{"--trust", "fl"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_ = os.Remove(filepath.Join(e.dir, "config/mcphost/config.json"))
			_ = os.Remove(filepath.Join(e.dir, "work/.mcp.json"))
			if tc.file != "" {
				e.write(tc.file, string(entry))
			}
			code, _, errOut := e.run(append([]string{"call", "fl/read_value", `{"key": "k"}`}, tc.args...)...)
			if code == exitOK {
				t.Errorf("the call ran: %s", errOut)
			}
			if !strings.Contains(errOut, `server "fl"`) || !strings.Contains(errOut, "denied by the managed policy (deniedServers entry at "+managedPath+":1:") {
				t.Errorf("stderr does not say the managed policy keeps fl from starting:\n%s", errOut)
			}
			if _, err := os.Stat(execLog); err == nil {
				t.Errorf("the denied server started: %s exists", execLog)
			}
		})
	}
}

// TestManagedTrustFalse: with "trust": false no server is trusted, whether
// the user's file, --trust or a remembered choice says so.
func TestManagedTrustFalse(t *testing.T) {
	e := newManagedEnv(t)
	e.userConfig("")
	code, out, errOut := e.run("tools")
	if code != 0 || !strings.Contains(out, "tasks/list_tasks") || !strings.Contains(out, "trusted") || strings.Contains(out, "untrusted") {
		t.Fatalf("without a managed policy: exit %d:\n%s%s", code, out, errOut)
	}
	e.managed(`{"trust": false}`)
	for _, args := range [][]string{{"tools"}, {"tools", "--trust", "tasks"}} {
		code, out, errOut := e.run(args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		rows := 0
		for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
			if !strings.HasPrefix(line, "tasks/") || len(strings.Fields(line)) <= 3 {
				continue // the descriptions below the table
			}
			rows++
			if !strings.Contains(line, "untrusted") {
				t.Errorf("%v: a tool of a trusted-by-the-user server is still trusted: %q", args, line)
			}
		}
		if rows == 0 {
			t.Fatalf("%v: no tool rows in:\n%s", args, out)
		}
		if !strings.Contains(errOut, `server "tasks" is not trusted: the managed policy (`+managedPath+`:1:2) does not let users trust it`) {
			t.Errorf("%v: stderr does not say why tasks is not trusted:\n%s", args, errOut)
		}
	}
	// A read of an untrusted server asks, so headless it is refused.
	if code, _, errOut := e.run("call", "tasks/list_tasks"); code != exitBlocked {
		t.Errorf("call of a read with trust false: exit %d, want %d: %s", code, exitBlocked, errOut)
	}
}

// TestManagedMalformedFailsClosed: a managed file that does not parse
// refuses every command that would start a server or run a call (exit 2),
// naming the file and line; nothing starts.
func TestManagedMalformedFailsClosed(t *testing.T) {
	e := newManagedEnv(t)
	execLog := filepath.Join(e.dir, "exec.jsonl")
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"fl": map[string]any{
		"command": e.exe, "args": []string{managedFixtureArg, "flaky", "--log", execLog}, "trust": true}}})
	e.write("config/mcphost/config.json", string(cfg))
	e.managed("{\n  \"permissions\": {\n    \"deny\": [\"*/delete_*\",]\n  }\n}\n")
	for _, args := range [][]string{
		{"call", "fl/read_value", `{"key": "k"}`},
		{"call", "--yes", "fl/read_value", `{"key": "k"}`},
		{"run", "-p", "hello", "--model", "scripted:x"},
		{"tools"}, {"servers"}, {"explain", "fl/read_value"}, {"policy"},
	} {
		code, _, errOut := e.run(args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d: %s", args, code, exitUsage, errOut)
		}
		if !strings.Contains(errOut, managedPath+":3:") {
			t.Errorf("%v: stderr does not name %s and its line 3:\n%s", args, managedPath, errOut)
		}
	}
	if _, err := os.Stat(execLog); err == nil {
		t.Error("a server started despite the malformed managed policy")
	}
}

// TestManagedAuditAndCeiling: the managed audit path wins over --audit, and
// the user's auto-approve level is lowered to the managed ceiling.
func TestManagedAuditAndCeiling(t *testing.T) {
	e := newManagedEnv(t)
	e.userConfig(`{"autoApprove": "additive"}`)
	audit := filepath.Join(e.dir, "var", "audit.jsonl")
	e.managed(`{"audit": "` + audit + `", "permissions": {"autoApprove": "none"}}`)
	mine := filepath.Join(e.dir, "mine.jsonl")
	code, _, errOut := e.run("call", "tasks/list_tasks", "--audit", mine)
	// Auto-approval "none": even a trusted read asks, so headless it is refused ...
	if code != exitBlocked {
		t.Errorf("a read under a managed ceiling of none: exit %d, want %d: %s", code, exitBlocked, errOut)
	}
	// ... and the record went to the managed log, not to --audit's.
	if _, err := os.Stat(audit); err != nil {
		t.Errorf("no audit log at the managed path: %v", err)
	}
	if _, err := os.Stat(mine); err == nil {
		t.Errorf("--audit moved the audit log to %s", mine)
	}
	if !strings.Contains(errOut, "--audit "+mine+" is ignored") {
		t.Errorf("stderr does not say --audit is ignored:\n%s", errOut)
	}
}

// TestManagedAllowListHoldsDemo: the built-in demo servers have no command
// or URL, so under an allow list they do not start either.
func TestManagedAllowListHoldsDemo(t *testing.T) {
	e := newManagedEnv(t)
	if code, out, errOut := e.run("tools", "--demo"); code != 0 || !strings.Contains(out, "tasks/list_tasks") {
		t.Fatalf("demo without a managed policy: exit %d:\n%s%s", code, out, errOut)
	}
	e.managed(`{"allowedServers": []}`)
	code, out, errOut := e.run("tools", "--demo")
	if strings.Contains(out, "tasks/list_tasks") {
		t.Errorf("a demo server started under an empty allow list (exit %d):\n%s", code, out)
	}
	if !strings.Contains(errOut, `server "tasks" (built in) is not started: not in the allowedServers`) {
		t.Errorf("stderr does not say why the demo is held:\n%s", errOut)
	}
}

// TestManagedFileIsProtected: a call whose arguments lead to the managed
// policy asks at T3 whatever rule allows the tool, even before the file
// exists: no tool may write a policy without a person seeing it.
func TestManagedFileIsProtected(t *testing.T) {
	e := newManagedEnv(t)
	e.userConfig(`{"allow": ["tasks/*"]}`)
	for _, arg := range []string{managedPath, filepath.Join(e.dir, "other.json")} {
		code, out, errOut := e.run("explain", "--json", "tasks/create_task", `{"title": "`+arg+`"}`)
		if code != 0 {
			t.Fatalf("explain: exit %d: %s", code, errOut)
		}
		protected := arg == managedPath
		if got := strings.Contains(out, `"tier": 3`) && strings.Contains(out, `"verdict": "ask"`) && strings.Contains(out, `"protected-path"`); got != protected {
			t.Errorf("create_task with %s: protected = %v, want %v:\n%s", arg, got, protected, out)
		}
	}
}
