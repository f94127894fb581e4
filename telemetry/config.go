package telemetry

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"
)

// Config says where and how to export. The zero Config exports nothing.
type Config struct {
	// Endpoint is the collector's OTLP/HTTP base URL
	// ("http://localhost:4318"); the signals go to /v1/traces, /v1/metrics
	// and /v1/logs under it. "" turns export off.
	Endpoint string
	// TracesEndpoint, MetricsEndpoint and LogsEndpoint, if set, are a
	// signal's full URL, as OTEL_EXPORTER_OTLP_<SIGNAL>_ENDPOINT.
	TracesEndpoint, MetricsEndpoint, LogsEndpoint string
	// Headers are sent with every export (an API key for the collector).
	// They are never exported or printed.
	Headers map[string]string
	// ServiceName is service.name; "" means "mcphost".
	ServiceName string
	// ResourceAttributes are added to the resource (OTEL_RESOURCE_ATTRIBUTES).
	ResourceAttributes map[string]string
	// FlushTimeout bounds how long Shutdown waits for the last export;
	// 0 means DefaultFlushTimeout, and it is never more than MaxFlushTimeout.
	FlushTimeout time.Duration
	// ExportTimeout bounds one export request; 0 means the flush timeout.
	ExportTimeout time.Duration
	// Server, if set, describes a configured server by name, for the
	// conventions' network.transport, server.address and server.port.
	Server func(name string) (ServerInfo, bool)
	// ArgsKey, if set, keys the HMAC of a call's arguments on its guardrail
	// span (guardrail.go); without it no hash of them goes there.
	ArgsKey []byte
}

// ServerInfo is how a server is reached: Transport is client.TransportStdio,
// TransportHTTP or TransportSSE; URL is set for the HTTP ones.
type ServerInfo struct {
	Transport string
	URL       string
}

// DefaultFlushTimeout is how long a command waits at exit, at most, for its
// telemetry to reach the collector.
const DefaultFlushTimeout = 2 * time.Second

// MaxFlushTimeout is the longest a command may wait at exit for export.
const MaxFlushTimeout = 2 * time.Second

// Enabled reports whether c exports anything.
func (c Config) Enabled() bool {
	return c.Endpoint != "" || c.TracesEndpoint != "" || c.MetricsEndpoint != "" || c.LogsEndpoint != ""
}

// flushTimeout is c's bound on the exit flush.
func (c Config) flushTimeout() time.Duration {
	if c.FlushTimeout <= 0 {
		return DefaultFlushTimeout
	}
	return min(c.FlushTimeout, MaxFlushTimeout)
}

// FromEnv reads the standard OpenTelemetry variables through getenv:
// OTEL_EXPORTER_OTLP_ENDPOINT (and the per-signal _TRACES_, _METRICS_,
// _LOGS_ endpoints), OTEL_EXPORTER_OTLP_PROTOCOL, OTEL_EXPORTER_OTLP_HEADERS,
// OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, and OTEL_SDK_DISABLED. With no
// endpoint set, or OTEL_SDK_DISABLED=true, the Config exports nothing. A
// protocol other than http/protobuf is an error that says what to set.
func FromEnv(getenv func(string) string) (Config, error) {
	var c Config
	if sdkDisabled(getenv) {
		return c, nil
	}
	c.Endpoint = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"))
	c.TracesEndpoint = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
	c.MetricsEndpoint = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"))
	c.LogsEndpoint = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"))
	if !c.Enabled() {
		return Config{}, nil
	}
	if p := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL")); p != "" && p != "http/protobuf" {
		return Config{}, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%q is not supported: mcphost exports OTLP over http/protobuf; "+
			"unset it or set it to http/protobuf, and point OTEL_EXPORTER_OTLP_ENDPOINT at the collector's OTLP/HTTP port (4318 by default)", p)
	}
	var err error
	if c.Headers, err = ParseList(getenv("OTEL_EXPORTER_OTLP_HEADERS")); err != nil {
		return Config{}, fmt.Errorf("OTEL_EXPORTER_OTLP_HEADERS: %w", err)
	}
	if c.ResourceAttributes, err = ParseList(getenv("OTEL_RESOURCE_ATTRIBUTES")); err != nil {
		return Config{}, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	c.ServiceName = strings.TrimSpace(getenv("OTEL_SERVICE_NAME"))
	return c, nil
}

// Resolve is the export a command uses: the OTEL_* variables (FromEnv) when
// they name an endpoint, else the config file's endpoint and headers (""
// for none), with the service name and resource attributes still from the
// variables. OTEL_SDK_DISABLED=true turns both off.
func Resolve(getenv func(string) string, endpoint string, headers map[string]string) (Config, error) {
	c, err := FromEnv(getenv)
	if err != nil || c.Enabled() || endpoint == "" {
		return c, err
	}
	if sdkDisabled(getenv) {
		return Config{}, nil
	}
	return Required(getenv, endpoint, headers) // the file's, described by the variables
}

// sdkDisabled reports whether OTEL_SDK_DISABLED turns all export off.
func sdkDisabled(getenv func(string) string) bool {
	return strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true")
}

// ParseList parses the W3C-baggage-like list of the OpenTelemetry variables,
// "key1=value1,key2=value2", values percent-decoded. An entry without "="
// is an error that names its position, never its value (it may be a
// secret).
func ParseList(s string) (map[string]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	out := map[string]string{}
	for i, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("entry %d is not key=value", i+1)
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("entry %d (%s): the value is not percent-encoded correctly", i+1, k)
		}
		out[k] = dv
	}
	return out, nil
}

// Describe says where c exports to, for a person: the endpoints and the
// names of the headers, never their values.
func (c Config) Describe() string {
	if !c.Enabled() {
		return "off"
	}
	var parts []string
	for _, e := range []struct{ name, url string }{{"", c.Endpoint}, {"traces ", c.TracesEndpoint}, {"metrics ", c.MetricsEndpoint}, {"logs ", c.LogsEndpoint}} {
		if e.url != "" {
			parts = append(parts, e.name+redactURL(e.url))
		}
	}
	if len(c.Headers) > 0 {
		names := make([]string, 0, len(c.Headers))
		for k := range c.Headers {
			names = append(names, k)
		}
		sort.Strings(names)
		parts = append(parts, "headers "+strings.Join(names, ", "))
	}
	return "OTLP/HTTP to " + strings.Join(parts, "; ")
}

// redactURL drops a URL's user information and query, which may hold
// credentials.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(an unparsable URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// Required is the configuration of an export an administrator requires
// (the managed policy's "telemetry"): its endpoint and headers, which no
// OTEL_* variable replaces and OTEL_SDK_DISABLED does not switch off. Only
// the service name and resource attributes still come from the variables,
// since they describe the sender, not where it sends.
func Required(getenv func(string) string, endpoint string, headers map[string]string) (Config, error) {
	c := Config{Endpoint: endpoint, Headers: headers, ServiceName: strings.TrimSpace(getenv("OTEL_SERVICE_NAME"))}
	var err error
	if c.ResourceAttributes, err = ParseList(getenv("OTEL_RESOURCE_ATTRIBUTES")); err != nil {
		return Config{}, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	return c, nil
}
