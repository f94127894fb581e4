package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultEnv lists the variables a stdio server inherits from mcphost's own
// environment. Everything else — API keys for the model among them — stays
// with the host unless the server's configuration passes it explicitly.
var DefaultEnv = []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ"}

// dialed is a transport ready to connect, plus what the client needs to
// tap wraps inner so that mcphost sees each message of s's connection as it
// is read: for the trace, the recent messages, and the log hook.
func (m *Manager) tap(s *server, inner mcp.Transport) *rawTransport {
	return &rawTransport{inner: inner, trace: m.opts.Trace, name: s.spec.Name, recent: s.recent, onLog: m.logHook(s.spec.Name)}
}

// reach the same server beside the SDK.
type dialed struct {
	transport mcp.Transport
	raw       *rawTransport  // nil for streamable HTTP
	http      *http.Client   // streamable HTTP only
	shown     string         // streamable HTTP only: the URL errors name, see httpGuard.endpoint
	proc      *procTransport // stdio only
	caps      *capsRecorder  // the handshake's capabilities, as sent
}

func (m *Manager) dial(ctx context.Context, s *server) (*dialed, error) {
	spec := &s.spec
	switch {
	case spec.Dial != nil:
		t, err := spec.Dial(ctx)
		if err != nil {
			return nil, err
		}
		rt := m.tap(s, t)
		return &dialed{transport: rt, raw: rt}, nil
	case spec.Transport == TransportStdio || spec.Transport == "":
		if spec.Command == "" {
			return nil, fmt.Errorf("no command to start")
		}
		cmd := exec.Command(spec.Command, spec.Args...)
		cmd.Dir = spec.Cwd
		cmd.Env = m.serverEnv(spec.Env)
		cmd.Stderr = s.stderr
		cmd.WaitDelay = 2 * time.Second
		setProcessGroup(cmd)
		pt := &procTransport{inner: &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}}
		rt := m.tap(s, pt)
		return &dialed{transport: rt, raw: rt, proc: pt}, nil
	case spec.Transport == TransportHTTP:
		oh := oauthFor(spec)
		g, err := m.httpGuard(spec, oh != nil)
		if err != nil {
			return nil, err
		}
		hc := g.client()
		caps := &capsRecorder{}
		hc.Transport = &capsSniffer{next: hc.Transport, rec: caps}
		hc.Transport = &traceRoundTrip{next: hc.Transport, server: spec.Name, trace: m.opts.Trace, recent: s.recent}
		if oh != nil {
			hc = withOAuth(hc, spec.URL, oh)
			oh = g.unredacting(oh)
		}
		return &dialed{transport: &mcp.StreamableClientTransport{Endpoint: g.endpoint(), HTTPClient: hc, MaxRetries: 2, OAuthHandler: oh, MaxEventSize: sdkEventCap}, http: hc, caps: caps, shown: g.endpoint()}, nil
	case spec.Transport == TransportSSE:
		g, err := m.httpGuard(spec, false)
		if err != nil {
			return nil, err
		}
		rt := m.tap(s, &mcp.SSEClientTransport{Endpoint: g.endpoint(), HTTPClient: g.client(), MaxEventSize: sdkEventCap})
		return &dialed{transport: rt, raw: rt}, nil
	}
	return nil, fmt.Errorf("unknown transport %q", spec.Transport)
}

// logHook returns what hands server's log messages to Options.OnLog, or
// nil when it is not set.
func (m *Manager) logHook(server string) func(*mcp.LoggingMessageParams) {
	f := m.opts.OnLog
	if f == nil {
		return nil
	}
	return func(p *mcp.LoggingMessageParams) { f(server, p) }
}

func (m *Manager) serverEnv(extra map[string]string) []string {
	getenv := m.opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	var env []string
	for _, k := range DefaultEnv {
		if _, over := extra[k]; over {
			continue
		}
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	for _, k := range sortedKeys(extra) {
		env = append(env, k+"="+extra[k])
	}
	return env
}

// httpGuard returns the guard for spec's MCP requests (see httpguard.go).
func (m *Manager) httpGuard(spec *Spec, oauth bool) (*httpGuard, error) {
	base := m.opts.HTTPTransport
	if base == nil {
		base = http.DefaultTransport
	}
	g, err := newHTTPGuard(base, spec.URL, spec.Headers)
	if err != nil {
		return nil, err
	}
	if spec.Transport == TransportHTTP {
		// Not for SSE: the SDK resolves a legacy endpoint against the URL
		// it holds, and one relative to a path shown as written would miss.
		g.showAs(spec.ShownURL)
	}
	g.oauth, g.legacySSE = oauth, spec.Transport == TransportSSE
	return g, nil
}

type probeKey struct{}

// httpProbe travels in a call's context and learns what HTTP said about the
// call's POST, which the SDK's error does not keep in a usable form.
type httpProbe struct {
	mu         sync.Mutex
	sent       bool // a response came back: the request reached the server
	status     int
	retryAfter time.Duration
	tooBig     *TooLargeError // the answer passed the bound on one message
}

// tooLarge notes that the answer to the call passed the bound on one message.
func (p *httpProbe) tooLarge(err *TooLargeError) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tooBig = err
}

// cutOff is the error of an answer to the call that passed the bound on one
// message, or nil.
func (p *httpProbe) cutOff() *TooLargeError {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tooBig
}

func (p *httpProbe) record(resp *http.Response, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil || resp == nil {
		return
	}
	p.sent = true
	p.status = resp.StatusCode
	p.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
}

func (p *httpProbe) snapshot() (sent bool, status int, retryAfter time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sent, p.status, p.retryAfter
}

// parseRetryAfter reads seconds or an HTTP date; a value it cannot read, or
// one in the past, is zero.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil && secs > 0 {
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// procTransport remembers the process a CommandTransport started, so that
// the host can end it (and its process group) from any goroutine.
type procTransport struct {
	inner *mcp.CommandTransport
	pid   atomic.Int64
	// exit is how the process ended, once the connection's Close has
	// waited for it (exitWords); nil before.
	exit atomic.Pointer[string]
}

func (p *procTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	var c mcp.Connection
	var err error
	onStarterThread(func() { c, err = p.inner.Connect(ctx) }) // see setParentDeathSignal
	if err == nil && p.inner.Command.Process != nil {
		p.pid.Store(int64(p.inner.Command.Process.Pid))
	}
	if err != nil {
		return nil, err
	}
	return &procConn{Connection: c, p: p}, nil
}

// procConn notes how the server's process ended: the SDK's Close waits
// for the process and returns what waiting for it returned.
type procConn struct {
	mcp.Connection
	p *procTransport
}

func (c *procConn) Close() error {
	err := c.Connection.Close()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		w := exitWords(ee.ProcessState)
		c.p.exit.Store(&w)
	case err == nil:
		w := "exited with status 0"
		c.p.exit.Store(&w)
	}
	return err
}

// exitWords says how a process ended: "exited with status 3", or "was
// ended by signal: killed".
func exitWords(ps *os.ProcessState) string {
	if code := ps.ExitCode(); code >= 0 {
		return fmt.Sprintf("exited with status %d", code)
	}
	return "was ended by " + ps.String()
}

// exited is how the server's process ended, when it has: "" while it runs,
// before it started, for a transport that is not a process, and when its
// end was not waited for.
func (p *procTransport) exited() string {
	if p == nil {
		return ""
	}
	if w := p.exit.Load(); w != nil {
		return *w
	}
	return ""
}

// kill ends the server's process group. It is safe on a nil receiver, before
// the process started, and after it ended.
func (p *procTransport) kill() {
	if p == nil {
		return
	}
	if pid := p.pid.Load(); pid > 0 {
		killProcessGroup(int(pid))
	}
}
