//go:build unix

package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/client"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const research = "simulate-research-query"

// taskLog collects a call's task events.
type taskLog struct {
	mu     sync.Mutex
	events []client.TaskEvent
	// onCreated, if set, runs on the created event.
	onCreated func()
}

func (l *taskLog) add(e client.TaskEvent) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
	if e.Kind == client.TaskEventCreated && l.onCreated != nil {
		l.onCreated()
	}
}

func (l *taskLog) all() []client.TaskEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]client.TaskEvent(nil), l.events...)
}

// checkTaskEvents checks the order of a task's events: created first,
// naming the task, and the result last.
func checkTaskEvents(t *testing.T, r *client.CallResult, events []client.TaskEvent) {
	t.Helper()
	if r.Task == nil || r.Task.ID == "" {
		t.Fatalf("the call ran without a task (outcome %s, %q, %v)", r.Outcome, r.Detail, r.Err)
	}
	if len(events) < 2 || events[0].Kind != client.TaskEventCreated || events[len(events)-1].Kind != client.TaskEventResult {
		t.Fatalf("task events %+v, want created first and result last", events)
	}
	for _, e := range events {
		if e.TaskID != r.Task.ID || e.Server != "everything" || e.Tool != research {
			t.Errorf("event %+v does not name the task %s of everything/%s", e, r.Task.ID, research)
		}
	}
}

// TestEverythingResearchTask runs simulate-research-query, which
// server-everything declares with execution.taskSupport "required": the
// call runs as a task, its stages are observed as it works, and the report
// comes from tasks/result.
func TestEverythingResearchTask(t *testing.T) {
	n := requireServers(t)
	t.Parallel()
	for _, tc := range everythingModes {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			m := newManager(t, tc.spec(t, n))
			startWithTool(t, m, "everything", research)
			if tool, _ := m.Tool("everything", research); tool.TaskSupport != client.TaskRequired {
				t.Fatalf("TaskSupport = %q, want %q as sent", tool.TaskSupport, client.TaskRequired)
			}
			want := client.TasksCapability{Known: true, Declared: true, ToolCalls: true, List: true, Cancel: true}
			if got := status(t, m, "everything").Tasks; got == nil || *got != want {
				t.Errorf("tasks capability %+v, want %+v as sent", got, want)
			}
			var log taskLog
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			r := m.Call(ctx, "everything", research, json.RawMessage(`{"topic":"tides"}`), client.CallOptions{OnTask: log.add})
			report := wantOutcome(t, r, client.OutcomeSuccess)
			if !strings.Contains(report, "# Research Report: tides") {
				t.Errorf("result %q, want the research report on tides", report)
			}
			checkTaskEvents(t, r, log.all())
			var stages int
			for _, h := range r.Task.History {
				if h.Status == client.TaskWorking && strings.HasSuffix(h.Message, "...") {
					stages++
				}
			}
			if stages == 0 {
				t.Errorf("history %+v shows no working stage: the task's progress was not followed", r.Task.History)
			}
			if last := r.Task.Last(); last.Status != client.TaskCompleted {
				t.Errorf("last status %+v, want completed", last)
			}
		})
	}
}

// TestEverythingResearchTaskCancel cancels the call once the task exists:
// mcphost sends tasks/cancel, and the server's own task list shows the task
// cancelled.
func TestEverythingResearchTaskCancel(t *testing.T) {
	n := requireServers(t)
	t.Parallel()
	for _, tc := range everythingModes {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			m := newManager(t, tc.spec(t, n))
			startWithTool(t, m, "everything", research)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			log := taskLog{onCreated: cancel}
			r := m.Call(ctx, "everything", research, json.RawMessage(`{"topic":"tides"}`), client.CallOptions{OnTask: log.add})
			if r.Outcome != client.OutcomeUnknown || r.Detail != "cancelled" || !r.CancelSent {
				t.Fatalf("outcome %s (%q, cancel sent %v, %v), want unknown, cancelled, cancel sent", r.Outcome, r.Detail, r.CancelSent, r.Err)
			}
			checkTaskEvents(t, r, log.all())
			if last := r.Task.Last(); last.Status != client.TaskCancelled || last.Note != "cancel sent" {
				t.Errorf("last status %+v, want cancelled by the cancel sent", last)
			}
			lctx, lcancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer lcancel()
			tasks, err := m.Tasks(lctx, "everything")
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, task := range tasks {
				if task.ID == r.Task.ID {
					found = true
					if task.Status != client.TaskCancelled {
						t.Errorf("the server lists the task as %s, want cancelled", task.Status)
					}
				}
			}
			if !found {
				t.Errorf("the server's tasks/list %+v does not hold the task %s", tasks, r.Task.ID)
			}
		})
	}
}

// TestEverythingResearchClarification asks an ambiguous query: the task's
// clarifying question reaches the client's elicitation handler (the path
// of the TUI form and the headless rule), and the answer shapes the report.
func TestEverythingResearchClarification(t *testing.T) {
	n := requireServers(t)
	t.Parallel()
	for _, tc := range everythingModes {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var asked []string
			m := newManagerWith(t, client.Options{
				Elicitation: func(ctx context.Context, server string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					asked = append(asked, server+": "+req.Params.Message)
					mu.Unlock()
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"interpretation": "historical"}}, nil
				},
			}, tc.spec(t, n))
			startWithTool(t, m, "everything", research)
			var log taskLog
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			r := m.Call(ctx, "everything", research, json.RawMessage(`{"topic":"tides","ambiguous":true}`), client.CallOptions{OnTask: log.add})
			report := wantOutcome(t, r, client.OutcomeSuccess)
			if !strings.Contains(report, "tides (historical)") {
				t.Errorf("result %q, want the report for the clarified topic", report)
			}
			checkTaskEvents(t, r, log.all())
			mu.Lock()
			defer mu.Unlock()
			if len(asked) != 1 || !strings.HasPrefix(asked[0], `everything: The research query "tides" could have multiple interpretations`) {
				t.Errorf("the elicitation handler was asked %q, want the one clarifying question", asked)
			}
		})
	}
}

// TestEverythingResearchTaskSurvivesHTTPError: over streamable HTTP a
// request about the task that fails (here the first tasks/get, answered 503
// by a proxy) is not the end of the call: the session is still there, the
// status is asked for again after a backoff, and the task runs to its
// result without being created twice.
func TestEverythingResearchTaskSurvivesHTTPError(t *testing.T) {
	n := requireServers(t)
	t.Parallel()
	target, err := url.Parse(startHTTP(t, n.everything, "streamableHttp", "/mcp").url)
	if err != nil {
		t.Fatal(err)
	}
	target.Path = "" // the proxy keeps the request's own path
	var mu sync.Mutex
	seen := map[string]int{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		mu.Lock()
		seen[m.Method]++
		first := m.Method == "tasks/get" && seen[m.Method] == 1
		mu.Unlock()
		if first {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	m := newManager(t, client.Spec{Name: "everything", Transport: client.TransportHTTP, URL: srv.URL + "/mcp"})
	startWithTool(t, m, "everything", research)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r := m.Call(ctx, "everything", research, json.RawMessage(`{"topic":"tides"}`), client.CallOptions{})
	if report := wantOutcome(t, r, client.OutcomeSuccess); !strings.Contains(report, "# Research Report: tides") {
		t.Errorf("result %q, want the research report on tides", report)
	}
	if got := notesOf(r.Task); !slices.Contains(got, "connection lost") || !slices.Contains(got, "reconnected") {
		t.Errorf("task notes %q, want the failed request and the status asked for again", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if seen["tools/call"] != 1 {
		t.Errorf("tools/call reached the server %d times, want once", seen["tools/call"])
	}
}

func notesOf(task *client.TaskInfo) []string {
	var out []string
	if task != nil {
		for _, h := range task.History {
			if h.Note != "" {
				out = append(out, h.Note)
			}
		}
	}
	return out
}
