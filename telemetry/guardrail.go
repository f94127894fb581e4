package telemetry

// The gate's decisions, also as the OpenTelemetry GenAI guardrail
// conventions draft them: beside the call span's mcphost.* attributes and
// the mcphost.tool_decision event, each decided call gets one child span
// "run_guardrail mcphost" of the draft's gen_ai.run_guardrail.internal
// kind. The names below follow docs/gen-ai/gen-ai-security.md of
// open-telemetry/semantic-conventions-genai at commit
// 3155df2825f1623e2443c498b1b463d80d8a0efa (status Development, linking
// semantic-conventions v1.43.0; the draft of its pull request 427, where
// the attributes moved from gen_ai.security.* to gen_ai.guardrail.*). A
// development convention may still change: the mcphost.* names are the
// stable ones.

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/decide/jsonscan"
	"github.com/mcphost/mcphost/host"
)

// Attribute keys and values of the guardrail draft.
const (
	guardOperation = "run_guardrail"
	guardComponent = "mcphost" // gen_ai.guardrail.component.name: the span is "run_guardrail mcphost"

	keyGuardComponent  = "gen_ai.guardrail.component.name"
	keyGuardTargetType = "gen_ai.guardrail.target.type"
	keyGuardTargetSub  = "gen_ai.guardrail.target.subtype"
	keyGuardTargetID   = "gen_ai.guardrail.target.id"
	keyGuardVerdict    = "gen_ai.guardrail.verdict.type"
	keyGuardReason     = "gen_ai.guardrail.verdict.reason"
	keyGuardAction     = "gen_ai.guardrail.action.type"
	keyGuardPolicy     = "gen_ai.guardrail.security.policy.id"
	keyGuardRule       = "gen_ai.guardrail.security.policy.rule.id"
	keyGuardInputHash  = "gen_ai.guardrail.security.content.input.hash"
)

// guardTiming is what the exporter keeps of a call for its guardrail span:
// when the call entered the gate and when the gate had decided (its first
// execution started; a refused call is decided when it ends).
type guardTiming struct {
	start, decided time.Time
}

// attempt notes the start of an execution: the first one ends the
// decision.
func (g *guardTiming) attempt() {
	if g.decided.IsZero() {
		g.decided = time.Now()
	}
}

// guardVerdict is the draft's verdict for the policy's: allow, deny, or,
// for a call that needs a person, escalate.
func guardVerdict(v decide.Verdict) string {
	switch v {
	case decide.Allow:
		return "allow"
	case decide.Ask:
		return "escalate"
	}
	return "deny"
}

// guardAction is what the gate enforced in the end: the call went to the
// server (allow; a person may have approved it) or it did not (block; a
// held call that a person may approve later included).
func guardAction(s host.Status) string {
	if s == host.StatusDenied || s == host.StatusBlocked {
		return "block"
	}
	return "allow"
}

// guardPolicy names the part of mcphost's policy that set the verdict and
// the rule within it: a managed or a configured rule by its id, the input
// schema, or else the tiers, by the call's tier.
func guardPolicy(d decide.Decision) (policy, rule string) {
	switch {
	case strings.HasPrefix(d.Rule, "managed:"):
		return "mcphost.managed", name(d.Rule)
	case d.Rule != "":
		return "mcphost.config", name(d.Rule)
	case d.Has(decide.CodeSchemaRejected):
		return "mcphost.input-schema", ""
	}
	return "mcphost.tiers", d.Tier.String()
}

// guardSubtype is the draft's target subtype: tool_call, or retrieval for
// a resource read the gate decided on its stand-in.
func guardSubtype(definitionHash string) string {
	if strings.HasPrefix(definitionHash, host.ResourceReadTool+"@") {
		return "retrieval"
	}
	return "tool_call"
}

// ArgsHMAC is the draft's input hash of a call's arguments under key:
// "hmac-sha256:" and the hex HMAC-SHA256 of their canonical form (members
// sorted by key, no insignificant whitespace, strings re-encoded:
// decide.Canonical, the form grants are bound to; empty arguments are {}).
// Keyed, so that a collector cannot test guesses of the arguments against
// it as it could a plain hash. "" without a key or for text that is not
// JSON.
func ArgsHMAC(key []byte, args json.RawMessage) string {
	if len(key) == 0 {
		return ""
	}
	raw := []byte(args)
	if jsonscan.SkipSpace(raw, 0) == len(raw) {
		raw = []byte("{}")
	}
	c, err := decide.Canonical(raw)
	if err != nil {
		return ""
	}
	m := hmac.New(sha256.New, key)
	m.Write(c)
	return "hmac-sha256:" + hex.EncodeToString(m.Sum(nil))
}

// runGuardrail exports the decision of a call as the draft's internal
// guardrail span, under the call's span, from the call's entry into the
// gate to its decision. Nothing of the arguments goes out but their HMAC.
func (e *Exporter) runGuardrail(ctx context.Context, st *callState, r *host.Result, definitionHash string) {
	d := r.Decision
	end := st.guard.decided
	if end.IsZero() {
		end = time.Now()
	}
	policy, rule := guardPolicy(d)
	verdict := guardVerdict(d.Verdict)
	attrs := []attribute.KeyValue{
		attribute.String(keyOperation, guardOperation),
		attribute.String(keyGuardComponent, guardComponent),
		attribute.String(keyGuardTargetType, "input"),
		attribute.String(keyGuardTargetSub, guardSubtype(definitionHash)),
		attribute.String(keyGuardTargetID, r.CallID),
		attribute.String(keyGuardVerdict, verdict),
		attribute.String(keyGuardAction, guardAction(r.Status)),
		attribute.String(keyGuardPolicy, policy),
		attribute.String("mcphost.decided_by", r.DecidedBy.String()),
	}
	if rule != "" {
		attrs = append(attrs, attribute.String(keyGuardRule, rule))
	}
	if verdict != "allow" {
		codes := make([]string, len(d.Reasons))
		for i, x := range d.Reasons {
			codes[i] = x.Code
		}
		attrs = append(attrs, attribute.String(keyGuardReason, name(strings.Join(codes, ","))))
	}
	if h := ArgsHMAC(e.cfg.ArgsKey, r.Args); h != "" {
		attrs = append(attrs, attribute.String(keyGuardInputHash, h))
	}
	_, span := e.tracer.Start(ctx, guardOperation+" "+guardComponent, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(st.guard.start), trace.WithAttributes(attrs...))
	span.End(trace.WithTimestamp(end))
}
