package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A tool's execution.taskSupport, as the protocol defines it.
const (
	TaskRequired  = "required"  // the tool runs only as a task
	TaskOptional  = "optional"  // the tool runs as a task or as a plain call
	TaskForbidden = "forbidden" // the tool never runs as a task (also: absent)
)

// Per-server task modes (Spec.Tasks).
const (
	// TasksRequired, the default, runs as tasks only the tools that cannot
	// run otherwise.
	TasksRequired = "required"
	// TasksAuto also runs as tasks the tools that allow it, so that their
	// outcome can be asked for after a lost connection.
	TasksAuto = "auto"
	// TasksNever creates no task: tools that require one are refused before
	// anything is sent.
	TasksNever = "never"
)

// Task statuses.
const (
	TaskWorking       = "working"
	TaskInputRequired = "input_required"
	TaskCompleted     = "completed"
	TaskFailed        = "failed"
	TaskCancelled     = "cancelled"
)

// TaskTerminal reports whether status ends a task.
func TaskTerminal(status string) bool {
	return status == TaskCompleted || status == TaskFailed || status == TaskCancelled
}

// Bounds on what a server says about a task.
const (
	maxTaskID      = 256
	maxTaskMessage = 1024
	maxTaskHistory = 64
	minTaskPoll    = 100 * time.Millisecond
	maxTaskPoll    = 5 * time.Second
	taskCancelWait = 5 * time.Second
)

// TaskStatus is one observation of a task. Status and Message are the
// server's words, bounded and unsanitized.
type TaskStatus struct {
	Status  string    `json:"status"`
	Message string    `json:"statusMessage,omitempty"`
	At      time.Time `json:"at"`
	// Note says what mcphost did at that point: "created", "reconnected",
	// "connection lost", "cancel sent", "cancel failed".
	Note string `json:"note,omitempty"`
}

// TaskInfo is the account of the task a call ran as.
type TaskInfo struct {
	ID string `json:"id"`
	// History holds the observed statuses, oldest first (at most
	// maxTaskHistory; the newest are kept).
	History []TaskStatus `json:"history"`
}

// Last returns the newest observation.
func (t *TaskInfo) Last() TaskStatus {
	if t == nil || len(t.History) == 0 {
		return TaskStatus{}
	}
	return t.History[len(t.History)-1]
}

// Task event kinds.
const (
	TaskEventCreated = "created" // the server created the task; TaskID is set
	TaskEventStatus  = "status"  // a new status was observed
	TaskEventResult  = "result"  // the call's outcome is settled
)

// TaskEvent reports a step of a task-augmented call, as it happens.
type TaskEvent struct {
	Kind   string
	Server string
	Tool   string
	TaskID string
	Status TaskStatus
}

// wireTask is a Task as a server sends it (CreateTaskResult.task, and the
// result of tasks/get and tasks/cancel).
type wireTask struct {
	TaskID        string   `json:"taskId"`
	Status        string   `json:"status"`
	StatusMessage string   `json:"statusMessage"`
	PollInterval  *float64 `json:"pollInterval"` // milliseconds
}

// check bounds t; a task without an id or status is not a task.
func (t *wireTask) check() error {
	switch {
	case t.TaskID == "":
		return errors.New("the task has no taskId")
	case len(t.TaskID) > maxTaskID || !utf8.ValidString(t.TaskID):
		return fmt.Errorf("the taskId is longer than %d bytes or not UTF-8", maxTaskID)
	case t.Status == "":
		return errors.New("the task has no status")
	}
	t.Status = bound(t.Status, 32)
	t.StatusMessage = bound(t.StatusMessage, maxTaskMessage)
	return nil
}

func bound(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// poll is the interval the server suggests, within mcphost's bounds.
func (t *wireTask) poll() time.Duration {
	d := 500 * time.Millisecond
	if t.PollInterval != nil && *t.PollInterval > 0 {
		d = time.Duration(*t.PollInterval * float64(time.Millisecond))
	}
	return min(max(d, minTaskPoll), maxTaskPoll)
}

// readTaskSupport sets t.TaskSupport from the entry it's "execution" member,
// read exactly as sent; it returns a finding's message when the member is
// malformed (it is then ignored, which means forbidden).
func readTaskSupport(s *scanner, it item, t *Tool) string {
	var ex [1]item
	s.lookup(s.node(it), executionKey[:], ex[:])
	raw := s.raw(ex[0])
	switch k := jsonKind(raw); k {
	case "absent", "null":
		return ""
	case "object":
	default:
		return "execution is " + k + ", not an object; it was ignored"
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return "execution could not be read; it was ignored"
	}
	ts, ok := members["taskSupport"]
	if !ok || string(ts) == "null" {
		return ""
	}
	var v string
	if err := json.Unmarshal(ts, &v); err != nil {
		return "execution.taskSupport is not a string; it was ignored"
	}
	t.TaskSupport = bound(v, 32)
	switch v {
	case TaskRequired, TaskOptional, TaskForbidden:
		return ""
	}
	return fmt.Sprintf("execution.taskSupport %q is not required, optional or forbidden; the tool is called without a task", t.TaskSupport)
}

var executionKey = [1]string{"execution"}

// taskMode reports whether a call of tool on s runs as a task, or why it
// cannot run at all.
func (s *server) taskMode(tool string) (bool, error) {
	s.mu.Lock()
	var support string
	if s.listing != nil {
		for _, t := range s.listing.tools {
			if t.Name == tool {
				support = t.TaskSupport
				break
			}
		}
	}
	mode := s.spec.Tasks
	var declared TasksCapability
	if s.conn != nil {
		declared = s.conn.caps.tasks()
	}
	s.mu.Unlock()
	switch support {
	case TaskRequired:
		if mode == TasksNever {
			return false, fmt.Errorf("the tool %q of server %q runs only as a task, and tasks are off for that server (\"tasks\": \"never\"); set \"tasks\" to \"required\" or \"auto\" to call it", tool, s.spec.Name)
		}
		return true, nil
	case TaskOptional:
		// A tool that may run either way runs as a task only where the
		// server declared task-augmented tools/call (or nothing was read).
		return mode == TasksAuto && (!declared.Known || declared.ToolCalls), nil
	}
	return false, nil
}

// taskCall is one task-augmented call in progress.
type taskCall struct {
	m    *Manager
	s    *server
	tool string
	opts CallOptions

	ctx     context.Context // the caller's
	ceilCtx context.Context // ends at the ceiling
	callCtx context.Context // ends at the ceiling, the idle timeout or the caller's end
	idle    *time.Timer
	timeout time.Duration
	probe   *httpProbe

	info *TaskInfo
}

// cause says why callCtx ended, as Manager.call does.
func (tc *taskCall) cause() error {
	switch {
	case tc.ctx.Err() != nil:
		return context.Canceled
	case errors.Is(tc.ceilCtx.Err(), context.DeadlineExceeded):
		return errCallTimeout
	}
	return context.Cause(tc.callCtx)
}

// callTask sends the task-creating tools/call on l and follows the task to
// its outcome. It never sends the call again: after a lost connection it
// asks the server, once it is back, what became of the task.
func (tc *taskCall) run(l *live, args json.RawMessage, token string) *CallResult {
	params := map[string]any{
		"name":      tc.tool,
		"arguments": args,
		"task":      map[string]any{"ttl": ceilingMS(tc.ceilCtx)},
		"_meta":     map[string]any{"progressToken": token},
	}
	raw, err := tc.create(l, params)
	if err != nil {
		r := classify(nil, err, tc.cause(), tc.probe)
		r.CancelSent = false // a raw request is abandoned, not cancelled
		if r.Outcome == OutcomeUnknown && tc.callCtx.Err() == nil && r.Detail == "transport error" {
			r.Detail = "connection lost"
		}
		return r
	}
	var created struct {
		Task *wireTask `json:"task"`
	}
	if err := json.Unmarshal(raw, &created); err != nil || created.Task == nil {
		// The server ran the call without a task.
		var res mcp.CallToolResult
		if err := json.Unmarshal(raw, &res); err != nil {
			return &CallResult{Outcome: OutcomeUnknown, Err: fmt.Errorf("the answer to a task-augmented call is neither a task nor a result: %w", err), Detail: "malformed answer"}
		}
		return classify(&res, nil, nil, tc.probe)
	}
	if err := created.Task.check(); err != nil {
		// Something may have started, but it cannot be asked for.
		return &CallResult{Outcome: OutcomeUnknown, Err: fmt.Errorf("the server answered with a task mcphost cannot follow: %w", err), Detail: "malformed task"}
	}
	tc.info = &TaskInfo{ID: created.Task.TaskID}
	tc.observe(created.Task, "created")
	r := tc.follow(l, created.Task)
	r.Task = tc.info
	tc.event(TaskEventResult, tc.info.Last())
	return r
}

// create sends the task-creating call. A call that ends while it is in
// flight still waits a little for the answer: a task the server created is
// then known, and cancelled, rather than left running unnamed.
func (tc *taskCall) create(l *live, params map[string]any) (json.RawMessage, error) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(tc.callCtx))
	defer cancel()
	var mu sync.Mutex
	var grace *time.Timer
	stop := context.AfterFunc(tc.callCtx, func() {
		mu.Lock()
		grace = time.AfterFunc(taskCancelWait, cancel)
		mu.Unlock()
	})
	defer func() {
		stop()
		mu.Lock()
		if grace != nil {
			grace.Stop()
		}
		mu.Unlock()
	}()
	return l.raw.call(ctx, "tools/call", params)
}

// ceilingMS is the time left before ctx's deadline, in milliseconds: the
// task need not outlive the call.
func ceilingMS(ctx context.Context) int64 {
	if dl, ok := ctx.Deadline(); ok {
		return max(time.Until(dl).Milliseconds(), 1)
	}
	return (10 * time.Minute).Milliseconds()
}

func (tc *taskCall) event(kind string, st TaskStatus) {
	if tc.opts.OnTask != nil {
		tc.opts.OnTask(TaskEvent{Kind: kind, Server: tc.s.spec.Name, Tool: tc.tool, TaskID: tc.info.ID, Status: st})
	}
}

// observe records t's status when it is new (or note is set) and reports
// whether it was. Any answer about the task shows the server is alive, so
// it restarts the idle timeout.
func (tc *taskCall) observe(t *wireTask, note string) bool {
	tc.idle.Reset(tc.timeout)
	h := tc.info.History
	if note == "" && len(h) > 0 && h[len(h)-1].Status == t.Status && h[len(h)-1].Message == t.StatusMessage {
		return false
	}
	st := TaskStatus{Status: t.Status, Message: t.StatusMessage, At: time.Now(), Note: note}
	tc.info.History = append(h, st)
	if n := len(tc.info.History); n > maxTaskHistory {
		tc.info.History = append(tc.info.History[:1:1], tc.info.History[n-maxTaskHistory+1:]...)
	}
	kind := TaskEventStatus
	if note == "created" {
		kind = TaskEventCreated
	}
	tc.event(kind, st)
	return true
}

// note records what mcphost did, with the last known status.
func (tc *taskCall) note(note string) {
	last := tc.info.Last()
	tc.observe(&wireTask{TaskID: tc.info.ID, Status: last.Status, StatusMessage: last.Message}, note)
}

// get asks for the task's status on l.
func (tc *taskCall) get(ctx context.Context, l *live) (*wireTask, error) {
	raw, err := l.raw.call(ctx, "tasks/get", map[string]any{"taskId": tc.info.ID})
	if err != nil {
		return nil, err
	}
	var t wireTask
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("tasks/get: the answer is not a task: %w", err)
	}
	if t.TaskID == "" {
		t.TaskID = tc.info.ID
	}
	if err := t.check(); err != nil {
		return nil, fmt.Errorf("tasks/get: %w", err)
	}
	return &t, nil
}

// isRPCError reports whether err is the server's JSON-RPC answer, as opposed
// to a lost connection.
func isRPCError(err error) bool {
	var werr *jsonrpc.Error
	return errors.As(err, &werr)
}

// follow follows the task until its outcome is known, reconnecting as often
// as the call's limits allow, and sends tasks/cancel when the call ends
// first.
func (tc *taskCall) follow(l *live, t *wireTask) *CallResult {
	for {
		r, lost := tc.followOn(l, t.poll())
		if r != nil {
			return r
		}
		if lost == nil { // the call ended: cancelled, timed out
			return tc.cancel(l)
		}
		tc.note("connection lost")
		for retry := 1; ; retry++ {
			l2, err := tc.m.awaitLive(tc.callCtx, tc.s, l, retry)
			if err != nil {
				if tc.callCtx.Err() != nil {
					return tc.abandon("the connection was lost and the server was not back before the call ended")
				}
				return &CallResult{Outcome: OutcomeUnknown, Err: fmt.Errorf("task %s: %w", tc.info.ID, err), Detail: "connection lost"}
			}
			l = l2
			t2, err := tc.get(tc.callCtx, l)
			switch {
			case err == nil:
				t = t2
				tc.observe(t, "reconnected")
			case isRPCError(err):
				return tc.forgotten(err)
			case tc.callCtx.Err() != nil:
				return tc.cancel(l)
			default:
				continue // lost again before it answered
			}
			break
		}
	}
}

// followOn follows the task on one connection. It returns the outcome, or
// lost when the connection broke, or neither when the call's context ended.
func (tc *taskCall) followOn(l *live, interval time.Duration) (r *CallResult, lost error) {
	ctx, stop := context.WithCancel(tc.callCtx)
	defer stop()
	type answer struct {
		raw json.RawMessage
		err error
	}
	results := make(chan answer, 1)
	asking := false
	askResult := func() {
		asking = true
		go func() {
			// tasks/result waits for the end of the task; the server also
			// sends its questions (input_required) while it waits.
			raw, err := l.raw.call(ctx, "tasks/result", map[string]any{"taskId": tc.info.ID})
			results <- answer{raw, err}
		}()
	}
	askResult()
	wake := l.taskWake(tc.info.ID)
	defer l.taskUnwake(tc.info.ID)
	base := interval
	timer := time.NewTimer(interval)
	defer timer.Stop()
	for {
		select {
		case a := <-results:
			asking = false
			switch {
			case a.err == nil:
				return tc.finish(l, a.raw), nil
			case tc.callCtx.Err() != nil:
				return nil, nil
			case !isRPCError(a.err):
				return nil, a.err
			}
			// The server refused the result: ask what the task is.
			t, err := tc.get(tc.callCtx, l)
			switch {
			case err == nil:
				tc.observe(t, "")
				if TaskTerminal(t.Status) {
					return tc.refused(t, a.err), nil
				}
				// Not done yet; asked again once it is.
			case isRPCError(err):
				return tc.forgotten(err), nil
			case tc.callCtx.Err() != nil:
				return nil, nil
			default:
				return nil, err
			}
		case <-timer.C:
		case <-wake:
		case <-tc.callCtx.Done():
			return nil, nil
		}
		t, err := tc.get(tc.callCtx, l)
		switch {
		case err == nil:
		case tc.callCtx.Err() != nil:
			return nil, nil
		case isRPCError(err):
			return tc.forgotten(err), nil
		default:
			return nil, err
		}
		if tc.observe(t, "") {
			interval = base
		} else {
			interval = min(interval*3/2, maxTaskPoll) // back off while nothing changes
		}
		if !asking && (TaskTerminal(t.Status) || t.Status == TaskInputRequired) {
			askResult()
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(interval)
	}
}

// finish settles the call from the task's result.
func (tc *taskCall) finish(l *live, raw json.RawMessage) *CallResult {
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return &CallResult{Outcome: OutcomeUnknown, Err: fmt.Errorf("task %s: the result is not a tool result: %w", tc.info.ID, err), Detail: "malformed result"}
	}
	// The result settles the call; the final status is for the record.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(tc.ctx), taskCancelWait)
	defer cancel()
	if t, err := tc.get(ctx, l); err == nil {
		tc.observe(t, "")
		if t.Status == TaskFailed {
			res.IsError = true
		}
	}
	return classify(&res, nil, nil, tc.probe)
}

// refused settles a terminal task whose result the server would not give.
func (tc *taskCall) refused(t *wireTask, err error) *CallResult {
	if t.Status == TaskFailed {
		msg := t.StatusMessage
		if msg == "" {
			msg = err.Error()
		}
		res := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the task failed: " + msg}}}
		return &CallResult{Outcome: OutcomeToolError, Result: res, Detail: "task failed"}
	}
	return &CallResult{Outcome: OutcomeUnknown, Err: fmt.Errorf("task %s is %s: %w", tc.info.ID, t.Status, err), Detail: "task " + t.Status}
}

// forgotten settles a task the server no longer knows: only then is the
// outcome unknown.
func (tc *taskCall) forgotten(err error) *CallResult {
	tc.note("unknown to the server")
	return &CallResult{Outcome: OutcomeUnknown, Err: fmt.Errorf("the server no longer knows task %s: %w", tc.info.ID, err), Detail: "task unknown to the server"}
}

// abandon settles a task that could not be asked for again in time.
func (tc *taskCall) abandon(why string) *CallResult {
	detail := "timeout"
	if errors.Is(tc.cause(), context.Canceled) {
		detail = "cancelled"
	}
	return &CallResult{Outcome: OutcomeUnknown, Err: fmt.Errorf("task %s: %s", tc.info.ID, why), Detail: detail}
}

// cancel sends tasks/cancel for a call that ended (Ctrl-C, SIGTERM, the
// deadline) before its task did. The outcome stays unknown: the task may
// have done part of its work.
func (tc *taskCall) cancel(l *live) *CallResult {
	r := tc.abandon("the call ended before the task")
	ctx, cancel := context.WithTimeout(context.WithoutCancel(tc.ctx), taskCancelWait)
	defer cancel()
	raw, err := l.raw.call(ctx, "tasks/cancel", map[string]any{"taskId": tc.info.ID})
	if err != nil {
		tc.note("cancel failed")
		r.Err = fmt.Errorf("%w; tasks/cancel: %w", r.Err, err)
		r.CancelSent = isRPCError(err) // the server received it
		return r
	}
	r.CancelSent = true
	var t wireTask
	if json.Unmarshal(raw, &t) == nil && t.Status != "" {
		t.TaskID = tc.info.ID
		if t.check() == nil {
			tc.observe(&t, "cancel sent")
			return r
		}
	}
	tc.note("cancel sent")
	return r
}

// awaitLive waits until s has a ready connection other than old, the n-th
// time after the request that failed on old. Streamable HTTP has no
// connection to lose: its session may well be fine after a failed request,
// so old is used again, after a backoff.
func (m *Manager) awaitLive(ctx context.Context, s *server, old *live, n int) (*live, error) {
	events, unsub := m.Subscribe()
	defer unsub()
	_, overHTTP := old.raw.(*rawHTTP)
	var again <-chan time.Time
	if overHTTP {
		t := time.NewTimer(min(minTaskPoll<<min(n, 6), maxTaskPoll))
		defer t.Stop()
		again = t.C
	}
	for {
		s.mu.Lock()
		l, st := s.conn, s.state
		s.mu.Unlock()
		switch {
		case l != nil && l != old && st == StateReady:
			return l, nil
		case l != nil && l == old && st == StateReady && again == nil && overHTTP:
			return l, nil
		case st == StateFailed || st == StateStopped:
			return nil, fmt.Errorf("server %q is %s", s.spec.Name, st)
		}
		select {
		case <-events:
		case <-again:
			again = nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// taskWake returns a channel that receives when the server reports a status
// of the task (notifications/tasks/status), or nil when the transport
// cannot deliver them to mcphost (they are then polled).
func (l *live) taskWake(id string) <-chan struct{} {
	rc, ok := l.raw.(*rawConn)
	if !ok {
		return nil
	}
	ch := make(chan struct{}, 1)
	rc.mu.Lock()
	if rc.wakers == nil {
		rc.wakers = map[string]chan struct{}{}
	}
	rc.wakers[id] = ch
	rc.mu.Unlock()
	return ch
}

func (l *live) taskUnwake(id string) {
	if rc, ok := l.raw.(*rawConn); ok {
		rc.mu.Lock()
		delete(rc.wakers, id)
		rc.mu.Unlock()
	}
}

// taskNotification handles notifications/tasks/status, which the SDK does
// not know: it wakes the call following that task.
func (c *rawConn) taskNotification(params json.RawMessage) {
	var p struct {
		TaskID string `json:"taskId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	c.mu.Lock()
	ch := c.wakers[p.TaskID]
	c.mu.Unlock()
	if ch != nil {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// taskStatusNote is the method of a task status notification.
const taskStatusNote = "notifications/tasks/status"

// logNote is the method of a server's log message.
const logNote = "notifications/message"

// RunningTask is one entry of a server's tasks/list.
type RunningTask struct {
	ID      string `json:"id"`
	Status  string `json:"status"`
	Message string `json:"statusMessage,omitempty"`
}

// Tasks lists the server's tasks (tasks/list), at most maxListItems.
func (m *Manager) Tasks(ctx context.Context, server string) ([]RunningTask, error) {
	l, err := m.liveConn(server)
	if err != nil {
		return nil, err
	}
	var out []RunningTask
	cursor := ""
	for page := 0; page < 100; page++ {
		var params map[string]any
		if cursor != "" {
			params = map[string]any{"cursor": cursor}
		}
		raw, err := l.raw.call(ctx, "tasks/list", params)
		if je := (*jsonrpc.Error)(nil); errors.As(err, &je) && je.Code == jsonrpc.CodeMethodNotFound {
			return out, fmt.Errorf("server %q does not offer MCP tasks (it has no tasks/list); its tools run as plain calls", server)
		}
		if err != nil {
			return out, fmt.Errorf("list the tasks of %q: %w", server, err)
		}
		var res struct {
			Tasks      []wireTask `json:"tasks"`
			NextCursor string     `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return out, fmt.Errorf("list the tasks of %q: the answer is not a task list: %w", server, err)
		}
		for _, t := range res.Tasks {
			if t.check() != nil {
				continue
			}
			if len(out) == maxListItems {
				return out, nil
			}
			out = append(out, RunningTask{ID: t.TaskID, Status: t.Status, Message: t.StatusMessage})
		}
		if res.NextCursor == "" || res.NextCursor == cursor {
			break
		}
		cursor = res.NextCursor
	}
	return out, nil
}

// CancelTask asks the server to cancel one of its tasks (tasks/cancel) and
// returns the status it reports.
func (m *Manager) CancelTask(ctx context.Context, server, id string) (RunningTask, error) {
	l, err := m.liveConn(server)
	if err != nil {
		return RunningTask{}, err
	}
	raw, err := l.raw.call(ctx, "tasks/cancel", map[string]any{"taskId": id})
	if err != nil {
		return RunningTask{}, fmt.Errorf("cancel task %s of %q: %w", strconv.Quote(bound(id, maxTaskID)), server, err)
	}
	var t wireTask
	if err := json.Unmarshal(raw, &t); err != nil || t.check() != nil {
		t = wireTask{TaskID: id, Status: TaskCancelled}
	}
	return RunningTask{ID: t.TaskID, Status: t.Status, Message: t.StatusMessage}, nil
}

// liveConn returns the server's ready connection.
func (m *Manager) liveConn(server string) (*live, error) {
	s := m.byName[server]
	if s == nil {
		return nil, fmt.Errorf("no server named %q", server)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil || s.state != StateReady {
		return nil, fmt.Errorf("server %q is %s", server, s.state)
	}
	return s.conn, nil
}
