package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/approver"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/pgtest"
	"github.com/mcphost/mcphost/pgstore"
	"github.com/mcphost/mcphost/state"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// storeReplica is what one serve replica on the store reads trust through:
// its own setup of dir's config and its own pool on the database.
func storeReplica(t *testing.T, dir, url string) (func(string) bool, *pgstore.Store) {
	t.Helper()
	env := map[string]string{"XDG_STATE_HOME": filepath.Join(dir, "state"), "XDG_CONFIG_HOME": filepath.Join(dir, "config"), "NO_COLOR": "1"}
	s := &streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard, Getenv: func(k string) string { return env[k] }, WorkDir: dir}
	st, err := loadSetup(&globalOptions{}, s)
	if err != nil {
		t.Fatal(err)
	}
	shared, err := openStore(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(shared.Close)
	return st.sharedTrust(shared.Trust()), shared
}

// TestRememberedTrustIsTheStoresForServe: with a store in the config,
// `mcphost mcp trust` remembers trust where every serve replica reads it,
// at its next question and without a restart, and `mcp untrust` through
// any machine ends it for all. Trust remembered only in one machine's
// state file does not count for serve, and neither "trust": false in the
// person's file nor the managed policy is outvoted by the store.
func TestRememberedTrustIsTheStoresForServe(t *testing.T) {
	url := pgtest.DB(t)
	dir, other := t.TempDir(), t.TempDir() // two machines, one database
	cfg, _ := json.Marshal(map[string]any{"store": url, "mcpServers": map[string]any{
		"fs":    map[string]any{"command": "fs-server", "args": []string{"/srv"}},
		"notes": map[string]any{"command": "notes-server", "trust": false},
		"db":    map[string]any{"command": "db-server", "trust": true},
	}})
	writeConfig(t, dir, string(cfg))
	writeConfig(t, other, string(cfg))
	a, _ := storeReplica(t, dir, url)
	b, sb := storeReplica(t, other, url)
	if a("fs") || b("fs") || !a("db") || !b("db") {
		t.Fatalf("before any trust: fs %v/%v, db %v/%v; want fs untrusted and db trusted by its config", a("fs"), b("fs"), a("db"), b("db"))
	}
	if code, out, errOut := showRun(t, dir, "mcp", "trust", "fs"); code != exitOK || !strings.Contains(out, "fs is trusted from now on") {
		t.Fatalf("mcp trust fs: exit %d:\n%s%s", code, out, errOut)
	}
	if !a("fs") || !b("fs") {
		t.Fatalf("after mcp trust on one machine: fs trusted by A %v, by B %v; want both, without a restart", a("fs"), b("fs"))
	}
	// The store cannot outvote the person's "trust": false.
	if err := sb.Trust().SetTrust(specFromConfigNamed(t, dir, "notes"), "notes", true); err != nil {
		t.Fatal(err)
	}
	if a("notes") {
		t.Fatal(`remembered trust in the store outvoted "trust": false in the person's config`)
	}
	// mcp trust lists both: this machine's state file and the store.
	code, out, errOut := showRun(t, dir, "mcp", "trust", "--json")
	var list trustListJSON
	if err := json.Unmarshal([]byte(out), &list); code != exitOK || err != nil {
		t.Fatalf("mcp trust --json: exit %d (%v):\n%s%s", code, err, out, errOut)
	}
	var in []string
	for _, e := range list.Trust {
		in = append(in, e.Name+"@"+e.In)
	}
	slices.Sort(in)
	if want := []string{"fs@state", "fs@store", "notes@store"}; !slices.Equal(in, want) {
		t.Fatalf("mcp trust --json lists %v, want %v", in, want)
	}
	if code, out, _ := showRun(t, dir, "mcp", "trust"); code != exitOK || !regexp.MustCompile(`(?m)^  fs +store +\S+ +in force$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^  notes +store +\S+ +overridden`).MatchString(out) {
		t.Fatalf("mcp trust: exit %d, want the store's fs in force and notes overridden:\n%s", code, out)
	}
	if code, out, errOut := showRun(t, other, "mcp", "untrust", "fs"); code != exitOK || !strings.Contains(out, "no longer remembers trust in fs") {
		t.Fatalf("mcp untrust fs on the other machine: exit %d:\n%s%s", code, out, errOut)
	}
	if a("fs") || b("fs") {
		t.Fatalf("after mcp untrust on the other machine: fs trusted by A %v, by B %v; want neither", a("fs"), b("fs"))
	}
	// The first machine's state file still remembers fs (untrust ran on
	// the other): serve on the store does not count it.
	st, err := state.Load(filepath.Join(dir, "state", "mcphost", "state.json"))
	if err != nil || len(st.TrustRecords()) != 1 {
		t.Fatalf("the first machine's state file: %v, %+v; want its own record of fs", err, st.TrustRecords())
	}
	if fresh, _ := storeReplica(t, dir, url); fresh("fs") {
		t.Fatal("serve on the store, started now, trusted fs from this machine's state file")
	}
}

// TestServeReplicasShareRememberedTrustThroughTheStore: two serve replicas
// on one store, on two machines: trust given with `mcphost mcp trust` on
// one machine lets a read of the server run unasked through the other
// replica at once, and `mcp untrust` on the other machine makes it ask
// again through the first; neither restarts.
func TestServeReplicasShareRememberedTrustThroughTheStore(t *testing.T) {
	url := pgtest.DB(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dirA, dirB := shortDir(t), shortDir(t)
	cfg, _ := json.Marshal(map[string]any{"store": url, "mcpServers": map[string]any{
		"work": map[string]any{"command": exe, "args": []string{managedFixtureArg, "tasks"}}}})
	writeConfig(t, dirA, string(cfg))
	writeConfig(t, dirB, string(cfg))
	a, apA := stdioReplica(t, ctx, dirA, url)
	b, apB := stdioReplica(t, ctx, dirB, url)
	res := make(chan *mcp.CallToolResult, 1)
	list := func(cs *mcp.ClientSession) {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "work__list_tasks", Arguments: map[string]any{}})
		if err != nil {
			t.Error(err)
		}
		res <- r
	}
	// asks reports that a read through cs went to ap (and was denied).
	asks := func(cs *mcp.ClientSession, ap *approver.Conn, when string) {
		t.Helper()
		go list(cs)
		ev, err := ap.Next()
		if err != nil {
			t.Fatal(err)
		}
		q, ok := ev.(*approver.Question)
		if !ok || q.Tool != "list_tasks" || q.Trusted {
			t.Fatalf("%s: the approver got %#v, want the question about the untrusted server's list_tasks", when, ev)
		}
		if err := ap.Answer(q, host.Answer{}); err != nil {
			t.Fatal(err)
		}
		if r := <-res; r == nil || !r.IsError {
			t.Fatalf("%s: a denied read ran", when)
		}
	}
	asks(b, apB, "through B before any trust")
	if code, out, errOut := showRun(t, dirA, "mcp", "trust", "work"); code != exitOK {
		t.Fatalf("mcp trust work on A's machine: exit %d:\n%s%s", code, out, errOut)
	}
	// Unasked, the read is quick; asked, it would wait for an answer.
	quick, stop := context.WithTimeout(ctx, 15*time.Second)
	r, err := b.CallTool(quick, &mcp.CallToolParams{Name: "work__list_tasks", Arguments: map[string]any{}})
	stop()
	if err != nil || r.IsError {
		t.Fatalf("through B once work is trusted on A's machine: %v %+v, want the read run unasked", err, r)
	}
	st, err := state.Load(filepath.Join(dirB, "state", "mcphost", "state.json"))
	if err != nil || len(st.TrustRecords()) != 0 {
		t.Fatalf("B's state file: %v, %+v; want no trust: B read it from the store", err, st.TrustRecords())
	}
	if code, out, errOut := showRun(t, dirB, "mcp", "untrust", "work"); code != exitOK {
		t.Fatalf("mcp untrust work on B's machine: exit %d:\n%s%s", code, out, errOut)
	}
	asks(a, apA, "through A after untrust on B's machine")
}

// specFromConfigNamed is the identity of the server named name in dir's
// config.
func specFromConfigNamed(t *testing.T, dir, name string) string {
	t.Helper()
	env := map[string]string{"XDG_STATE_HOME": filepath.Join(dir, "state"), "XDG_CONFIG_HOME": filepath.Join(dir, "config")}
	st, err := loadSetup(&globalOptions{}, &streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard, Getenv: func(k string) string { return env[k] }, WorkDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	srv, ok := st.configured(name)
	if !ok {
		t.Fatalf("no server %s", name)
	}
	spec := specFromConfig(srv)
	return spec.Identity()
}

// stdioReplica starts `mcphost serve --store url` over stdio for the
// machine dir (its config's servers), with a client that offers no forms, and
// connects an approver to it.
func stdioReplica(t *testing.T, ctx context.Context, dir, url string) (*mcp.ClientSession, *approver.Conn) {
	t.Helper()
	env := map[string]string{"XDG_STATE_HOME": filepath.Join(dir, "state"), "XDG_CONFIG_HOME": filepath.Join(dir, "config"), "NO_COLOR": "1"}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		s := &streams{In: inR, Out: outW, Err: &errOut, Getenv: func(k string) string { return env[k] }, WorkDir: dir}
		done <- run(ctx, []string{"serve", "--store", url}, s)
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		if code := <-done; code != 0 {
			t.Errorf("serve in %s exited %d:\n%s", dir, code, errOut.String())
		}
	})
	c := mcp.NewClient(&mcp.Implementation{Name: "no-forms", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	ap, err := approver.Dial(ctx, approver.SocketPath(filepath.Join(dir, "state", "mcphost")))
	if err != nil {
		t.Fatalf("%v\nserve said:\n%s", err, errOut.String())
	}
	t.Cleanup(func() { ap.Close() })
	if _, err := ap.Hello(); err != nil {
		t.Fatal(err)
	}
	return cs, ap
}

// TestServeReplicasShareAlwaysGrantsThroughTheStore: an "always" grant a
// person gives through replica A's approver lets the same call run
// unasked through replica B, on another machine, and a revoke
// (mcp revoke on A's machine) ends it for B, without a restart; neither
// machine's state file gets the grant.
func TestServeReplicasShareAlwaysGrantsThroughTheStore(t *testing.T) {
	url := pgtest.DB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dirA, dirB := shortDir(t), shortDir(t) // a socket's path has room for about 100 bytes
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"store": url, "mcpServers": map[string]any{
		"work": map[string]any{"command": exe, "args": []string{managedFixtureArg, "tasks"}, "trust": true}}})
	writeConfig(t, dirA, string(cfg))
	writeConfig(t, dirB, string(cfg))
	a, apA := stdioReplica(t, ctx, dirA, url)
	b, apB := stdioReplica(t, ctx, dirB, url)
	del := func(cs *mcp.ClientSession, id string) *mcp.CallToolResult {
		t.Helper()
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "work__delete_task", Arguments: map[string]any{"id": id}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	res := make(chan *mcp.CallToolResult, 1)
	go func() { res <- del(a, "T-1") }()
	ev, err := apA.Next()
	if err != nil {
		t.Fatal(err)
	}
	q, ok := ev.(*approver.Question)
	if !ok || q.Tool != "delete_task" || !slices.Contains(q.Scopes, decide.ScopeAlways) {
		t.Fatalf("A's approver got %#v, want the question about delete_task offering always", ev)
	}
	if err := apA.Answer(q, host.Answer{Approve: true, Scope: decide.ScopeAlways}); err != nil {
		t.Fatal(err)
	}
	if r := <-res; r.IsError {
		t.Fatalf("through A, approved always: %+v", r.Content)
	}
	// Unasked, the call is quick; asked, it would wait for an answer.
	quick, stop := context.WithTimeout(ctx, 15*time.Second)
	r, err := b.CallTool(quick, &mcp.CallToolParams{Name: "work__delete_task", Arguments: map[string]any{"id": "T-2"}})
	stop()
	if err != nil || r.IsError {
		t.Fatalf("through B, with the always grant given through A: %v %+v, want it run unasked", err, r)
	}
	for _, dir := range []string{dirA, dirB} {
		st, err := state.Load(filepath.Join(dir, "state", "mcphost", "state.json"))
		if err != nil || len(st.Grants()) != 0 {
			t.Fatalf("the state file of %s: %v, grants %+v; want none: the grant is the store's", dir, err, st.Grants())
		}
	}
	if code, out, errOut := showRun(t, dirA, "mcp", "revoke", "work", "delete_task"); code != exitOK || !strings.Contains(out, "revoked 1 always grant(s) for work/delete_task") {
		t.Fatalf("mcp revoke work delete_task on A's machine: exit %d:\n%s%s", code, out, errOut)
	}
	go func() { res <- del(b, "T-3") }()
	ev, err = apB.Next()
	if err != nil {
		t.Fatal(err)
	}
	if q, ok := ev.(*approver.Question); !ok || q.Tool != "delete_task" {
		t.Fatalf("B's approver got %#v after the revoke, want the question about delete_task: the grant would still hold", ev)
	} else if err := apB.Answer(q, host.Answer{}); err != nil {
		t.Fatal(err)
	}
	if r := <-res; !r.IsError {
		t.Fatal("through B after the revoke, denied: the call ran")
	}
}

// TestServesAlwaysGrantsAreTheStores: serve's store with a store keeps an
// always grant in the database, where another replica's reads it at once,
// and is read at every decision.
func TestServesAlwaysGrantsAreTheStores(t *testing.T) {
	url := pgtest.DB(t)
	open := func() *pgstore.Store {
		s, err := openStore(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	a, b := sharedStore(open()), sharedStore(open())
	if l, ok := a.(host.LiveGrants); !ok || !l.LiveGrants() {
		t.Fatal("serve's store with a store is not read at every decision: a revoke through another replica would not end a grant here")
	}
	gr := decide.Grant{Scope: decide.ScopeAlways, Server: "ident-fs", Tool: "write", DefinitionHash: "h", Tier: decide.T2}
	if err := a.AddAlwaysGrant(gr, "fs"); err != nil {
		t.Fatal(err)
	}
	if got := b.AlwaysGrants(); len(got) != 1 || got[0] != gr {
		t.Fatalf("through B: %+v, want the grant given through A", got)
	}
}

// syncBuffer is a buffer serve writes to while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// shortDir is a temporary directory with a short path, removed at the end.
func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "st")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// TestTrustListSaysWhenTheStoreCannotBeRead: mcp trust lists what this
// machine's state file remembers and fails, naming the store, when the
// store the config names cannot be read: the person must not take the
// list for what serve's replicas read.
func TestTrustListSaysWhenTheStoreCannotBeRead(t *testing.T) {
	dir := t.TempDir()
	cfg, _ := json.Marshal(map[string]any{"store": "postgres://mcphost@127.0.0.1:1/none?connect_timeout=5", "mcpServers": map[string]any{
		"fs": map[string]any{"command": "fs-server"}}})
	writeConfig(t, dir, string(cfg))
	code, out, errOut := showRun(t, dir, "mcp", "trust")
	if code != exitError || !strings.Contains(out, "remembered trust") || !strings.Contains(errOut, "the trust remembered in the store, which serve's replicas read, could not be listed") {
		t.Fatalf("mcp trust with the store out of reach: exit %d, want %d after the list and a word about the store:\n%s%s", code, exitError, out, errOut)
	}
}
