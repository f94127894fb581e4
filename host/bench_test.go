package host

import (
	"context"
	"encoding/json"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/llm"
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

// BenchmarkLoopPerCall runs scripted turns of one read each through the loop
// (model turn, gate, call, result back); compare with gate-nosync in
// BenchmarkGateOverhead for the loop's own share. It also reports the heap
// a 1,000-turn transcript holds.
func BenchmarkLoopPerCall(b *testing.B) {
	m := client.New([]client.Spec{{Name: "tasks", Dial: func(ctx context.Context) (mcp.Transport, error) {
		f, err := fixtures.New("tasks", fixtures.Options{})
		if err != nil {
			return nil, err
		}
		return f.InMemory(ctx)
	}}}, client.Options{})
	defer m.Close()
	m.Start(context.Background())
	log, err := audit.Open(filepath.Join(b.TempDir(), "audit.jsonl"), audit.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer log.Close()
	p, _ := decide.Compile(nil, decide.Options{AutoApprove: decide.ApproveAdditive})
	g := NewGate(GateOptions{Catalog: m, Policy: p, Trusted: func(string) bool { return true }, Mode: decide.Headless, Audit: log})
	const turns = 1000
	script := make([]llm.ScriptTurn, 0, turns+1)
	for range turns {
		script = append(script, llm.ScriptTurn{ToolCalls: []llm.ScriptCall{{Name: "tasks__get_task", Args: json.RawMessage(`{"id":"T-1"}`)}}})
	}
	script = append(script, llm.ScriptTurn{Text: "done"})
	var heap uint64
	b.ResetTimer()
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		// A window that holds the whole run: this measures a call, not
		// compaction.
		l := NewLoop(LoopOptions{Model: llm.NewScript(script), Gate: g, Tools: m.Tools(), MaxSteps: turns + 1, ContextWindow: 1 << 30})
		if _, err := l.Run(context.Background(), "go"); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		heap = after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc)
		runtime.KeepAlive(l)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*turns), "ns/call")
	b.ReportMetric(float64(heap)/(1<<20), "MiB/1000-turns")
}

// BenchmarkArgsCheck is the gate's check of a call's arguments against the
// tool's input schema, resolved once per definition: compare with
// gate-nosync in BenchmarkGateOverhead for its share of a call.
func BenchmarkArgsCheck(b *testing.B) {
	g := NewGate(GateOptions{})
	t := &client.Tool{Server: "f", Name: "get", Hash: "h", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"id":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}}},"required":["id"],"additionalProperties":false}`)}
	c := Call{Args: json.RawMessage(`{"id":"T-1","tags":["a","b"]}`)}
	for b.Loop() {
		if why := g.checkArgs(t, c); why != "" {
			b.Fatal(why)
		}
	}
}
