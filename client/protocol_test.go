package client

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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

// TestProtocolFeaturesBothVersions runs longjob at 2025-11-25 and
// 2026-07-28: a question travels as an elicitation request or as an input
// request in the tool's result, and reaches the same handler either way;
// a tool added while the server runs is listed again, with its hints as
// sent.
func TestProtocolFeaturesBothVersions(t *testing.T) {
	for _, pv := range []string{DefaultProtocolVersion, "2026-07-28"} {
		t.Run(pv, func(t *testing.T) {
			spec := fixtureSpec(t, "job", "longjob")
			spec.ProtocolVersion = pv
			var asked []string
			var mu sync.Mutex
			m := startManager(t, []Spec{spec}, Options{
				Elicitation: func(_ context.Context, server string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					asked = append(asked, server+": "+req.Params.Message)
					mu.Unlock()
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirmed": true}}, nil
				},
				RelistInterval: time.Millisecond,
			})
			if st, _ := statusOf(m, "job"); st.ProtocolVersion != pv {
				t.Fatalf("negotiated %q (%+v), want %s", st.ProtocolVersion, st, pv)
			}
			if got := callText(t, m, "job", "confirm"); got != `answer: accept {"confirmed":true}` {
				t.Errorf("confirm answered %q, want the accepted answer", got)
			}
			mu.Lock()
			if len(asked) != 1 || asked[0] != "job: Go ahead?" {
				t.Errorf("the handler was asked %q, want the one question", asked)
			}
			mu.Unlock()

			events, unsub := m.Subscribe()
			defer unsub()
			callText(t, m, "job", "grow")
			waitFor(t, events, func(Event) bool { _, ok := m.Tool("job", "grown"); return ok })
			if tl, _ := m.Tool("job", "grown"); tl.Annotations.String() != "readOnly=true destructive=absent idempotent=absent openWorld=false" {
				t.Errorf("grown: %s, want the hints as sent", tl.Annotations)
			}
		})
	}
}

// callText calls a tool without arguments and returns its text, requiring
// success.
func callText(t *testing.T, m *Manager, server, tool string) string {
	t.Helper()
	r := m.Call(context.Background(), server, tool, json.RawMessage(`{}`), CallOptions{})
	if r.Outcome != OutcomeSuccess {
		t.Fatalf("%s/%s: %s (%s: %v), want success", server, tool, r.Outcome, r.Detail, r.Err)
	}
	return resultText(r)
}
