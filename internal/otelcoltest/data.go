package otelcoltest

import (
	"encoding/json"
	"strconv"
)

// Attrs are decoded OTLP attributes: string, int64, float64, bool, or
// []any of those.
type Attrs map[string]any

// Span is one exported span.
type Span struct {
	TraceID, SpanID, ParentSpanID string
	Name                          string
	Kind                          int
	StatusCode                    int
	Attrs, Resource               Attrs
}

// Event is one exported log record.
type Event struct {
	Name            string
	TraceID, SpanID string
	Attrs, Resource Attrs
}

// Point is one data point of a metric: Count for a histogram, Value for a
// sum.
type Point struct {
	Attrs Attrs
	Count int64
	Value float64
}

// Metric is one exported metric, its points from every export merged.
type Metric struct {
	Name, Unit string
	Points     []Point
}

// Data is everything the collector wrote.
type Data struct {
	Spans   []Span
	Events  []Event
	Metrics map[string]*Metric
}

// SpansNamed returns the spans with this name.
func (d *Data) SpansNamed(name string) []Span {
	var out []Span
	for _, s := range d.Spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// EventsNamed returns the log events with this event name.
func (d *Data) EventsNamed(name string) []Event {
	var out []Event
	for _, e := range d.Events {
		if e.Name == name {
			out = append(out, e)
		}
	}
	return out
}

type exportLine struct {
	ResourceSpans []struct {
		Resource   resourceJSON `json:"resource"`
		ScopeSpans []struct {
			Spans []struct {
				TraceID      string     `json:"traceId"`
				SpanID       string     `json:"spanId"`
				ParentSpanID string     `json:"parentSpanId"`
				Name         string     `json:"name"`
				Kind         int        `json:"kind"`
				Attributes   []attrJSON `json:"attributes"`
				Status       struct {
					Code int `json:"code"`
				} `json:"status"`
			} `json:"spans"`
		} `json:"scopeSpans"`
	} `json:"resourceSpans"`
	ResourceLogs []struct {
		Resource  resourceJSON `json:"resource"`
		ScopeLogs []struct {
			LogRecords []struct {
				EventName  string     `json:"eventName"`
				TraceID    string     `json:"traceId"`
				SpanID     string     `json:"spanId"`
				Attributes []attrJSON `json:"attributes"`
			} `json:"logRecords"`
		} `json:"scopeLogs"`
	} `json:"resourceLogs"`
	ResourceMetrics []struct {
		ScopeMetrics []struct {
			Metrics []struct {
				Name      string `json:"name"`
				Unit      string `json:"unit"`
				Histogram *struct {
					DataPoints []pointJSON `json:"dataPoints"`
				} `json:"histogram"`
				Sum *struct {
					DataPoints []pointJSON `json:"dataPoints"`
				} `json:"sum"`
			} `json:"metrics"`
		} `json:"scopeMetrics"`
	} `json:"resourceMetrics"`
}

type resourceJSON struct {
	Attributes []attrJSON `json:"attributes"`
}

type pointJSON struct {
	Attributes []attrJSON  `json:"attributes"`
	Count      json.Number `json:"count"`
	AsInt      json.Number `json:"asInt"`
	AsDouble   *float64    `json:"asDouble"`
}

type attrJSON struct {
	Key   string    `json:"key"`
	Value valueJSON `json:"value"`
}

type valueJSON struct {
	StringValue *string     `json:"stringValue"`
	IntValue    json.Number `json:"intValue"`
	DoubleValue *float64    `json:"doubleValue"`
	BoolValue   *bool       `json:"boolValue"`
	ArrayValue  *struct {
		Values []valueJSON `json:"values"`
	} `json:"arrayValue"`
}

func (v valueJSON) decode() any {
	switch {
	case v.StringValue != nil:
		return *v.StringValue
	case v.IntValue != "":
		n, _ := strconv.ParseInt(string(v.IntValue), 10, 64)
		return n
	case v.DoubleValue != nil:
		return *v.DoubleValue
	case v.BoolValue != nil:
		return *v.BoolValue
	case v.ArrayValue != nil:
		out := make([]any, len(v.ArrayValue.Values))
		for i, x := range v.ArrayValue.Values {
			out[i] = x.decode()
		}
		return out
	}
	return nil
}

func attrs(in []attrJSON) Attrs {
	out := Attrs{}
	for _, a := range in {
		out[a.Key] = a.Value.decode()
	}
	return out
}

func (d *Data) add(l *exportLine) {
	for _, rs := range l.ResourceSpans {
		res := attrs(rs.Resource.Attributes)
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				d.Spans = append(d.Spans, Span{TraceID: s.TraceID, SpanID: s.SpanID, ParentSpanID: s.ParentSpanID,
					Name: s.Name, Kind: s.Kind, StatusCode: s.Status.Code, Attrs: attrs(s.Attributes), Resource: res})
			}
		}
	}
	for _, rl := range l.ResourceLogs {
		res := attrs(rl.Resource.Attributes)
		for _, sl := range rl.ScopeLogs {
			for _, r := range sl.LogRecords {
				d.Events = append(d.Events, Event{Name: r.EventName, TraceID: r.TraceID, SpanID: r.SpanID, Attrs: attrs(r.Attributes), Resource: res})
			}
		}
	}
	if d.Metrics == nil {
		d.Metrics = map[string]*Metric{}
	}
	for _, rm := range l.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				dm := d.Metrics[m.Name]
				if dm == nil {
					dm = &Metric{Name: m.Name, Unit: m.Unit}
					d.Metrics[m.Name] = dm
				}
				var pts []pointJSON
				if m.Histogram != nil {
					pts = m.Histogram.DataPoints
				}
				if m.Sum != nil {
					pts = m.Sum.DataPoints
				}
				for _, p := range pts {
					pt := Point{Attrs: attrs(p.Attributes)}
					pt.Count, _ = p.Count.Int64()
					if p.AsDouble != nil {
						pt.Value = *p.AsDouble
					} else if n, err := p.AsInt.Int64(); err == nil {
						pt.Value = float64(n)
					}
					dm.Points = append(dm.Points, pt)
				}
			}
		}
	}
}
