package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/fixtures"
)

// A read whose answer is over the stdio frame limit reached the server: the
// host cannot know what it did, so however later attempts end, the call is
// unknown and says which attempts may have run.
func TestOversizedAnswerIsNeverReportedNotSent(t *testing.T) {
	spec := client.Spec{Name: "h", Command: os.Args[0],
		Env: map[string]string{hostFixtureEnv: "hostile --hostile oversized --oversize 17000000"}}
	m := client.New([]client.Spec{spec}, client.Options{Backoff: func(int) time.Duration { return time.Millisecond }})
	t.Cleanup(func() { m.Close() })
	m.Start(context.Background())
	if st := m.Servers()[0]; st.State != client.StateReady {
		t.Fatalf("fixture did not start: %+v", st)
	}
	allow := decide.RuleSpec{Effect: decide.Allow, Source: "test", Raw: json.RawMessage(`"h/dump_logs"`)}
	policy, err := decide.Compile([]decide.RuleSpec{allow}, decide.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := NewGate(GateOptions{Catalog: m, Policy: policy, Trusted: func(string) bool { return true }, Mode: decide.Headless,
		Audit: openTestAudit(t), Backoff: func(int) time.Duration { return time.Millisecond },
		CallOptions: client.CallOptions{Timeout: 20 * time.Second}})
	r := g.Call(context.Background(), Call{Server: "h", Tool: "dump_logs", Args: json.RawMessage(`{}`)})
	if r.Status != StatusUnknown {
		t.Fatalf("status %s after attempts %+v, want unknown", r.Status, r.Attempts)
	}
	if len(r.Attempts) < 2 {
		t.Fatalf("attempts %+v: a read with an unknown outcome is retried", r.Attempts)
	}
	msg := r.Message()
	if strings.Contains(msg, "not retried") || !strings.Contains(msg, fmt.Sprintf("it was tried %d times", len(r.Attempts))) ||
		!regexp.MustCompile(`attempts? 1\b`).MatchString(msg) {
		t.Errorf("attempts %+v, message %q: want how many attempts there were and which may have run", r.Attempts, msg)
	}
}

// settle is the rule behind the status: table cases for every mix.
func TestSettle(t *testing.T) {
	for _, c := range []struct {
		last     Status
		attempts []client.Outcome
		want     Status
	}{
		{StatusNotSent, []client.Outcome{client.OutcomeUnknown, client.OutcomeNotSent}, StatusUnknown},
		{StatusRejected, []client.Outcome{client.OutcomeUnknown, client.OutcomeRejected}, StatusUnknown},
		{StatusThrottled, []client.Outcome{client.OutcomeUnknown, client.OutcomeThrottled}, StatusUnknown},
		{StatusError, []client.Outcome{client.OutcomeUnknown}, StatusUnknown},
		{StatusNotSent, []client.Outcome{client.OutcomeNotSent, client.OutcomeNotSent}, StatusNotSent},
		{StatusThrottled, []client.Outcome{client.OutcomeThrottled, client.OutcomeThrottled}, StatusThrottled},
		{StatusSuccess, []client.Outcome{client.OutcomeUnknown, client.OutcomeSuccess}, StatusSuccess},
		{StatusToolError, []client.Outcome{client.OutcomeUnknown, client.OutcomeToolError}, StatusToolError},
	} {
		r := &Result{Status: c.last}
		for i, o := range c.attempts {
			r.Attempts = append(r.Attempts, Attempt{N: i + 1, Outcome: o})
		}
		settle(r)
		if r.Status != c.want {
			t.Errorf("settle(%s after %v) = %s, want %s", c.last, c.attempts, r.Status, c.want)
		}
	}
}

// failingLog is a real audit log whose appends fail from the nth on, as a
// full disk would make them.
type failingLog struct {
	AuditLog
	n, calls int
}

func (f *failingLog) Append(r *audit.Record) error {
	f.calls++
	if f.calls >= f.n {
		return errors.New("no space left on device")
	}
	return f.AuditLog.Append(r)
}

// A retry that cannot be recorded does not run, and the call it follows
// may have run: the call is unknown, not an error of the host's.
func TestRetryWithoutIntentLeavesTheCallUnknown(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "flaky", fopts: fixtures.Options{FailFirst: 1}, trusted: true, headless: true})
	// Appends: intent 1, outcome 1, then the intent of the retry fails.
	w.gate.o.Audit = &failingLog{AuditLog: w.gate.o.Audit, n: 3}
	r := w.call("mark", `{"key":"k"}`)
	if r.Status != StatusUnknown || len(r.Attempts) != 1 {
		t.Fatalf("status %s after %+v (err %v), want unknown after one attempt", r.Status, r.Attempts, r.Err)
	}
	if n := w.count(fixtures.EventExec, "mark"); n != 0 {
		t.Errorf("the retry ran %d times without an intent record", n)
	}
}
