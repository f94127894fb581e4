package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/metric"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// scope is the instrumentation scope of everything mcphost exports.
const scope = "github.com/mcphost/mcphost"

// Exporter exports the gate's and the loop's events over OTLP/HTTP
// (protobuf, otlp.go). It is a
// host.Observer (observe.go). Everything it records is queued in memory
// and sent in the background: a dead or slow collector never delays a call;
// when a queue is full, records are dropped.
type Exporter struct {
	cfg    Config
	tp     *sdktrace.TracerProvider
	mp     *sdkmetric.MeterProvider
	lp     *sdklog.LoggerProvider
	tracer trace.Tracer
	logger log.Logger
	inst   instruments

	// failures counts export errors the SDK reported; last is the latest.
	failures atomic.Int64
	mu       sync.Mutex
	last     error

	shutdown sync.Once
	err      error
}

// instruments are the exported metrics.
type instruments struct {
	opDuration   metric.Float64Histogram // mcp.client.operation.duration
	decisions    metric.Int64Counter     // mcphost.tool.decisions
	asks         metric.Int64Counter     // mcphost.asks
	askDuration  metric.Float64Histogram // mcphost.ask.duration
	tokenUsage   metric.Int64Histogram   // gen_ai.client.token.usage
	turnDuration metric.Float64Histogram // gen_ai.client.operation.duration
}

// durationBuckets are the MCP conventions' advised boundaries, in seconds.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// Start returns an Exporter for cfg, or nil when cfg exports nothing. It
// sends nothing and connects to nothing until there is something to
// export. version is service.version.
func Start(cfg Config, version string) (*Exporter, error) {
	if !cfg.Enabled() {
		return nil, nil
	}
	e := &Exporter{cfg: cfg}
	timeout := cfg.ExportTimeout
	if timeout <= 0 {
		timeout = cfg.flushTimeout()
	}
	urls := signalURLs(cfg)

	// The SDK reports export failures through a process-wide handler; they
	// are counted here and said once at exit, never printed mid-command.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(e.failed))
	otel.SetLogger(logr.Discard())

	res := e.resource(version)

	httpc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	newSender := func(url string) *sender {
		return &sender{url: url, headers: cfg.Headers, timeout: timeout, client: httpc}
	}
	te := spanExporter{newSender(urls[0])}
	me := metricExporter{newSender(urls[1])}
	le := logExporter{newSender(urls[2])}

	// Bounded queues that drop when full (the processors' defaults never
	// block the caller); export runs on the processors' own goroutines.
	e.tp = sdktrace.NewTracerProvider(sdktrace.WithResource(res),
		sdktrace.WithBatcher(te, sdktrace.WithMaxQueueSize(2048), sdktrace.WithExportTimeout(timeout)))
	e.mp = sdkmetric.NewMeterProvider(sdkmetric.WithResource(res),
		sdkmetric.WithReader(sdkmetric.NewPeriodicReader(me, sdkmetric.WithInterval(30*time.Second), sdkmetric.WithTimeout(timeout))))
	e.lp = sdklog.NewLoggerProvider(sdklog.WithResource(res),
		sdklog.WithProcessor(sdklog.NewBatchProcessor(le, sdklog.WithMaxQueueSize(2048), sdklog.WithExportTimeout(timeout))))

	e.tracer = e.tp.Tracer(scope, trace.WithInstrumentationVersion(version))
	e.logger = e.lp.Logger(scope, log.WithInstrumentationVersion(version))
	if err := e.inst.init(e.mp.Meter(scope, metric.WithInstrumentationVersion(version))); err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	return e, nil
}

// signalURLs are the traces, metrics and logs URLs of cfg.
func signalURLs(cfg Config) [3]string {
	base := strings.TrimRight(cfg.Endpoint, "/")
	pick := func(full, path string) string {
		if full != "" {
			return full
		}
		if base == "" {
			return "http://localhost:4318" + path
		}
		return base + path
	}
	return [3]string{pick(cfg.TracesEndpoint, "/v1/traces"), pick(cfg.MetricsEndpoint, "/v1/metrics"), pick(cfg.LogsEndpoint, "/v1/logs")}
}

func (e *Exporter) resource(version string) *resource.Resource {
	attrs := map[string]string{"service.name": "mcphost", "service.version": version}
	for k, v := range e.cfg.ResourceAttributes {
		attrs[k] = v
	}
	if e.cfg.ServiceName != "" {
		attrs["service.name"] = e.cfg.ServiceName
	}
	kv := make([]attribute.KeyValue, 0, len(attrs))
	for k, v := range attrs {
		kv = append(kv, attribute.String(k, v))
	}
	return resource.NewSchemaless(kv...)
}

func (in *instruments) init(m metric.Meter) error {
	var errs [6]error
	in.opDuration, errs[0] = m.Float64Histogram("mcp.client.operation.duration", metric.WithUnit("s"),
		metric.WithDescription("The duration of an MCP request as the client sees it (one per attempt)."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	in.decisions, errs[1] = m.Int64Counter("mcphost.tool.decisions", metric.WithUnit("{decision}"),
		metric.WithDescription("The gate's decisions on tool calls, by verdict and tier."))
	in.asks, errs[2] = m.Int64Counter("mcphost.asks", metric.WithUnit("{ask}"),
		metric.WithDescription("Questions put to a person about a call, by answer."))
	in.askDuration, errs[3] = m.Float64Histogram("mcphost.ask.duration", metric.WithUnit("s"),
		metric.WithDescription("How long a person took to answer a question about a call."),
		metric.WithExplicitBucketBoundaries(0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600))
	in.tokenUsage, errs[4] = m.Int64Histogram("gen_ai.client.token.usage", metric.WithUnit("{token}"),
		metric.WithDescription("Tokens used by a model turn, by type."))
	in.turnDuration, errs[5] = m.Float64Histogram("gen_ai.client.operation.duration", metric.WithUnit("s"),
		metric.WithDescription("The duration of a model turn."), metric.WithExplicitBucketBoundaries(durationBuckets...))
	return errors.Join(errs[:]...)
}

func (e *Exporter) failed(err error) {
	e.failures.Add(1)
	e.mu.Lock()
	e.last = err
	e.mu.Unlock()
}

// Shutdown exports what is still queued and stops, waiting at most the
// configured flush timeout (never more than MaxFlushTimeout), whatever the
// collector does. It returns an error that says how export went when any
// export failed; the caller should only warn about it. It is safe to call
// more than once and on a nil Exporter.
func (e *Exporter) Shutdown() error {
	if e == nil {
		return nil
	}
	e.shutdown.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), e.cfg.flushTimeout())
		defer cancel()
		var wg sync.WaitGroup
		var errs [3]error
		wg.Go(func() { errs[0] = e.tp.Shutdown(ctx) })
		wg.Go(func() { errs[1] = e.mp.Shutdown(ctx) })
		wg.Go(func() { errs[2] = e.lp.Shutdown(ctx) })
		wg.Wait()
		err := errors.Join(errs[:]...)
		if n := e.failures.Load(); n > 0 && err == nil {
			e.mu.Lock()
			err = e.last
			e.mu.Unlock()
		}
		if err != nil {
			e.err = fmt.Errorf("telemetry: some records could not be exported over %s and were dropped (%v); the audit log has them all",
				e.cfg.Describe(), shortErr(err))
		}
	})
	return e.err
}

// shortErr is err's first line, bounded: an exporter's error may quote a
// collector's response.
func shortErr(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
