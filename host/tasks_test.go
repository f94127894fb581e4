package host

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// taskWorld is a gate over longjob, whose tools run only as tasks. With
// state, its tasks survive a restart; with drop, it crashes right after
// creating one.
func taskWorld(t *testing.T, state, drop bool) *world {
	t.Helper()
	o := fixtures.Options{DropAfterCreate: drop}
	if state {
		o.TaskState = filepath.Join(t.TempDir(), "tasks.json")
	}
	return newWorld(t, worldOpts{fixture: "longjob", trusted: true, headless: true, fopts: o})
}

// callTask runs tool through the gate, handing its task events to onTask.
func (w *world) callTask(ctx context.Context, tool, args string, onTask func(client.TaskEvent)) *Result {
	w.t.Helper()
	return w.gate.Call(ctx, Call{Server: "f", Tool: tool, Args: json.RawMessage(args), OnTask: onTask})
}

func notes(h []client.TaskStatus) []string {
	var out []string
	for _, s := range h {
		if s.Note != "" {
			out = append(out, s.Note)
		}
	}
	return out
}

// auditedTask reports whether the audit log already names the task.
func (w *world) auditedTask(id string) bool {
	w.t.Helper()
	recs, err := audit.Tail(w.audit, 1<<20)
	if err != nil {
		w.t.Fatal(err)
	}
	return slices.ContainsFunc(recs, func(r audit.Record) bool { return r.TaskID == id })
}

// TestTaskOutcomeKnownAfterDrop: the server dies right after creating the
// task and keeps it across the restart. The gate reports the task's real
// outcome, asked for with tasks/get after reconnecting, and never sends the
// call again; the task id was in the audit log before the connection was
// even found lost.
func TestTaskOutcomeKnownAfterDrop(t *testing.T) {
	for _, tc := range []struct {
		name, args string
		want       Status
		text       string
	}{
		{"completed", `{"topic":"tides","steps":2}`, StatusSuccess, "report on tides"},
		{"failed", `{"topic":"tides","fail":true}`, StatusToolError, "no sources on tides"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := taskWorld(t, true, true)
			var auditedAtLoss []bool
			var r *Result
			r = w.callTask(context.Background(), "research", tc.args, func(e client.TaskEvent) {
				if e.Status.Note == "connection lost" {
					auditedAtLoss = append(auditedAtLoss, w.auditedTask(e.TaskID))
				}
			})
			if r.Status != tc.want || resultText(r.Result) != tc.text {
				t.Fatalf("status %s (%v), text %q; want %s, %q", r.Status, r.Err, resultText(r.Result), tc.want, tc.text)
			}
			if r.Task == nil || !slices.Contains(notes(r.Task.History), "reconnected") {
				t.Fatalf("task %+v: want its outcome asked for after reconnecting", r.Task)
			}
			if n := w.count(fixtures.EventTaskCreate, "research"); n != 1 {
				t.Errorf("the call reached the server %d times, want once", n)
			}
			if n := w.count(fixtures.EventExec, "research"); n != 1 {
				t.Errorf("the job ran %d times, want once", n)
			}
			if n := w.count(fixtures.EventStart, ""); n != 2 {
				t.Errorf("the server started %d times, want 2 (the crash restarted it)", n)
			}
			if !slices.Equal(auditedAtLoss, []bool{true}) {
				t.Errorf("task id in the audit log when the connection was lost: %v, want [true]", auditedAtLoss)
			}
			checkTaskAudit(t, w, "research", r)
		})
	}
}

// checkTaskAudit checks the audit records of a call that ran as a task: the
// intent, an outcome "task created" naming the task, an intent naming it,
// and the final outcome naming it; no intent left open.
func checkTaskAudit(t *testing.T, w *world, tool string, r *Result) {
	t.Helper()
	intents, outcomes := w.records(tool)
	if len(intents) != 2 || len(outcomes) != 2 {
		t.Fatalf("%d intents and %d outcomes, want 2 and 2", len(intents), len(outcomes))
	}
	created, final := outcomes[0], outcomes[1]
	if created.TaskID != r.Task.ID || created.Status != audit.StatusUnknown || created.Attempts[0].Detail != "task created" {
		t.Errorf("first outcome %+v, want status unknown, task created, naming task %s", created, r.Task.ID)
	}
	if intents[1].TaskID != r.Task.ID || final.TaskID != r.Task.ID || final.Status != audit.Status(r.Status) {
		t.Errorf("follow intent %q and final outcome %q (%s), want both naming %s with status %s", intents[1].TaskID, final.TaskID, final.Status, r.Task.ID, r.Status)
	}
	f, err := os.Open(w.audit)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := audit.Verify(f)
	if err != nil || len(rep.OpenIntents) != 0 {
		t.Errorf("verify: %v, open intents %+v", err, rep.OpenIntents)
	}
}

// TestTaskForgottenIsUnknownAndNotRetried: the restarted server no longer
// knows the task. Only then is the outcome unknown, and even a read, which
// the gate may retry twice after an unknown outcome, is not sent again: one
// approval never creates two tasks.
func TestTaskForgottenIsUnknownAndNotRetried(t *testing.T) {
	w := taskWorld(t, false, true)
	r := w.callTask(context.Background(), "lookup", `{"topic":"tides"}`, nil)
	if r.Status != StatusUnknown || len(r.Attempts) != 1 || r.Attempts[0].Detail != "task unknown to the server" {
		t.Fatalf("status %s after %+v (%v), want unknown after one attempt: the task is unknown to the server", r.Status, r.Attempts, r.Err)
	}
	if n := w.count(fixtures.EventTaskCreate, "lookup"); n != 1 {
		t.Errorf("the call created %d tasks, want 1", n)
	}
}

// TestTaskLostBeforeAnswerNotRetried: the connection is lost before the
// answer that would name the task. The task may exist, so even a read is
// not retried.
func TestTaskLostBeforeAnswerNotRetried(t *testing.T) {
	w := taskWorld(t, false, false)
	g := w.gate
	cr := &client.CallResult{Outcome: client.OutcomeUnknown, Detail: "connection lost"}
	tool, ok := w.m.Tool("f", "lookup")
	if !ok {
		t.Fatal("lookup is not listed")
	}
	if !g.mayHaveCreatedTask(cr, client.Spec{}, tool) {
		t.Errorf("an unknown outcome of a tool that runs only as a task may hide a task, and must not be retried")
	}
	if g.mayHaveCreatedTask(&client.CallResult{Outcome: client.OutcomeThrottled}, client.Spec{}, tool) {
		t.Errorf("a throttled call created no task and may be retried as before")
	}
}

// TestTaskCancelledOnContextEnd: Ctrl-C and SIGTERM end the call's
// context; the gate's call then sends tasks/cancel, which the server sees.
func TestTaskCancelledOnContextEnd(t *testing.T) {
	w := taskWorld(t, true, false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := w.callTask(ctx, "research", `{"topic":"tides","hold":true}`, func(e client.TaskEvent) {
		if e.Kind == client.TaskEventCreated {
			cancel()
		}
	})
	if r.Status != StatusUnknown || r.Task == nil || r.Task.Last().Status != client.TaskCancelled {
		t.Fatalf("status %s, task %+v (%v): want unknown, the task cancelled", r.Status, r.Task, r.Err)
	}
	if n := w.count(fixtures.EventTaskCancel, ""); n != 1 {
		t.Errorf("the server saw tasks/cancel %d times, want once", n)
	}
}

func resultText(res *mcp.CallToolResult) string {
	if res == nil || len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

// TestTaskNeedsIntentFirst: without a durable intent record no task is
// created for a call that is not a read.
func TestTaskNeedsIntentFirst(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "longjob", trusted: true, headless: true, noAudit: true})
	r := w.callTask(context.Background(), "research", `{"topic":"tides"}`, nil)
	if r.Status != StatusError || r.Task != nil {
		t.Fatalf("status %s, task %+v: want an error and no task", r.Status, r.Task)
	}
	if n := w.count(fixtures.EventTaskCreate, "research"); n != 0 {
		t.Errorf("the server created %d tasks without an intent record, want none", n)
	}
}
