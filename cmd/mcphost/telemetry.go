package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/mcphost/mcphost/telemetry"
)

// sessionTelemetry is a session's OpenTelemetry export, nil when off.
type sessionTelemetry struct {
	exp  *telemetry.Exporter
	warn func(string)

	mu   sync.Mutex
	ends []func() // spans still open: ended before the flush
}

// startTelemetry starts the export the managed policy requires, else the
// one the standard OTEL_* variables or the config's "telemetry" key
// configure (telemetry.Resolve), or returns nil
// when none is: then nothing of the SDK runs. A configuration that cannot
// be used is a warning, never a failure: telemetry never stops a command.
func (st *setup) startTelemetry(s *streams) *sessionTelemetry {
	cfg, err := st.telemetryConfig(s.Getenv)
	if err == nil && !cfg.Enabled() {
		return nil
	}
	warn := func(msg string) { fmt.Fprintln(s.Err, "mcphost: warning: "+sanitize.Line(msg)) }
	if err != nil {
		warn(err.Error() + "; nothing is exported")
		return nil
	}
	cfg.Server = st.serverInfo
	if cfg.ArgsKey, err = telemetry.LoadArgsKey(s.Getenv, st.stateDir); err != nil {
		warn(err.Error() + "; the guardrail spans carry no hash of the arguments")
	}
	exp, err := telemetry.Start(cfg, version)
	if err != nil {
		warn(err.Error() + "; nothing is exported")
		return nil
	}
	return &sessionTelemetry{exp: exp, warn: warn}
}

// observer is the gate's observer: none when telemetry is off.
func (t *sessionTelemetry) observer() host.Observer {
	if t == nil {
		return nil
	}
	return t.exp
}

// agent returns ctx inside the span of a headless run, ended by flush.
func (t *sessionTelemetry) agent(ctx context.Context, model string) context.Context {
	if t == nil {
		return ctx
	}
	ctx, end := t.exp.StartAgent(ctx, model)
	t.mu.Lock()
	t.ends = append(t.ends, end)
	t.mu.Unlock()
	return ctx
}

// flush ends the open spans and exports what is left, waiting at most
// telemetry.MaxFlushTimeout. It returns the warning to print if some
// export failed (printed by warnOf, on the goroutine that owns the output).
func (t *sessionTelemetry) flush() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	ends := t.ends
	t.ends = nil
	t.mu.Unlock()
	for _, end := range ends {
		end()
	}
	if err := t.exp.Shutdown(); err != nil {
		return err.Error()
	}
	return ""
}

// warnOf returns a function that prints msg as a warning, if any.
func (t *sessionTelemetry) warnOf(msg string) func() {
	return func() {
		if t != nil && msg != "" {
			t.warn(msg)
		}
	}
}

// telemetryConfig is where the export goes: the managed policy's, which no
// variable or user key moves or stops, else the variables' or the user
// config's (telemetry.Resolve).
func (st *setup) telemetryConfig(getenv func(string) string) (telemetry.Config, error) {
	if mt := st.managed.TelemetryRule(); mt != nil {
		return telemetry.Required(getenv, mt.Endpoint, mt.Headers)
	}
	var endpoint string
	var headers map[string]string
	if st.cfg != nil && st.cfg.Telemetry != nil {
		endpoint, headers = st.cfg.Telemetry.Endpoint, st.cfg.Telemetry.Headers
	}
	return telemetry.Resolve(getenv, endpoint, headers)
}

// serverInfo is what telemetry may know of the server named name: its
// transport and its URL as config.Server.Shown gives it, so that a host
// read from the person's environment is not exported.
func (st *setup) serverInfo(name string) (telemetry.ServerInfo, bool) {
	for _, sp := range st.specs {
		if sp.Name == name {
			u := sp.URL
			if srv, ok := st.cfg.Server(name); ok {
				u = srv.Shown().URL
			}
			return telemetry.ServerInfo{Transport: sp.Transport, URL: u}, true
		}
	}
	return telemetry.ServerInfo{}, false
}
