package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
)

// logRecorder keeps every log record emitted, for tests.
type logRecorder struct {
	mu   sync.Mutex
	recs []sdklog.Record
}

func (r *logRecorder) OnEmit(_ context.Context, rec *sdklog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec.Clone())
	return nil
}
func (r *logRecorder) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
func (r *logRecorder) Shutdown(context.Context) error                         { return nil }
func (r *logRecorder) ForceFlush(context.Context) error                       { return nil }

// recordingExporter is an Exporter whose spans and log records stay in
// memory, so a test can read every attribute it would export.
func recordingExporter(t *testing.T, cfg Config) (*Exporter, *tracetest.SpanRecorder, *logRecorder) {
	t.Helper()
	spans, logs := tracetest.NewSpanRecorder(), &logRecorder{}
	e := &Exporter{cfg: cfg}
	e.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	e.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	e.lp = sdklog.NewLoggerProvider(sdklog.WithProcessor(logs))
	e.tracer, e.logger = e.tp.Tracer(scope), e.lp.Logger(scope)
	if err := e.inst.init(e.mp.Meter(scope)); err != nil {
		t.Fatal(err)
	}
	return e, spans, logs
}

// Every name a server, a model or a provider chose is exported escaped (no
// control character, no look-alike letter, nothing but printable ASCII) and
// cut near maxName bytes: in span names, span attributes and log records
// alike. A collector's viewer is a terminal or a web page too. Of a
// server's URL only the host and port go out, never its user, password,
// path or query.
func TestExportedNamesAreEscapedAndBounded(t *testing.T) {
	evil := "\x1b[2J\x1b]8;;http://x\x07tаsk\u202e" + strings.Repeat("é", 400) // 800+ bytes, a Cyrillic а
	longHost := strings.Repeat("h", 600) + ".example"
	e, spans, logs := recordingExporter(t, Config{Server: func(string) (ServerInfo, bool) {
		return ServerInfo{Transport: client.TransportHTTP, URL: "https://someone:pw-5e1@" + longHost + "/path-9a2/mcp?key=q-77c1"}, true
	}})
	ctx, end := e.StartAgent(context.Background(), evil+":"+evil)
	ctx = e.CallStarted(ctx, "c1", evil, evil, json.RawMessage(`{}`))
	actx := e.AttemptStarted(ctx, 1)
	e.AttemptDone(actx, host.Attempt{N: 1, Outcome: client.OutcomeSuccess}, &client.CallResult{SessionID: evil})
	e.Asked(ctx, &host.Question{Server: evil, Tool: &client.Tool{Server: evil, Name: evil}}, host.Answer{Approve: true}, nil, time.Second)
	e.CallDone(ctx, &host.Result{CallID: "c1", Status: host.StatusSuccess, Decision: decide.Decision{Verdict: decide.Allow}}, "hash")
	e.TurnDone(ctx, host.Turn{Model: evil + ":" + evil, StopReason: evil, Start: time.Now(), End: time.Now(), Err: errors.New("x")})
	end()

	check := func(where, v string) {
		t.Helper()
		for _, secret := range []string{"someone", "pw-5e1", "path-9a2", "q-77c1"} {
			if strings.Contains(v, secret) {
				t.Errorf("%s: %q exports %q of the server's URL; only its host and port go out", where, v, secret)
			}
		}
		plain := strings.ReplaceAll(v, "…", "")
		for i := 0; i < len(plain); i++ {
			if c := plain[i]; c < 0x20 || c > 0x7e {
				t.Errorf("%s: %q holds byte %#x; want printable ASCII (escaped)", where, v, c)
				break
			}
		}
		if len(v) > maxName+48 { // room for a span name's prefix and the cut marker
			t.Errorf("%s: %d bytes; want it cut near %d", where, len(v), maxName)
		}
	}
	checkAttrs := func(where string, kvs []attribute.KeyValue) {
		for _, kv := range kvs {
			switch kv.Value.Type() {
			case attribute.STRING:
				check(where+" "+string(kv.Key), kv.Value.AsString())
			case attribute.STRINGSLICE:
				for _, s := range kv.Value.AsStringSlice() {
					check(where+" "+string(kv.Key), s)
				}
			}
		}
	}
	ended := spans.Ended()
	if len(ended) < 4 {
		t.Fatalf("%d spans ended, want the agent's, the call's, the attempt's and the turn's", len(ended))
	}
	var sawAddress, sawSession bool
	for _, s := range ended {
		check("span name", s.Name())
		checkAttrs("span "+s.Name(), s.Attributes())
		for _, kv := range s.Attributes() {
			sawAddress = sawAddress || kv.Key == "server.address"
			sawSession = sawSession || kv.Key == "mcp.session.id"
		}
	}
	if !sawAddress || !sawSession {
		t.Errorf("server.address exported: %v, mcp.session.id: %v; want both, to check them", sawAddress, sawSession)
	}
	logs.mu.Lock()
	defer logs.mu.Unlock()
	if len(logs.recs) < 2 {
		t.Fatalf("%d log records, want the consent and the decision", len(logs.recs))
	}
	for _, r := range logs.recs {
		var kvs []attribute.KeyValue
		r.WalkAttributes(func(kv attribute.KeyValue) bool {
			kvs = append(kvs, kv)
			return true
		})
		checkAttrs("log "+r.EventName(), kvs)
	}
}
