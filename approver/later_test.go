package approver

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/later"
)

// A call no approver was there for is held; an approver that connects
// later sees it as held, approves it, and the retry runs once.
func TestHeldCallIsShownToApproversAndApprovedLater(t *testing.T) {
	dir := t.TempDir()
	b, err := Listen(SocketPath(filepath.Join(dir, "state")), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	execLog := filepath.Join(dir, "exec.jsonl")
	var g *host.Gate
	posted, answered := make(chan error, 1), make(chan error, 1)
	g, stop, err := newGateOpts(dir, execLog, false, b, nil, func(o *host.GateOptions) {
		o.Later = later.New(later.Options{})
		o.OnHold = func(a later.Approval, q *host.Question) error {
			err := b.Post(a.ID, q, a.Expires, func(ans host.Answer) error {
				err := g.AnswerLater(a.ID, ans)
				answered <- err
				return err
			})
			posted <- err
			return err
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	call := func() *host.Result {
		return g.Call(context.Background(), host.Call{Server: "f", Tool: "set_value", Args: json.RawMessage(`{"key":"k","value":"v"}`)})
	}
	r := call()
	if r.Status != host.StatusBlocked || r.Held == nil {
		t.Fatalf("with no approver: %s held %+v, want blocked and held", r.Status, r.Held)
	}
	if err := <-posted; err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, b: b, execLog: execLog}
	first := w.approver()
	q := next[*Question](t, first)
	if q.ID != r.Held.ID || !q.Later || q.Expires == "" || q.Tier != decide.T3 {
		t.Fatalf("question %+v, want the held call %s, marked later with its expiry", q, r.Held.ID)
	}
	// It outlives its approver: the next one sees it too, after the
	// broker has seen the first one go (when no approver was left).
	first.Close()
	for gone := time.Now().Add(10 * time.Second); b.Waiting(); {
		if time.Now().After(gone) {
			t.Fatal("the broker never saw the approver disconnect")
		}
		time.Sleep(time.Millisecond) // waiting for the broker's read loop to end, not for a race to settle
	}
	c := w.approver()
	q = next[*Question](t, c)
	if q.ID != r.Held.ID {
		t.Fatalf("after a reconnect the question is %s, want %s", q.ID, r.Held.ID)
	}
	if err := c.Answer(q, host.Answer{Approve: true, Scope: decide.ScopeOnce}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-answered:
		if err != nil {
			t.Fatalf("the approver's answer approved nothing: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the approver's answer never reached the gate")
	}
	if r = call(); r.Status != host.StatusSuccess || r.DecidedBy != "user:once" {
		t.Fatalf("the retry after approval: %s by %s, want success by user:once", r.Status, r.DecidedBy)
	}
	// A second retry is a new call: asked again (an approver is there).
	res := make(chan *host.Result, 1)
	go func() { res <- call() }()
	again := next[*Question](t, c)
	if again.Later || again.ID == q.ID {
		t.Fatalf("the second retry was asked as %+v, want a new question", again)
	}
	if err := c.Answer(again, host.Answer{Reason: "once was enough"}); err != nil {
		t.Fatal(err)
	}
	if r := result(t, res); r.Status != host.StatusDenied {
		t.Fatalf("the second retry: %s, want denied", r.Status)
	}
	if n := countRuns(t, execLog, "set_value"); n != 1 {
		t.Fatalf("set_value ran %d times, want once", n)
	}
	// The same answer again approves nothing.
	if err := c.Answer(q, host.Answer{Approve: true}); err != nil {
		t.Fatal(err)
	}
	if rej := next[*Rejected](t, c); rej.ID != q.ID {
		t.Fatalf("rejected %+v, want the repeated answer to %s", rej, q.ID)
	}
}

// A held call whose answer is refused — edited arguments, or an answer
// the gate does not take (a channel that may not approve it) — still
// waits, shown, and an answer that may be given then approves it; the
// refused ones ran nothing.
func TestARefusedAnswerLeavesTheHeldCallWaiting(t *testing.T) {
	w := brokerOnly(t, Options{})
	b := w.b
	var refuse atomic.Bool
	refuse.Store(true)
	taken := make(chan host.Answer, 4)
	q := &host.Question{Server: "f", Tool: &client.Tool{Server: "f", Name: "set_value", Hash: "h"}, Args: json.RawMessage(`{"key":"k"}`),
		Decision: decide.Decision{Verdict: decide.Ask, Tier: decide.T3, Class: decide.Unknown}, Scopes: []decide.Scope{decide.ScopeOnce}}
	if err := b.Post("held-1", q, time.Now().Add(time.Minute), func(ans host.Answer) error {
		if refuse.Load() {
			return errors.New("not through this channel")
		}
		taken <- ans
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	c := w.approver()
	shown := next[*Question](t, c)
	if err := c.Answer(shown, host.Answer{Approve: true, Scope: decide.ScopeOnce, Args: json.RawMessage(`{"key":"other"}`)}); err != nil {
		t.Fatal(err)
	}
	if rej := next[*Rejected](t, c); !strings.Contains(rej.Message, "cannot be edited") {
		t.Fatalf("an edited answer to a held call: %+v", rej)
	}
	if err := c.Answer(shown, host.Answer{Approve: true, Scope: decide.ScopeOnce}); err != nil {
		t.Fatal(err)
	}
	if rej := next[*Rejected](t, c); !strings.Contains(rej.Message, "not through this channel") {
		t.Fatalf("an answer the gate refused: %+v", rej)
	}
	// A second approver, there before the answer, is told the call was
	// answered elsewhere: only after the gate took the answer does the
	// broker stop showing it.
	c2 := w.approver()
	if again := next[*Question](t, c2); again.ID != shown.ID {
		t.Fatalf("a second approver was shown %+v, want the held call", again)
	}
	refuse.Store(false)
	if err := c.Answer(shown, host.Answer{Approve: true, Scope: decide.ScopeOnce}); err != nil {
		t.Fatal(err)
	}
	if wd := next[*Withdrawn](t, c2); wd.ID != shown.ID {
		t.Fatalf("withdrawn %+v, want the held call", wd)
	}
	var ans host.Answer
	select {
	case ans = <-taken:
	default:
		t.Fatal("the call was withdrawn but the gate was never given the approval")
	}
	if !ans.Approve || ans.Args != nil {
		t.Fatalf("the gate was given %+v, want an approval of the call as held", ans)
	}
	// An answer taken leaves nothing more to say, so a fresh approver
	// sees no question.
	c3 := w.approver()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if v, err := c3.NextContext(ctx); err == nil {
		t.Fatalf("after the approval the held call is still shown: %+v", v)
	}
	if len(taken) != 0 {
		t.Fatalf("the gate was given a second answer: %+v", <-taken)
	}
}

// TestAHeldCallAnsweredElsewhereIsTakenOff: when the gate says the held
// call waits no more (answered through another channel), the approver's
// answer takes it off every approver instead of leaving it shown.
func TestAHeldCallAnsweredElsewhereIsTakenOff(t *testing.T) {
	w := brokerOnly(t, Options{})
	q := &host.Question{Server: "f", Tool: &client.Tool{Server: "f", Name: "set_value", Hash: "h"}, Args: json.RawMessage(`{"key":"k"}`),
		Decision: decide.Decision{Verdict: decide.Ask, Tier: decide.T2, Class: decide.Unknown}, Scopes: []decide.Scope{decide.ScopeOnce}}
	if err := w.b.Post("held-1", q, time.Now().Add(time.Minute), func(host.Answer) error { return later.ErrAnswered }); err != nil {
		t.Fatal(err)
	}
	c, c2 := w.approver(), w.approver()
	shown := next[*Question](t, c)
	next[*Question](t, c2)
	if err := c.Answer(shown, host.Answer{Approve: true, Scope: decide.ScopeOnce}); err != nil {
		t.Fatal(err)
	}
	if rej := next[*Rejected](t, c); !strings.Contains(rej.Message, "already answered") {
		t.Fatalf("the approver was told %+v, want that the call was answered already", rej)
	}
	if wd := next[*Withdrawn](t, c2); wd.ID != shown.ID {
		t.Fatalf("withdrawn %+v, want the call answered elsewhere", wd)
	}
}
