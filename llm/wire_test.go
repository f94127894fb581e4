package llm

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"
)

func TestBackoff(t *testing.T) {
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second, 8 * time.Second}
	for attempt, w := range want {
		if got := backoff(attempt, 0); got != w {
			t.Errorf("backoff(%d, 0) = %v, want %v", attempt, got, w)
		}
		// The most jitter takes off a quarter.
		if got, min := backoff(attempt, 0.999999), w*3/4; got < min || got > w {
			t.Errorf("backoff(%d, 0.999999) = %v, want within [%v, %v]", attempt, got, min, w)
		}
	}
	if got := backoff(1000, 0); got != 8*time.Second {
		t.Errorf("backoff(1000, 0) = %v, want 8s", got)
	}
}

func TestRetryWait(t *testing.T) {
	soon := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	past := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
	tests := []struct {
		name   string
		status int
		header map[string]string
		wait   time.Duration
		retry  bool
	}{
		{"400 is final", 400, nil, 0, false},
		{"401 is final", 401, nil, 0, false},
		{"404 is final", 404, nil, 0, false},
		{"408 backs off", 408, nil, 500 * time.Millisecond, true},
		{"409 backs off", 409, nil, 500 * time.Millisecond, true},
		{"429 backs off", 429, nil, 500 * time.Millisecond, true},
		{"500 backs off", 500, nil, 500 * time.Millisecond, true},
		{"529 backs off", 529, nil, 500 * time.Millisecond, true},
		{"x-should-retry false wins over 503", 503, map[string]string{"X-Should-Retry": "false"}, 0, false},
		{"x-should-retry true wins over 400", 400, map[string]string{"X-Should-Retry": "true"}, 500 * time.Millisecond, true},
		{"x-should-retry other is no opinion", 400, map[string]string{"X-Should-Retry": "maybe"}, 0, false},
		{"Retry-After-Ms", 429, map[string]string{"Retry-After-Ms": "1500.5"}, 1500500 * time.Microsecond, true},
		{"Retry-After-Ms before Retry-After", 429, map[string]string{"Retry-After-Ms": "10", "Retry-After": "20"}, 10 * time.Millisecond, true},
		{"Retry-After seconds", 503, map[string]string{"Retry-After": "2"}, 2 * time.Second, true},
		{"Retry-After zero", 503, map[string]string{"Retry-After": "0"}, 0, true},
		{"Retry-After at the limit", 503, map[string]string{"Retry-After": "60"}, maxRetryWait, true},
		{"Retry-After over the limit", 503, map[string]string{"Retry-After": "61"}, 0, false},
		{"Retry-After-Ms over the limit", 429, map[string]string{"Retry-After-Ms": "60001"}, 0, false},
		{"long wait beats x-should-retry true", 429, map[string]string{"Retry-After": "3600", "X-Should-Retry": "true"}, 0, false},
		{"Retry-After date an hour away", 503, map[string]string{"Retry-After": soon}, 0, false},
		{"Retry-After date in the past backs off", 503, map[string]string{"Retry-After": past}, 500 * time.Millisecond, true},
		{"negative Retry-After backs off", 503, map[string]string{"Retry-After": "-5"}, 500 * time.Millisecond, true},
		{"garbage Retry-After backs off", 503, map[string]string{"Retry-After": "soon"}, 500 * time.Millisecond, true},
		{"Retry-After on a final status", 400, map[string]string{"Retry-After": "1"}, 0, false},
		{"Retry-After too large for a duration", 503, map[string]string{"Retry-After": "1e300"}, 0, false},
		{"Retry-After infinite", 503, map[string]string{"Retry-After": "Inf"}, 0, false},
		{"Retry-After-Ms too large for a duration", 429, map[string]string{"Retry-After-Ms": "100000000000000"}, 0, false},
		{"Retry-After NaN backs off", 503, map[string]string{"Retry-After": "NaN"}, 500 * time.Millisecond, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &http.Response{StatusCode: tt.status, Header: http.Header{}}
			for k, v := range tt.header {
				res.Header.Set(k, v)
			}
			wait, retry := retryWait(res, 0, 0)
			if wait != tt.wait || retry != tt.retry {
				t.Errorf("retryWait = %v, %v; want %v, %v", wait, retry, tt.wait, tt.retry)
			}
		})
	}
	// A date a few seconds away is waited for, less the time taken.
	res := &http.Response{StatusCode: 503, Header: http.Header{"Retry-After": {time.Now().Add(5 * time.Second).UTC().Format(http.TimeFormat)}}}
	if wait, retry := retryWait(res, 0, 0); !retry || wait <= 0 || wait > 5*time.Second {
		t.Errorf("retryWait for a date 5s away = %v, %v; want a wait in (0, 5s]", wait, retry)
	}
}

// recordWaits makes m's endpoint record its waits instead of sleeping.
func recordWaits(t *testing.T, m Model) *[]time.Duration {
	t.Helper()
	var waits []time.Duration
	endpointOf(t, m).sleep = func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		return ctx.Err()
	}
	return &waits
}

// A connection that breaks before an answer is retried with backoff; one
// that keeps breaking is reported as the connection error it is.
func TestRetryConnectionError(t *testing.T) {
	for spec, file := range map[string]string{"anthropic:claude-test": "anthropic/max_tokens.sse", "openai:gpt-test": "openai/max_tokens.sse"} {
		t.Run(spec, func(t *testing.T) {
			var calls atomic.Int32
			var failures atomic.Int32
			ok := replay(t, file)
			f := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request) {
				if calls.Add(1) <= failures.Load() {
					conn, _, err := w.(http.Hijacker).Hijack()
					if err != nil {
						t.Error(err)
						return
					}
					_ = conn.Close()
					return
				}
				ok(w, r)
			})
			m, err := New(spec, Options{BaseURL: f.URL(), APIKey: "k", Getenv: noEnv, MaxRetries: 2})
			if err != nil {
				t.Fatal(err)
			}
			waits := recordWaits(t, m)

			failures.Store(2)
			if _, err := collect(context.Background(), m, hello()); err != nil {
				t.Fatalf("Stream after two broken connections: %v", err)
			}
			if len(*waits) != 2 || (*waits)[0] > 500*time.Millisecond || (*waits)[0] < 375*time.Millisecond ||
				(*waits)[1] > time.Second || (*waits)[1] < 750*time.Millisecond {
				t.Errorf("waits %v, want about 0.5s then about 1s", *waits)
			}

			calls.Store(0)
			*waits = nil
			failures.Store(3)
			_, err = collect(context.Background(), m, hello())
			provider, _, _ := strings.Cut(spec, ":")
			if err == nil || !strings.HasPrefix(err.Error(), provider+": sending the request: ") {
				t.Errorf("got error %v, want the connection error", err)
			}
			var apiErr *APIError
			if errors.As(err, &apiErr) {
				t.Errorf("a connection error became an *APIError: %v", err)
			}
			if n := calls.Load(); n != 3 {
				t.Errorf("got %d attempts, want 3", n)
			}
		})
	}
}

// The x-should-retry header decides over the status, in both directions.
func TestRetryHeaderOverridesStatus(t *testing.T) {
	tests := []struct {
		status    int
		header    string
		wantCalls int
	}{
		{http.StatusServiceUnavailable, "false", 1},
		{http.StatusBadRequest, "true", 3},
	}
	for _, spec := range []string{"anthropic:claude-test", "openai:gpt-test"} {
		for _, tt := range tests {
			t.Run(spec+" "+tt.header, func(t *testing.T) {
				f := newFakeAPI(t, errorReply(tt.status, `{"error":{"type":"x","message":"no"}}`, map[string]string{"X-Should-Retry": tt.header}))
				m, err := New(spec, Options{BaseURL: f.URL(), APIKey: "k", Getenv: noEnv, MaxRetries: 2})
				if err != nil {
					t.Fatal(err)
				}
				recordWaits(t, m)
				_, err = collect(context.Background(), m, hello())
				var apiErr *APIError
				if !errors.As(err, &apiErr) || apiErr.StatusCode != tt.status {
					t.Errorf("got error %v, want an *APIError with status %d", err, tt.status)
				}
				if n := len(f.requests()); n != tt.wantCalls {
					t.Errorf("got %d requests, want %d", n, tt.wantCalls)
				}
			})
		}
	}
}

// Cancelling the context ends the wait before a retry at once.
func TestRetryWaitCancelled(t *testing.T) {
	for _, spec := range []string{"anthropic:claude-test", "openai:gpt-test"} {
		t.Run(spec, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			fail := errorReply(http.StatusServiceUnavailable, `{"error":{"type":"overloaded","message":"busy"}}`, map[string]string{"Retry-After": "25"})
			f := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request) {
				fail(w, r)
				cancel() // the client is now waiting 25 seconds
			})
			m, err := New(spec, Options{BaseURL: f.URL(), APIKey: "k", Getenv: noEnv})
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				if _, err := collect(ctx, m, hello()); !errors.Is(err, context.Canceled) {
					t.Errorf("got error %v, want context.Canceled", err)
				}
			}()
			waitClosed(t, done, "Stream returning after the cancel")
			if n := len(f.requests()); n != 1 {
				t.Errorf("got %d requests, want 1", n)
			}
		})
	}
}

// One connection serves turn after turn, error answers included: every
// body is read to its end and closed.
func TestConnectionReused(t *testing.T) {
	tests := []struct {
		spec, file string
	}{
		{"anthropic:claude-test", "anthropic/text_and_tool.sse"},
		{"openai:gpt-test", "openai/text_and_tool.sse"},
		{"ollama:llama-test", "openai/compat_no_id.sse"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			var calls, conns atomic.Int32
			ok := replay(t, tt.file)
			fail := errorReply(http.StatusUnauthorized, `{"error":{"type":"authentication_error","message":"bad key"}}`, nil)
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if calls.Add(1) == 2 {
					fail(w, r)
					return
				}
				ok(w, r)
				// The end of the body follows in a write of its own and
				// may arrive after the client has read the last event.
				w.(http.Flusher).Flush()
			}))
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			}
			srv.Start()
			defer srv.Close()
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			m, err := New(tt.spec, Options{BaseURL: srv.URL, APIKey: "k", Getenv: noEnv, HTTPClient: &http.Client{Transport: tr}})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 4 {
				_, err := collect(context.Background(), m, hello())
				if (i == 1) != (err != nil) {
					t.Fatalf("turn %d: error %v", i, err)
				}
			}
			if n := conns.Load(); n != 1 {
				t.Errorf("4 turns used %d connections, want 1", n)
			}
		})
	}
}

// An error body is read only up to maxErrorBody, and its message is cut.
func TestErrorBodyBounded(t *testing.T) {
	huge := `{"error":{"type":"big","message":"` + strings.Repeat("x", 4*maxErrorBody) + `"}}`
	f := newFakeAPI(t, errorReply(http.StatusBadRequest, huge, nil))
	m := newTestOpenAI(t, "openai-compatible:qwen-test", f, "")
	_, err := collect(context.Background(), m, hello())
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest {
		t.Fatalf("got error %v, want an *APIError with status 400", err)
	}
	if len(apiErr.Message) > 1000 {
		t.Errorf("message of %d bytes, want it cut", len(apiErr.Message))
	}
}

// A stream that keeps the connection open after its last event is not
// waited for.
func TestStreamHeldOpenAfterLastEvent(t *testing.T) {
	for spec, file := range map[string]string{"anthropic:claude-test": "anthropic/max_tokens.sse", "openai:gpt-test": "openai/max_tokens.sse"} {
		t.Run(spec, func(t *testing.T) {
			handlerDone := make(chan struct{})
			f := newFakeAPI(t, stalled(t, file, handlerDone))
			m, err := New(spec, Options{BaseURL: f.URL(), APIKey: "k", Getenv: noEnv})
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				if _, err := collect(context.Background(), m, hello()); err != nil {
					t.Errorf("Stream: %v", err)
				}
			}()
			waitClosed(t, done, "Stream returning after the last event")
			waitClosed(t, handlerDone, "the handler seeing the request go away")
		})
	}
}

func TestNewEndpointURL(t *testing.T) {
	tests := []struct{ base, path, want string }{
		{"https://api.openai.com/v1", "chat/completions", "https://api.openai.com/v1/chat/completions"},
		{"https://api.openai.com/v1/", "chat/completions", "https://api.openai.com/v1/chat/completions"},
		{"http://localhost:8080", "chat/completions", "http://localhost:8080/chat/completions"},
		{"https://api.anthropic.com", "v1/messages", "https://api.anthropic.com/v1/messages"},
		{"https://proxy.test/anthropic/", "v1/messages", "https://proxy.test/anthropic/v1/messages"},
		{"https://proxy.test/v1?key=x", "chat/completions", "https://proxy.test/v1/chat/completions"},
	}
	for _, tt := range tests {
		e, err := newEndpoint("p", "", tt.base, tt.path, nil, Options{})
		if err != nil {
			t.Fatalf("newEndpoint(%q): %v", tt.base, err)
		}
		if e.url != tt.want {
			t.Errorf("newEndpoint(%q, %q) URL = %q, want %q", tt.base, tt.path, e.url, tt.want)
		}
	}
}

// roundTripFunc answers requests without a network.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// trackedBody is a response body that hands out one byte per read and
// remembers whether it was read to its end and closed.
type trackedBody struct {
	r           io.Reader
	eof, closed bool
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

func (b *trackedBody) Close() error { b.closed = true; return nil }

// Every response body is closed, whatever the turn's outcome, and a body
// whose end is near is read to it first, so that an HTTP/1.1 connection can
// serve the next request.
func TestBodiesClosed(t *testing.T) {
	tests := []struct {
		spec, file string
		status     int
		wantErr    bool
		wantEOF    bool
	}{
		{"anthropic:claude-test", "anthropic/text_and_tool.sse", 200, false, true},
		{"anthropic:claude-test", "anthropic/stream_error.sse", 200, true, false},
		{"anthropic:claude-test", "anthropic/bad_args.sse", 200, true, false},
		{"anthropic:claude-test", "anthropic/truncated.sse", 200, true, true},
		{"openai:gpt-test", "openai/text_and_tool.sse", 200, false, true},
		{"openai:gpt-test", "openai/stream_error.sse", 200, true, false},
		{"openai:gpt-test", "openai/truncated.sse", 200, true, true},
		{"openai:gpt-test", "", 401, true, true},
		{"anthropic:claude-test", "", 500, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.spec+" "+tt.file+" "+http.StatusText(tt.status), func(t *testing.T) {
			data := []byte(`{"error":{"type":"x","message":"no"}}`)
			if tt.file != "" {
				var err error
				if data, err = os.ReadFile(filepath.Join("testdata", tt.file)); err != nil {
					t.Fatal(err)
				}
			}
			var bodies []*trackedBody
			client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				b := &trackedBody{r: iotest.OneByteReader(bytes.NewReader(data))}
				bodies = append(bodies, b)
				return &http.Response{StatusCode: tt.status, Header: http.Header{}, Body: b, Request: r}, nil
			})}
			m, err := New(tt.spec, Options{BaseURL: "http://127.0.0.1:1", APIKey: "k", Getenv: noEnv, HTTPClient: client, MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			_, err = collect(context.Background(), m, hello())
			if (err != nil) != tt.wantErr {
				t.Errorf("got error %v, want error %v", err, tt.wantErr)
			}
			if len(bodies) != 1 {
				t.Fatalf("got %d requests, want 1", len(bodies))
			}
			if b := bodies[0]; !b.closed || (tt.wantEOF && !b.eof) {
				t.Errorf("body closed %v, read to the end %v; want closed, read to the end %v", b.closed, b.eof, tt.wantEOF)
			}
		})
	}
}

// endpointOf returns the endpoint of a provider model.
func endpointOf(t *testing.T, m Model) *endpoint {
	t.Helper()
	switch m := m.(type) {
	case *openaiModel:
		return m.endpoint
	case *anthropicModel:
		return m.endpoint
	}
	t.Fatalf("no endpoint in %T", m)
	return nil
}

// A redirect within the endpoint's origin is followed; one to another port
// (net/http would keep the Authorization header) is refused, not retried,
// and the other server sees nothing.
func TestRedirectsStayWithTheOrigin(t *testing.T) {
	var otherHits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		inline("data: [DONE]\n\n")(w, r)
	}))
	t.Cleanup(other.Close)
	var hits atomic.Int32
	stream := `data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/away/chat/completions":
			http.Redirect(w, r, other.URL+"/v1/chat/completions", http.StatusTemporaryRedirect)
		case "/moved/chat/completions":
			http.Redirect(w, r, "/v1/chat/completions", http.StatusPermanentRedirect)
		default:
			inline(stream)(w, r)
		}
	}))
	t.Cleanup(srv.Close)

	m, err := New("openai:gpt-test", Options{BaseURL: srv.URL + "/moved", APIKey: "secret", Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := collect(context.Background(), m, hello()); err != nil {
		t.Errorf("redirect within the origin: %v", err)
	}
	hits.Store(0)
	m, err = New("openai:gpt-test", Options{BaseURL: srv.URL + "/away", APIKey: "secret", Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	_, err = collect(context.Background(), m, hello())
	if err == nil || !strings.Contains(err.Error(), "follows redirects only within") {
		t.Errorf("redirect to another port: %v, want it refused", err)
	}
	if n := otherHits.Load(); n != 0 {
		t.Errorf("the other origin received %d requests", n)
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("%d attempts, want 1: a refused redirect is not retried", n)
	}
}

// A quota error is reported at once, as what it is.
func TestQuotaNotRetried(t *testing.T) {
	f := newFakeAPI(t, errorReply(429, `{"error":{"type":"insufficient_quota","code":"insufficient_quota","message":"You exceeded your current quota."}}`, map[string]string{"Retry-After-Ms": "0"}))
	m, err := New("openai:gpt-test", Options{BaseURL: f.URL(), APIKey: "k", Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	_, err = collect(context.Background(), m, hello())
	var apiErr *APIError
	if !errors.As(err, &apiErr) || !apiErr.QuotaExhausted() || apiErr.RateLimited() {
		t.Fatalf("err = %v, want a quota error that is not a rate limit", err)
	}
	if !strings.Contains(err.Error(), "billing") || strings.Contains(err.Error(), "wait a moment") {
		t.Errorf("message %q should point at billing, not at waiting", err)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

// A 200 answer with a JSON body is an error that says what the body says.
func TestJSONInsteadOfStream(t *testing.T) {
	f := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"error":{"message":"upstream model is loading"}}`)
	})
	m, err := New("openai-compatible:x", Options{BaseURL: f.URL(), Getenv: noEnv, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = collect(context.Background(), m, hello())
	if err == nil || !strings.Contains(err.Error(), "upstream model is loading") {
		t.Errorf("err = %v, want the body's message", err)
	}
}

// A stream that falls silent after a comment is given up after the idle
// bound.
func TestStreamIdle(t *testing.T) {
	done := make(chan struct{})
	f := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, ": keep-alive\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // then silence
	})
	m, err := New("openai:gpt-test", Options{BaseURL: f.URL(), APIKey: "k", Getenv: noEnv, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	endpointOf(t, m).idle = 50 * time.Millisecond
	_, err = collect(context.Background(), m, hello())
	if err == nil || !strings.Contains(err.Error(), "no event in the response stream for 50ms") {
		t.Errorf("err = %v, want the stream given up as idle", err)
	}
	waitClosed(t, done, "the server seeing the stream closed")
}

// Every line, a keep-alive comment included, is a sign of life: the idle
// timer of a stream is reset by it.
func TestKeepAliveIsActivity(t *testing.T) {
	r := newSSEReader(strings.NewReader(": keep-alive\n\n: ping\r\ndata: {}\n\n"))
	lines := 0
	r.onLine = func() { lines++ }
	if _, err := r.next(); err != nil {
		t.Fatal(err)
	}
	if lines != 5 {
		t.Errorf("onLine called %d times for the 5 lines before the first event, want 5", lines)
	}
}
