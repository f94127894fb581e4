package config

import (
	"strings"
	"testing"
)

// TestTelemetryKey: the user's "telemetry" names an http(s) endpoint and
// headers whose values may come from the environment; a project file's is
// ignored with a warning; a wrong shape is an error at its place.
func TestTelemetryKey(t *testing.T) {
	env := func(k string) string { return map[string]string{"OTEL_TOKEN": "tok-1"}[k] }
	r, err := parse("c.json", []byte(`{"telemetry": {"endpoint": "http://collector:4318", "allowInsecureHTTP": true, "headers": {"Authorization": "Bearer ${OTEL_TOKEN}"}}}`), SourceUser, env)
	if err != nil {
		t.Fatal(err)
	}
	if tl := r.cfg.Telemetry; tl == nil || tl.Endpoint != "http://collector:4318" || tl.Headers["Authorization"] != "Bearer tok-1" {
		t.Fatalf("telemetry = %+v", r.cfg.Telemetry)
	}

	r, err = parse(".mcp.json", []byte(`{"telemetry": {"endpoint": "http://evil.example:4318"}}`), SourceProject, env)
	if err != nil {
		t.Fatal(err)
	}
	if r.cfg.Telemetry != nil || len(r.warnings) != 1 || !strings.Contains(r.warnings[0].Message, `"telemetry" is ignored in a project file`) {
		t.Errorf("a project file's telemetry: %+v, warnings %v", r.cfg.Telemetry, r.warnings)
	}

	for _, c := range []struct{ data, want string }{
		{`{"telemetry": "http://c:4318"}`, `c.json:1:15: expected an object for "telemetry"`},
		{`{"telemetry": {"headers": {}}}`, `"telemetry" needs an "endpoint"`},
		{`{"telemetry": {"endpoint": "collector:4318"}}`, `must be an http or https URL`},
		{`{"telemetry": {"endpoint": "http://c", "headers": {"A": "${NOPE}"}}}`, `NOPE`},
		{`{"telemetry": {"endpoint": "http://c", "headers": {"A B": "x"}}}`, `invalid header name`},
		{`{"telemetry": {"endpoint": "http://collector:4318", "headers": {"Authorization": "Bearer x"}}}`,
			`c.json:1:15: "telemetry" would send its "headers" over plain http to collector:4318, which is not this machine`},
		{`{"telemetry": {"endpoint": "http://u:p@collector:4318"}}`, `would send the user and password in its URL over plain http`},
		{`{"telemetry": {"endpoint": "http://collector:4318", "allowInsecureHTTP": "yes", "headers": {"A": "x"}}}`, `"allowInsecureHTTP"`},
	} {
		_, err := parse("c.json", []byte(c.data), SourceUser, env)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.data, err, c.want)
		}
	}
}

// TestTelemetryCredentialsNotSentInClear: a telemetry setting's headers
// cross the network in clear only where that harms no one (this machine,
// https) or where the person's own setting says so; the same holds for a
// team's managed policy.
func TestTelemetryCredentialsNotSentInClear(t *testing.T) {
	for _, ok := range []string{
		`{"telemetry": {"endpoint": "https://collector:4318", "headers": {"A": "x"}}}`,
		`{"telemetry": {"endpoint": "http://localhost:4318", "headers": {"A": "x"}}}`,
		`{"telemetry": {"endpoint": "http://127.0.0.1:4318", "headers": {"A": "x"}}}`,
		`{"telemetry": {"endpoint": "http://collector:4318"}}`,
		`{"telemetry": {"endpoint": "http://collector:4318", "headers": {"A": "x"}, "allowInsecureHTTP": true}}`,
	} {
		if _, err := parse("c.json", []byte(ok), SourceUser, func(string) string { return "" }); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	_, err := ParseManaged("managed.json", []byte(`{"telemetry": {"endpoint": "http://collector:4318", "headers": {"A": "x"}}}`))
	if err == nil || !strings.Contains(err.Error(), `over plain http to collector:4318`) {
		t.Errorf("managed telemetry with headers in clear: %v", err)
	}
	if _, err := ParseManaged("managed.json", []byte(`{"telemetry": {"endpoint": "http://collector:4318", "headers": {"A": "x"}, "allowInsecureHTTP": true}}`)); err != nil {
		t.Errorf("managed telemetry that allows it: %v", err)
	}
}
