package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Outcome classifies how a call ended, following the failure classes of the
// design: what it means for whether the call took effect decides whether it
// may be retried.
type Outcome string

const (
	// OutcomeSuccess: the tool ran and returned a result.
	OutcomeSuccess Outcome = "success"
	// OutcomeToolError: the tool ran and returned isError; the model sees it.
	OutcomeToolError Outcome = "tool-error"
	// OutcomeNotSent: the request never reached the server (no connection,
	// spawn or dial failed). Nothing was applied.
	OutcomeNotSent Outcome = "not-sent"
	// OutcomeRejected: the server refused the request before running it
	// (parse error, invalid request or params, unknown method, HTTP 400/404).
	// Nothing was applied.
	OutcomeRejected Outcome = "rejected"
	// OutcomeThrottled: HTTP 429 or 503; probably not applied.
	OutcomeThrottled Outcome = "throttled"
	// OutcomeUnknown: the call may or may not have taken effect (the server
	// crashed or the connection broke while it was in flight, it timed out
	// or was cancelled, or an internal error was reported).
	OutcomeUnknown Outcome = "unknown"
)

// Progress is one progress notification for a running call.
type Progress struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
}

// CallOptions tune one call. Zero values select the server's or Manager's
// defaults.
type CallOptions struct {
	// Timeout is the idle timeout: it restarts whenever the server reports
	// progress on this call.
	Timeout time.Duration
	// Ceiling is the absolute limit, which progress cannot extend.
	Ceiling time.Duration
	// Progress, if set, receives the server's progress notifications.
	Progress func(Progress)
	// OnTask, if set, learns of each step of a call that runs as a task
	// (client/tasks.go). The "created" event is delivered before mcphost
	// sends anything more, so its receiver can record the task id first.
	OnTask func(TaskEvent)
}

// CallResult is the complete account of one attempt.
type CallResult struct {
	Outcome Outcome
	// Result is the server's answer when it gave one (success or tool error).
	Result *mcp.CallToolResult
	// Err is the failure for the other outcomes.
	Err error
	// Detail says in a few words why the outcome was chosen: "timeout",
	// "cancelled", "connection lost", "HTTP 429", "JSON-RPC -32602" ….
	Detail string
	// RetryAfter is the server's requested wait (throttled calls), or zero.
	RetryAfter time.Duration
	// CancelSent reports that notifications/cancelled was sent to the server.
	CancelSent bool
	// Stale reports a JSON-RPC error carrying the SERVER_STALE signal (see
	// StaleCode): the server refused to run the call until it is restarted.
	Stale    bool
	Duration time.Duration
	// Task is the task the call ran as, if it ran as one.
	Task *TaskInfo
	// SessionID is the MCP session the call was sent in (the server's
	// Mcp-Session-Id over HTTP); "" for stdio or when it was not sent.
	SessionID string
}

var errCallTimeout = errors.New("call timed out")

var progressSeq atomic.Int64

// Call runs tool on its server once, with the call's timeouts, and
// classifies the outcome. args are sent as given (byte for byte, apart from
// insignificant whitespace); nil sends an empty object. Call never retries
// and decides nothing: that is the gate's job. Cancelling ctx cancels the
// call and sends notifications/cancelled.
func (m *Manager) Call(ctx context.Context, server, tool string, args json.RawMessage, opts CallOptions) *CallResult {
	start := time.Now()
	res := m.call(ctx, server, tool, args, opts)
	res.Duration = time.Since(start)
	return res
}

func (m *Manager) call(ctx context.Context, server, tool string, args json.RawMessage, opts CallOptions) *CallResult {
	s := m.byName[server]
	if s == nil {
		return &CallResult{Outcome: OutcomeNotSent, Err: fmt.Errorf("no server named %q", server), Detail: "unknown server"}
	}
	s.mu.Lock()
	l, state := s.conn, s.state
	s.mu.Unlock()
	if l == nil || state != StateReady {
		return &CallResult{Outcome: OutcomeNotSent, Err: fmt.Errorf("server %q is %s", server, state), Detail: "server " + string(state)}
	}
	if err := ctx.Err(); err != nil {
		return &CallResult{Outcome: OutcomeNotSent, Err: err, Detail: "cancelled before sending"}
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if !json.Valid(args) {
		return &CallResult{Outcome: OutcomeNotSent, Err: errors.New("arguments are not valid JSON"), Detail: "invalid arguments"}
	}
	asTask, err := s.taskMode(tool)
	if err != nil {
		return &CallResult{Outcome: OutcomeRejected, Err: err, Detail: "tasks off"}
	}
	timeout, ceiling := opts.Timeout, opts.Ceiling
	if timeout <= 0 {
		timeout = s.spec.CallTimeout
	}
	if timeout <= 0 {
		timeout = m.opts.CallTimeout
	}
	if ceiling <= 0 {
		ceiling = m.opts.CallCeiling
	}
	ceiling = max(ceiling, timeout)

	probe := &httpProbe{}
	ceilCtx, cancelCeil := context.WithTimeout(context.WithValue(ctx, probeKey{}, probe), ceiling)
	defer cancelCeil()
	callCtx, cancel := context.WithCancelCause(ceilCtx)
	defer cancel(nil)
	idle := time.AfterFunc(timeout, func() { cancel(errCallTimeout) })
	defer idle.Stop()

	token := "mcphost-" + strconv.FormatInt(progressSeq.Add(1), 10)
	m.progMu.Lock()
	m.progress[token] = func(p Progress) {
		idle.Reset(timeout)
		if opts.Progress != nil {
			opts.Progress(p)
		}
	}
	m.progMu.Unlock()
	defer func() {
		m.progMu.Lock()
		delete(m.progress, token)
		m.progMu.Unlock()
	}()

	if asTask {
		tc := &taskCall{m: m, s: s, tool: tool, opts: opts, ctx: ctx, ceilCtx: ceilCtx, callCtx: callCtx, idle: idle, timeout: timeout, probe: probe}
		return s.seen(l, tc.run(l, args, token))
	}
	params := &mcp.CallToolParams{Name: tool, Arguments: args}
	params.SetProgressToken(token)
	addTraceMeta(ctx, params)
	asked := s.questions.load()
	result, err := l.session.CallTool(callCtx, params)
	cause := context.Cause(callCtx)
	if ctx.Err() != nil {
		cause = context.Canceled // the caller's own cancellation, not our timers
	} else if errors.Is(ceilCtx.Err(), context.DeadlineExceeded) {
		cause = errCallTimeout
	}
	return s.seen(l, afterQuestions(classify(result, err, cause, probe), s.questions.load() != asked)) // elicited.go
}

// seen passes r on, marking the server restarting first when r says its
// connection l was found closed (see sawClosed).
func (s *server) seen(l *live, r *CallResult) *CallResult {
	if l != nil && l.session != nil {
		r.SessionID = l.session.ID()
	}
	if errors.Is(r.Err, mcp.ErrConnectionClosed) {
		s.sawClosed(l)
	}
	return r
}

// classify maps what a call returned to an Outcome. cause is the reason the
// call's context ended, or nil.
func classify(result *mcp.CallToolResult, err error, cause error, probe *httpProbe) *CallResult {
	if err == nil {
		if result == nil {
			return &CallResult{Outcome: OutcomeUnknown, Err: errors.New("empty result"), Detail: "empty result"}
		}
		if result.IsError {
			return &CallResult{Outcome: OutcomeToolError, Result: result, Detail: "tool error"}
		}
		return &CallResult{Outcome: OutcomeSuccess, Result: result}
	}
	r := &CallResult{Err: err}
	sent, status, retryAfter := probe.snapshot()
	switch {
	case errors.Is(cause, errCallTimeout):
		r.Outcome, r.Detail, r.CancelSent = OutcomeUnknown, "timeout", true
	case errors.Is(cause, context.Canceled):
		r.Outcome, r.Detail, r.CancelSent = OutcomeUnknown, "cancelled", true
	case probe.cutOff() != nil:
		// The server received the call and answered too much: it may have
		// run.
		r.Outcome, r.Detail, r.Err = OutcomeUnknown, "answer over the size limit", fmt.Errorf("%w (%w)", probe.cutOff(), err)
	case status == 429 || status == 503:
		r.Outcome, r.Detail, r.RetryAfter = OutcomeThrottled, "HTTP "+strconv.Itoa(status), retryAfter
	case status == 400 || status == 404 || status == 405 || status == 413 || status == 415:
		r.Outcome, r.Detail = OutcomeRejected, "HTTP "+strconv.Itoa(status)
	case errors.Is(err, mcp.ErrConnectionClosed):
		r.Outcome, r.Detail = OutcomeNotSent, "connection closed"
	case isDialError(err) && !sent:
		r.Outcome, r.Detail = OutcomeNotSent, "could not connect"
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE):
		r.Outcome, r.Detail = OutcomeUnknown, "connection lost"
	default:
		var aerr *AnswerError
		var oerr *OffOriginError
		switch {
		case errors.As(err, &aerr):
			r.Outcome, r.Detail = OutcomeUnknown, "HTTP "+strconv.Itoa(aerr.Status)+" "+aerr.ContentType
			return r
		case errors.As(err, &oerr):
			r.Outcome, r.Detail = OutcomeUnknown, "redirect refused"
			return r
		}
		var werr *jsonrpc.Error
		if errors.As(err, &werr) {
			r.Detail = "JSON-RPC " + strconv.FormatInt(int64(werr.Code), 10)
			if staleRPC(werr) {
				// A refusal, whatever the code: the stale server ran nothing
				// and runs nothing until it is restarted, so it is never
				// retried, as a rejected call is not.
				r.Outcome, r.Detail, r.Stale = OutcomeRejected, r.Detail+" "+StaleCode, true
				return r
			}
			switch werr.Code {
			case jsonrpc.CodeParseError, jsonrpc.CodeInvalidRequest, jsonrpc.CodeMethodNotFound, jsonrpc.CodeInvalidParams,
				codeURLElicitationRequired:
				r.Outcome = OutcomeRejected
			default: // -32603 and server-defined codes say nothing about what ran
				r.Outcome = OutcomeUnknown
			}
			return r
		}
		if status >= 400 {
			r.Detail = "HTTP " + strconv.Itoa(status)
		} else {
			r.Detail = "transport error"
		}
		r.Outcome = OutcomeUnknown
	}
	return r
}

// codeURLElicitationRequired is MCP's error for a call the server refused
// until the user completes a URL elicitation: nothing ran.
const codeURLElicitationRequired = -32042

func isDialError(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}
