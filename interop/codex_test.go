//go:build unix

package interop

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/audit"
)

// One real host end to end: the Codex CLI (npm @openai/codex), pointed at a
// local fake of its model provider (the Responses API), with `mcphost
// serve` as its only MCP server. The fake model calls one tool of
// mcphost's per run; what Codex sends back is what mcphost answered.

// fakeResponses is a Responses API that calls the tool named by next (a
// function in Codex's namespace for the MCP server "mcphost") when the
// conversation has no tool output yet, and otherwise ends the turn; it
// keeps the tool outputs it saw.
type fakeResponses struct {
	mu      sync.Mutex
	next    string // the tool to call, as mcphost exports it
	args    string
	offered []string
	outputs []string
}

func (f *fakeResponses) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
		http.NotFound(w, r)
		return
	}
	var body struct {
		Tools []struct {
			Type  string `json:"type"`
			Name  string `json:"name"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"tools"`
		Input []struct {
			Type   string          `json:"type"`
			Output json.RawMessage `json:"output"`
		} `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	var outputs []string
	for _, in := range body.Input {
		if in.Type == "function_call_output" {
			outputs = append(outputs, string(in.Output))
		}
	}
	f.offered = f.offered[:0]
	for _, t := range body.Tools {
		if t.Type == "namespace" && t.Name == "mcp__mcphost" {
			for _, x := range t.Tools {
				f.offered = append(f.offered, x.Name)
			}
		}
	}
	f.outputs = append(f.outputs, outputs...)
	next, args := f.next, f.args
	f.mu.Unlock()

	w.Header().Set("Content-Type", "text/event-stream")
	bw := bufio.NewWriter(w)
	event := func(v map[string]any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(bw, "event: %s\ndata: %s\n\n", v["type"], b)
	}
	event(map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_1"}})
	if len(outputs) == 0 {
		event(map[string]any{"type": "response.output_item.done", "item": map[string]any{
			"type": "function_call", "namespace": "mcp__mcphost", "name": next, "arguments": args, "call_id": "call_1"}})
	} else {
		event(map[string]any{"type": "response.output_item.done", "item": map[string]any{
			"type": "message", "role": "assistant", "id": "msg_1", "content": []any{map[string]any{"type": "output_text", "text": "done"}}}})
	}
	event(map[string]any{"type": "response.completed", "response": map[string]any{"id": "resp_1",
		"usage": map[string]any{"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}})
	bw.Flush()
}

func TestCodexBehindServe(t *testing.T) {
	codex, err := filepath.Abs("node_modules/.bin/codex")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(codex); err != nil {
		requireNode(t)
		t.Fatalf("the Codex CLI is not installed: run `npm ci` in interop/ (or set %s=1 to skip): %v", skipVar, err)
	}
	w := newServeWorld(t)
	model := &fakeResponses{}
	ts := httptest.NewServer(model)
	t.Cleanup(ts.Close)

	home := filepath.Join(w.dir, "codex")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, kv := range w.env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	envTOML, _ := json.Marshal(env) // a JSON object of strings is a TOML inline table
	inline := strings.NewReplacer(`":"`, `" = "`, `","`, `", "`).Replace(string(envTOML))
	cfg := fmt.Sprintf(`model = "fake-model"
model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = "%s/v1"
wire_api = "responses"
env_key = "FAKE_MODEL_KEY"

[mcp_servers.mcphost]
command = %q
args = ["--config", %q, "serve"]
env = %s
`, ts.URL, w.mcphost, w.config, inline)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}

	run := func(tool, args string, extra ...string) string {
		t.Helper()
		model.mu.Lock()
		model.next, model.args, model.outputs = tool, args, nil
		model.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, codex, append(append([]string{"exec", "--skip-git-repo-check"}, extra...), "go on")...)
		cmd.Dir = w.dir
		cmd.Env = append(append([]string{}, w.env...), "CODEX_HOME="+home, "FAKE_MODEL_KEY=unused")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("codex exec: %v\n%s", err, out)
		}
		model.mu.Lock()
		defer model.mu.Unlock()
		if !contains(model.offered, tool) {
			t.Fatalf("Codex did not offer %s from mcphost; it offered %v\n%s", tool, model.offered, out)
		}
		return strings.Join(model.outputs, "\n")
	}

	// The read runs.
	if got := run("tasks__list_tasks", "{}"); !strings.Contains(got, "T-1") {
		t.Fatalf("Codex's read through serve returned %q, want the task list", got)
	}
	// The destructive call does not run unasked. Codex's own approvals are
	// bypassed, so that mcphost is what decides: Codex answers its
	// elicitation without a person (declines), and the call is denied.
	got := run("tasks__delete_task", `{"id":"T-1"}`, "--dangerously-bypass-approvals-and-sandbox")
	if !strings.Contains(got, "mcphost:") || !strings.Contains(got, "delete_task") {
		t.Fatalf("Codex's destructive call came back as %q, want mcphost's refusal", got)
	}

	recs, err := audit.Tail(filepath.Join(w.stateHome, "mcphost", "audit.jsonl"), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var listed, deleted bool
	for _, r := range recs {
		if r.Client == nil || !strings.Contains(r.Client.Name, "codex") {
			t.Errorf("record %s %s names client %+v, want Codex", r.Kind, r.Tool, r.Client)
		}
		switch {
		case r.Tool == "list_tasks" && r.Kind == audit.Outcome && r.Status == audit.StatusSuccess:
			listed = true
		case r.Tool == "delete_task" && r.Kind == audit.Intent:
			t.Error("delete_task has an intent record: it was sent to the server")
		case r.Tool == "delete_task" && r.Kind == audit.Outcome:
			deleted = r.Status == audit.StatusSuccess
			if r.Status != audit.StatusDenied && r.Status != audit.StatusBlocked {
				t.Errorf("delete_task ended %s, want denied or blocked", r.Status)
			}
		}
	}
	if !listed || deleted {
		t.Fatalf("list_tasks ran: %v, delete_task ran: %v; want true, false", listed, deleted)
	}
	w.checkAudit()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
