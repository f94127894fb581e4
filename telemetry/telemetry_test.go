package telemetry

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestFromEnv(t *testing.T) {
	c, err := FromEnv(env(nil))
	if err != nil || c.Enabled() {
		t.Fatalf("no variables: %+v, %v; want off", c, err)
	}
	c, err = FromEnv(env(map[string]string{"OTEL_SERVICE_NAME": "x", "OTEL_EXPORTER_OTLP_HEADERS": "a=b"}))
	if err != nil || c.Enabled() {
		t.Fatalf("no endpoint: %+v, %v; want off", c, err)
	}
	c, err = FromEnv(env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}))
	if err != nil || c.Enabled() {
		t.Fatalf("OTEL_SDK_DISABLED: %+v, %v; want off", c, err)
	}
	c, err = FromEnv(env(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
		"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
		"OTEL_EXPORTER_OTLP_HEADERS":  "Authorization=Bearer%20tok, x-team = a",
		"OTEL_SERVICE_NAME":           "svc",
		"OTEL_RESOURCE_ATTRIBUTES":    "team=core,env=ci",
	}))
	if err != nil || !c.Enabled() {
		t.Fatalf("endpoint set: %+v, %v", c, err)
	}
	if c.Headers["Authorization"] != "Bearer tok" || c.Headers["x-team"] != "a" || c.ServiceName != "svc" || c.ResourceAttributes["env"] != "ci" {
		t.Errorf("parsed %+v", c)
	}
	if _, err := FromEnv(env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})); err == nil || !strings.Contains(err.Error(), "http/protobuf") {
		t.Errorf("grpc: %v; want an error naming http/protobuf", err)
	}
	_, err = FromEnv(env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_HEADERS": "ok=1,secretvalue"}))
	if err == nil || strings.Contains(err.Error(), "secretvalue") || !strings.Contains(err.Error(), "entry 2") {
		t.Errorf("malformed headers: %v; want an error naming the entry, not its text", err)
	}
}

func TestDescribeShowsNoSecret(t *testing.T) {
	c := Config{Endpoint: "https://user:pw@c.example:4318/?token=tk", Headers: map[string]string{"Authorization": "Bearer s3"}}
	d := c.Describe()
	for _, secret := range []string{"pw", "tk", "s3", "user"} {
		if strings.Contains(d, secret) {
			t.Errorf("Describe() = %q shows %q", d, secret)
		}
	}
	if !strings.Contains(d, "c.example:4318") || !strings.Contains(d, "headers Authorization") {
		t.Errorf("Describe() = %q; want the host and the header's name", d)
	}
}

func TestStartOffIsNil(t *testing.T) {
	e, err := Start(Config{}, "v")
	if e != nil || err != nil {
		t.Fatalf("Start(off) = %v, %v; want nil, nil", e, err)
	}
	if err := e.Shutdown(); err != nil {
		t.Fatal(err)
	}
}

// TestSlowCollectorNeverDelays: with a collector that never answers, every
// observer call returns at once (the test would hang otherwise), far more
// records than the queues hold are dropped rather than waited for, and
// Shutdown returns by its bound while the collector still holds the
// request: the bound, not the collector, ended the wait. Each export may
// take an hour here, so only Shutdown's own bound can end it; the watchdog
// is ten times that bound, loose enough never to fire on a slow machine.
func TestSlowCollectorNeverDelays(t *testing.T) {
	release := make(chan struct{})
	var started atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started.Add(1)
		<-release
	}))
	defer srv.Close()
	defer close(release)

	e, err := Start(Config{Endpoint: srv.URL, FlushTimeout: 300 * time.Millisecond, ExportTimeout: time.Hour}, "test")
	if err != nil {
		t.Fatal(err)
	}
	tool := &client.Tool{Server: "s", Name: "t", Hash: "h"}
	for i := 0; i < 2500; i++ { // more than a queue holds (2048)
		ctx := e.CallStarted(context.Background(), "c", "s", "t", json.RawMessage(`{"a":1}`))
		actx := e.AttemptStarted(ctx, 1)
		e.AttemptDone(actx, host.Attempt{N: 1, Outcome: client.OutcomeSuccess}, &client.CallResult{})
		e.Asked(ctx, &host.Question{Server: "s", Tool: tool}, host.Answer{Approve: true}, nil, time.Second)
		e.CallDone(ctx, &host.Result{CallID: "c", Status: host.StatusSuccess, Decision: decide.Decision{Verdict: decide.Allow}}, "h")
		e.Tainted(host.Taint{PrivateRead: true})
	}
	done := make(chan error, 1)
	go func() { done <- e.Shutdown() }()
	select {
	case err = <-done:
	case <-time.After(10 * MaxFlushTimeout):
		t.Fatalf("Shutdown did not return within %v with a hanging collector", 10*MaxFlushTimeout)
	}
	if err == nil || !strings.Contains(err.Error(), "could not be exported") {
		t.Errorf("Shutdown with a hanging collector = %v; want the export warning", err)
	}
	if started.Load() == 0 {
		t.Fatalf("nothing was sent to the collector")
	}
	if e.Shutdown() != err {
		t.Errorf("a second Shutdown did not return the first one's result")
	}
}

// TestExportErrorNamesNoSecretOfTheURL: when the collector cannot be
// reached, the warning names the endpoint without its user, password or
// query, which the HTTP client's own error would carry.
func TestExportErrorNamesNoSecretOfTheURL(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there
	e, err := Start(Config{Endpoint: "http://someone:pw-5e1@" + addr + "/otlp?key=q-77c1", FlushTimeout: 2 * time.Second}, "test")
	if err != nil {
		t.Fatal(err)
	}
	ctx := e.CallStarted(context.Background(), "c", "s", "t", json.RawMessage(`{}`))
	e.CallDone(ctx, &host.Result{CallID: "c", Status: host.StatusSuccess, Decision: decide.Decision{Verdict: decide.Allow}}, "h")
	err = e.Shutdown()
	if err == nil {
		t.Fatal("Shutdown with no collector listening reported no failure")
	}
	for _, secret := range []string{"someone", "pw-5e1", "q-77c1"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the export warning %q shows %q", err, secret)
		}
	}
}

func TestFlushTimeoutIsBounded(t *testing.T) {
	for _, c := range []struct{ in, want time.Duration }{{0, DefaultFlushTimeout}, {time.Second, time.Second}, {time.Hour, MaxFlushTimeout}} {
		if got := (Config{FlushTimeout: c.in}).flushTimeout(); got != c.want {
			t.Errorf("flushTimeout(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// TestResolve: the variables win over the config file's endpoint; without
// them the file's endpoint and headers are used, with the service name
// still from the variables; OTEL_SDK_DISABLED turns both off.
func TestResolve(t *testing.T) {
	hdr := map[string]string{"k": "v"}
	c, err := Resolve(env(map[string]string{"OTEL_SERVICE_NAME": "svc"}), "http://file:4318", hdr)
	if err != nil || c.Endpoint != "http://file:4318" || c.Headers["k"] != "v" || c.ServiceName != "svc" {
		t.Errorf("file endpoint: %+v, %v", c, err)
	}
	c, err = Resolve(env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://env:4318"}), "http://file:4318", hdr)
	if err != nil || c.Endpoint != "http://env:4318" || c.Headers != nil {
		t.Errorf("variables and file: %+v, %v; want the variables' alone", c, err)
	}
	c, err = Resolve(env(map[string]string{"OTEL_SDK_DISABLED": "true"}), "http://file:4318", hdr)
	if err != nil || c.Enabled() {
		t.Errorf("OTEL_SDK_DISABLED with a file endpoint: %+v, %v; want off", c, err)
	}
	if c, err := Resolve(env(nil), "", nil); err != nil || c.Enabled() {
		t.Errorf("nothing configured: %+v, %v; want off", c, err)
	}
}
