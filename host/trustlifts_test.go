package host

import (
	"strings"
	"testing"
)

// TestRefusalNamesTrustWhenTrustAloneLifts: a call that asks only because
// its server is untrusted says so and names the command that trusts the
// server, first; a call that would ask of a trusted server too does not,
// nor does one of a server the managed policy lets no one trust.
func TestRefusalNamesTrustWhenTrustAloneLifts(t *testing.T) {
	w := newWorld(t, worldOpts{fixture: "tasks", headless: true})
	r := w.call("list_tasks", `{}`)
	if r.Status != StatusBlocked || !r.TrustLifts {
		t.Fatalf("list_tasks of an untrusted server: %s, TrustLifts %v; want blocked, true (%+v)", r.Status, r.TrustLifts, r.Decision)
	}
	if msg := r.Message(); !strings.Contains(msg, "it asks only because f is not trusted: if you believe its annotations, trust it with mcphost mcp trust f") {
		t.Errorf("the refusal does not name trusting the server: %q", msg)
	}
	if a := r.Approval(ApproveWithYes); len(a.Fix) == 0 || !strings.Contains(a.Fix[0], "mcphost mcp trust f") {
		t.Errorf("trusting is not the first fix: %q", a.Fix)
	}

	r = w.call("delete_task", `{"id":"T-1"}`)
	if r.Status != StatusBlocked || r.TrustLifts || strings.Contains(r.Message(), "mcp trust") {
		t.Errorf("delete_task, which a trusted server's asks too: %s, TrustLifts %v, %q", r.Status, r.TrustLifts, r.Message())
	}

	w.gate.o.MayTrust = func(string) bool { return false }
	if r := w.call("list_tasks", `{}`); r.TrustLifts || strings.Contains(r.Message(), "mcp trust") {
		t.Errorf("a server no one may trust: TrustLifts %v, %q", r.TrustLifts, r.Message())
	}
}
