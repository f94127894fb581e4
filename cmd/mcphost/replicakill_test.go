//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/internal/pgtest"
	"github.com/mcphost/mcphost/pgstore"
)

// replica is one `mcphost serve --http --store` process: the test binary
// run as mcphost (TestMain), so that it can be killed.
type replica struct {
	cmd    *exec.Cmd
	url    string
	stderr lockedText
	fifo   string // its slow server answers once this pipe is opened and closed
}

// startReplica starts serve --http on the store at storeURL with a slow
// server of its own, and waits for its address.
func startReplica(t *testing.T, dir, name, storeURL string) *replica {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o700); err != nil {
		t.Fatal(err)
	}
	mcphost := filepath.Join(bin, "mcphost")
	if _, err := os.Lstat(mcphost); err != nil {
		if err := os.Symlink(self, mcphost); err != nil {
			t.Fatal(err)
		}
	}
	r := &replica{fifo: filepath.Join(dir, name+".release")}
	if err := syscall.Mkfifo(r.fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(replicaToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, name)
	r.cmd = exec.Command(mcphost, "--server", "slow="+self+" "+fifoServerArg+" "+r.fifo, "--trust", "slow",
		"serve", "--http", "127.0.0.1:0", "--token-file", tokenFile, "--store", storeURL)
	r.cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(home, "state"), "XDG_CONFIG_HOME="+filepath.Join(home, "config"), "NO_COLOR=1")
	errR, err := r.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(errR)
		for sc.Scan() {
			r.stderr.add(sc.Text())
			if u, ok := strings.CutPrefix(sc.Text(), "mcphost: serving MCP on "); ok {
				urls <- u
			}
		}
	}()
	select {
	case r.url = <-urls:
	case <-time.After(60 * time.Second):
		t.Fatalf("replica %s printed no address: %s", name, r.stderr.String())
	}
	return r
}

const replicaToken = "0123456789abcdefghijklmnop"

// connect is a 2025-11-25 client of r.
func (r *replica) connect(t *testing.T) *mcp.ClientSession {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "replica-test", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: r.url, HTTPClient: &http.Client{Transport: withToken{replicaToken, tr}}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestAReplicaKilledMidCallLeavesAnHonestChain: two serve replicas on one
// PostgreSQL store; one is killed (SIGKILL, no chance to write anything)
// while its call is in flight. Its client hears no success, the call's
// intent stays open in the shared chain (a fact `audit verify` names, not
// an outcome made up), the other replica goes on appending to the same
// chain, and the chain verifies.
func TestAReplicaKilledMidCallLeavesAnHonestChain(t *testing.T) {
	storeURL := pgtest.DB(t)
	dir := t.TempDir()
	a := startReplica(t, dir, "a", storeURL)
	b := startReplica(t, dir, "b", storeURL)

	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	answered := make(chan answer, 1)
	csA := a.connect(t)
	go func() {
		res, err := csA.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow__wait", Arguments: map[string]any{}})
		answered <- answer{res, err}
	}()
	inFlight := make(chan *os.File, 1)
	go func() {
		if f, err := os.OpenFile(a.fifo, os.O_WRONLY, 0); err == nil { // once A's server waits: the call is in flight
			inFlight <- f
		}
	}()
	var held *os.File
	select {
	case held = <-inFlight:
	case <-time.After(60 * time.Second):
		t.Fatalf("the call did not reach A's server: %s", a.stderr.String())
	}
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = a.cmd.Wait()
	held.Close()
	select {
	case got := <-answered:
		if got.err == nil && !got.res.IsError {
			t.Fatalf("the client of the killed replica heard a success: %+v", got.res)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the client of the killed replica heard nothing")
	}

	// B goes on, on the same chain.
	csB := b.connect(t)
	done := make(chan answer, 1)
	go func() {
		res, err := csB.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow__wait", Arguments: map[string]any{}})
		done <- answer{res, err}
	}()
	f, err := os.OpenFile(b.fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got := <-done; got.err != nil || got.res.IsError {
		t.Fatalf("the call through B after A died: %v %+v", got.err, got.res)
	}

	db, err := pgstore.Open(context.Background(), storeURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rep, err := db.Verify(context.Background())
	if err != nil || !rep.OK() {
		t.Fatalf("the shared chain does not verify after a replica was killed: %v %+v", err, rep)
	}
	var waits []audit.Entry
	for _, oi := range rep.OpenIntents {
		if oi.Record.Tool == "wait" {
			waits = append(waits, oi)
		}
	}
	if len(waits) != 1 {
		t.Fatalf("open intents %+v; want the killed replica's call, and only it", rep.OpenIntents)
	}
	recs, err := db.Tail(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	successes := 0
	for _, r := range recs {
		if r.Kind == audit.Outcome && r.Tool == "wait" {
			if r.Status != audit.StatusSuccess {
				t.Fatalf("an outcome of a wait call says %s", r.Status)
			}
			successes++
		}
	}
	if successes != 1 {
		t.Fatalf("%d successful outcomes of wait, want B's one: the killed call has none", successes)
	}
	// `mcphost audit verify` says the same in words.
	var out bytes.Buffer
	s := &streams{In: strings.NewReader(""), Out: &out, Err: &out, Getenv: func(string) string { return "" }, WorkDir: dir}
	if code := run(context.Background(), []string{"audit", "verify", "--store", storeURL}, s); code != exitOK {
		t.Fatalf("audit verify --store exited %d:\n%s", code, out.String())
	}
	if !strings.Contains(out.String(), "1 open intent") || !strings.Contains(out.String(), "0 problems") {
		t.Fatalf("audit verify --store said:\n%s\nwant one open intent and no problem", out.String())
	}
}
