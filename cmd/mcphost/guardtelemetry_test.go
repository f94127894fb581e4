package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/internal/otelcoltest"
	"github.com/mcphost/mcphost/telemetry"
)

// TestTelemetryGuardrail sends the gate's decisions to a real OpenTelemetry
// Collector and reads back, beside the mcphost.* span and event, the
// guardrail span of the GenAI draft under each call span: verdict, action,
// target, policy and rule, and the arguments only as the HMAC under the
// key every replica shares (MCPHOST_TELEMETRY_HMAC_KEY), never their value.
func TestTelemetryGuardrail(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an OpenTelemetry Collector")
	}
	bin := otelcoltest.Build(t, t.TempDir())
	col := otelcoltest.Start(t, bin)
	srv, _ := tracedServer(t, t.TempDir())
	key := strings.Repeat("team-key-", 4)
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.Endpoint, telemetry.ArgsKeyEnv: key}
	args := `{"id": "` + secretArg + `"}`
	if code, errOut := telemetryRun(t, env, "call", "--server", srv, "--trust", "traced", "traced/get_note", args); code != exitOK {
		t.Fatalf("call: exit %d: %s", code, errOut)
	}
	if code, errOut := telemetryRun(t, env, "call", "--server", srv, "--trust", "traced", "--deny", "traced/drop_note", "traced/drop_note", args); code == exitOK {
		t.Fatalf("a call a rule denies ran: %s", errOut)
	}
	raw, data := col.Output(t)
	if strings.Contains(raw, secretArg) || strings.Contains(raw, key) {
		t.Fatalf("the collector received an argument's value or the HMAC key")
	}
	guards := data.SpansNamed("run_guardrail mcphost")
	if len(guards) != 2 {
		t.Fatalf("%d guardrail spans, want 2", len(guards))
	}
	byTarget := map[any]otelcoltest.Span{}
	for _, g := range guards {
		byTarget[g.ParentSpanID] = g
	}
	hash := telemetry.ArgsHMAC([]byte(key), json.RawMessage(args))
	read := oneSpan(t, data, "tools/call get_note")
	g, ok := byTarget[read.SpanID]
	if !ok || g.TraceID != read.TraceID || g.Kind != 1 { // SPAN_KIND_INTERNAL
		t.Fatalf("no internal guardrail span under the read's call span: %+v", guards)
	}
	wantAttrs(t, "allowed read", g.Attrs, map[string]any{
		"gen_ai.operation.name": "run_guardrail", "gen_ai.guardrail.component.name": "mcphost",
		"gen_ai.guardrail.target.type": "input", "gen_ai.guardrail.target.subtype": "tool_call",
		"gen_ai.guardrail.target.id":    read.Attrs["mcphost.call.id"],
		"gen_ai.guardrail.verdict.type": "allow", "gen_ai.guardrail.action.type": "allow",
		"gen_ai.guardrail.security.policy.id": "mcphost.tiers", "gen_ai.guardrail.security.policy.rule.id": "T0",
		"gen_ai.guardrail.security.content.input.hash": hash, "mcphost.decided_by": "auto",
	})
	drop := oneSpan(t, data, "tools/call drop_note")
	g, ok = byTarget[drop.SpanID]
	if !ok {
		t.Fatalf("no guardrail span under the denied call's span: %+v", guards)
	}
	rule, _ := g.Attrs["gen_ai.guardrail.security.policy.rule.id"].(string)
	reason, _ := g.Attrs["gen_ai.guardrail.verdict.reason"].(string)
	wantAttrs(t, "denied call", g.Attrs, map[string]any{
		"gen_ai.guardrail.verdict.type": "deny", "gen_ai.guardrail.action.type": "block",
		"gen_ai.guardrail.security.policy.id": "mcphost.config", "gen_ai.guardrail.security.content.input.hash": hash,
	})
	if rule == "" || !strings.Contains(reason, "rule:"+rule) {
		t.Errorf("denied call: rule %q, reason %q; want the rule named in both", rule, reason)
	}
	// The mcphost.* decision events are still there beside it.
	if n := len(data.EventsNamed("mcphost.tool_decision")); n != 2 {
		t.Errorf("%d mcphost.tool_decision events, want 2", n)
	}
}
