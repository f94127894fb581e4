package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The added latency of a read through serve: the same go-sdk client calls
// flaky's read_value (a trusted closed-world read, allowed at T0) straight
// on the fixture, a subprocess on stdio, and through serve in front of the
// same subprocess, over stdio (a pipe) and over HTTP on loopback. Serve's
// audit log is real and synced: a read's records are written before the
// call and before its answer and synced in the background (package audit).
//
//	go test -run '^$' -bench Read -benchtime 1000x ./serve
//
// Each reports p50 and p99 of the calls, in microseconds.

var readArgs = json.RawMessage(`{"key":"a"}`)

func fixtureCommand() *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), fixtureEnv+"=flaky")
	return cmd
}

func BenchmarkReadDirectStdio(b *testing.B) {
	cl := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := cl.Connect(context.Background(), &mcp.CommandTransport{Command: fixtureCommand()}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	measure(b, cs, "read_value")
}

// servedWorld is serve in front of the flaky subprocess, with a synced
// audit log.
func servedWorld(b *testing.B) *Server {
	b.Helper()
	return servedWorldWith(b, nil)
}

// servedWorldWith is servedWorld writing its audit records to aud (nil: a
// file in a temporary directory).
func servedWorldWith(b *testing.B, aud host.AuditLog) *Server {
	b.Helper()
	spec := client.Spec{Name: "flaky", Command: os.Args[0], Env: map[string]string{fixtureEnv: "flaky"}}
	pins := host.NewPins(nil)
	m := client.New([]client.Spec{spec}, client.Options{OnListing: pins.Hook(func(string) bool { return true })})
	b.Cleanup(func() { m.Close() })
	auto, _ := decide.ParseAutoApprove("")
	p, err := decide.Compile(nil, decide.Options{AutoApprove: auto})
	if err != nil {
		b.Fatal(err)
	}
	if aud == nil {
		log, err := audit.Open(filepath.Join(b.TempDir(), "audit.jsonl"), audit.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { log.Close() })
		aud = log
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	srv := New(Options{Catalog: m, Policy: p, Trusted: func(string) bool { return true }, Audit: aud, Pins: pins})
	b.Cleanup(srv.Close) // before the manager closes (cleanups run last first)
	srv.Start(ctx)
	<-srv.ready
	return srv
}

func BenchmarkReadServeStdio(b *testing.B) {
	srv := servedWorld(b)
	// Two pipes, framed as on stdio.
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Run(ctx, &mcp.IOTransport{Reader: sr, Writer: sw})
	}()
	cl := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := cl.Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	measure(b, cs, "flaky__read_value")
	cs.Close()
	cancel()
	sw.Close()
	<-done
}

func BenchmarkReadServeHTTP(b *testing.B) {
	srv := servedWorld(b)
	ts := httptest.NewServer(srv.Handler("tok"))
	b.Cleanup(ts.Close)
	tr := &http.Transport{}
	b.Cleanup(tr.CloseIdleConnections)
	cl := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := cl.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL,
		HTTPClient: &http.Client{Transport: bearer{"tok", tr}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	measure(b, cs, "flaky__read_value")
	cs.Close()
}

// measure calls tool b.N times and reports the p50 and p99 of the calls.
func measure(b *testing.B, cs *mcp.ClientSession, tool string) {
	b.Helper()
	ctx := context.Background()
	for range 20 { // warm up: connections, first-sight pins, the audit file
		call(b, ctx, cs, tool)
	}
	durs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		call(b, ctx, cs, tool)
		durs = append(durs, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(durs)
	at := func(q float64) float64 { return float64(durs[int(q*float64(len(durs)-1))].Nanoseconds()) / 1e3 }
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}

func call(b *testing.B, ctx context.Context, cs *mcp.ClientSession, tool string) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: readArgs})
	if err != nil || res.IsError {
		b.Fatalf("call %s: %v %+v", tool, err, res)
	}
}

// BenchmarkHTTPClients100x100 runs 100 HTTP clients at once, 100 reads
// each, through serve with a synced audit log, and fails if any call lacks
// exactly one intent and one outcome. It reports calls per second.
//
//	go test -run '^$' -bench HTTPClients -benchtime 1x ./serve
func BenchmarkHTTPClients100x100(b *testing.B) {
	const clients, calls = 100, 100
	dir := b.TempDir()
	spec := client.Spec{Name: "flaky", Command: os.Args[0], Env: map[string]string{fixtureEnv: "flaky"}}
	pins := host.NewPins(nil)
	m := client.New([]client.Spec{spec}, client.Options{OnListing: pins.Hook(func(string) bool { return true })})
	b.Cleanup(func() { m.Close() })
	auto, _ := decide.ParseAutoApprove("")
	p, _ := decide.Compile(nil, decide.Options{AutoApprove: auto})
	path := filepath.Join(dir, "audit.jsonl")
	log, err := audit.Open(path, audit.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { log.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	srv := New(Options{Catalog: m, Policy: p, Trusted: func(string) bool { return true }, Audit: log, Pins: pins})
	b.Cleanup(srv.Close)
	srv.Start(ctx)
	<-srv.ready
	ts := httptest.NewServer(srv.Handler("tok"))
	b.Cleanup(ts.Close)
	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	b.Cleanup(tr.CloseIdleConnections)
	for range b.N {
		b.ReportMetric(loadHTTP(b, []string{ts.URL}, tr, clients, calls), "calls/s")
	}
	recs, err := audit.Tail(path, 1<<30)
	if err != nil {
		b.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range recs {
		if r.Tool == "read_value" {
			seen[r.SessionID+"/"+r.CallID+"/"+string(r.Kind)]++
		}
	}
	want := 2 * clients * calls * b.N // every call: one intent, one outcome
	if len(seen) != want {
		b.Fatalf("%d distinct records, want %d", len(seen), want)
	}
	for k, n := range seen {
		if n != 1 {
			b.Fatalf("record %s written %d times", k, n)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if rep, err := audit.Verify(f); err != nil || len(rep.Problems) > 0 {
		b.Fatalf("audit log does not verify: %v %+v", err, rep.Problems)
	}
}

// loadHTTP runs clients HTTP clients at once, spread over endpoints, each
// making calls reads, and returns the calls per second; a call that fails
// fails b.
func loadHTTP(b testing.TB, endpoints []string, tr http.RoundTripper, clients, calls int) float64 {
	b.Helper()
	ctx := context.Background()
	start := time.Now()
	errs := make(chan error, clients)
	for i := range clients {
		go func() {
			cl := mcp.NewClient(&mcp.Implementation{Name: "load", Version: "1"}, nil)
			cs, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoints[i%len(endpoints)],
				HTTPClient: &http.Client{Transport: bearer{"tok", tr}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				errs <- err
				return
			}
			defer cs.Close()
			for range calls {
				if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "flaky__read_value", Arguments: readArgs}); err != nil || res.IsError {
					errs <- fmt.Errorf("call: %v %+v", err, res)
					return
				}
			}
			errs <- nil
		}()
	}
	for range clients {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	return float64(clients*calls) / time.Since(start).Seconds()
}
