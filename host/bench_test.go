package host

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkGateOverhead compares one read through the gate (decide, audit,
// bookkeeping) with the same call made with go-sdk's CallTool directly, to
// the same in-process fixture. Report both, and their ratio.
func BenchmarkGateOverhead(b *testing.B) {
	args := json.RawMessage(`{"key":"k"}`)
	b.Run("raw-sdk", func(b *testing.B) {
		f, err := fixtures.New("flaky", fixtures.Options{})
		if err != nil {
			b.Fatal(err)
		}
		tr, err := f.InMemory(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: client.DefaultProtocolVersion})
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		b.ResetTimer()
		for b.Loop() {
			if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_value", Arguments: args}); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, sync := range []bool{false, true} {
		name := "gate-nosync"
		if sync {
			name = "gate-sync"
		}
		b.Run(name, func(b *testing.B) {
			m := client.New([]client.Spec{{Name: "f", Dial: func(ctx context.Context) (mcp.Transport, error) {
				f, err := fixtures.New("flaky", fixtures.Options{})
				if err != nil {
					return nil, err
				}
				return f.InMemory(ctx)
			}}}, client.Options{})
			defer m.Close()
			m.Start(context.Background())
			log, err := audit.Open(filepath.Join(b.TempDir(), "audit.jsonl"), audit.Options{NoSync: !sync})
			if err != nil {
				b.Fatal(err)
			}
			defer log.Close()
			p, _ := decide.Compile(nil, decide.Options{AutoApprove: decide.ApproveAdditive})
			g := NewGate(GateOptions{Catalog: m, Policy: p, Trusted: func(string) bool { return true }, Mode: decide.Headless, Audit: log})
			b.ResetTimer()
			for b.Loop() {
				if r := g.Call(context.Background(), Call{Server: "f", Tool: "read_value", Args: args}); r.Status != StatusSuccess {
					b.Fatal(r.Status, r.Err)
				}
			}
		})
	}
}
