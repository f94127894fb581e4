package approver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
)

// muxNext reads the Mux's next message, which must be a T.
func muxNext[T any](t *testing.T, m *Mux) T {
	t.Helper()
	type got struct {
		v   any
		err error
	}
	ch := make(chan got, 1)
	go func() {
		v, err := m.Next()
		ch <- got{v, err}
	}()
	select {
	case g := <-ch:
		if g.err != nil {
			t.Fatalf("reading the next message: %v", g.err)
		}
		v, ok := g.v.(T)
		if !ok {
			var zero T
			t.Fatalf("got %T %+v, want a %T", g.v, g.v, zero)
		}
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("no message from the serves")
		panic("unreachable")
	}
}

// Two hosts each running serve: each serve has its own socket in the
// person's socket directory, and one approver answers the calls of both,
// each answer reaching the serve that asked, each question marked with
// that serve; a serve that starts later is reached too, and one that stops
// takes its questions with it.
func TestOneApproverReachesEveryServe(t *testing.T) {
	root := t.TempDir()
	dir := SocketDir(filepath.Join(root, "state"))
	serve := func(name string) (*Broker, *host.Gate, string) {
		t.Helper()
		b, err := Listen(filepath.Join(dir, "serve-"+name+".sock"), Options{Label: name})
		if err != nil {
			t.Fatalf("serve %s: %v", name, err)
		}
		t.Cleanup(func() { b.Close() })
		gdir := filepath.Join(root, name)
		if err := os.Mkdir(gdir, 0o700); err != nil {
			t.Fatal(err)
		}
		execLog := filepath.Join(gdir, "exec.jsonl")
		g, stop, err := newGate(gdir, execLog, false, b)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
		return b, g, execLog
	}
	b1, g1, log1 := serve("one")
	b2, g2, log2 := serve("two")

	m := NewMux()
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if problems, err := m.Dial(ctx, dir); err != nil || len(problems) != 0 || m.Len() != 2 {
		t.Fatalf("Dial: %v %v, %d serves connected, want 2", err, problems, m.Len())
	}
	call := func(g *host.Gate) <-chan *host.Result {
		ch := make(chan *host.Result, 1)
		go func() {
			ch <- g.Call(ctx, host.Call{Server: "f", Tool: "set_value", Args: []byte(`{"key":"k","value":"v"}`)})
		}()
		return ch
	}

	// The second serve's call is asked, marked as its, and approved there.
	res := call(g2)
	q := muxNext[*Question](t, m)
	if q.From == nil || q.From.Label != "two" {
		t.Fatalf("question from %+v, want serve two", q.From)
	}
	if err := m.Answer(q, host.Answer{Approve: true, Scope: decide.ScopeOnce}); err != nil {
		t.Fatal(err)
	}
	if r := result(t, res); r.Status != host.StatusSuccess {
		t.Fatalf("serve two's approved call: %s %s", r.Status, r.Message())
	}
	if n1, n2 := countRuns(t, log1, "set_value"), countRuns(t, log2, "set_value"); n1 != 0 || n2 != 1 {
		t.Fatalf("runs: serve one %d, serve two %d; want 0 and 1", n1, n2)
	}
	// The first serve's call is asked too, and denied there.
	res = call(g1)
	q = muxNext[*Question](t, m)
	if q.From == nil || q.From.Label != "one" {
		t.Fatalf("question from %+v, want serve one", q.From)
	}
	if err := m.Answer(q, host.Answer{Reason: "no"}); err != nil {
		t.Fatal(err)
	}
	if r := result(t, res); r.Status != host.StatusDenied {
		t.Fatalf("serve one's denied call: %s %s", r.Status, r.Message())
	}

	// A serve that starts later is connected to.
	go m.Watch(ctx, dir, 10*time.Millisecond)
	b3, g3, _ := serve("three")
	waitFor(t, "the approver reaches serve three", func() bool { return b3.Waiting() && m.Len() == 3 })
	res = call(g3)
	if q := muxNext[*Question](t, m); q.From == nil || q.From.Label != "three" {
		t.Fatalf("question from %+v, want serve three", q.From)
	}
	// It stops with its call waiting: the question is withdrawn, naming it.
	b3.Close()
	if w := muxNext[*Withdrawn](t, m); !strings.Contains(w.Why, "(three)") {
		t.Fatalf("withdrawn %+v, want it to name serve three", w)
	}
	if r := result(t, res); r.Status == host.StatusSuccess {
		t.Fatal("a call whose serve stopped ran")
	}
	waitFor(t, "serve three is dropped", func() bool { return m.Len() == 2 })

	// The end of the last serve ends the approver.
	b1.Close()
	b2.Close()
	for {
		_, err := m.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("after every serve stopped: %v, want io.EOF", err)
		}
	}
}

// A serve's Listen removes the sockets that dead serves left beside its
// own, and keeps one whose serve still answers.
func TestDeadServesSocketsSwept(t *testing.T) {
	dir := SocketDir(filepath.Join(t.TempDir(), "state"))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(dir, "serve-99.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: dead, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	live := filepath.Join(dir, "serve-98.sock")
	lv, err := net.ListenUnix("unix", &net.UnixAddr{Name: live, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer lv.Close()
	b, err := Listen(filepath.Join(dir, "serve-1.sock"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dead); !os.IsNotExist(err) {
		t.Errorf("the dead serve's socket is still there: %v", err)
	}
	if _, err := os.Lstat(live); err != nil {
		t.Errorf("the socket of a serve that answers was removed: %v", err)
	}
	b.Close()
	if socks, _ := Sockets(dir); len(socks) != 1 || socks[0] != live {
		t.Errorf("sockets after Close: %v, want only %s", socks, live)
	}
	if _, err := os.Lstat(filepath.Join(dir, "serve-1.sock.lock")); !os.IsNotExist(err) {
		t.Errorf("Close left its lock file: %v", err)
	}
}

// waitFor polls cond until it holds; the bound only keeps a broken build
// from hanging the suite.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond) // polling another goroutine's connections
	}
}

// A socket directory that belongs to another user is refused (that user
// could put a socket of its own there), and so is a path too long for a
// Unix socket, with the fix named.
func TestSocketDirectoryOfAnotherUserRefused(t *testing.T) {
	// The root directory is root's; as root, a directory given away.
	dir, owner := "/", 0
	if os.Getuid() == 0 {
		dir, owner = SocketDir(filepath.Join(t.TempDir(), "state")), 4321
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, owner, owner); err != nil {
			t.Fatal(err)
		}
	}
	err := privateDir(dir)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("belongs to uid %d", owner)) {
		t.Fatalf("privateDir(%s), owned by uid %d: %v, want a refusal naming the owner", dir, owner, err)
	}
}

func TestSocketPathTooLongRefused(t *testing.T) {
	state := filepath.Join(t.TempDir(), strings.Repeat("d", 120))
	_, err := Listen(SocketPath(state), Options{})
	if err == nil || !strings.Contains(err.Error(), "XDG_STATE_HOME") {
		t.Fatalf("Listen on a %d-byte path: %v, want a refusal naming XDG_STATE_HOME", len(SocketPath(state)), err)
	}
}

// Edited arguments approve nothing unless they are one JSON object within
// the bound the approver is shown.
func TestEditedArgumentsMustBeABoundedObject(t *testing.T) {
	scopes := []decide.Scope{decide.ScopeOnce}
	for _, tc := range []struct {
		name, args, want string
	}{
		{"too large", `{"k":"` + strings.Repeat("x", MaxArguments) + `"}`, "larger than"},
		{"an array", `[1,2]`, "not one JSON object"},
		{"null", `null`, "not one JSON object"},
		{"not JSON", `{"k":`, "not one JSON object"},
	} {
		a, problem := hostAnswer(&Answer{Approve: true, Scope: decide.ScopeOnce, Arguments: tc.args}, scopes)
		if !strings.Contains(problem, tc.want) || a.Approve {
			t.Errorf("%s: answer %+v, problem %q; want nothing approved and %q", tc.name, a, problem, tc.want)
		}
	}
	if a, problem := hostAnswer(&Answer{Approve: true, Arguments: `{"k":"v"}`}, scopes); problem != "" || !a.Approve || string(a.Args) != `{"k":"v"}` {
		t.Errorf("a small object: %+v %q, want it passed on to be decided again", a, problem)
	}
}

// A connection that has not said hello is sent no question: its first line
// from the serve is the serve's hello, then every question waiting, each
// once.
func TestNoQuestionBeforeHello(t *testing.T) {
	w := newWorld(t, true, Options{})
	w.approver() // someone to ask
	c, sc := raw(t, w.b.Path())
	waitFor(t, "the serve holds the new connection", func() bool {
		w.b.mu.Lock()
		defer w.b.mu.Unlock()
		return len(w.b.conns) == 2
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	asked := make(chan struct{})
	go func() {
		close(asked)
		_, _ = w.b.Ask(ctx, &host.Question{Server: "f", Tool: &client.Tool{Name: "x"}, Args: []byte(`{}`), Scopes: []decide.Scope{decide.ScopeOnce}})
	}()
	<-asked
	waitFor(t, "the question waits", func() bool {
		w.b.mu.Lock()
		defer w.b.mu.Unlock()
		return len(w.b.pending) == 1
	})
	if _, err := c.Write([]byte(`{"type":"hello","version":1}` + "\n")); err != nil {
		t.Fatal(err)
	}
	var types []string
	for len(types) < 2 && sc.Scan() {
		typ, err := msgType(sc.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, typ)
	}
	if len(types) != 2 || types[0] != TypeHello || types[1] != TypeQuestion {
		t.Fatalf("the new approver got %v, want its hello and then the question", types)
	}
	cancel()
	// The withdrawal comes next, not the question a second time.
	if !sc.Scan() {
		t.Fatalf("no line after the question: %v", sc.Err())
	}
	if typ, _ := msgType(sc.Bytes()); typ != TypeWithdrawn {
		t.Fatalf("after the question: %q, want it withdrawn (and not sent twice)", typ)
	}
}

// TestASocketThatDidNotAnswerIsTriedAgain: a serve's socket that does not
// answer when the approver looks (a serve that died and left it, or one
// not yet listening) is tried again at the next look, so a serve that then
// starts under that name is reached.
func TestASocketThatDidNotAnswerIsTriedAgain(t *testing.T) {
	root := t.TempDir()
	dir := SocketDir(filepath.Join(root, "state"))
	live, err := Listen(filepath.Join(dir, "serve-one.sock"), Options{Label: "one"})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	// A socket left by a serve that died: bound, no longer listening.
	deadPath := filepath.Join(dir, "serve-two.sock")
	dead, err := net.ListenUnix("unix", &net.UnixAddr{Name: deadPath, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	dead.SetUnlinkOnClose(false)
	dead.Close()

	m := NewMux()
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := m.Dial(ctx, dir); err != nil || m.Len() != 1 {
		t.Fatalf("Dial: %v, %d serves connected, want the live one", err, m.Len())
	}
	go m.Watch(ctx, dir, 10*time.Millisecond)
	two, err := Listen(deadPath, Options{Label: "two"}) // sweeps the dead socket, listens anew
	if err != nil {
		t.Fatal(err)
	}
	defer two.Close()
	waitLen := func(n int, what string) {
		t.Helper()
		for m.Len() != n {
			select {
			case <-ctx.Done():
				t.Fatalf("%s (%d connected, want %d)", what, m.Len(), n)
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	waitLen(2, "the serve that started at a socket which had not answered was never reached")
	// That serve ends, and another starts under the same name (a reused
	// pid): it is reached too.
	two.Close()
	waitLen(1, "the serve that ended is still counted")
	again, err := Listen(deadPath, Options{Label: "two again"})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	waitLen(2, "a serve that started under the name of one that ended was never reached")
}

// An approver that stays open waits for a serve to start, connects to it,
// shows which client asks, and when that serve stops and starts again (a
// new process, a new socket; or the same name again) connects again,
// without ever ending.
func TestAStayingApproverWaitsForServeAndReconnects(t *testing.T) {
	dir := SocketDir(filepath.Join(t.TempDir(), "state"))
	m := NewMux()
	m.StayOpen()
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := m.Dial(ctx, dir); !errors.Is(err, ErrNoServe) {
		t.Fatalf("Dial with no serve: %v, want ErrNoServe", err)
	}
	go m.Watch(ctx, dir, 10*time.Millisecond)

	start := func(name string) *Broker {
		t.Helper()
		b, err := Listen(filepath.Join(dir, "serve-"+name+".sock"), Options{Label: name})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		muxNext[*ServesChanged](t, m)
		waitFor(t, "serve "+name+" sees the approver", b.Waiting)
		if hs := m.Serves(); len(hs) != 1 || hs[0].Label != name {
			t.Fatalf("connected to %+v, want serve %s alone", hs, name)
		}
		return b
	}
	ask := func(b *Broker) {
		t.Helper()
		ans := make(chan error, 1)
		go func() {
			_, err := b.Ask(ctx, &host.Question{Server: "f", Tool: &client.Tool{Name: "set_value"}, Args: []byte(`{}`),
				Decision: decide.Decision{Tier: decide.T2, Class: decide.Destructive}, Scopes: []decide.Scope{decide.ScopeOnce},
				Client: &audit.Client{Name: "Claude Code", Version: "2.1"}})
			ans <- err
		}()
		q := muxNext[*Question](t, m)
		if q.Client != "Claude Code 2.1" {
			t.Fatalf("the question names the client %q, want Claude Code 2.1", q.Client)
		}
		if err := m.Answer(q, host.Answer{Reason: "no"}); err != nil {
			t.Fatal(err)
		}
		if err := <-ans; err != nil {
			t.Fatalf("the answer did not reach the serve: %v", err)
		}
	}

	b := start("first")
	ask(b)
	b.Close() // the serve stops: the approver stays
	muxNext[*ServesChanged](t, m)
	if m.Len() != 0 {
		t.Fatalf("%d serves connected after the only one stopped", m.Len())
	}
	b = start("second") // restarted, as a new process
	ask(b)
	b.Close()
	muxNext[*ServesChanged](t, m)
	ask(start("second")) // restarted under the same name
}
