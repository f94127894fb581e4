package llm

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcphost/mcphost/internal/netcheck"
)

// endpoint is where one model posts its requests, with the retry rules the
// provider SDKs used, so that leaving the SDKs changed nothing users see.
type endpoint struct {
	provider string // the provider part of the spec, for errors
	hint     string // what to check when the server refuses the credential
	reach    string // what to check when the server cannot be reached (reachHint)
	url      string
	shown    string      // url as errors name it (shownURL)
	header   http.Header // sent with every request, besides Content-Type and Accept
	client   *http.Client
	retries  int

	// sleep waits before a retry; it returns early with ctx's error. Tests
	// replace it to see the waits without spending them.
	sleep func(ctx context.Context, d time.Duration) error
	// idle is how long a stream may go without an event (streamIdle).
	idle time.Duration
}

// newEndpoint resolves path against base as the SDKs did: base is taken as
// a directory, so "https://host/v1" and "https://host/v1/" both lead to
// "https://host/v1/"+path, and a query on base is dropped.
func newEndpoint(provider, hint, base, path string, header http.Header, o Options) (*endpoint, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, configErrorf("%s: base URL %q: %w", provider, base, err)
	}
	if len(u.Path) == 0 || u.Path[len(u.Path)-1] != '/' {
		u.Path += "/"
		if u.RawPath != "" {
			u.RawPath += "/"
		}
	}
	u = u.ResolveReference(&url.URL{Path: path})
	if header == nil {
		header = http.Header{}
	}
	client := defaultClient()
	if o.HTTPClient != nil {
		c := *o.HTTPClient
		if c.CheckRedirect == nil {
			c.CheckRedirect = sameOrigin
		}
		client = &c
	}
	return &endpoint{
		provider: provider,
		hint:     hint,
		reach:    reachHint(provider, o.BaseURL),
		url:      u.String(),
		shown:    shownURL(*u),
		header:   header,
		client:   client,
		retries:  o.retries(),
		sleep:    sleep,
		idle:     streamIdle,
	}, nil
}

// Time limits of a request. Neither bounds a whole turn: a stream lasts as
// long as the model writes, and cancelling the context is what ends it.
const (
	// responseHeaderTimeout bounds the wait for a response to begin, as
	// the providers' SDKs did.
	responseHeaderTimeout = 10 * time.Minute
	// streamIdle bounds the wait for the next event of a stream. Comments
	// (": keep-alive") do not count as events.
	streamIdle = 10 * time.Minute
)

// defaultClient sends the requests of models built without
// Options.HTTPClient: no overall timeout, a bound on the wait for headers,
// and redirects followed only within the endpoint's origin.
var defaultClient = sync.OnceValue(func() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = responseHeaderTimeout
	return &http.Client{Transport: t, CheckRedirect: sameOrigin}
})

// errRedirect is why a request was not sent on to another origin.
type errRedirect struct{ to string }

func (e *errRedirect) Error() string {
	return fmt.Sprintf("the endpoint redirected the request to %s; mcphost follows redirects only within the endpoint's own scheme, host and port, so that the key goes nowhere else (point --base-url at the new address)", e.to)
}

// sameOrigin refuses a redirect to another scheme, host or port: net/http
// would keep the Authorization header on a change of scheme or port.
func sameOrigin(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if !netcheck.SameOrigin(req.URL, via[0].URL) {
		return &errRedirect{to: shownURL(*req.URL)}
	}
	return nil
}

// post sends body as JSON and returns the response of the first attempt
// the server accepted (a status below 400); the caller reads its event
// stream and must close it. An attempt that could not connect, or that was
// answered 408, 409, 429 or 5xx, is sent again up to e.retries times, after
// the wait the server asked for or an exponential backoff; an
// x-should-retry header overrides the status, and a server asking for a
// wait over maxRetryWait is not retried. The error status that ends the
// call is returned as an *APIError. Once post has returned a response
// nothing is retried: its events may already have been emitted.
func (e *endpoint) post(ctx context.Context, body []byte) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		res, err := e.send(ctx, body)
		if ctx.Err() != nil {
			if err == nil {
				discard(res)
			}
			return nil, ctx.Err()
		}
		last := attempt >= e.retries
		var wait time.Duration
		switch {
		case err != nil:
			var redirect *errRedirect
			if last || errors.As(err, &redirect) {
				if why, ok := unreachable(err); ok {
					return nil, fmt.Errorf("%s: cannot reach %s: %s (%w)", e.provider, e.shown, e.reach, why)
				}
				return nil, fmt.Errorf("%s: sending the request: %w", e.provider, err)
			}
			wait = backoff(attempt, rand.Float64())
		case res.StatusCode < 400:
			return res, nil
		default:
			apiErr := e.apiError(res)
			var retry bool
			wait, retry = retryWait(res, attempt, rand.Float64())
			if d, ok := retryAfter(res.Header); ok && d > maxRetryWait {
				apiErr.RetryAfter = d
			}
			if last || !retry || apiErr.QuotaExhausted() {
				return nil, apiErr
			}
		}
		if err := e.sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// drainWait bounds how long a stream's rest is read after its last event. A
// server normally ends the response right away; one that holds it open is
// not waited for.
const drainWait = 100 * time.Millisecond

// stream posts body and calls handle with each event of the response until
// handle reports the last event, returns an error, or the stream ends.
// A stream that ends without a last event is no error here: what that means
// is the provider's to say. Cancelling ctx ends it with ctx's error.
//
// A server that answers 200 with a JSON body instead of a stream did not
// stream: whole gets that body when it is an answer, and an error member
// becomes an *APIError. Every line of the stream, a keep-alive comment
// included, resets the idle timer: a server that says it is still working
// is waited for.
func (e *endpoint) stream(ctx context.Context, body []byte, handle func(sseEvent) (last bool, err error), whole func([]byte) error) error {
	reqCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	res, err := e.post(reqCtx, body)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	requestID := requestID(res.Header)
	withID := func(err error) error {
		var apiErr *APIError
		if errors.As(err, &apiErr) && apiErr.RequestID == "" {
			apiErr.RequestID = requestID
		}
		return err
	}
	if ct := res.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		data, err := io.ReadAll(io.LimitReader(res.Body, maxEventBytes+1))
		if err != nil {
			return fmt.Errorf("%s: reading the answer: %w", e.provider, err)
		}
		var probe struct {
			Error json.RawMessage `json:"error"`
		}
		if len(data) > maxEventBytes || json.Unmarshal(data, &probe) != nil || present(probe.Error) || whole == nil {
			// A gateway's error, or something that is no answer.
			typ, msg := parseErrorBody(data)
			if !present(probe.Error) && msg == "" {
				msg = "the answer was JSON, not an event stream"
			}
			return &APIError{Provider: e.provider, Type: typ, Message: msg, RequestID: requestID}
		}
		return withID(whole(data))
	}
	var stalled atomic.Bool
	idle := time.AfterFunc(e.idle, func() { stalled.Store(true); cancel() })
	defer idle.Stop()
	events := newSSEReader(res.Body)
	events.onLine = func() { idle.Reset(e.idle) }
	for {
		if ctx.Err() != nil {
			return ctx.Err() // do not emit what is still buffered
		}
		ev, err := events.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if stalled.Load() {
				return fmt.Errorf("%s: no event in the response stream for %v; gave up on it", e.provider, e.idle)
			}
			return fmt.Errorf("%s: reading the response stream: %w", e.provider, err)
		}
		last, err := handle(ev)
		if err != nil {
			return withID(err)
		}
		if last {
			t := time.AfterFunc(drainWait, cancel)
			discard(res)
			t.Stop()
			return nil
		}
	}
}

// retryStream reports whether a turn that failed with err before emitting
// anything may be sent again, and waits before it if so. Only an
// overloaded_error event at the start of a stream qualifies: the provider
// accepted the request and then found no capacity, which the SDKs retry
// like a 529.
func (e *endpoint) retryStream(ctx context.Context, err error, attempt int) bool {
	var apiErr *APIError
	if attempt >= e.retries || !errors.As(err, &apiErr) || apiErr.StatusCode != 0 || apiErr.Type != "overloaded_error" {
		return false
	}
	return e.sleep(ctx, backoff(attempt, rand.Float64())) == nil
}

// requestID is the provider's id for a request, which its support asks
// for: request-id from Anthropic, x-request-id from OpenAI and others.
func requestID(h http.Header) string {
	return clean(cmp.Or(h.Get("Request-Id"), h.Get("X-Request-Id")))
}

// marshal encodes a request body. Unlike json.Marshal it leaves <, > and &
// as they are, so that a tool's schema reaches the provider byte for byte
// (but for whitespace between tokens).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func (e *endpoint) send(ctx context.Context, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	// A clone per request: the client's transport may be the caller's own,
	// and a Model may stream from several goroutines at once.
	req.Header = e.header.Clone()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	return e.client.Do(req)
}

// apiError reads the error response res, at most maxErrorBody of it, closes
// it, and returns what it says. OpenAI-compatible servers answer in several
// error formats besides the providers' own; parseErrorBody knows them.
func (e *endpoint) apiError(res *http.Response) *APIError {
	body, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	discard(res)
	typ, msg := parseErrorBody(body)
	return &APIError{Provider: e.provider, StatusCode: res.StatusCode, Type: typ, Message: msg, RequestID: requestID(res.Header), hint: e.hint}
}

// maxDrain is how much of a response that is no longer wanted is read before
// closing it. Reading a short rest to its end lets an HTTP/1.1 connection go
// back to the pool instead of being dropped; a long one is not worth it.
const maxDrain = 4 << 10

// discard closes res after reading at most maxDrain more of it. Use it only
// on a response whose end is known to be near (an error body, a stream after
// its last event): a read waits for the server.
func discard(res *http.Response) {
	_, _ = io.CopyN(io.Discard, res.Body, maxDrain)
	_ = res.Body.Close()
}

// retryWait says whether the error response res may be retried and after
// how long. The x-should-retry header wins over the status; a wait the
// server asks for (Retry-After-Ms, Retry-After) is used when it is between
// 0 and maxRetryWait, and a longer one means the error is reported at once.
// r is a random number in [0, 1) for the jitter.
func retryWait(res *http.Response, attempt int, r float64) (time.Duration, bool) {
	retry := res.StatusCode == http.StatusRequestTimeout ||
		res.StatusCode == http.StatusConflict ||
		res.StatusCode == http.StatusTooManyRequests ||
		res.StatusCode >= http.StatusInternalServerError
	switch res.Header.Get("x-should-retry") {
	case "true":
		retry = true
	case "false":
		retry = false
	}
	if !retry {
		return 0, false
	}
	if d, ok := retryAfter(res.Header); ok {
		switch {
		case d > maxRetryWait:
			return 0, false // an outage, not a hiccup
		case d >= 0:
			return d, true
		}
	}
	return backoff(attempt, r), true
}

// backoff is the wait before retry number attempt+1 when the server did not
// ask for one: half a second doubled with each attempt, at most 8 seconds,
// less up to a quarter at random (r in [0, 1)) so that clients that failed
// together do not come back together.
func backoff(attempt int, r float64) time.Duration {
	d := 8 * time.Second
	if attempt < 4 {
		d = 500 * time.Millisecond << attempt
	}
	return time.Duration(float64(d) * (1 - 0.25*r))
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// reachHint is what to check when the model's server cannot be reached:
// a --base-url names a server the person runs or chose; Ollama's default
// address is the local Ollama; a provider's own API is behind the network.
func reachHint(provider, base string) string {
	switch {
	case base != "":
		return "is the server behind --base-url running?"
	case provider == "ollama":
		return "is Ollama running (ollama serve)?"
	default:
		return "check the network connection"
	}
}

// unreachable reports whether a request failed because no connection to
// the server could be made (no such host, connection refused, no route, a
// dial that timed out), and returns that failure without the request's
// URL, which the message names once itself. A connection that was made
// and then failed (TLS, a reset, an answer cut off) is not unreachable.
func unreachable(err error) (error, bool) {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns, true
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return op, true
	}
	return nil, false
}

// shownURL is u as an error names it: without its userinfo, query and
// fragment, where a credential may be.
func shownURL(u url.URL) string {
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return clean(u.String())
}
