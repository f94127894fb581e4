package approver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/host"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(harnessEnv); dir != "" {
		os.Exit(harness(dir))
	}
	// client.starterLoop lives as long as the process: servers are started from its thread.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/mcphost/mcphost/client.starterLoop"))
}

// world is a gate over the flaky fixture (a real MCP server, in memory)
// whose Asker is a Broker listening in a temp dir.
type world struct {
	t       *testing.T
	gate    *host.Gate
	b       *Broker
	execLog string
}

func newWorld(t *testing.T, trusted bool, o Options) *world {
	t.Helper()
	dir := t.TempDir()
	w := &world{t: t, execLog: filepath.Join(dir, "exec.jsonl")}
	b, err := Listen(SocketPath(filepath.Join(dir, "state")), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	w.b = b
	g, stop, err := newGate(dir, w.execLog, trusted, b)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	w.gate = g
	return w
}

// brokerOnly is a world of a broker listening with o and no gate: for
// tests that post or ask themselves.
func brokerOnly(t *testing.T, o Options) *world {
	t.Helper()
	b, err := Listen(SocketPath(filepath.Join(t.TempDir(), "state")), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return &world{t: t, b: b}
}

// newGate returns an interactive gate over the flaky fixture that asks a,
// and what stops it.
func newGate(dir, execLog string, trusted bool, a host.Asker) (*host.Gate, func(), error) {
	return newGateFor(dir, execLog, trusted, a, nil)
}

// newGateFor is newGate for the calls of client c.
func newGateFor(dir, execLog string, trusted bool, a host.Asker, c *audit.Client) (*host.Gate, func(), error) {
	return newGateOpts(dir, execLog, trusted, a, c, nil)
}

// newGateOpts is newGateFor with more gate options set by more.
func newGateOpts(dir, execLog string, trusted bool, a host.Asker, c *audit.Client, more func(*host.GateOptions)) (*host.Gate, func(), error) {
	spec := client.Spec{Name: "f", Dial: func(ctx context.Context) (mcp.Transport, error) {
		f, err := fixtures.New("flaky", fixtures.Options{LogFile: execLog})
		if err != nil {
			return nil, err
		}
		return f.InMemory(ctx)
	}}
	m := client.New([]client.Spec{spec}, client.Options{})
	m.Start(context.Background())
	if st := m.Servers()[0]; st.State != client.StateReady {
		m.Close()
		return nil, nil, fmt.Errorf("fixture did not start: %+v", st)
	}
	p, err := decide.Compile(nil, decide.Options{})
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	log, err := audit.Open(filepath.Join(dir, "audit.jsonl"), audit.Options{NoSync: true})
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	o := host.GateOptions{
		Catalog: m, Policy: p, Trusted: func(string) bool { return trusted }, Asker: a,
		Mode: decide.Interactive, Audit: log, CallOptions: client.CallOptions{Timeout: 10 * time.Second}, Client: c,
	}
	if more != nil {
		more(&o)
	}
	g := host.NewGate(o)
	return g, func() { m.Close(); log.Close() }, nil
}

// call runs a call through the gate in the background.
func (w *world) call(ctx context.Context, tool, args string) <-chan *host.Result {
	ch := make(chan *host.Result, 1)
	go func() { ch <- w.gate.Call(ctx, host.Call{Server: "f", Tool: tool, Args: json.RawMessage(args)}) }()
	return ch
}

// runs counts the executions of tool the fixture logged.
func (w *world) runs(tool string) int {
	w.t.Helper()
	return countRuns(w.t, w.execLog, tool)
}

func countRuns(t testing.TB, execLog, tool string) int {
	t.Helper()
	n, err := runsOf(execLog, tool)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// runsOf counts the executions of tool in a fixture's log.
func runsOf(execLog, tool string) (int, error) {
	entries, err := fixtures.ReadLog(execLog)
	n := 0
	for _, e := range entries {
		if e.Event == fixtures.EventExec && e.Tool == tool {
			n++
		}
	}
	return n, err
}

// approver connects and says hello.
func (w *world) approver() *Conn {
	w.t.Helper()
	c, err := Dial(context.Background(), w.b.Path())
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { c.Close() })
	if _, err := c.Hello(); err != nil {
		w.t.Fatal(err)
	}
	return c
}

// next reads c's next message, which must be a T.
func next[T any](t *testing.T, c *Conn) T {
	t.Helper()
	_ = c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	v, err := c.Next()
	if err != nil {
		t.Fatalf("reading the next message: %v", err)
	}
	m, ok := v.(T)
	if !ok {
		var zero T
		t.Fatalf("got %T %+v, want a %T", v, v, zero)
	}
	return m
}

func result(t *testing.T, ch <-chan *host.Result) *host.Result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("the call did not finish")
		return nil
	}
}

func TestApprovedCallRunsExactlyOnce(t *testing.T) {
	w := newWorld(t, true, Options{Label: "test serve"})
	if w.b.Waiting() {
		t.Fatal("Waiting before any approver connected")
	}
	c := w.approver()
	if !w.b.Waiting() {
		t.Fatal("not Waiting with an approver connected")
	}
	res := w.call(context.Background(), "set_value", `{"key":"k","value":"v"}`)
	q := next[*Question](t, c)
	if q.Server != "f" || q.Tool != "set_value" || q.Tier != decide.T2 || q.Class != decide.Destructive || !q.Trusted {
		t.Fatalf("question %+v, want f/set_value, T2 destructive, trusted", q)
	}
	if q.Arguments != `{"key":"k","value":"v"}` || len(q.Scopes) == 0 || len(q.Reasons) == 0 {
		t.Fatalf("question %+v lacks the arguments, scopes or reasons", q)
	}
	if err := c.Answer(q, host.Answer{Approve: true, Scope: decide.ScopeOnce}); err != nil {
		t.Fatal(err)
	}
	r := result(t, res)
	if r.Status != host.StatusSuccess || r.DecidedBy != "user:once" {
		t.Fatalf("status %s decided by %q, want success by user:once (%v)", r.Status, r.DecidedBy, r.Err)
	}
	if n := w.runs("set_value"); n != 1 {
		t.Fatalf("set_value ran %d times, want exactly 1", n)
	}
	// The same answer again approves nothing: its call is gone.
	if err := c.Answer(q, host.Answer{Approve: true}); err != nil {
		t.Fatal(err)
	}
	if rej := next[*Rejected](t, c); rej.ID != q.ID {
		t.Fatalf("rejected %+v, want the repeated answer to %s", rej, q.ID)
	}
	if n := w.runs("set_value"); n != 1 {
		t.Fatalf("set_value ran %d times after a repeated answer, want 1", n)
	}
}

func TestAnswerBoundToCallAndArguments(t *testing.T) {
	w := newWorld(t, true, Options{})
	c := w.approver()
	resA := w.call(context.Background(), "set_value", `{"key":"a","value":"1"}`)
	qa := next[*Question](t, c)
	resB := w.call(context.Background(), "set_value", `{"key":"b","value":"2"}`)
	qb := next[*Question](t, c)
	if qa.ID == qb.ID {
		t.Fatalf("two calls share the id %s", qa.ID)
	}
	for _, a := range []Answer{
		{ID: qa.ID, ArgsHash: ArgsHash(qb.Arguments)},                  // A's id, B's arguments
		{ID: qa.ID, ArgsHash: ArgsHash(`{"key":"a","value":"other"}`)}, // arguments never asked about
		{ID: qa.ID, ArgsHash: ""},                                      // none at all
		{ID: qa.ID + "0", ArgsHash: ArgsHash(qa.Arguments)},            // a call that does not exist
	} {
		a.Type, a.Approve, a.Scope = TypeAnswer, true, decide.ScopeSession
		if err := c.write(a); err != nil {
			t.Fatal(err)
		}
		if rej := next[*Rejected](t, c); rej.Message == "" {
			t.Fatalf("answer %+v rejected without a reason", a)
		}
	}
	if n := w.runs("set_value"); n != 0 {
		t.Fatalf("set_value ran %d times on answers bound to other calls", n)
	}
	if err := c.Answer(qb, host.Answer{}); err != nil {
		t.Fatal(err)
	}
	if r := result(t, resB); r.Status != host.StatusDenied {
		t.Fatalf("B: %s, want denied", r.Status)
	}
	if err := c.Answer(qa, host.Answer{Approve: true}); err != nil {
		t.Fatal(err)
	}
	if r := result(t, resA); r.Status != host.StatusSuccess {
		t.Fatalf("A: %s, want success", r.Status)
	}
	entries, err := fixtures.ReadLog(w.execLog)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Event == fixtures.EventExec && !strings.Contains(string(e.Arguments), `"a"`) {
			t.Fatalf("a call ran with arguments no one approved: %s", e.Arguments)
		}
	}
	if n := w.runs("set_value"); n != 1 {
		t.Fatalf("set_value ran %d times, want 1 (A only)", n)
	}
}

func TestDeniedCallNeverRuns(t *testing.T) {
	w := newWorld(t, true, Options{})
	c := w.approver()
	res := w.call(context.Background(), "set_value", `{"key":"k","value":"v"}`)
	q := next[*Question](t, c)
	if err := c.Answer(q, host.Answer{Reason: "not today"}); err != nil {
		t.Fatal(err)
	}
	r := result(t, res)
	if r.Status != host.StatusDenied || r.DenyReason != "not today" {
		t.Fatalf("status %s, reason %q; want denied, not today", r.Status, r.DenyReason)
	}
	if n := w.runs("set_value"); n != 0 {
		t.Fatalf("a denied call ran %d times", n)
	}
}

func TestApproverDisconnect(t *testing.T) {
	w := newWorld(t, true, Options{})
	first, second := w.approver(), w.approver()
	res := w.call(context.Background(), "set_value", `{"key":"k","value":"v"}`)
	q1 := next[*Question](t, first)
	q2 := next[*Question](t, second)
	if q1.ID != q2.ID {
		t.Fatalf("the approvers got different questions: %s, %s", q1.ID, q2.ID)
	}
	first.Close()
	// The call still waits for the second approver.
	if err := second.Answer(q2, host.Answer{Approve: true}); err != nil {
		t.Fatal(err)
	}
	if r := result(t, res); r.Status != host.StatusSuccess || w.runs("set_value") != 1 {
		t.Fatalf("status %s after %d runs, want success after 1", r.Status, w.runs("set_value"))
	}

	// With the last approver gone, the waiting call is refused at once.
	res = w.call(context.Background(), "set_value", `{"key":"k","value":"w"}`)
	next[*Question](t, second)
	second.Close()
	r := result(t, res)
	if r.Status != host.StatusBlocked || w.runs("set_value") != 1 {
		t.Fatalf("status %s after %d runs, want blocked and no second run", r.Status, w.runs("set_value"))
	}
	if w.b.Waiting() {
		t.Fatal("Waiting with no approver connected")
	}
}

func TestNoApproverRefusesAtOnce(t *testing.T) {
	w := newWorld(t, true, Options{})
	// A connection that has not said hello is not an approver.
	c, err := Dial(context.Background(), w.b.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = w.b.Ask(context.Background(), &host.Question{Server: "f", Tool: &client.Tool{Name: "x"}, Scopes: []decide.Scope{decide.ScopeOnce}})
	if !errors.Is(err, ErrNoApprover) || !errors.Is(err, host.ErrNoPerson) {
		t.Fatalf("Ask with no approver: %v, want ErrNoApprover (a host.ErrNoPerson)", err)
	}
	r := result(t, w.call(context.Background(), "set_value", `{"key":"k","value":"v"}`))
	if r.Status != host.StatusBlocked || w.runs("set_value") != 0 {
		t.Fatalf("status %s, want blocked, not run", r.Status)
	}
}

func TestCancelledCallWithdrawn(t *testing.T) {
	w := newWorld(t, true, Options{})
	c, other := w.approver(), w.approver()
	ctx, cancel := context.WithCancel(context.Background())
	res := w.call(ctx, "set_value", `{"key":"k","value":"v"}`)
	q := next[*Question](t, c)
	next[*Question](t, other)
	cancel()
	if wd := next[*Withdrawn](t, c); wd.ID != q.ID {
		t.Fatalf("withdrawn %+v, want %s", wd, q.ID)
	}
	if r := result(t, res); r.Status == host.StatusSuccess {
		t.Fatal("a cancelled call ran")
	}
	// An answer in one approver withdraws the question from the others.
	res = w.call(context.Background(), "set_value", `{"key":"k","value":"v"}`)
	next[*Withdrawn](t, other)
	q = next[*Question](t, c)
	q2 := next[*Question](t, other)
	if err := c.Answer(q, host.Answer{Approve: true}); err != nil {
		t.Fatal(err)
	}
	if wd := next[*Withdrawn](t, other); wd.ID != q2.ID {
		t.Fatalf("withdrawn %+v, want %s", wd, q2.ID)
	}
	if r := result(t, res); r.Status != host.StatusSuccess || w.runs("set_value") != 1 {
		t.Fatalf("status %s after %d runs, want success after 1", r.Status, w.runs("set_value"))
	}
}

func TestScopeClampedToOffered(t *testing.T) {
	w := newWorld(t, true, Options{})
	c := w.approver()
	cases := []struct {
		offered []decide.Scope
		asked   decide.Scope
		want    host.Answer
	}{
		{[]decide.Scope{decide.ScopeOnce, decide.ScopeArgs, decide.ScopeSession}, decide.ScopeAlways, host.Answer{Approve: true, Scope: decide.ScopeOnce}},
		{[]decide.Scope{decide.ScopeOnce}, decide.ScopeSession, host.Answer{Approve: true, Scope: decide.ScopeOnce}},
		{[]decide.Scope{decide.ScopeOnce, decide.ScopeArgs}, decide.ScopeArgs, host.Answer{Approve: true, Scope: decide.ScopeArgs}},
		{[]decide.Scope{decide.ScopeArgs}, decide.ScopeAlways, host.Answer{Approve: true, Scope: decide.ScopeArgs}},
		{nil, decide.ScopeOnce, host.Answer{Reason: "the call could only be denied"}},
	}
	for _, tc := range cases {
		got := make(chan host.Answer, 1)
		go func() {
			a, _ := w.b.Ask(context.Background(), &host.Question{Server: "f", Tool: &client.Tool{Name: "t"},
				Args: json.RawMessage(`{}`), Decision: decide.Decision{Verdict: decide.Ask, Tier: decide.T3}, Scopes: tc.offered})
			got <- a
		}()
		q := next[*Question](t, c)
		if err := c.Answer(q, host.Answer{Approve: true, Scope: tc.asked}); err != nil {
			t.Fatal(err)
		}
		if a := <-got; a.Approve != tc.want.Approve || a.Scope != tc.want.Scope || a.Reason != tc.want.Reason {
			t.Errorf("offered %v, answered %s: got %+v, want %+v", tc.offered, tc.asked, a, tc.want)
		}
	}
}

func TestEditedArgumentsAreDecidedAgain(t *testing.T) {
	w := newWorld(t, true, Options{})
	c := w.approver()
	res := w.call(context.Background(), "set_value", `{"key":"k","value":"v"}`)
	q := next[*Question](t, c)
	if err := c.Answer(q, host.Answer{Approve: true, Args: json.RawMessage(`{"key":"k","value":"edited"}`)}); err != nil {
		t.Fatal(err)
	}
	// The edit approved nothing by itself: the edited call is asked about.
	q2 := next[*Question](t, c)
	if q2.ID == q.ID || q2.Arguments != `{"key":"k","value":"edited"}` {
		t.Fatalf("after the edit: %+v, want a new question about the edited arguments", q2)
	}
	if n := w.runs("set_value"); n != 0 {
		t.Fatalf("the edit ran the call %d times before it was approved", n)
	}
	if err := c.Answer(q2, host.Answer{Approve: true}); err != nil {
		t.Fatal(err)
	}
	if r := result(t, res); r.Status != host.StatusSuccess || string(r.Args) != `{"key":"k","value":"edited"}` {
		t.Fatalf("status %s with %s, want success with the edited arguments", r.Status, r.Args)
	}
}

func TestArgumentsNotShownFaithfullyNotAsked(t *testing.T) {
	w := newWorld(t, true, Options{})
	c := w.approver()
	// Should a question reach the approver, the Ask ends with the context,
	// and the test says so.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		if _, err := c.Next(); err == nil {
			cancel()
		}
	}()
	for _, tc := range []struct{ name, args, want string }{
		{"too large", `{"key":"` + strings.Repeat("x", MaxArguments) + `"}`, "larger"},
		// bytes JSON cannot carry as they are would be shown as something else
		{"invalid UTF-8", "{\"k\":\"\xff\"}", "UTF-8"},
	} {
		_, err := w.b.Ask(ctx, &host.Question{Server: "f", Tool: &client.Tool{Name: "t"}, Args: json.RawMessage(tc.args),
			Scopes: []decide.Scope{decide.ScopeOnce}})
		if !errors.Is(err, host.ErrNoPerson) || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("Ask with arguments %s: %v, want a refusal saying %q", tc.name, err, tc.want)
		}
	}
}

func TestOtherUserRefused(t *testing.T) {
	uid := os.Getuid()
	w := newWorld(t, true, Options{UID: uid, PeerUID: func(*net.UnixConn) (int, error) { return uid + 1, nil }})
	c, err := Dial(context.Background(), w.b.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Hello()
	var re *RemoteError
	if !errors.As(err, &re) || !strings.Contains(re.Message, fmt.Sprintf("uid %d", uid+1)) {
		t.Fatalf("hello as another user: %v, want a refusal naming uid %d", err, uid+1)
	}
	if w.b.Waiting() {
		t.Fatal("a refused connection counts as an approver")
	}
}

func TestCheckPeer(t *testing.T) {
	for _, tc := range []struct {
		peer  int
		err   error
		allow bool
	}{
		{peer: 1000, allow: true},
		{peer: 1001},
		{peer: 0}, // root is another user too
		{peer: 1000, err: errors.New("no credentials")},
	} {
		err := checkPeer(func(*net.UnixConn) (int, error) { return tc.peer, tc.err }, nil, 1000)
		if (err == nil) != tc.allow {
			t.Errorf("peer uid %d (error %v) for uid 1000: %v, want allowed=%v", tc.peer, tc.err, err, tc.allow)
		}
	}
	// The operating system's answer, for a real connection to ourselves.
	a, b := socketPair(t)
	defer a.Close()
	defer b.Close()
	if err := checkPeer(peerUID, a, os.Getuid()); err != nil {
		t.Fatalf("our own connection: %v", err)
	}
	if err := checkPeer(peerUID, a, os.Getuid()+1); err == nil {
		t.Fatal("our own connection passed as another user's")
	}
}

func socketPair(t *testing.T) (*net.UnixConn, *net.UnixConn) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan *net.UnixConn, 1)
	go func() {
		c, _ := ln.AcceptUnix()
		done <- c
	}()
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	s := <-done
	if s == nil {
		t.Fatal("accept failed")
	}
	return c, s
}

func TestSocketModes(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	path := SocketPath(state)
	// A directory left too open is tightened.
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := Listen(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v, want a socket with mode 0600", fi.Mode())
	}
	di, err := os.Stat(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if di.Mode().Perm() != 0o700 {
		t.Errorf("socket directory mode %v, want 0700", di.Mode().Perm())
	}
}

func TestStaleSocketReplacedLiveOneKept(t *testing.T) {
	path := SocketPath(filepath.Join(t.TempDir(), "state"))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	// A socket file whose process is gone.
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	b, err := Listen(path, Options{})
	if err != nil {
		t.Fatalf("a stale socket was not replaced: %v", err)
	}
	defer b.Close()

	// A second serve does not take over a live socket.
	if _, err := Listen(path, Options{}); !errors.Is(err, ErrBusy) {
		t.Fatalf("second Listen: %v, want ErrBusy", err)
	}
	c, err := Dial(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Hello(); err != nil {
		t.Fatalf("the first serve lost its socket: %v", err)
	}
	b.Close()
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Fatalf("Close left the socket file: %v", err)
	}

	// Something that is not a socket is never removed.
	if err := os.WriteFile(path, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Listen(path, Options{}); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Fatalf("Listen over a plain file: %v, want an error saying it is not a socket", err)
	}
	if data, _ := os.ReadFile(path); string(data) != "mine" {
		t.Fatal("Listen changed a file that is not a socket")
	}
}

func TestNoServe(t *testing.T) {
	_, err := Dial(context.Background(), SocketPath(t.TempDir()))
	if !errors.Is(err, ErrNoServe) {
		t.Fatalf("Dial with no serve: %v, want ErrNoServe", err)
	}
}

// raw connects without the client, to send what a client never would.
func raw(t *testing.T, path string) (net.Conn, *bufio.Scanner) {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	return c, newScanner(c)
}

func TestProtocolErrors(t *testing.T) {
	w := newWorld(t, true, Options{})
	hello := `{"type":"hello","version":1}` + "\n"
	for _, tc := range []struct{ name, send, want string }{
		{"not json", "hello\n", "malformed line"},
		{"no type", `{"version":1}` + "\n", `no "type"`},
		{"answer before hello", `{"type":"answer","id":"x","argsHash":"","approve":true,"scope":"once"}` + "\n", "first line must be a hello"},
		{"unknown version", `{"type":"hello","version":2}` + "\n", "version 2 is not supported"},
		{"unknown member", `{"type":"hello","version":1,"extra":true}` + "\n", "malformed hello"},
		{"unknown scope", hello + `{"type":"answer","id":"x","argsHash":"","approve":true,"scope":"forever"}` + "\n", "malformed answer"},
		{"misspelt member", hello + `{"type":"answer","id":"x","args_hash":"","approve":true}` + "\n", "malformed answer"},
		{"question from the approver", hello + `{"type":"question","id":"x"}` + "\n", "unexpected message type"},
		{"line too long", hello + `{"type":"answer","reason":"` + strings.Repeat("x", MaxLine) + `"}` + "\n", "longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, sc := raw(t, w.b.Path())
			if _, err := c.Write([]byte(tc.send)); err != nil {
				t.Fatal(err)
			}
			var last string
			for sc.Scan() {
				last = sc.Text()
			}
			var e Error
			if err := json.Unmarshal([]byte(last), &e); err != nil || e.Type != TypeError || !strings.Contains(e.Message, tc.want) {
				t.Fatalf("last line %q, want an error containing %q", last, tc.want)
			}
		})
	}
}

// fakeServe answers one connection with lines, after reading its hello.
func fakeServe(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		sc := newScanner(c)
		sc.Scan()
		for _, l := range lines {
			if _, err := c.Write([]byte(l + "\n")); err != nil {
				return
			}
		}
		sc.Scan() // until the client hangs up
	}()
	return path
}

func TestClientRefusesOtherVersion(t *testing.T) {
	c, err := Dial(context.Background(), fakeServe(t, `{"type":"hello","version":9}`))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Hello(); err == nil || !strings.Contains(err.Error(), "version 9") {
		t.Fatalf("hello from a serve of version 9: %v, want a refusal naming it", err)
	}
}

func TestClientRefusesMalformedLines(t *testing.T) {
	hello := `{"type":"hello","version":1}`
	for _, tc := range []struct{ name, line, want string }{
		{"not json", "garbage", "malformed line"},
		{"unknown type", `{"type":"surprise"}`, "unknown type"},
		{"question without id", `{"type":"question","tier":"T1","class":"read"}`, "no id"},
		{"unknown tier", `{"type":"question","id":"1","tier":"T7","class":"read"}`, "malformed question"},
		{"too long", `{"type":"question","id":"1","description":"` + strings.Repeat("x", MaxLine) + `"}`, "longer than"},
		{"error line", `{"type":"error","message":"bye"}`, "mcphost serve: bye"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Dial(context.Background(), fakeServe(t, hello, tc.line))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Hello(); err != nil {
				t.Fatal(err)
			}
			if v, err := c.Next(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Next: %v, %v; want an error containing %q", v, err, tc.want)
			}
		})
	}
}

func TestQuestionRoundTrip(t *testing.T) {
	hq := &host.Question{Server: "srv", Trusted: true, Tool: &client.Tool{Name: "delete_task", Title: "Delete", Description: "Deletes."},
		Args:     json.RawMessage(`{"id": 1}`),
		Decision: decide.Decision{Verdict: decide.Ask, Tier: decide.T3, Class: decide.Unknown, Reasons: []decide.Reason{{Code: "c", Text: "t"}}},
		Scopes:   []decide.Scope{decide.ScopeOnce, decide.ScopeSession}, Changed: true, ChangedFields: []string{"description"}}
	msg, _ := questionFor("id-1", hq)
	line, err := encodeLine(msg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(line), `"tier":"T3"`) || !strings.Contains(string(line), `"class":"unknown"`) || !strings.Contains(string(line), `"scopes":["once","session"]`) {
		t.Fatalf("encoded question %s lacks the tier, class or scopes by name", line)
	}
	var q Question
	if err := json.Unmarshal(line, &q); err != nil {
		t.Fatal(err)
	}
	back := q.HostQuestion()
	if back.Server != "srv" || back.Tool.Name != "delete_task" || back.Tool.Title != "Delete" || string(back.Args) != `{"id": 1}` ||
		back.Decision.Tier != decide.T3 || back.Decision.Verdict != decide.Ask || len(back.Scopes) != 2 || !back.Changed ||
		back.ChangedFields[0] != "description" || back.Decision.Reasons[0] != (decide.Reason{Code: "c", Text: "t"}) {
		t.Fatalf("round trip: %+v", back)
	}
	for _, bad := range []string{
		`{"type":"question","id":"x","tier":"T9","class":"read"}`,
		`{"type":"question","id":"x","tier":"T1","class":"safe"}`,
		`{"type":"question","id":"x","class":"read"}`,
	} {
		if err := json.Unmarshal([]byte(bad), &q); err == nil {
			t.Errorf("%s decoded; want an error", bad)
		}
	}
}

func TestBound(t *testing.T) {
	if got := bound(strings.Repeat("é", 10), 5); got != "éé… [16 bytes cut]" {
		t.Errorf("bound cut mid-rune: %q", got)
	}
	if got := bound("a\xffb", 10); got != "a\uFFFDb" {
		t.Errorf("bound kept invalid UTF-8: %q", got)
	}
}

func TestHelloTimeout(t *testing.T) {
	w := newWorld(t, true, Options{HelloTimeout: 50 * time.Millisecond})
	_, sc := raw(t, w.b.Path())
	if !sc.Scan() || !strings.Contains(sc.Text(), "no hello within") {
		t.Fatalf("a silent connection got %q (%v), want an error saying no hello came", sc.Text(), sc.Err())
	}
	if sc.Scan() {
		t.Fatalf("the connection stays open after the error: %q", sc.Text())
	}
}

func TestLiveSocketWithoutLockKept(t *testing.T) {
	// A process that answers on the socket but holds no lock (the lock
	// file removed by hand) still keeps its socket.
	path := SocketPath(filepath.Join(t.TempDir(), "state"))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if _, err := Listen(path, Options{}); !errors.Is(err, ErrBusy) {
		t.Fatalf("Listen over a live socket: %v, want ErrBusy", err)
	}
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("the live socket was removed: %v", err)
	}
}

// A symbolic link in place of the socket's directory could lead the socket
// (and the lock) into a directory another user controls: it is refused,
// even when the link's target is a private directory of this user.
func TestSocketDirectorySymlinkRefused(t *testing.T) {
	root := t.TempDir()
	target := filepath.Join(root, "elsewhere")
	if err := os.Mkdir(target, 0o700); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(root, "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	path := SocketPath(state)
	if err := os.Symlink(target, filepath.Dir(path)); err != nil {
		t.Fatal(err)
	}
	b, err := Listen(path, Options{})
	if err == nil {
		b.Close()
		t.Fatal("Listen accepted a symbolic link as the socket's directory")
	}
	if !strings.Contains(err.Error(), "symbolic link") || !strings.Contains(err.Error(), filepath.Dir(path)) {
		t.Errorf("error %q: want it to name the directory and say it is a symbolic link", err)
	}
	if ents, _ := os.ReadDir(target); len(ents) != 0 {
		t.Errorf("the link's target holds %d entries, want none (no lock, no socket)", len(ents))
	}
}

// TestAStandInIsNotSentAsTheServersWords: a question about a read of a
// resource carries no title or description, since the stand-in's are
// mcphost's words and the protocol's are the server's; a server's own
// tool that copies the name keeps its own.
func TestAStandInIsNotSentAsTheServersWords(t *testing.T) {
	m := client.New([]client.Spec{{Name: "docs"}}, client.Options{})
	defer m.Close()
	g := host.NewGate(host.GateOptions{Catalog: m})
	d, stand, err := g.ExplainOperation("docs", host.ResourceReadTool, host.ReadArgs("docs://readme"))
	if err != nil {
		t.Fatal(err)
	}
	q, _ := questionFor("id-1", &host.Question{Server: "docs", Tool: stand, Args: host.ReadArgs("docs://readme"), Decision: d})
	if q.Tool != host.ResourceReadTool || q.Title != "" || q.Description != "" {
		t.Fatalf("the stand-in went out as tool %q, title %q, description %q; want its name only", q.Tool, q.Title, q.Description)
	}
	copycat, _ := questionFor("id-2", &host.Question{Server: "docs", Tool: &client.Tool{Name: host.ResourceReadTool, Description: "Mine.", Hash: "0123abcd"}})
	if copycat.Description != "Mine." {
		t.Fatalf("a server's tool named like the stand-in lost its description: %q", copycat.Description)
	}
}
