package telemetry

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
)

// TestForClientNamesThePerson: the observer of a client session with a
// person puts the person's issuer and subject and the OAuth client id on
// the call's span and on its consent, decision and taint events, escaped;
// never the person's name or email. Without a person it is the exporter.
func TestForClientNamesThePerson(t *testing.T) {
	e, spans, logs := recordingExporter(t, Config{})
	if got := e.ForClient(&audit.Client{Name: "desk"}); got != host.Observer(e) {
		t.Errorf("ForClient without a person = %T, want the exporter itself", got)
	}
	c := &audit.Client{Name: "desk", ID: "desk-app", Person: &audit.Person{
		Issuer: "https://login.example.com", Subject: "u-alice\x1b[2J", Name: "Alice Secretname", Email: "alice@example.com"}}
	o := e.ForClient(c)
	ctx := o.CallStarted(context.Background(), "c1", "tasks", "list", json.RawMessage(`{}`))
	o.Asked(ctx, &host.Question{Server: "tasks", Tool: &client.Tool{Server: "tasks", Name: "list"}}, host.Answer{Approve: true}, nil, time.Second)
	o.CallDone(ctx, &host.Result{CallID: "c1", Status: host.StatusSuccess, Decision: decide.Decision{Verdict: decide.Allow}}, "hash")
	o.Tainted(host.Taint{PrivateRead: true})

	want := map[string]string{
		"mcphost.person.issuer":  "https://login.example.com",
		"mcphost.person.subject": `u-alice\x1b[2J`,
		"mcphost.client.id":      "desk-app",
	}
	check := func(where string, kvs []attribute.KeyValue) {
		t.Helper()
		got := map[string]string{}
		for _, kv := range kvs {
			got[string(kv.Key)] = kv.Value.Emit()
			if v := kv.Value.Emit(); strings.Contains(v, "Secretname") || strings.Contains(v, "alice@example.com") {
				t.Errorf("%s exports the person's name or email in %s: %q", where, kv.Key, v)
			}
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s = %q, want %q", where, k, got[k], v)
			}
		}
	}
	// The call's span, and beside it the guardrail's (guardrail.go),
	// which must not leak the name or email either.
	var calls int
	for _, sp := range spans.Ended() {
		if strings.HasPrefix(sp.Name(), "run_guardrail") {
			for _, kv := range sp.Attributes() {
				if v := kv.Value.Emit(); strings.Contains(v, "Secretname") || strings.Contains(v, "alice@example.com") {
					t.Errorf("the guardrail span exports the person's name or email in %s: %q", kv.Key, v)
				}
			}
			continue
		}
		calls++
		check("the call's span", sp.Attributes())
	}
	if calls != 1 {
		t.Fatalf("%d call spans, want one", calls)
	}
	logs.mu.Lock()
	defer logs.mu.Unlock()
	events := map[string]bool{}
	for _, r := range logs.recs {
		var kvs []attribute.KeyValue
		r.WalkAttributes(func(kv attribute.KeyValue) bool {
			kvs = append(kvs, kv)
			return true
		})
		events[r.EventName()] = true
		check("event "+r.EventName(), kvs)
	}
	for _, ev := range []string{"mcphost.consent", "mcphost.tool_decision", "mcphost.taint"} {
		if !events[ev] {
			t.Errorf("no %s event; got %v", ev, events)
		}
	}
}
