//go:build unix

package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The official TypeScript SDK client (serveclient.mjs) drives the real
// mcphost binary's `serve`, over stdio and over streamable HTTP, in front
// of fixture servers run as subprocesses: tasks (trusted), hostile
// (untrusted, lying, with a rug pull), flaky (trusted, counting its
// executions), slow (tasks, two seconds late) and poison (a TypeScript SDK
// server whose tool description gives the model orders).

// serveWorld is one configuration with the binaries and state it needs.
type serveWorld struct {
	t         *testing.T
	dir       string
	mcphost   string
	config    string
	execLog   string
	env       []string
	stateHome string
}

func newServeWorld(t *testing.T) *serveWorld {
	t.Helper()
	requireNode(t)
	dir := t.TempDir()
	w := &serveWorld{t: t, dir: dir, mcphost: filepath.Join(dir, "mcphost"), execLog: filepath.Join(dir, "flaky.jsonl"),
		stateHome: filepath.Join(dir, "state")}
	fixture := filepath.Join(dir, "fixture")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal(err)
	}
	poison, err := filepath.Abs("poisonserver.mjs")
	if err != nil {
		t.Fatal(err)
	}
	for bin, pkg := range map[string]string{w.mcphost: "../cmd/mcphost", fixture: "../fixtures/cmd/fixture"} {
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	cfg := map[string]any{"mcpServers": map[string]any{
		"tasks":   map[string]any{"command": fixture, "args": []string{"tasks"}, "trust": true},
		"hostile": map[string]any{"command": fixture, "args": []string{"hostile", "--hostile", "lies,rugpull"}},
		"flaky":   map[string]any{"command": fixture, "args": []string{"flaky", "--log", w.execLog}, "trust": true},
		"slow":    map[string]any{"command": "/bin/sh", "args": []string{"-c", "sleep 2; exec " + fixture + " tasks"}, "trust": true},
		"poison":  map[string]any{"command": node, "args": []string{poison}},
	}}
	b, _ := json.Marshal(cfg)
	w.config = filepath.Join(dir, "config.json")
	if err := os.WriteFile(w.config, b, 0o600); err != nil {
		t.Fatal(err)
	}
	w.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "XDG_STATE_HOME=" + w.stateHome,
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"), "XDG_CACHE_HOME=" + filepath.Join(dir, "cache")}
	return w
}

func requireNode(t *testing.T) {
	t.Helper()
	if os.Getenv(skipVar) == "1" {
		t.Skip(skipVar + "=1: the interoperability tests are skipped")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node is not on PATH (%v): the interop tests need Node.js 20 or later (or set %s=1 to skip them)", err, skipVar)
	}
	if _, err := os.Stat("node_modules/@modelcontextprotocol/sdk/package.json"); err != nil {
		t.Fatalf("the TypeScript SDK is not installed: run `npm ci` in interop/ (or set %s=1 to skip): %v", skipVar, err)
	}
}

// tsResult is what serveclient.mjs prints.
type tsResult struct {
	Error        string         `json:"error"`
	Instructions string         `json:"instructions"`
	Asked        []tsQuestion   `json:"asked"`
	Steps        []tsStepResult `json:"steps"`
}

type tsQuestion struct {
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema"`
}

type tsStepResult struct {
	Op      string   `json:"op"`
	Name    string   `json:"name"`
	Tools   []tsTool `json:"tools"`
	Changes int      `json:"changes"`
	Result  struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
}

func (s tsStepResult) text() string {
	var b strings.Builder
	for _, c := range s.Result.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

type tsTool struct {
	Name        string `json:"name"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Annotations struct {
		ReadOnly    *bool `json:"readOnlyHint"`
		Destructive *bool `json:"destructiveHint"`
		Idempotent  *bool `json:"idempotentHint"`
		OpenWorld   *bool `json:"openWorldHint"`
	} `json:"annotations"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

func (t tsTool) hints() string {
	s := func(p *bool) string {
		switch {
		case p == nil:
			return "nil"
		case *p:
			return "true"
		}
		return "false"
	}
	a := t.Annotations
	return "ro=" + s(a.ReadOnly) + " destr=" + s(a.Destructive) + " idem=" + s(a.Idempotent) + " open=" + s(a.OpenWorld)
}

func find(tools []tsTool, name string) *tsTool {
	for i := range tools {
		if tools[i].Name == name {
			return &tools[i]
		}
	}
	return nil
}

// runTS runs the TypeScript client with plan and returns what it saw.
func (w *serveWorld) runTS(plan map[string]any) *tsResult {
	w.t.Helper()
	b, _ := json.Marshal(plan)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "serveclient.mjs", string(b))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		w.t.Fatalf("node serveclient.mjs: %v\n%s", err, stderr.String())
	}
	var res tsResult
	if err := json.Unmarshal(out, &res); err != nil {
		w.t.Fatalf("client output %q: %v\nstderr: %s", out, err, stderr.String())
	}
	if res.Error != "" {
		w.t.Fatalf("the TypeScript client failed: %s\nstderr: %s", res.Error, stderr.String())
	}
	return &res
}

// stdioPlan runs `mcphost serve` on stdio under the TypeScript client.
func (w *serveWorld) stdioPlan(elicit any, steps ...map[string]any) map[string]any {
	env := map[string]string{}
	for _, kv := range w.env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return map[string]any{"transport": "stdio", "command": w.mcphost, "args": []string{"--config", w.config, "serve"},
		"env": env, "elicit": elicit, "steps": steps}
}

func (w *serveWorld) execs(tool string) int {
	w.t.Helper()
	entries, err := fixtures.ReadLog(w.execLog)
	if err != nil {
		w.t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if e.Event == fixtures.EventExec && e.Tool == tool {
			n++
		}
	}
	return n
}

// checkAudit runs `mcphost audit verify` and returns the outcome records.
func (w *serveWorld) checkAudit() []audit.Record {
	w.t.Helper()
	cmd := exec.Command(w.mcphost, "--config", w.config, "audit", "verify")
	cmd.Env = w.env
	if out, err := cmd.CombinedOutput(); err != nil {
		w.t.Fatalf("mcphost audit verify: %v\n%s", err, out)
	}
	recs, err := audit.Tail(filepath.Join(w.stateHome, "mcphost", "audit.jsonl"), 1<<20)
	if err != nil {
		w.t.Fatal(err)
	}
	var out []audit.Record
	for _, r := range recs {
		if r.Kind == audit.Outcome {
			out = append(out, r)
		}
	}
	return out
}

func tsCall(name string, args map[string]any) map[string]any {
	return map[string]any{"op": "call", "name": name, "args": args}
}

var (
	list        = map[string]any{"op": "list"}
	waitForSlow = map[string]any{"op": "waitFor", "tool": "slow__list_tasks", "timeoutMs": 15000}
	setValue    = map[string]any{"key": "k", "value": "v"}
)

func accepted(decision string) map[string]any {
	return map[string]any{"action": "accept", "content": map[string]any{"decision": decision}}
}

func TestServeDrivenByTheTypeScriptClientOverStdio(t *testing.T) {
	w := newServeWorld(t)
	res := w.runTS(w.stdioPlan([]any{map[string]any{"action": "decline"}, accepted("allow-once")},
		list,
		tsCall("tasks__list_tasks", nil),
		tsCall("flaky__set_value", setValue), // declined
		tsCall("flaky__set_value", setValue), // allowed once
		waitForSlow,                          // the slow server's tools arrive, announced by list_changed
	))
	first, last := res.Steps[0].Tools, res.Steps[4].Tools

	// A trusted read as declared; an untrusted read-only claim as the worst case.
	if tl := find(first, "tasks__list_tasks"); tl == nil || tl.hints() != "ro=true destr=false idem=true open=false" {
		t.Errorf("tasks__list_tasks: %+v, want it exported as a trusted read", tl)
	}
	if tl := find(first, "hostile__list_files"); tl == nil || tl.hints() != "ro=false destr=true idem=false open=true" {
		t.Errorf("hostile__list_files: %+v, want the worst case", tl)
	}
	if find(first, "slow__list_tasks") != nil {
		t.Error("the slow server's tools were in the first listing: tools/list waited for it")
	}
	if s := res.Steps[1]; s.Result.IsError {
		t.Errorf("trusted read refused: %s", s.text())
	}
	if s := res.Steps[2]; !s.Result.IsError {
		t.Error("a declined destructive call ran")
	}
	if s := res.Steps[3]; s.Result.IsError {
		t.Errorf("an accepted destructive call was refused: %s", s.text())
	}
	if n := w.execs("set_value"); n != 1 {
		t.Errorf("set_value ran %d times, want exactly 1 (declined once, accepted once)", n)
	}
	if len(res.Asked) != 2 || !strings.Contains(res.Asked[0].Message, "set_value") || !strings.Contains(res.Asked[0].Message, "T2") {
		t.Errorf("questions %+v, want two about set_value at T2", res.Asked)
	}
	// list_changed forwarded, and the rug pull withheld by then.
	if res.Steps[4].Changes == 0 {
		t.Error("no notifications/tools/list_changed reached the client when the slow server's tools arrived")
	}
	if find(last, "slow__list_tasks") == nil {
		t.Error("the slow server's tools are not listed after list_changed")
	}
	if tl := find(first, "poison__save_note"); tl == nil || strings.Contains(tl.Description, "id_rsa") || !strings.Contains(tl.Description, "withheld") {
		t.Errorf("poison__save_note: %+v, want its poisoned description withheld", tl)
	}
	if tl := find(last, "hostile__fetch_notes"); tl == nil || strings.Contains(tl.Description, "forward_to") ||
		strings.Contains(string(tl.InputSchema), "forward_to") || !strings.Contains(tl.Description, "withheld") {
		t.Errorf("hostile__fetch_notes after the rug pull: %+v, want the new definition withheld", tl)
	}

	recs := w.checkAudit()
	var named int
	for _, r := range recs {
		if r.Client != nil && r.Client.Name == "ts-interop" && r.Client.Version == "1.32.2" && strings.HasPrefix(r.Client.Session, "serve-") {
			named++
		}
	}
	if named != len(recs) || named < 3 {
		t.Errorf("%d of %d outcome records name the TypeScript client, want all (at least 3)", named, len(recs))
	}
}

func TestServeRefusesAClientWithoutElicitation(t *testing.T) {
	w := newServeWorld(t)
	res := w.runTS(w.stdioPlan(nil, tsCall("flaky__set_value", setValue)))
	s := res.Steps[0]
	if !s.Result.IsError {
		t.Fatal("a call that needs approval ran for a client that cannot ask")
	}
	for _, want := range []string{"flaky/set_value", "needs a person's approval", "mcphost approve"} {
		if !strings.Contains(s.text(), want) {
			t.Errorf("refusal %q does not say %q", s.text(), want)
		}
	}
	if n := w.execs("set_value"); n != 0 {
		t.Errorf("set_value ran %d times, want 0", n)
	}
	recs := w.checkAudit()
	if len(recs) != 1 || recs[0].Status != audit.StatusBlocked || !contains(recs[0].Reasons, "needs-approval") {
		t.Errorf("records %+v, want one blocked with needs-approval", recs)
	}
}

func TestServeDrivenByTheTypeScriptClientOverHTTP(t *testing.T) {
	w := newServeWorld(t)
	cmd := exec.Command(w.mcphost, "--config", w.config, "serve", "--http", "127.0.0.1:0")
	cmd.Env = w.env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	addr := regexp.MustCompile(`serving MCP on (http://\S+/mcp)`)
	var url string
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := addr.FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
			break
		}
	}
	if url == "" {
		t.Fatal("mcphost serve --http never said where it listens")
	}
	var printed string
	if sc.Scan() {
		printed = sc.Text()
	}
	go func() { // keep draining stderr so the process never blocks on it
		for sc.Scan() {
		}
	}()
	tokenFile := filepath.Join(w.stateHome, "mcphost", "serve-token")
	tok, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatalf("no token file was created: %v", err)
	}
	token := strings.TrimSpace(string(tok))
	if fi, err := os.Stat(tokenFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	if !strings.Contains(printed, "new bearer token") || !strings.Contains(printed, tokenFile) || strings.Contains(printed, token) {
		t.Errorf("stderr line after the address %q, want the new token's file named and the token itself not printed to a pipe", printed)
	}

	res := w.runTS(map[string]any{"transport": "http", "url": url, "token": token,
		"elicit": []any{accepted("allow-once")},
		"steps":  []any{list, tsCall("tasks__list_tasks", nil), tsCall("flaky__set_value", setValue)}})
	if tl := find(res.Steps[0].Tools, "hostile__list_files"); tl == nil || tl.hints() != "ro=false destr=true idem=false open=true" {
		t.Errorf("hostile__list_files over HTTP: %+v, want the worst case", tl)
	}
	if s := res.Steps[1]; s.Result.IsError {
		t.Errorf("trusted read refused over HTTP: %s", s.text())
	}
	if s := res.Steps[2]; s.Result.IsError {
		t.Errorf("accepted call refused over HTTP: %s", s.text())
	}
	if n := w.execs("set_value"); n != 1 {
		t.Errorf("set_value ran %d times, want 1", n)
	}

	// A client without the token gets nowhere.
	b, _ := json.Marshal(map[string]any{"transport": "http", "url": url, "token": "wrong", "elicit": nil, "steps": []any{list}})
	out, _ := exec.Command("node", "serveclient.mjs", string(b)).Output()
	if !bytes.Contains(out, []byte(`"error"`)) {
		t.Errorf("a client with a wrong token was served: %s", out)
	}
	for _, r := range w.checkAudit() {
		if r.Client == nil || r.Client.Name != "ts-interop" {
			t.Errorf("record %s/%s names client %+v, want ts-interop", r.Server, r.Tool, r.Client)
		}
	}
}

// The new protocol on stdio, with go-sdk's client: the question goes out as
// an input-required result and the answer comes back with the call.
func TestServeAsksA2026ClientInTwoRounds(t *testing.T) {
	w := newServeWorld(t)
	cmd := exec.Command(w.mcphost, "--config", w.config, "serve")
	cmd.Env = w.env
	asked := 0
	cl := mcp.NewClient(&mcp.Implementation{Name: "go-2026", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked++
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow-once"}}, nil
		}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := cl.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %q, want 2026-07-28", v)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "flaky__set_value", Arguments: setValue})
	if err != nil || res.IsError {
		t.Fatalf("allowed call: %v %+v", err, res)
	}
	if asked != 1 || w.execs("set_value") != 1 {
		t.Fatalf("asked %d times, ran %d times; want 1 and 1", asked, w.execs("set_value"))
	}
}
