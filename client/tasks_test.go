package client

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcphost/mcphost/fixtures"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// longjobSpec is the longjob fixture in process, logging to log.
func longjobSpec(log string) Spec {
	return Spec{Name: "job", Dial: func(ctx context.Context) (mcp.Transport, error) {
		f, err := fixtures.New("longjob", fixtures.Options{LogFile: log})
		if err != nil {
			return nil, err
		}
		return f.InMemory(ctx)
	}}
}

// TestTaskCeilingSendsCancel: a task that outlives the call's ceiling is
// cancelled with tasks/cancel, which the server receives; the outcome is
// unknown, for the task may have done part of its work.
func TestTaskCeilingSendsCancel(t *testing.T) {
	log := filepath.Join(t.TempDir(), "exec.jsonl")
	m := startManager(t, []Spec{longjobSpec(log)}, Options{})
	r := m.Call(context.Background(), "job", "research", json.RawMessage(`{"topic":"tides","hold":true}`),
		CallOptions{Timeout: 100 * time.Millisecond, Ceiling: 300 * time.Millisecond})
	if r.Outcome != OutcomeUnknown || r.Detail != "timeout" || !r.CancelSent || r.Task == nil {
		t.Fatalf("outcome %s (%q, cancel sent %v, task %+v, %v), want unknown after a timeout with tasks/cancel sent", r.Outcome, r.Detail, r.CancelSent, r.Task, r.Err)
	}
	entries, err := fixtures.ReadLog(log)
	if err != nil {
		t.Fatal(err)
	}
	if n := countLog(entries, fixtures.EventTaskCancel, ""); n != 1 {
		t.Errorf("the server received tasks/cancel %d times, want once", n)
	}
}

// TestTasksNeverRefusesRequiredTools: with "tasks": "never" a tool that
// runs only as a task is refused before anything is sent.
func TestTasksNeverRefusesRequiredTools(t *testing.T) {
	log := filepath.Join(t.TempDir(), "exec.jsonl")
	spec := longjobSpec(log)
	spec.Tasks = TasksNever
	m := startManager(t, []Spec{spec}, Options{})
	r := m.Call(context.Background(), "job", "research", json.RawMessage(`{"topic":"tides"}`), CallOptions{})
	if r.Outcome != OutcomeRejected || r.Detail != "tasks off" {
		t.Fatalf("outcome %s (%q, %v), want rejected: tasks off", r.Outcome, r.Detail, r.Err)
	}
	entries, err := fixtures.ReadLog(log)
	if err != nil {
		t.Fatal(err)
	}
	if n := countLog(entries, fixtures.EventTaskCreate, "research"); n != 0 {
		t.Errorf("the server received %d task-creating calls, want none", n)
	}
}

// TestTaskSupportAsSent reads execution.taskSupport exactly as sent: the key
// is case-sensitive, a value of the wrong type is ignored with a finding,
// and an unknown value is kept as sent (and runs no task).
func TestTaskSupportAsSent(t *testing.T) {
	for _, c := range []struct {
		execution, want string
		finding         bool
	}{
		{``, "", false},
		{`,"execution":{"taskSupport":"required"}`, TaskRequired, false},
		{`,"execution":{"taskSupport":"optional"}`, TaskOptional, false},
		{`,"execution":{"TaskSupport":"required"}`, "", false},
		{`,"execution":{"taskSupport":true}`, "", true},
		{`,"execution":"required"`, "", true},
		{`,"execution":{"taskSupport":"sometimes"}`, "sometimes", true},
		{`,"execution":null`, "", false},
	} {
		tl, _, finds := parseEntry("h", json.RawMessage(`{"name":"t","inputSchema":{"type":"object"}`+c.execution+`}`), Limits{}.withDefaults())
		if tl == nil || tl.TaskSupport != c.want || (len(finds) > 0) != c.finding {
			t.Errorf("%s: TaskSupport %q, findings %+v; want %q, finding %v", c.execution, tl.TaskSupport, finds, c.want, c.finding)
		}
	}
}

// TestTasksCapabilityAsSent reads the tasks capability from the handshake
// as sent: longjob declares task-augmented tools/call, the go-sdk fixture
// tasks declares nothing. An optional tool runs as a task only with
// "tasks": "auto" and the capability declared.
func TestTasksCapabilityAsSent(t *testing.T) {
	log := filepath.Join(t.TempDir(), "exec.jsonl")
	auto := longjobSpec(log)
	auto.Name, auto.Tasks = "auto", TasksAuto
	m := startManager(t, []Spec{longjobSpec(log), auto, fixtureSpec(t, "plain", "tasks")}, Options{})
	for _, c := range []struct {
		server string
		want   TasksCapability
	}{
		{"job", TasksCapability{Known: true, Declared: true, ToolCalls: true, List: true, Cancel: true}},
		{"plain", TasksCapability{Known: true}},
	} {
		st, _ := statusOf(m, c.server)
		if st.Tasks == nil || *st.Tasks != c.want {
			t.Errorf("%s: tasks capability %+v, want %+v", c.server, st.Tasks, c.want)
		}
	}
	for server, task := range map[string]bool{"job": false, "auto": true} {
		r := m.Call(context.Background(), server, "quick", json.RawMessage(`{"topic":"tides"}`), CallOptions{})
		if r.Outcome != OutcomeSuccess || (r.Task != nil) != task {
			t.Errorf("%s/quick: %s (%v), task %+v; want success, as a task: %v", server, r.Outcome, r.Err, r.Task, task)
		}
	}
}
