package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/netcheck"
	"github.com/mcphost/mcphost/sanitize"
)

// What a remote server can make mcphost do over HTTP. Every request of an
// HTTP or SSE server goes through an httpGuard, under the SDK and under the
// OAuth transport:
//
//   - It goes to the origin (scheme, host, port) the server is configured
//     with, or nowhere: a redirect elsewhere is refused by the client's
//     CheckRedirect, and the guard refuses any other request to another
//     origin (a legacy SSE endpoint elsewhere, a redirect that slipped by),
//     so configured headers and OAuth tokens never leave that origin and
//     https is never downgraded to http.
//   - What it reads of an answer is bounded, after decompression, by
//     maxMessage per message: a JSON body in total, an event stream per
//     event. An answer over the bound fails with a *TooLargeError.
//   - An answer to a request that is not an MCP message (an HTML page, a
//     body that is not JSON, an encoding mcphost did not ask for) fails with
//     an *AnswerError that shows the status, content type and first bytes.

// maxMessage bounds one message a server sends over HTTP — a JSON body after
// decompression, one server-sent event — as the SDK bounds one message of a
// stdio server.
const maxMessage = mcp.DefaultMaxLineLength

// sdkEventCap is the SDK's own bound on an event, set explicitly (its zero
// means no bound for streamable HTTP). It sits a little above maxMessage so
// that on the answer to a call the guard's bound, which leaves the session
// standing and classifies the call, is the one that trips; on a background
// stream it trips first.
const sdkEventCap = maxMessage + 64<<10

// maxRedirects is how many redirects within the origin a request follows.
const maxRedirects = 10

// answerHead is how many bytes of an unexpected answer an error shows.
const answerHead = 200

// httpGuard is the RoundTripper under every request to one HTTP server.
type httpGuard struct {
	base    http.RoundTripper
	origin  string // the configured server's origin, see netcheck.Origin
	headers map[string]string
	limit   int64
	// shown is the server's URL as the SDK holds it, with its secrets
	// redacted (so that no error the SDK writes can show them), and real the
	// URL requests to shown are sent to. shown is "" when nothing is redacted.
	shown string
	real  *url.URL
	// oauth: 401 and 403 answers go back to the SDK, whose OAuth handler
	// needs them.
	oauth bool
	// legacySSE: the server speaks the 2024-11-05 HTTP+SSE transport, whose
	// first event names the endpoint messages are posted to.
	legacySSE bool
}

// newHTTPGuard returns the guard for a server at rawURL.
func newHTTPGuard(base http.RoundTripper, rawURL string, headers map[string]string) (*httpGuard, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("server URL %s: %w", RedactURL(rawURL), errors.Unwrap(err))
	}
	origin, err := netcheck.Origin(u)
	if err != nil {
		return nil, fmt.Errorf("server URL %s: want an http:// or https:// URL with a host", RedactURL(rawURL))
	}
	g := &httpGuard{base: base, origin: origin, headers: headers, limit: maxMessage, real: u}
	if shown := RedactURL(rawURL); shown != rawURL {
		su, err := url.Parse(shown)
		if err != nil {
			return nil, fmt.Errorf("server URL %s: %w", shown, err)
		}
		g.shown = su.String()
	}
	return g, nil
}

// showAs makes the URL the SDK holds, and so every error it writes, shown,
// a form of the server's URL for people to read (Spec.ShownURL), redacted
// like the URL itself. A form that is not an http or https URL of the same
// origin (a host read from the environment) is ignored: the SDK must hold
// a URL the guard can tell apart and reach.
func (g *httpGuard) showAs(shown string) {
	if shown == "" {
		return
	}
	su, err := url.Parse(RedactURL(shown))
	if err != nil || !netcheck.InOrigin(su, g.origin) || su.String() == g.real.String() {
		return
	}
	g.shown = su.String()
}

// endpoint is the server's URL as the SDK is to hold it: redacted when it
// carries secrets, which the guard puts back into each request.
func (g *httpGuard) endpoint() string {
	if g.shown != "" {
		return g.shown
	}
	return g.real.String()
}

// unredacting wraps an OAuth handler so that it sees the request the SDK
// hands it with the server's real URL, the resource its tokens are bound
// to, rather than the redacted one the SDK holds.
func (g *httpGuard) unredacting(h auth.OAuthHandler) auth.OAuthHandler {
	if g.shown == "" {
		return h
	}
	return &unredactedOAuth{OAuthHandler: h, g: g}
}

type unredactedOAuth struct {
	auth.OAuthHandler
	g *httpGuard
}

func (h *unredactedOAuth) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	if req.URL.String() == h.g.shown {
		req = req.Clone(ctx)
		u := *h.g.real
		req.URL = &u
	}
	return h.OAuthHandler.Authorize(ctx, req, resp)
}

// client is an http.Client over g that follows redirects within g's origin
// only.
func (g *httpGuard) client() *http.Client {
	return &http.Client{Transport: g, CheckRedirect: g.checkRedirect}
}

// checkRedirect is the client's redirect policy. The guard refuses a
// redirect elsewhere before the client sees it (so the error shows no URL of
// the server's choosing); this refuses what may slip by.
func (g *httpGuard) checkRedirect(req *http.Request, via []*http.Request) error {
	if !netcheck.InOrigin(req.URL, g.origin) {
		return &OffOriginError{Server: g.origin, Target: showOrigin(req.URL), Redirect: true, Answer: describeRedirect(req.Response)}
	}
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	return nil
}

var reservedHeaders = map[string]bool{
	"Mcp-Session-Id": true, "Mcp-Protocol-Version": true, "Content-Type": true, "Accept": true, "Last-Event-Id": true,
}

func (g *httpGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	if g.shown != "" && req.URL.String() == g.shown {
		u := *g.real
		req.URL = &u
		if u.User != nil {
			// The client set Basic credentials from the redacted URL.
			pass, _ := u.User.Password()
			req.SetBasicAuth(u.User.Username(), pass)
		}
	}
	if !netcheck.InOrigin(req.URL, g.origin) {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, &OffOriginError{Server: g.origin, Target: showOrigin(req.URL)}
	}
	for k, v := range g.headers {
		if !reservedHeaders[http.CanonicalHeaderKey(k)] {
			req.Header.Set(k, v)
		}
	}
	resp, err := g.base.RoundTrip(req)
	probe, _ := req.Context().Value(probeKey{}).(*httpProbe)
	if probe != nil && req.Method == http.MethodPost {
		probe.record(resp, err)
	}
	if err != nil {
		return nil, err
	}
	if to := redirectTarget(req, resp); to != nil && !netcheck.InOrigin(to, g.origin) {
		answer := describeRedirect(resp)
		resp.Body.Close()
		return nil, &OffOriginError{Server: g.origin, Target: showOrigin(to), Redirect: true, Answer: answer}
	}
	return g.checkAnswer(req, resp, probe)
}

// redirectTarget is where resp redirects req to, if it is a redirect the
// client would follow.
func redirectTarget(req *http.Request, resp *http.Response) *url.URL {
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
	default:
		return nil
	}
	loc := resp.Header.Get("Location")
	if loc == "" {
		return nil
	}
	u, err := req.URL.Parse(loc)
	if err != nil {
		return nil
	}
	return u
}

// checkAnswer bounds resp's body and refuses what is not an MCP answer.
func (g *httpGuard) checkAnswer(req *http.Request, resp *http.Response, probe *httpProbe) (*http.Response, error) {
	ct := mediaType(resp.Header.Get("Content-Type"))
	if enc := resp.Header.Get("Content-Encoding"); enc != "" && !strings.EqualFold(enc, "identity") {
		resp.Body.Close()
		return nil, &AnswerError{Status: resp.StatusCode, ContentType: ct,
			Problem: fmt.Sprintf("it came in the %q content encoding, which mcphost did not ask for", sanitize.Line(enc))}
	}
	limit := g.limit
	if req.Method == http.MethodGet {
		// A background stream carries no call to fail: the SDK's own bound
		// (sdkEventCap) ends the session with an error that names it, and
		// this one stands behind it.
		limit = sdkEventCap + 64<<10
	}
	resp.Body = &boundedBody{rc: resp.Body, limit: limit, events: ct == "text/event-stream", status: resp.StatusCode, ct: ct, probe: probe}
	if g.legacySSE && req.Method == http.MethodGet && ct == "text/event-stream" {
		resp.Body = &endpointCheck{ReadCloser: resp.Body, base: req.URL, origin: g.origin}
	}
	if req.Method != http.MethodPost || ct == "text/event-stream" || !isCall(req) {
		return resp, nil
	}
	switch {
	case g.oauth && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden):
		return resp, nil // the SDK's OAuth handler reads them
	case resp.StatusCode == http.StatusNotFound && req.Header.Get("Mcp-Session-Id") != "":
		return resp, nil // the session is gone: the SDK starts over
	case resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent:
		return resp, nil
	case g.legacySSE && resp.StatusCode >= 200 && resp.StatusCode <= 299:
		return resp, nil // the answer comes on the stream; the body says nothing
	case resp.StatusCode >= 300 && resp.StatusCode <= 399 && resp.Header.Get("Location") != "":
		return resp, nil // the client follows it, or checkRedirect refuses it
	}
	br := bufio.NewReaderSize(resp.Body, answerHead)
	head, _ := br.Peek(answerHead)
	resp.Body = readCloser{Reader: br, Closer: resp.Body}
	if ct == "application/json" && startsJSON(head) {
		return resp, nil
	}
	resp.Body.Close()
	problem := "it is not an MCP message"
	switch {
	case ct == "application/json":
		problem = "its body is not JSON"
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		problem = "it is an error page, not an MCP message"
	}
	return nil, &AnswerError{Status: resp.StatusCode, ContentType: ct, Head: head, Problem: problem}
}

// isCall reports whether req posts a JSON-RPC request (which the server must
// answer with a message), rather than a notification or a response.
func isCall(req *http.Request) bool {
	if req.GetBody == nil {
		return false
	}
	body, err := req.GetBody()
	if err != nil {
		return false
	}
	defer body.Close()
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.NewDecoder(body).Decode(&m) != nil {
		return false
	}
	return len(m.ID) > 0 && m.Method != ""
}

// startsJSON reports whether head, the first bytes of a body, could begin a
// JSON-RPC message. Bodies of whitespace alone are left to the decoder.
func startsJSON(head []byte) bool {
	t := bytes.TrimLeft(head, " \t\r\n")
	return len(t) == 0 || t[0] == '{' || t[0] == '['
}

func mediaType(v string) string {
	mt, _, err := mime.ParseMediaType(v)
	if err != nil {
		return strings.ToLower(strings.TrimSpace(v))
	}
	return mt
}

type readCloser struct {
	io.Reader
	io.Closer
}

// showOrigin is u's origin, or for a scheme other than http and https what
// of it identifies the place.
func showOrigin(u *url.URL) string {
	if o, err := netcheck.Origin(u); err == nil {
		return o
	}
	return strings.ToLower(u.Scheme) + "://" + u.Host
}

// OffOriginError is a request mcphost refused to send because its origin is
// not the server's: a redirect elsewhere, or a legacy SSE endpoint elsewhere.
// The server's configured headers and tokens did not leave with it.
type OffOriginError struct {
	Server   string // the configured origin
	Target   string // the origin refused
	Redirect bool
	Answer   string // for a redirect, the server's answer that asked for it
}

func (e *OffOriginError) Error() string {
	if e.Redirect {
		return fmt.Sprintf("refused a redirect from %s to %s (%s): mcphost sends a server's requests to the origin it is configured with only",
			e.Server, sanitize.Line(e.Target), e.Answer)
	}
	return fmt.Sprintf("refused to send a request to %s: the server is configured at %s, and mcphost sends its requests and headers to that origin only",
		sanitize.Line(e.Target), e.Server)
}

// AnswerError is an HTTP answer to a request that is not an MCP message.
type AnswerError struct {
	Status      int
	ContentType string
	Head        []byte // the first bytes of the body
	Problem     string
}

func (e *AnswerError) Error() string {
	return "the server answered " + describeAnswer(e.Status, e.ContentType, e.Head) + ": " + e.Problem
}

// describeAnswer shows an answer as a person can read it: status, content
// type and the first bytes, escaped.
func describeAnswer(status int, ct string, head []byte) string {
	if ct == "" {
		ct = "no content type"
	}
	s := "HTTP " + strconv.Itoa(status) + ", " + sanitize.Line(ct)
	if len(head) > 0 {
		s += ", body begins " + strconv.Quote(sanitize.Line(string(head)))
		if len(head) >= answerHead {
			s += "…"
		}
	}
	return s
}

// describeRedirect describes the redirect answer resp, reading a little of
// its body (the client drains and closes it afterwards).
func describeRedirect(resp *http.Response) string {
	if resp == nil {
		return "a redirect"
	}
	head, _ := io.ReadAll(io.LimitReader(resp.Body, answerHead))
	return describeAnswer(resp.StatusCode, mediaType(resp.Header.Get("Content-Type")), head)
}

// TooLargeError is an answer that passed the bound on one message. The
// request reached the server, so whatever it asked for may have happened.
type TooLargeError struct {
	Limit       int64
	Status      int
	ContentType string
	Event       bool // one event of a stream, rather than a whole body
}

func (e *TooLargeError) Error() string {
	what := "a body"
	if e.Event {
		what = "an event"
	}
	return fmt.Sprintf("the server's answer (HTTP %d, %s) has %s larger than %d bytes, the most mcphost reads of one message; it was cut off",
		e.Status, sanitize.Line(e.ContentType), what, e.Limit)
}

// boundedBody fails a read once a message passes limit bytes: the whole body,
// or for an event stream, one event (the bytes up to a blank line).
type boundedBody struct {
	rc     io.ReadCloser
	limit  int64
	events bool
	status int
	ct     string
	probe  *httpProbe // the call's, when the request is one

	n        int64 // bytes of the current message
	lineDone bool  // the last byte ended a line
	cr       bool  // the last byte was '\r'
	err      error
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.rc.Read(p)
	if !b.events {
		if b.n += int64(n); b.n > b.limit {
			return b.trip(n - int(b.n-b.limit))
		}
		return n, err
	}
	for off := 0; off < n; {
		// Content up to the next line end, then the line end itself.
		k := bytes.IndexAny(p[off:n], "\r\n")
		if k < 0 {
			k = n - off
		}
		if k > 0 {
			if b.n+int64(k) > b.limit {
				return b.trip(off + int(b.limit-b.n))
			}
			b.n += int64(k)
			b.lineDone, b.cr = false, false
			off += k
			continue
		}
		if b.n++; b.n > b.limit {
			return b.trip(off)
		}
		switch c := p[off]; {
		case c == '\n' && b.cr: // the second half of "\r\n"
			b.cr = false
		case b.lineDone: // an empty line ends the event
			b.n, b.cr = 0, c == '\r'
		default:
			b.lineDone, b.cr = true, c == '\r'
		}
		off++
	}
	return n, err
}

func (b *boundedBody) trip(n int) (int, error) {
	tl := &TooLargeError{Limit: b.limit, Status: b.status, ContentType: b.ct, Event: b.events}
	b.err = tl
	if b.probe != nil {
		b.probe.tooLarge(tl)
	}
	return max(n, 0), b.err
}

func (b *boundedBody) Close() error { return b.rc.Close() }
