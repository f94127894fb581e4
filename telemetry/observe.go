package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/sanitize"
)

var _ host.Observer = (*Exporter)(nil)

// maxName bounds a server's or tool's name in an exported record.
const maxName = 256

// name is a server-given name fit to export: look-alike and control
// characters escaped, bounded.
func name(s string) string { return sanitize.Truncate(sanitize.Name(s), maxName) }

// callState is what the exporter keeps of a call between its events, in the
// call's context.
type callState struct {
	span   trace.Span
	server string
	tool   string
	asked  bool
	// who names the person and client the call is for (ForClient); nil
	// when no person is known.
	who   []attribute.KeyValue
	guard guardTiming // guardrail.go
}

type callKey struct{}
type attemptKey struct{}

// Attribute keys of the OpenTelemetry MCP and GenAI conventions.
const (
	keyMethod    = "mcp.method.name"
	keyTool      = "gen_ai.tool.name"
	keyOperation = "gen_ai.operation.name"
	keyErrorType = "error.type"
)

// CallStarted starts the call's span, "tools/call {tool}". The arguments
// are exported only as their canonical hash and their size.
func (e *Exporter) CallStarted(ctx context.Context, callID, server, tool string, args json.RawMessage) context.Context {
	st := &callState{server: name(server), tool: name(tool)}
	ctx, st.span = e.tracer.Start(ctx, "tools/call "+st.tool, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			attribute.String(keyMethod, "tools/call"),
			attribute.String(keyTool, st.tool),
			attribute.String(keyOperation, "execute_tool"),
			attribute.String("mcphost.server", st.server),
			attribute.String("mcphost.call.id", callID),
			attribute.String("mcphost.arguments.hash", decide.ArgsHash(args)),
			attribute.Int("mcphost.arguments.size", len(args)),
		))
	st.guard.start = time.Now()
	if e.cfg.Server != nil {
		if info, ok := e.cfg.Server(server); ok {
			st.span.SetAttributes(networkAttrs(info)...)
		}
	}
	return context.WithValue(ctx, callKey{}, st)
}

// networkAttrs are the conventions' network.transport ("pipe" for stdio,
// "tcp" for HTTP) and, for HTTP, server.address and server.port (never
// the URL's path, query or user information).
func networkAttrs(info ServerInfo) []attribute.KeyValue {
	if info.Transport == client.TransportStdio {
		return []attribute.KeyValue{attribute.String("network.transport", "pipe")}
	}
	attrs := []attribute.KeyValue{attribute.String("network.transport", "tcp")}
	u, err := url.Parse(info.URL)
	if err != nil || u.Hostname() == "" {
		return attrs
	}
	attrs = append(attrs, attribute.String("server.address", name(u.Hostname())))
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if n, err := strconv.Atoi(port); err == nil {
		attrs = append(attrs, attribute.Int("server.port", n))
	}
	return attrs
}

func stateOf(ctx context.Context) *callState {
	st, _ := ctx.Value(callKey{}).(*callState)
	return st
}

// AttemptStarted starts a child span for execution n and puts its W3C trace
// context where client sends it to the server (params._meta.traceparent).
func (e *Exporter) AttemptStarted(ctx context.Context, n int) context.Context {
	st := stateOf(ctx)
	if st == nil {
		return ctx
	}
	st.guard.attempt()
	ctx, span := e.tracer.Start(ctx, "tools/call "+st.tool+" attempt", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			attribute.String(keyMethod, "tools/call"),
			attribute.String(keyTool, st.tool),
			attribute.Int("mcphost.attempt", n),
		))
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	ctx = client.WithTraceContext(ctx, carrier)
	return context.WithValue(ctx, attemptKey{}, span)
}

// AttemptDone ends the attempt's span and records its duration.
func (e *Exporter) AttemptDone(ctx context.Context, a host.Attempt, cr *client.CallResult) {
	st := stateOf(ctx)
	span, _ := ctx.Value(attemptKey{}).(trace.Span)
	if st == nil || span == nil {
		return
	}
	errType := attemptError(a.Outcome)
	span.SetAttributes(attribute.String("mcphost.outcome", string(a.Outcome)))
	if cr != nil && cr.SessionID != "" {
		sid := attribute.String("mcp.session.id", sanitize.Truncate(sanitize.Name(cr.SessionID), maxName))
		span.SetAttributes(sid)
		st.span.SetAttributes(sid)
	}
	attrs := []attribute.KeyValue{
		attribute.String(keyMethod, "tools/call"),
		attribute.String(keyTool, st.tool),
		attribute.String(keyOperation, "execute_tool"),
	}
	if errType != "" {
		span.SetAttributes(attribute.String(keyErrorType, errType))
		span.SetStatus(codes.Error, errType)
		attrs = append(attrs, attribute.String(keyErrorType, errType))
	}
	span.End()
	e.inst.opDuration.Record(ctx, a.Duration.Seconds(), metric.WithAttributes(attrs...))
}

// attemptError is error.type for an execution's outcome: the conventions'
// "tool_error" for a tool's own error, mcphost's outcome otherwise.
func attemptError(o client.Outcome) string {
	switch o {
	case client.OutcomeSuccess:
		return ""
	case client.OutcomeToolError:
		return "tool_error"
	}
	return string(o)
}

// Asked records a question's answer and how long it took, and emits a
// mcphost.consent event.
func (e *Exporter) Asked(ctx context.Context, q *host.Question, a host.Answer, err error, wait time.Duration) {
	answer := "deny"
	switch {
	case errors.Is(err, host.ErrNoPerson):
		answer = "no-person"
	case err != nil:
		answer = "unanswered"
	case a.Approve && a.Args != nil:
		answer = "edit"
	case a.Approve:
		answer = "approve"
	}
	if st := stateOf(ctx); st != nil {
		st.asked = true
	}
	attrs := metric.WithAttributes(attribute.String("mcphost.answer", answer))
	e.inst.asks.Add(ctx, 1, attrs)
	e.inst.askDuration.Record(ctx, wait.Seconds(), attrs)
	kv := []attribute.KeyValue{
		attribute.String("tool", name(q.Tool.Name)),
		attribute.String("server", name(q.Server)),
		attribute.String("answer", answer),
		attribute.Float64("wait_seconds", wait.Seconds()),
	}
	if a.Approve {
		kv = append(kv, attribute.String("scope", a.Scope.String()))
	}
	if st := stateOf(ctx); st != nil {
		kv = append(kv, st.who...)
	}
	if a.Via != "" {
		kv = append(kv, attribute.String("via", a.Via.String()))
	}
	e.emit(ctx, "mcphost.consent", kv...)
}

// CallDone ends the call's span with the decision and the outcome, emits
// the mcphost.tool_decision event (and mcphost.pin_changed when the
// definition had changed), and counts the decision.
func (e *Exporter) CallDone(ctx context.Context, r *host.Result, definitionHash string) {
	st := stateOf(ctx)
	if st == nil {
		return
	}
	d := r.Decision
	reasons := make([]string, len(d.Reasons))
	for i, x := range d.Reasons {
		reasons[i] = x.Code
	}
	span := st.span
	span.SetAttributes(
		attribute.String("mcphost.verdict", d.Verdict.String()),
		attribute.Int("mcphost.tier", int(d.Tier)),
		attribute.String("mcphost.class", d.Class.String()),
		attribute.String("mcphost.decided_by", r.DecidedBy.String()),
		attribute.StringSlice("mcphost.reasons", reasons),
		attribute.String("mcphost.status", string(r.Status)),
		attribute.Int("mcphost.attempts", len(r.Attempts)),
		attribute.String("mcphost.definition_hash", definitionHash),
	)
	if r.Via != "" {
		span.SetAttributes(attribute.String("mcphost.via", r.Via.String()))
	}
	if g := r.Grant; g != nil {
		span.SetAttributes(attribute.String("mcphost.grant.scope", g.Scope), attribute.String("mcphost.grant.via", g.Via.String()))
	}
	if et := callError(r.Status); et != "" {
		span.SetAttributes(attribute.String(keyErrorType, et))
		span.SetStatus(codes.Error, et)
	}
	span.End()

	if definitionHash == "" {
		return // not found: nothing was decided
	}
	e.runGuardrail(ctx, st, r, definitionHash)
	decision := "reject"
	if r.Status != host.StatusDenied && r.Status != host.StatusBlocked {
		decision = "accept"
	}
	kv := []attribute.KeyValue{
		attribute.String("tool", st.tool),
		attribute.String("server", st.server),
		attribute.String("decision", decision),
		attribute.String("source", r.DecidedBy.String()),
		attribute.String("verdict", d.Verdict.String()),
		attribute.Int("tier", int(d.Tier)),
		attribute.String("class", d.Class.String()),
		attribute.String("status", string(r.Status)),
		attribute.String("reasons", strings.Join(reasons, ",")),
		attribute.String("call_id", r.CallID),
		attribute.Bool("asked", st.asked),
	}
	if r.Via != "" {
		kv = append(kv, attribute.String("via", r.Via.String()))
	}
	if g := r.Grant; g != nil {
		kv = append(kv, attribute.String("grant_scope", g.Scope), attribute.String("grant_via", g.Via.String()))
	}
	kv = append(kv, st.who...)
	e.emit(ctx, "mcphost.tool_decision", kv...)
	e.inst.decisions.Add(ctx, 1, metric.WithAttributes(
		attribute.String("mcphost.verdict", d.Verdict.String()),
		attribute.String("mcphost.tier", strconv.Itoa(int(d.Tier))),
	))
	if d.Has(decide.CodeDefinitionChanged) {
		e.emit(ctx, "mcphost.pin_changed",
			attribute.String("tool", st.tool),
			attribute.String("server", st.server),
			attribute.String("definition_hash", definitionHash),
			attribute.Bool("accepted", decision == "accept"),
		)
	}
}

// callError is error.type for a call's status; "" for success.
func callError(s host.Status) string {
	switch s {
	case host.StatusSuccess:
		return ""
	case host.StatusToolError:
		return "tool_error"
	}
	return string(s)
}

// Tainted emits a mcphost.taint event with the session's new taint.
func (e *Exporter) Tainted(t host.Taint) {
	e.emit(context.Background(), "mcphost.taint",
		attribute.Bool("open_world", t.OpenWorld), attribute.Bool("private_read", t.PrivateRead))
}

// TurnDone exports a model turn as a "chat {model}" span with its token
// usage, and the GenAI client metrics. Neither the prompt nor the answer is
// exported.
func (e *Exporter) TurnDone(ctx context.Context, t host.Turn) {
	provider, model, _ := strings.Cut(t.Model, ":")
	provider, model = name(provider), name(model)
	attrs := []attribute.KeyValue{
		attribute.String(keyOperation, "chat"),
		attribute.String("gen_ai.provider.name", provider),
		attribute.String("gen_ai.request.model", model),
	}
	_, span := e.tracer.Start(ctx, "chat "+model, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithTimestamp(t.Start), trace.WithAttributes(attrs...))
	span.SetAttributes(
		attribute.Int("gen_ai.usage.input_tokens", t.Usage.InputTokens),
		attribute.Int("gen_ai.usage.output_tokens", t.Usage.OutputTokens),
		attribute.Int("gen_ai.usage.cache_read.input_tokens", t.Usage.CacheReadTokens),
		attribute.Int("gen_ai.usage.cache_creation.input_tokens", t.Usage.CacheWriteTokens),
		attribute.Int("mcphost.step", t.Step),
		attribute.Int("mcphost.tool_calls", t.ToolCalls),
	)
	if t.StopReason != "" {
		span.SetAttributes(attribute.StringSlice("gen_ai.response.finish_reasons", []string{name(t.StopReason)}))
	}
	mattrs := attrs
	if t.Err != nil {
		et := "error"
		if errors.Is(t.Err, context.Canceled) {
			et = "cancelled"
		}
		span.SetAttributes(attribute.String(keyErrorType, et))
		span.SetStatus(codes.Error, et)
		mattrs = append(mattrs, attribute.String(keyErrorType, et))
	}
	span.End(trace.WithTimestamp(t.End))
	e.inst.turnDuration.Record(ctx, t.End.Sub(t.Start).Seconds(), metric.WithAttributes(mattrs...))
	e.inst.tokenUsage.Record(ctx, int64(t.Usage.InputTokens), metric.WithAttributes(append(attrs, attribute.String("gen_ai.token.type", "input"))...))
	e.inst.tokenUsage.Record(ctx, int64(t.Usage.OutputTokens), metric.WithAttributes(append(attrs, attribute.String("gen_ai.token.type", "output"))...))
}

// emit sends a log event with the trace context of ctx.
func (e *Exporter) emit(ctx context.Context, event string, kv ...attribute.KeyValue) {
	var rec log.Record
	now := time.Now()
	rec.SetEventName(event)
	rec.SetTimestamp(now)
	rec.SetObservedTimestamp(now)
	rec.SetSeverity(log.SeverityInfo)
	rec.SetBody(attribute.StringValue(event))
	rec.AddAttributes(kv...)
	e.logger.Emit(ctx, rec)
}

// StartAgent starts the span of one headless run, "invoke_agent mcphost",
// under which its model turns and tool calls are exported as one trace. The
// returned function ends it; a nil Exporter returns ctx and a no-op.
func (e *Exporter) StartAgent(ctx context.Context, model string) (context.Context, func()) {
	if e == nil {
		return ctx, func() {}
	}
	provider, m, _ := strings.Cut(model, ":")
	ctx, span := e.tracer.Start(ctx, "invoke_agent mcphost", trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			attribute.String(keyOperation, "invoke_agent"),
			attribute.String("gen_ai.agent.name", "mcphost"),
			attribute.String("gen_ai.provider.name", name(provider)),
			attribute.String("gen_ai.request.model", name(m)),
		))
	return ctx, func() { span.End() }
}
