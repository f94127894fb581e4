package main

import (
	"bufio"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/approver"
	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
)

// heldCall runs `mcphost call` (on the demo servers) in the background and
// reads its stderr line by line.
type heldCall struct {
	dir   string
	done  chan int
	lines chan string
	all   []string
}

func startHeldCall(ctx context.Context, t *testing.T, args ...string) *heldCall {
	t.Helper()
	dir := t.TempDir()
	env := map[string]string{"XDG_STATE_HOME": filepath.Join(dir, "state"), "XDG_CONFIG_HOME": filepath.Join(dir, "config"), "NO_COLOR": "1"}
	errR, errW := io.Pipe()
	hc := &heldCall{dir: dir, done: make(chan int, 1), lines: make(chan string, 64)}
	go func() {
		s := &streams{In: strings.NewReader(""), Out: io.Discard, Err: errW, Getenv: func(k string) string { return env[k] }, WorkDir: dir}
		code := run(ctx, append([]string{"call"}, args...), s)
		errW.Close()
		hc.done <- code
	}()
	go func() {
		defer close(hc.lines)
		sc := bufio.NewScanner(errR)
		for sc.Scan() {
			hc.lines <- sc.Text()
		}
	}()
	return hc
}

// waitLine returns the first stderr line that contains s.
func (hc *heldCall) waitLine(t *testing.T, s string) string {
	t.Helper()
	for l := range hc.lines {
		hc.all = append(hc.all, l)
		if strings.Contains(l, s) {
			return l
		}
	}
	t.Fatalf("stderr ended without %q:\n%s", s, strings.Join(hc.all, "\n"))
	return ""
}

// exit waits for the command and returns its exit code and all of stderr.
func (hc *heldCall) exit() (int, string) {
	for l := range hc.lines {
		hc.all = append(hc.all, l)
	}
	return <-hc.done, strings.Join(hc.all, "\n")
}

func (hc *heldCall) approver(ctx context.Context, t *testing.T) *approver.Conn {
	t.Helper()
	c, err := approver.Dial(ctx, approver.SocketPath(filepath.Join(hc.dir, "state", "mcphost")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Hello(); err != nil {
		t.Fatal(err)
	}
	return c
}

// answerHeld answers the held call through the approver socket.
func answerHeld(ctx context.Context, t *testing.T, c *approver.Conn, ans host.Answer) {
	t.Helper()
	v, err := c.NextContext(ctx)
	q, ok := v.(*approver.Question)
	if err != nil || !ok || !q.Later || q.Tool != "delete_task" {
		t.Fatalf("the approver got %+v (%v), want the held delete_task", v, err)
	}
	if err := c.Answer(q, ans); err != nil {
		t.Fatal(err)
	}
}

func (hc *heldCall) approvalStates(t *testing.T) (states string, intents int) {
	t.Helper()
	recs, err := audit.Tail(filepath.Join(hc.dir, "state", "mcphost", "audit.jsonl"), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		switch {
		case r.Kind == audit.Approval:
			out = append(out, r.ApprovalState)
		case r.Kind == audit.Intent && r.Tool == "delete_task":
			intents++
		}
	}
	return strings.Join(out, ","), intents
}

// TestCallWaitsForALaterApproval: `mcphost call` of a call that needs a
// person, with no one to ask here, holds it on an approver socket of its
// own, names the approval id on stderr and waits: approved in `mcphost
// approve`, the call runs once; denied, nothing runs and the reason is
// told (exit 4).
func TestCallWaitsForALaterApproval(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	hc := startHeldCall(ctx, t, "--wait", "1m", "tasks/delete_task", `{"id":"T-1"}`)
	line := hc.waitLine(t, "waits for a person's approval under approval id")
	if !strings.Contains(line, "with `mcphost approve`") {
		t.Errorf("the held line %q does not say how to approve it", line)
	}
	answerHeld(ctx, t, hc.approver(ctx, t), host.Answer{Approve: true, Scope: decide.ScopeOnce})
	code, stderr := hc.exit()
	if code != exitOK || !strings.Contains(stderr, "by user:once → success") {
		t.Fatalf("approved later: exit %d, stderr:\n%s\nwant the call run (exit 0)", code, stderr)
	}
	if states, intents := hc.approvalStates(t); states != "held,approved,used" || intents != 1 {
		t.Errorf("audit: approvals %s and %d intents of delete_task, want held,approved,used and one", states, intents)
	}

	hc = startHeldCall(ctx, t, "--wait", "1m", "tasks/delete_task", `{"id":"T-1"}`)
	hc.waitLine(t, "waits for a person's approval")
	answerHeld(ctx, t, hc.approver(ctx, t), host.Answer{Reason: "not on a Friday"})
	code, stderr = hc.exit()
	if code != exitDenied || !strings.Contains(stderr, "not on a Friday") {
		t.Fatalf("denied later: exit %d, stderr:\n%s\nwant exit %d with the person's reason", code, stderr, exitDenied)
	}
	if states, intents := hc.approvalStates(t); states != "held,denied" || intents != 0 {
		t.Errorf("audit: approvals %s and %d intents of delete_task, want held,denied and none", states, intents)
	}
}

// TestCallHeldEndsWithoutAnAnswer: the wait ends when the approval
// expires, or at once when the command is interrupted (the call is
// withdrawn); --wait 0 refuses at once, as a call without a person always
// did. Nothing runs, and the exit code is 3.
func TestCallHeldEndsWithoutAnAnswer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	hc := startHeldCall(ctx, t, "--wait", "1s", "tasks/delete_task", `{"id":"T-1"}`)
	if code, stderr := hc.exit(); code != exitBlocked || !strings.Contains(stderr, "expired; nothing ran") {
		t.Fatalf("no answer within --wait: exit %d, stderr:\n%s\nwant exit %d, expired", code, stderr, exitBlocked)
	}

	cctx, stop := context.WithCancel(ctx)
	hc = startHeldCall(cctx, t, "--wait", "1m", "tasks/delete_task", `{"id":"T-1"}`)
	hc.waitLine(t, "waits for a person's approval")
	stop()
	if code, stderr := hc.exit(); code != exitBlocked || !strings.Contains(stderr, "withdrawn") {
		t.Fatalf("interrupted: exit %d, stderr:\n%s\nwant exit %d, withdrawn", code, stderr, exitBlocked)
	}
	if states, intents := hc.approvalStates(t); states != "held,withdrawn" || intents != 0 {
		t.Errorf("interrupted: approvals %s, %d intents; want held,withdrawn and nothing run", states, intents)
	}

	hc = startHeldCall(ctx, t, "--wait", "0", "tasks/delete_task", `{"id":"T-1"}`)
	code, stderr := hc.exit()
	if code != exitBlocked || strings.Contains(stderr, "approval id") {
		t.Fatalf("--wait 0: exit %d, stderr:\n%s\nwant exit %d at once, nothing held", code, stderr, exitBlocked)
	}
	if states, _ := hc.approvalStates(t); states != "" {
		t.Errorf("--wait 0 held the call: approvals %s", states)
	}
}

// TestCallYesFollowsAskVia: --yes is the person's own command line, judged
// as the chat is: where the managed askVia takes the chat away, --yes
// approves nothing, and the call is refused (exit 3) or, with --wait, held
// for `mcphost approve`.
func TestCallYesFollowsAskVia(t *testing.T) {
	e := newManagedEnv(t)
	e.managed(`{"askVia": {"T1": ["approve", "web"], "T2": ["approve", "web"], "T3": ["approve", "web"]}}`)
	code, _, stderr := e.run("call", "--yes", "--wait", "0", "tasks/delete_task", `{"id":"T-1"}`)
	if code != exitBlocked || !strings.Contains(stderr, "may not approve") || !strings.Contains(stderr, "with `mcphost approve`") {
		t.Fatalf("--yes where askVia takes the chat away: exit %d, stderr:\n%s\nwant exit %d saying where to approve it", code, stderr, exitBlocked)
	}
	e.noManaged()
	if code, _, stderr := e.run("call", "--yes", "--wait", "0", "tasks/delete_task", `{"id":"T-1"}`); code != exitOK {
		t.Fatalf("--yes under the default askVia: exit %d, stderr:\n%s\nwant it run", code, stderr)
	}
}

// TestCallWithoutATerminalDoesNotWait: without a terminal and without
// --wait, a call that needs a person is refused at once, as it always was:
// a script is never kept waiting for an approval.
func TestCallWithoutATerminalDoesNotWait(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hc := startHeldCall(ctx, t, "tasks/delete_task", `{"id":"T-1"}`)
	if code, stderr := hc.exit(); code != exitBlocked || strings.Contains(stderr, "approval id") || ctx.Err() != nil {
		t.Fatalf("without a terminal: exit %d, stderr:\n%s\nwant exit %d at once, nothing held", code, stderr, exitBlocked)
	}
}
