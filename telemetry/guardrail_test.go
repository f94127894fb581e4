package telemetry

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
)

// spanAttrs are a recorded span's attributes as strings.
func spanAttrs(s sdktrace.ReadOnlySpan) map[string]string {
	m := map[string]string{}
	for _, kv := range s.Attributes() {
		m[string(kv.Key)] = kv.Value.Emit()
	}
	return m
}

// Each decided call gets one run_guardrail span under its call span, with
// the draft's verdict, the action the gate enforced, the target, the
// policy and rule, and the arguments only as their keyed HMAC.
func TestGuardrailSpanOfEachDecision(t *testing.T) {
	const secret = "ARG-SECRET-51ad"
	key := []byte(strings.Repeat("k", MinArgsKeyLen))
	args := json.RawMessage(`{"path": "/x", "note": "` + secret + `"}`)
	cases := []struct {
		name      string
		result    host.Result
		attempted bool
		want      map[string]string
		absent    []string
	}{
		{"allowed by its tier", host.Result{Status: host.StatusSuccess, DecidedBy: audit.ByTier,
			Decision: decide.Decision{Verdict: decide.Allow, Tier: decide.T0, Reasons: []decide.Reason{{Code: decide.CodeReadOnly}}}}, true,
			map[string]string{keyGuardVerdict: "allow", keyGuardAction: "allow", keyGuardPolicy: "mcphost.tiers", keyGuardRule: "T0", "mcphost.decided_by": "auto"},
			[]string{keyGuardReason}},
		{"denied by a managed rule", host.Result{Status: host.StatusDenied, DecidedBy: audit.ByRule("managed:no-drop"),
			Decision: decide.Decision{Verdict: decide.Deny, Tier: decide.T2, Rule: "managed:no-drop",
				Reasons: []decide.Reason{{Code: decide.CodeDestructive}, {Code: decide.CodeRulePrefix + "managed:no-drop"}}}}, false,
			map[string]string{keyGuardVerdict: "deny", keyGuardAction: "block", keyGuardPolicy: "mcphost.managed", keyGuardRule: "managed:no-drop",
				keyGuardReason: "destructive,rule:managed:no-drop"}, nil},
		{"asked and approved", host.Result{Status: host.StatusSuccess, DecidedBy: audit.ByPerson("once"),
			Decision: decide.Decision{Verdict: decide.Ask, Tier: decide.T2, Reasons: []decide.Reason{{Code: decide.CodeNeedsApproval}}}}, true,
			map[string]string{keyGuardVerdict: "escalate", keyGuardAction: "allow", keyGuardPolicy: "mcphost.tiers", keyGuardRule: "T2", "mcphost.decided_by": "user:once"}, nil},
		{"asked, no one to ask: held", host.Result{Status: host.StatusBlocked, DecidedBy: audit.ByHeadless,
			Decision: decide.Decision{Verdict: decide.Ask, Tier: decide.T3}}, false,
			map[string]string{keyGuardVerdict: "escalate", keyGuardAction: "block"}, nil},
		{"denied by a configured rule", host.Result{Status: host.StatusDenied, DecidedBy: audit.ByRule("deny[0]"),
			Decision: decide.Decision{Verdict: decide.Deny, Rule: "deny[0]"}}, false,
			map[string]string{keyGuardPolicy: "mcphost.config", keyGuardRule: "deny[0]"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, spans, _ := recordingExporter(t, Config{ArgsKey: key})
			ctx := e.CallStarted(context.Background(), "call-7", "files", "drop", args)
			if c.attempted {
				actx := e.AttemptStarted(ctx, 1)
				e.AttemptDone(actx, host.Attempt{N: 1, Outcome: client.OutcomeSuccess}, &client.CallResult{})
			}
			r := c.result
			r.CallID, r.Args = "call-7", args
			e.CallDone(ctx, &r, "def-hash")
			var call, guard sdktrace.ReadOnlySpan
			for _, s := range spans.Ended() {
				switch s.Name() {
				case "tools/call drop":
					call = s
				case "run_guardrail mcphost":
					if guard != nil {
						t.Fatal("two guardrail spans for one call")
					}
					guard = s
				}
				for _, kv := range s.Attributes() {
					if strings.Contains(kv.Value.Emit(), secret) {
						t.Errorf("span %q exports the argument's value in %s", s.Name(), kv.Key)
					}
				}
			}
			if call == nil || guard == nil {
				t.Fatalf("call span %v, guardrail span %v; want both", call, guard)
			}
			if guard.Parent().SpanID() != call.SpanContext().SpanID() || guard.SpanKind() != trace.SpanKindInternal {
				t.Errorf("the guardrail span is not an internal child of the call span")
			}
			if guard.StartTime().Before(call.StartTime()) || guard.EndTime().Before(guard.StartTime()) {
				t.Errorf("guardrail span from %v to %v, the call's from %v", guard.StartTime(), guard.EndTime(), call.StartTime())
			}
			got := spanAttrs(guard)
			want := map[string]string{keyOperation: "run_guardrail", keyGuardComponent: "mcphost", keyGuardTargetType: "input",
				keyGuardTargetSub: "tool_call", keyGuardTargetID: "call-7", keyGuardInputHash: ArgsHMAC(key, args)}
			for k, v := range c.want {
				want[k] = v
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
			for _, k := range c.absent {
				if _, has := got[k]; has {
					t.Errorf("%s = %q, want none", k, got[k])
				}
			}
		})
	}
}

// Without a key no hash of the arguments is exported; a call that was not
// found (nothing decided) has no guardrail span; a resource read is a
// retrieval.
func TestGuardrailSpanWithoutKeyNotFoundAndRead(t *testing.T) {
	e, spans, _ := recordingExporter(t, Config{})
	ctx := e.CallStarted(context.Background(), "c1", "s", "t", json.RawMessage(`{}`))
	e.CallDone(ctx, &host.Result{CallID: "c1", Status: host.StatusSuccess, Decision: decide.Decision{Verdict: decide.Allow}}, "h")
	ctx = e.CallStarted(context.Background(), "c2", "s", "gone", json.RawMessage(`{}`))
	e.CallDone(ctx, &host.Result{CallID: "c2", Status: host.StatusError}, "")
	ctx = e.CallStarted(context.Background(), "c3", "s", host.ResourceReadTool, json.RawMessage(`{"uri":"note://1"}`))
	e.CallDone(ctx, &host.Result{CallID: "c3", Status: host.StatusSuccess, Decision: decide.Decision{Verdict: decide.Allow}}, host.ResourceReadTool+"@1")
	var guards []map[string]string
	for _, s := range spans.Ended() {
		if s.Name() == "run_guardrail mcphost" {
			guards = append(guards, spanAttrs(s))
		}
	}
	if len(guards) != 2 {
		t.Fatalf("%d guardrail spans, want 2 (none for the call not found)", len(guards))
	}
	for _, g := range guards {
		if h, has := g[keyGuardInputHash]; has {
			t.Errorf("without a key the span has %s = %q", keyGuardInputHash, h)
		}
	}
	if guards[0][keyGuardTargetID] != "c1" || guards[1][keyGuardTargetID] != "c3" || guards[1][keyGuardTargetSub] != "retrieval" {
		t.Errorf("guardrail spans %v; want c1 a tool_call and c3 a retrieval", guards)
	}
}

// The HMAC is of the canonical arguments: member order, whitespace and
// escaping do not change it; the key does; empty arguments hash as {}.
func TestArgsHMAC(t *testing.T) {
	k1, k2 := []byte(strings.Repeat("a", 32)), []byte(strings.Repeat("b", 32))
	h := ArgsHMAC(k1, json.RawMessage(`{"b":1,"a":"\u0078"}`))
	if !strings.HasPrefix(h, "hmac-sha256:") || len(h) != len("hmac-sha256:")+64 {
		t.Fatalf("ArgsHMAC = %q; want hmac-sha256: and 64 hex digits", h)
	}
	if got := ArgsHMAC(k1, json.RawMessage(` { "a" : "x", "b" : 1 } `)); got != h {
		t.Errorf("the same arguments written otherwise: %q, want %q", got, h)
	}
	if got := ArgsHMAC(k2, json.RawMessage(`{"a":"x","b":1}`)); got == h {
		t.Errorf("another key gave the same HMAC")
	}
	if got := ArgsHMAC(k1, json.RawMessage(`{"a":"y","b":1}`)); got == h {
		t.Errorf("other arguments gave the same HMAC")
	}
	if ArgsHMAC(k1, nil) != ArgsHMAC(k1, json.RawMessage(`{}`)) {
		t.Errorf("empty arguments do not hash as {}")
	}
	if ArgsHMAC(nil, json.RawMessage(`{}`)) != "" || ArgsHMAC(k1, json.RawMessage(`{`)) != "" {
		t.Errorf("no key, or not JSON: want no HMAC")
	}
}

// The key: the variable's when set (long enough), else the state
// directory's, made once (0600) and kept; a short key or a file others
// may read is refused with the fix.
func TestLoadArgsKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	long := strings.Repeat("z", MinArgsKeyLen)
	if k, err := LoadArgsKey(env(map[string]string{ArgsKeyEnv: long}), dir); err != nil || string(k) != long {
		t.Fatalf("from the variable: %q, %v", k, err)
	}
	if _, err := LoadArgsKey(env(map[string]string{ArgsKeyEnv: "short"}), dir); err == nil || !strings.Contains(err.Error(), ArgsKeyEnv) || strings.Contains(err.Error(), "short\"") {
		t.Fatalf("a short variable: %v; want an error naming the variable", err)
	}
	k1, err := LoadArgsKey(env(nil), dir)
	if err != nil || len(k1) < MinArgsKeyLen {
		t.Fatalf("made: %q, %v", k1, err)
	}
	path := filepath.Join(dir, ArgsKeyFile)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("the key file has mode %v, want 0600", fi.Mode().Perm())
	}
	if k2, err := LoadArgsKey(env(nil), dir); err != nil || string(k2) != string(k1) {
		t.Fatalf("read again: %q, %v; want the same key", k2, err)
	}
	if runtime.GOOS != "windows" {
		if err := os.Chmod(path, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadArgsKey(env(nil), dir); err == nil || !strings.Contains(err.Error(), "chmod 600") {
			t.Errorf("a key file others may read: %v; want the chmod fix", err)
		}
	}
	if err := os.WriteFile(path, []byte("tiny\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadArgsKey(env(nil), dir); err == nil || !strings.Contains(err.Error(), "delete the file") {
		t.Errorf("a short key file: %v; want the fix", err)
	}
}
