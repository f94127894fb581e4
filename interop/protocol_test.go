//go:build unix

package interop

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcphost/mcphost/client"
)

// TestProtocolAuto starts the npm servers with "protocolVersion": "auto":
// they speak 2025-11-25 only, so server/discover is refused and the client
// falls back to initialize. Each must start, negotiate 2025-11-25, and list
// the same catalog as when the version is pinned. The start times of both
// settings are logged: the measurement behind the default.
func TestProtocolAuto(t *testing.T) {
	n := requireServers(t)
	t.Parallel()
	specs := func(t *testing.T, pv string) []client.Spec {
		return []client.Spec{
			{Name: "everything", Command: "node", Args: []string{n.everything, "stdio"}, ProtocolVersion: pv},
			{Name: "everything-http", Transport: client.TransportHTTP, URL: startHTTP(t, n.everything, "streamableHttp", "/mcp").url, ProtocolVersion: pv},
			{Name: "fs", Command: "node", Args: []string{n.filesystem, t.TempDir()}, ProtocolVersion: pv},
			{Name: "memory", Command: "node", Args: []string{n.memory}, ProtocolVersion: pv,
				Env: map[string]string{"MEMORY_FILE_PATH": filepath.Join(t.TempDir(), "memory.jsonl")}},
		}
	}
	tools := map[string]map[string]string{}
	for _, pv := range []string{client.DefaultProtocolVersion, client.ProtocolAuto} {
		m := newManager(t, specs(t, pv)...)
		start := time.Now()
		startWithTool(t, m, "everything", research)
		took := time.Since(start)
		waitTool(t, m, "everything-http", research) // registered after initialization
		for _, st := range m.Servers() {
			if st.ProtocolVersion != client.DefaultProtocolVersion {
				t.Errorf("%s with %q negotiated %q, want %s", st.Name, pv, st.ProtocolVersion, client.DefaultProtocolVersion)
			}
		}
		got := map[string]string{}
		for _, tl := range m.Tools() {
			got[tl.Server+"/"+tl.Name] = tl.Annotations.String() + " task=" + tl.TaskSupport
		}
		tools[pv] = got
		t.Logf("protocolVersion %q: 4 npm servers ready in %s", pv, took.Round(time.Millisecond))
		// A call works at the negotiated version.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		r := m.Call(ctx, "everything", "echo", []byte(`{"message":"hi"}`), client.CallOptions{})
		cancel()
		wantOutcome(t, r, client.OutcomeSuccess)
	}
	for k, v := range tools[client.DefaultProtocolVersion] {
		if tools[client.ProtocolAuto][k] != v {
			t.Errorf("%s: %q pinned, %q with auto", k, v, tools[client.ProtocolAuto][k])
		}
	}
}

// waitTool waits, bounded and on the Manager's events, until server lists
// tool.
func waitTool(t *testing.T, m *client.Manager, server, tool string) {
	t.Helper()
	events, unsubscribe := m.Subscribe()
	defer unsubscribe()
	timeout := time.After(time.Minute)
	for {
		if _, ok := m.Tool(server, tool); ok {
			return
		}
		select {
		case <-events:
		case <-timeout:
			t.Fatalf("%s does not list %s a minute after start", server, tool)
		}
	}
}
