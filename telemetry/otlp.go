package telemetry

// The OTLP/HTTP protobuf encoding of spans, metrics and log records, written
// here rather than taken from the official OTLP exporters: those link the
// generated OTLP service packages, and with them gRPC and the protobuf
// registry, whose package initialisation cost every mcphost command about
// 6 MiB of resident memory and 14 MiB of binary even with telemetry off
// (measured; see the README). The SDK's processors, batching and
// aggregation are used as they are; only the last step, bytes on the wire,
// is ours. Field numbers are those of opentelemetry-proto v1 (common,
// resource, trace, logs, metrics); the tests send what this writes to a real
// Collector and read it back.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/protobuf/encoding/protowire"
)

// pb builds one protobuf message.
type pb struct{ b []byte }

func (p *pb) str(f protowire.Number, s string) {
	if s != "" {
		p.b = protowire.AppendTag(p.b, f, protowire.BytesType)
		p.b = protowire.AppendString(p.b, s)
	}
}

func (p *pb) bytes(f protowire.Number, v []byte) {
	if len(v) > 0 {
		p.b = protowire.AppendTag(p.b, f, protowire.BytesType)
		p.b = protowire.AppendBytes(p.b, v)
	}
}

func (p *pb) varint(f protowire.Number, v uint64) {
	if v != 0 {
		p.b = protowire.AppendTag(p.b, f, protowire.VarintType)
		p.b = protowire.AppendVarint(p.b, v)
	}
}

func (p *pb) fixed64(f protowire.Number, v uint64) {
	if v != 0 {
		p.b = protowire.AppendTag(p.b, f, protowire.Fixed64Type)
		p.b = protowire.AppendFixed64(p.b, v)
	}
}

func (p *pb) fixed32(f protowire.Number, v uint32) {
	if v != 0 {
		p.b = protowire.AppendTag(p.b, f, protowire.Fixed32Type)
		p.b = protowire.AppendFixed32(p.b, v)
	}
}

// double writes v even when it is zero: the fields it is used for are
// optional or oneof members, whose presence matters.
func (p *pb) double(f protowire.Number, v float64) {
	p.b = protowire.AppendTag(p.b, f, protowire.Fixed64Type)
	p.b = protowire.AppendFixed64(p.b, math.Float64bits(v))
}

func (p *pb) msg(f protowire.Number, fill func(*pb)) {
	var sub pb
	fill(&sub)
	p.b = protowire.AppendTag(p.b, f, protowire.BytesType)
	p.b = protowire.AppendBytes(p.b, sub.b)
}

func unixNano(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixNano())
}

// anyValue writes an AnyValue; a oneof member is written even when zero.
func anyValue(p *pb, v attribute.Value) {
	switch v.Type() {
	case attribute.BOOL:
		p.b = protowire.AppendTag(p.b, 2, protowire.VarintType)
		p.b = protowire.AppendVarint(p.b, protowire.EncodeBool(v.AsBool()))
	case attribute.INT64:
		p.b = protowire.AppendTag(p.b, 3, protowire.VarintType)
		p.b = protowire.AppendVarint(p.b, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		p.double(4, v.AsFloat64())
	case attribute.STRING:
		p.b = protowire.AppendTag(p.b, 1, protowire.BytesType)
		p.b = protowire.AppendString(p.b, v.AsString())
	case attribute.BYTESLICE:
		p.b = protowire.AppendTag(p.b, 7, protowire.BytesType)
		p.b = protowire.AppendBytes(p.b, v.AsByteSlice())
	case attribute.BOOLSLICE:
		array(p, len(v.AsBoolSlice()), func(i int) attribute.Value { return attribute.BoolValue(v.AsBoolSlice()[i]) })
	case attribute.INT64SLICE:
		array(p, len(v.AsInt64Slice()), func(i int) attribute.Value { return attribute.Int64Value(v.AsInt64Slice()[i]) })
	case attribute.FLOAT64SLICE:
		array(p, len(v.AsFloat64Slice()), func(i int) attribute.Value { return attribute.Float64Value(v.AsFloat64Slice()[i]) })
	case attribute.STRINGSLICE:
		array(p, len(v.AsStringSlice()), func(i int) attribute.Value { return attribute.StringValue(v.AsStringSlice()[i]) })
	case attribute.SLICE:
		array(p, len(v.AsSlice()), func(i int) attribute.Value { return v.AsSlice()[i] })
	case attribute.MAP:
		p.msg(6, func(l *pb) { keyValues(l, 1, v.AsMap()) })
	case attribute.EMPTY:
	default:
		p.b = protowire.AppendTag(p.b, 1, protowire.BytesType)
		p.b = protowire.AppendString(p.b, v.Emit())
	}
}

// array writes an ArrayValue (AnyValue field 5) of n values.
func array(p *pb, n int, at func(int) attribute.Value) {
	p.msg(5, func(a *pb) {
		for i := range n {
			a.msg(1, func(x *pb) { anyValue(x, at(i)) })
		}
	})
}

// keyValues writes each attribute as a KeyValue in field f.
func keyValues(p *pb, f protowire.Number, kvs []attribute.KeyValue) {
	for _, kv := range kvs {
		p.msg(f, func(m *pb) {
			m.str(1, string(kv.Key))
			m.msg(2, func(v *pb) { anyValue(v, kv.Value) })
		})
	}
}

func resourceMsg(p *pb, f protowire.Number, r *resource.Resource) {
	p.msg(f, func(m *pb) {
		if r != nil {
			keyValues(m, 1, r.Attributes())
		}
	})
}

func scopeMsg(p *pb, f protowire.Number, s instrumentation.Scope) {
	p.msg(f, func(m *pb) {
		m.str(1, s.Name)
		m.str(2, s.Version)
		keyValues(m, 3, s.Attributes.ToSlice())
	})
}

// group keeps items of one resource and scope together, in first-seen
// order.
type group[T any] struct {
	res   *resource.Resource
	scope instrumentation.Scope
	items []T
}

func groupBy[T any](items []T, res func(T) *resource.Resource, scope func(T) instrumentation.Scope) []*group[T] {
	var out []*group[T]
	for _, it := range items {
		r, s := res(it), scope(it)
		var g *group[T]
		for _, x := range out {
			if x.res == r && x.scope.Name == s.Name && x.scope.Version == s.Version {
				g = x
				break
			}
		}
		if g == nil {
			g = &group[T]{res: r, scope: s}
			out = append(out, g)
		}
		g.items = append(g.items, it)
	}
	return out
}

// encodeSpans is an ExportTraceServiceRequest.
func encodeSpans(spans []sdktrace.ReadOnlySpan) []byte {
	var req pb
	for _, g := range groupBy(spans, sdktrace.ReadOnlySpan.Resource, sdktrace.ReadOnlySpan.InstrumentationScope) {
		req.msg(1, func(rs *pb) { // ResourceSpans
			resourceMsg(rs, 1, g.res)
			rs.msg(2, func(ss *pb) { // ScopeSpans
				scopeMsg(ss, 1, g.scope)
				for _, s := range g.items {
					ss.msg(2, func(m *pb) { spanMsg(m, s) })
				}
			})
		})
	}
	return req.b
}

func spanMsg(m *pb, s sdktrace.ReadOnlySpan) {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	m.bytes(1, tid[:])
	m.bytes(2, sid[:])
	m.str(3, sc.TraceState().String())
	if p := s.Parent(); p.SpanID().IsValid() {
		pid := p.SpanID()
		m.bytes(4, pid[:])
	}
	m.str(5, s.Name())
	m.varint(6, uint64(s.SpanKind())) // the SDK's kinds number as OTLP's
	m.fixed64(7, unixNano(s.StartTime()))
	m.fixed64(8, unixNano(s.EndTime()))
	keyValues(m, 9, s.Attributes())
	m.varint(10, uint64(s.DroppedAttributes()))
	for _, e := range s.Events() {
		m.msg(11, func(ev *pb) {
			ev.fixed64(1, unixNano(e.Time))
			ev.str(2, e.Name)
			keyValues(ev, 3, e.Attributes)
			ev.varint(4, uint64(e.DroppedAttributeCount))
		})
	}
	m.varint(12, uint64(s.DroppedEvents()))
	for _, l := range s.Links() {
		m.msg(13, func(lk *pb) {
			ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
			lk.bytes(1, ltid[:])
			lk.bytes(2, lsid[:])
			lk.str(3, l.SpanContext.TraceState().String())
			keyValues(lk, 4, l.Attributes)
			lk.varint(5, uint64(l.DroppedAttributeCount))
		})
	}
	m.varint(14, uint64(s.DroppedLinks()))
	if st := s.Status(); st.Code != codes.Unset {
		m.msg(15, func(sm *pb) {
			sm.str(2, st.Description)
			code := uint64(1) // STATUS_CODE_OK
			if st.Code == codes.Error {
				code = 2
			}
			sm.varint(3, code)
		})
	}
	m.fixed32(16, uint32(sc.TraceFlags())|0x100) // the parent's remoteness is known: it is local
}

// encodeLogs is an ExportLogsServiceRequest.
func encodeLogs(recs []sdklog.Record) []byte {
	ptrs := make([]*sdklog.Record, len(recs))
	for i := range recs {
		ptrs[i] = &recs[i]
	}
	var req pb
	for _, g := range groupBy(ptrs, (*sdklog.Record).Resource, (*sdklog.Record).InstrumentationScope) {
		req.msg(1, func(rl *pb) { // ResourceLogs
			resourceMsg(rl, 1, g.res)
			rl.msg(2, func(sl *pb) { // ScopeLogs
				scopeMsg(sl, 1, g.scope)
				for _, r := range g.items {
					sl.msg(2, func(m *pb) { logMsg(m, r) })
				}
			})
		})
	}
	return req.b
}

func logMsg(m *pb, r *sdklog.Record) {
	m.fixed64(1, unixNano(r.Timestamp()))
	m.varint(2, uint64(r.Severity())) // the API's severities number as OTLP's
	m.str(3, r.SeverityText())
	if body := r.Body(); body.Type() != attribute.EMPTY {
		m.msg(5, func(v *pb) { anyValue(v, body) })
	}
	var kvs []attribute.KeyValue
	r.WalkAttributes(func(kv attribute.KeyValue) bool { kvs = append(kvs, kv); return true })
	keyValues(m, 6, kvs)
	m.varint(7, uint64(r.DroppedAttributes()))
	m.fixed32(8, uint32(r.TraceFlags()))
	if tid := r.TraceID(); tid.IsValid() {
		m.bytes(9, tid[:])
	}
	if sid := r.SpanID(); sid.IsValid() {
		m.bytes(10, sid[:])
	}
	m.fixed64(11, unixNano(r.ObservedTimestamp()))
	m.str(12, r.EventName())
}

// encodeMetrics is an ExportMetricsServiceRequest. It writes the kinds of
// data mcphost records (sums, gauges and explicit-bucket histograms);
// others are left out.
func encodeMetrics(rm *metricdata.ResourceMetrics) []byte {
	var req pb
	req.msg(1, func(r *pb) { // ResourceMetrics
		resourceMsg(r, 1, rm.Resource)
		for _, sm := range rm.ScopeMetrics {
			r.msg(2, func(s *pb) { // ScopeMetrics
				scopeMsg(s, 1, sm.Scope)
				for _, met := range sm.Metrics {
					s.msg(2, func(m *pb) { metricMsg(m, met) })
				}
			})
		}
	})
	return req.b
}

// temporality maps the SDK's temporality to OTLP's AggregationTemporality.
func temporality(t metricdata.Temporality) uint64 {
	switch t {
	case metricdata.DeltaTemporality:
		return 1
	case metricdata.CumulativeTemporality:
		return 2
	}
	return 0
}

func metricMsg(m *pb, met metricdata.Metrics) {
	m.str(1, met.Name)
	m.str(2, met.Description)
	m.str(3, met.Unit)
	switch d := met.Data.(type) {
	case metricdata.Sum[int64]:
		m.msg(7, func(s *pb) {
			numberPoints(s, d.DataPoints, func(p *pb, v int64) { intValue(p, v) })
			s.varint(2, temporality(d.Temporality))
			s.varint(3, protowire.EncodeBool(d.IsMonotonic))
		})
	case metricdata.Sum[float64]:
		m.msg(7, func(s *pb) {
			numberPoints(s, d.DataPoints, func(p *pb, v float64) { p.double(4, v) })
			s.varint(2, temporality(d.Temporality))
			s.varint(3, protowire.EncodeBool(d.IsMonotonic))
		})
	case metricdata.Gauge[int64]:
		m.msg(5, func(g *pb) { numberPoints(g, d.DataPoints, func(p *pb, v int64) { intValue(p, v) }) })
	case metricdata.Gauge[float64]:
		m.msg(5, func(g *pb) { numberPoints(g, d.DataPoints, func(p *pb, v float64) { p.double(4, v) }) })
	case metricdata.Histogram[int64]:
		m.msg(9, func(h *pb) {
			histogramPoints(h, d.DataPoints, func(v int64) float64 { return float64(v) })
			h.varint(2, temporality(d.Temporality))
		})
	case metricdata.Histogram[float64]:
		m.msg(9, func(h *pb) {
			histogramPoints(h, d.DataPoints, func(v float64) float64 { return v })
			h.varint(2, temporality(d.Temporality))
		})
	}
}

// intValue writes NumberDataPoint.as_int (sfixed64), even when zero.
func intValue(p *pb, v int64) {
	p.b = protowire.AppendTag(p.b, 6, protowire.Fixed64Type)
	p.b = protowire.AppendFixed64(p.b, uint64(v))
}

func numberPoints[N int64 | float64](m *pb, pts []metricdata.DataPoint[N], value func(*pb, N)) {
	for _, dp := range pts {
		m.msg(1, func(p *pb) {
			p.fixed64(2, unixNano(dp.StartTime))
			p.fixed64(3, unixNano(dp.Time))
			value(p, dp.Value)
			keyValues(p, 7, dp.Attributes.ToSlice())
		})
	}
}

func histogramPoints[N int64 | float64](m *pb, pts []metricdata.HistogramDataPoint[N], f func(N) float64) {
	for _, dp := range pts {
		m.msg(1, func(p *pb) {
			p.fixed64(2, unixNano(dp.StartTime))
			p.fixed64(3, unixNano(dp.Time))
			p.b = protowire.AppendTag(p.b, 4, protowire.Fixed64Type) // count, even when zero
			p.b = protowire.AppendFixed64(p.b, dp.Count)
			p.double(5, f(dp.Sum))
			if len(dp.BucketCounts) > 0 {
				var packed []byte
				for _, c := range dp.BucketCounts {
					packed = protowire.AppendFixed64(packed, c)
				}
				p.bytes(6, packed)
			}
			if len(dp.Bounds) > 0 {
				var packed []byte
				for _, b := range dp.Bounds {
					packed = protowire.AppendFixed64(packed, math.Float64bits(b))
				}
				p.bytes(7, packed)
			}
			keyValues(p, 9, dp.Attributes.ToSlice())
			if v, ok := dp.Min.Value(); ok {
				p.double(11, f(v))
			}
			if v, ok := dp.Max.Value(); ok {
				p.double(12, f(v))
			}
		})
	}
}

// sender posts OTLP/HTTP protobuf requests to one URL.
type sender struct {
	url     string
	headers map[string]string
	timeout time.Duration
	client  *http.Client
}

// maxResponse bounds what is read of a collector's answer.
const maxResponse = 64 << 10

func (s *sender) send(ctx context.Context, body []byte) error {
	if len(body) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for k, v := range s.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := s.client.Do(req)
	if err != nil {
		// The client's error names the whole URL, user and query included:
		// keep only its cause beside the redacted one.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("export to %s: %w", redactURL(s.url), err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponse))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("export to %s: the collector answered %s", redactURL(s.url), resp.Status)
	}
	return nil
}

// spanExporter, logExporter and metricExporter are the SDK's exporters over
// a sender.
type spanExporter struct{ s *sender }

func (e spanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	return e.s.send(ctx, encodeSpans(spans))
}
func (spanExporter) Shutdown(context.Context) error { return nil }

type logExporter struct{ s *sender }

func (e logExporter) Export(ctx context.Context, recs []sdklog.Record) error {
	return e.s.send(ctx, encodeLogs(recs))
}
func (logExporter) Shutdown(context.Context) error   { return nil }
func (logExporter) ForceFlush(context.Context) error { return nil }

type metricExporter struct{ s *sender }

func (metricExporter) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return sdkmetric.DefaultTemporalitySelector(k)
}
func (metricExporter) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return sdkmetric.DefaultAggregationSelector(k)
}
func (e metricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	return e.s.send(ctx, encodeMetrics(rm))
}
func (metricExporter) ForceFlush(context.Context) error { return nil }
func (metricExporter) Shutdown(context.Context) error   { return nil }
