package llm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeAPI is a provider endpoint on 127.0.0.1 that keeps every request it
// receives and answers with reply.
type fakeAPI struct {
	srv   *httptest.Server
	mu    sync.Mutex
	got   []gotRequest
	reply http.HandlerFunc
}

type gotRequest struct {
	Method, Path string
	Header       http.Header
	Body         map[string]any
	Raw          []byte
}

func newFakeAPI(t *testing.T, reply http.HandlerFunc) *fakeAPI {
	t.Helper()
	f := &fakeAPI{reply: reply}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("reading the request body: %v", err)
		}
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Errorf("request body is not a JSON object: %v\n%s", err, raw)
		}
		f.mu.Lock()
		f.got = append(f.got, gotRequest{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Raw: raw})
		f.mu.Unlock()
		f.reply(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) URL() string { return f.srv.URL }

func (f *fakeAPI) requests() []gotRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]gotRequest(nil), f.got...)
}

// replay answers with a recorded event stream from testdata.
func replay(t *testing.T, name string) http.HandlerFunc {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(data)
	}
}

// errorReply answers with status and a JSON (or any) body.
func errorReply(status int, body string, header map[string]string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// stalled sends the head of a recorded stream, then holds the connection
// open until the client goes away, and closes done when it has seen that.
func stalled(t *testing.T, name string, done chan<- struct{}) http.HandlerFunc {
	t.Helper()
	head := replay(t, name)
	return func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		head(w, r)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
}

// collect runs one turn and returns the events it emitted.
func collect(ctx context.Context, m Model, req *Request) ([]Event, error) {
	var events []Event
	err := m.Stream(ctx, req, func(e Event) { events = append(events, e) })
	return events, err
}

// noEnv is an environment with nothing set.
func noEnv(string) string { return "" }

// envOf is an environment with exactly vars set.
func envOf(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// waitClosed fails the test if ch is not closed within a generous bound; it
// guards against a hang, it does not measure speed.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not happen", what)
	}
}

func hello() *Request {
	return &Request{Messages: []Message{{Role: RoleUser, Text: "hello"}}}
}

func mustJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad JSON in test: %v", err)
	}
	return v
}

// checkAPIError checks a turn that an HTTP error status ended: an *APIError
// with that status, rate limiting said only for 429, every want in the
// message and no escape character, no events, and one request (the tests
// disable retries).
func checkAPIError(t *testing.T, f *fakeAPI, events []Event, err error, status int, want []string) {
	t.Helper()
	var apiErr *APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("got error %v (%T), want *APIError", err, err)
	}
	if apiErr.StatusCode != status {
		t.Errorf("StatusCode = %d, want %d", apiErr.StatusCode, status)
	}
	if apiErr.RateLimited() != (status == http.StatusTooManyRequests) {
		t.Errorf("RateLimited() = %v for %d", apiErr.RateLimited(), status)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
	if strings.ContainsRune(err.Error(), 0x1b) {
		t.Errorf("error %q carries an escape character", err)
	}
	if len(events) != 0 {
		t.Errorf("got events %v, want none", events)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("got %d requests with retries disabled, want 1", n)
	}
}

// checkFailedTurn checks a turn that failed inside its stream: an error
// containing want, and neither a done nor a tool call event.
func checkFailedTurn(t *testing.T, events []Event, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got error %v, want one containing %q", err, want)
	}
	for _, e := range events {
		if e.Kind == EventDone || e.Kind == EventToolCall {
			t.Errorf("got %s event from a failed turn", e.Kind)
		}
	}
}
