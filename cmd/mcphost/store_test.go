package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/internal/pgtest"
	"github.com/mcphost/mcphost/later"
	"github.com/mcphost/mcphost/pgstore"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// writeConfig writes the user config of dir.
func writeConfig(t *testing.T, dir, data string) {
	t.Helper()
	p := filepath.Join(dir, "config", "mcphost", "config.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestCallAndAuditThroughTheStore: with "store" in the config, a call's
// records go to the chain in PostgreSQL, not the file, and the audit
// commands read them from there: tail, show, export and verify, which
// fails once a record in the database is edited.
func TestCallAndAuditThroughTheStore(t *testing.T) {
	url := pgtest.DB(t)
	dir := t.TempDir()
	cfg, _ := json.Marshal(map[string]string{"store": url})
	writeConfig(t, dir, string(cfg))
	if code, _, errOut := showRun(t, dir, "--demo", "call", "--yes", "tasks/delete_task", `{"id": "T-2"}`); code != exitOK {
		t.Fatalf("call --yes: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "state", "mcphost", "audit.jsonl")); err == nil {
		t.Fatal("with a store the call wrote the audit file")
	}
	_, out, errOut := showRun(t, dir, "audit", "tail", "--json")
	var recs []audit.Record
	if err := json.Unmarshal([]byte(out), &recs); err != nil || len(recs) != 2 || recs[0].Kind != audit.Intent || recs[1].Kind != audit.Outcome {
		t.Fatalf("audit tail --json: %v, %d records:\n%s%s", err, len(recs), out, errOut)
	}
	if code, out, errOut := showRun(t, dir, "audit", "show", recs[0].CallID); code != exitOK || !strings.Contains(out, "via:       yes") {
		t.Fatalf("audit show: exit %d:\n%s%s", code, out, errOut)
	}
	code, out, errOut := showRun(t, dir, "audit", "verify")
	if code != exitOK || !strings.Contains(out, "2 records (1 intent, 1 outcome)") || !strings.Contains(out, "head: seq 2 hash "+recs[1].Hash) {
		t.Fatalf("audit verify: exit %d:\n%s%s", code, out, errOut)
	}
	if code, out, errOut := showRun(t, dir, "audit", "verify", "--expect", strings.Repeat("ab", 32)); code != exitError || !strings.Contains(out, "does not hold the record") {
		t.Fatalf("audit verify --expect of a hash the chain lacks: exit %d:\n%s%s", code, out, errOut)
	}
	if code, out, errOut := showRun(t, dir, "audit", "head"); code != exitOK || !strings.Contains(out, "head: seq 2 hash "+recs[1].Hash) {
		t.Fatalf("audit head: exit %d:\n%s%s", code, out, errOut)
	}
	code, out, _ = showRun(t, dir, "audit", "export")
	if rep, err := audit.Verify(strings.NewReader(out)); code != exitOK || err != nil || !rep.OK() || rep.Records != 2 {
		t.Fatalf("audit export: exit %d, verifies as %+v (%v):\n%s", code, rep, err, out)
	}

	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `UPDATE mcphost_audit SET line = convert_to(replace(convert_from(line, 'UTF8'), 'success', 'tool-error'), 'UTF8') WHERE seq = 2`); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = showRun(t, dir, "audit", "verify")
	if code != exitError || !strings.Contains(errOut, "does not verify") || !strings.Contains(out, "edited record") {
		t.Fatalf("audit verify of an edited chain: exit %d:\n%s%s", code, out, errOut)
	}
	if strings.Contains(out+errOut, "password") {
		t.Fatalf("verify named a password:\n%s%s", out, errOut)
	}
}

// TestStoreURLNeverShowsItsPassword: a store that is not a postgres URL,
// in the config or a flag, is refused before anything connects, in words
// that name the problem and not the password.
func TestStoreURLNeverShowsItsPassword(t *testing.T) {
	dir := t.TempDir()
	writeConfig(t, dir, `{"store": "mysql://team:pw-s3cret@db/x"}`)
	code, out, errOut := showRun(t, dir, "--demo", "call", "--yes", "tasks/list_tasks", `{}`)
	if code != exitUsage || !strings.Contains(errOut, `invalid "store"`) || !strings.Contains(errOut, "mysql://team:xxxxx@db/x") {
		t.Fatalf("a config with a bad store: exit %d:\n%s%s", code, out, errOut)
	}
	if strings.Contains(out+errOut, "s3cret") {
		t.Fatalf("the password was shown:\n%s%s", out, errOut)
	}
	writeConfig(t, dir, `{"store": "postgres://team:pw-s3cret@db.internal/x?sslmode=require"}`)
	code, out, errOut = showRun(t, dir, "--demo", "policy")
	if code != exitOK || !strings.Contains(out, "postgres://team:xxxxx@db.internal/x?sslmode=require") || strings.Contains(out+errOut, "s3cret") {
		t.Fatalf("policy with a store: exit %d:\n%s%s", code, out, errOut)
	}
	for _, args := range [][]string{
		{"audit", "verify", "--store", "postgres://team:pw-s3cret@db:port/x"},
		{"serve", "--store", "postgres://team:pw-s3cret@db:port/x"},
	} {
		code, out, errOut := showRun(t, t.TempDir(), args...)
		if code != exitUsage || !strings.Contains(errOut, "--store: the store postgres://team:xxxxx@db:port/x is not a URL") || strings.Contains(out+errOut, "s3cret") {
			t.Errorf("%s: exit %d:\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
	}
}

// TestServeRefusesToStartWithoutItsStore: a replica that cannot reach the
// store its team shares does not serve, which would make it a gate of its
// own with a chain of its own; it says which store, without the password.
func TestServeRefusesToStartWithoutItsStore(t *testing.T) {
	dir := t.TempDir()
	url := "postgres://team:pw-s3cret@/x?host=" + filepath.Join(dir, "nowhere")
	code, out, errOut := showRun(t, dir, "serve", "--store", url)
	if code != exitError || !strings.Contains(errOut, "store postgres://team:xxxxx@/x") || strings.Contains(out+errOut, "s3cret") {
		t.Fatalf("serve with an unreachable store: exit %d:\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "state", "mcphost", "audit.jsonl")); err == nil {
		t.Fatal("serve without its store wrote the audit file")
	}
}

// TestServeHoldsAndRecordsInTheStore: serve --store keeps its audit chain
// and its held calls in PostgreSQL: a call no one could approve is held
// there, an approval given through the store (as another replica's page
// would) lets the client's retry run once, and every record is in the
// store's chain, none in the file.
func TestServeHoldsAndRecordsInTheStore(t *testing.T) {
	url := pgtest.DB(t)
	dir := t.TempDir()
	env := map[string]string{"XDG_STATE_HOME": filepath.Join(dir, "state"), "XDG_CONFIG_HOME": filepath.Join(dir, "config"), "NO_COLOR": "1"}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan int, 1)
	var errOut strings.Builder
	go func() {
		s := &streams{In: inR, Out: outW, Err: &errOut, Getenv: func(k string) string { return env[k] }, WorkDir: dir}
		done <- run(ctx, []string{"serve", "--store", url}, s) // no configuration: the demo servers
		outW.Close()
	}()
	c := mcp.NewClient(&mcp.Implementation{Name: "no-forms", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	call := func() *mcp.CallToolResult {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tasks__delete_task", Arguments: map[string]any{"id": "T-1"}})
		if err != nil {
			t.Fatalf("call: %v", err)
		}
		return r
	}
	if r := call(); !r.IsError {
		t.Fatal("a call no one could approve ran")
	}
	db, err := pgstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	held := db.Later(later.Options{}).Waiting()
	if len(held) != 1 || held[0].Call.Tool != "delete_task" {
		t.Fatalf("the store holds %+v, want the delete_task call", held)
	}
	if _, err := db.Later(later.Options{}).Answer(held[0].ID, true, string(audit.ChannelApprove), ""); err != nil {
		t.Fatal(err)
	}
	if r := call(); r.IsError {
		t.Fatalf("the retry after the approval in the store was refused: %+v", r.Content)
	}
	cs.Close()
	inW.Close()
	if code := <-done; code != 0 {
		t.Fatalf("serve exited %d: %s", code, errOut.String())
	}
	rep, err := db.Verify(ctx)
	if err != nil || !rep.OK() || rep.Approvals != 2 || rep.Intents != 1 || rep.Outcomes != 2 {
		t.Fatalf("the store's chain: %d approval, %d intent, %d outcome records, problems %v (%v); want held and used, the refusal, and the retry's intent and outcome",
			rep.Approvals, rep.Intents, rep.Outcomes, rep.Problems, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "state", "mcphost", "audit.jsonl")); err == nil {
		t.Fatal("serve with a store wrote the audit file")
	}
}
