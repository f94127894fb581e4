package client

import (
	"testing"
)

// TestProtocol20260728 runs the go-sdk fixture at the 2026-07-28 protocol
// (stateless lifecycle: server/discover, per-request _meta) over stdio and
// streamable HTTP: the negotiated version is shown, the raw tools/list read
// beside the SDK sees every tool with its hints exactly as sent, and calls
// work.
func TestProtocol20260728(t *testing.T) {
	for _, c := range []struct {
		transport string
		spec      func(t *testing.T) Spec
	}{
		{TransportStdio, func(t *testing.T) Spec { return fixtureSpec(t, "tasks", "tasks") }},
		{TransportHTTP, func(t *testing.T) Spec {
			return Spec{Name: "tasks", Transport: TransportHTTP, URL: startFixtureHTTP(t, "tasks", "--stateless", "--http", "127.0.0.1:0")}
		}},
	} {
		for _, pv := range []string{"2026-07-28", ProtocolAuto} {
			t.Run(c.transport+"/"+pv, func(t *testing.T) {
				spec := c.spec(t)
				spec.ProtocolVersion = pv
				m := startManager(t, []Spec{spec}, Options{HTTPTransport: httpTransport(t)})
				st, _ := statusOf(m, "tasks")
				if st.ProtocolVersion != "2026-07-28" {
					t.Fatalf("negotiated %q (%+v), want 2026-07-28", st.ProtocolVersion, st)
				}
				checkTasksAt(t, m, "tasks", c.transport, "2026-07-28")
			})
		}
	}
}
