package llm

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Warm leaves one connection that the first turn then uses, and sends no
// credential.
func TestWarmReusesConnection(t *testing.T) {
	for _, tt := range []struct{ spec, file, keyHeader string }{
		{"openai:gpt-test", "openai/max_tokens.sse", "Authorization"},
		{"anthropic:claude-test", "anthropic/max_tokens.sse", "Authorization"},
	} {
		t.Run(tt.spec, func(t *testing.T) {
			stream, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var conns int
			var methods []string
			var headAuth string
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				methods = append(methods, r.Method)
				if r.Method == http.MethodHead {
					headAuth = r.Header.Get(tt.keyHeader) + r.Header.Get("X-Api-Key")
				}
				mu.Unlock()
				if r.Method != http.MethodPost {
					w.WriteHeader(http.StatusMethodNotAllowed)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = w.Write(stream)
			}))
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					mu.Lock()
					conns++
					mu.Unlock()
				}
			}
			srv.Start()
			t.Cleanup(srv.Close)

			m, err := New(tt.spec, Options{BaseURL: srv.URL, APIKey: "secret-key", Getenv: noEnv, MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			w, ok := m.(Warmer)
			if !ok {
				t.Fatalf("%T does not implement Warmer", m)
			}
			w.Warm(context.Background())
			if _, err := collect(context.Background(), m, hello()); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(methods) != 2 || methods[0] != http.MethodHead || methods[1] != http.MethodPost {
				t.Errorf("requests %v, want HEAD then POST", methods)
			}
			if conns != 1 {
				t.Errorf("%d connections, want the warm one reused", conns)
			}
			if headAuth != "" {
				t.Errorf("the warm-up request carried a credential: %q", headAuth)
			}
		})
	}
}

// Warm against a server that cannot be reached returns, and the turn after
// it reports the failure as it would have without the warm-up.
func TestWarmUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	m, err := New("openai:gpt-test", Options{BaseURL: url, APIKey: "k", Getenv: noEnv, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	m.(Warmer).Warm(context.Background())
	_, err = collect(context.Background(), m, hello())
	if err == nil || !strings.Contains(err.Error(), "cannot reach "+url+"/chat/completions: ") || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("turn after a failed warm-up: %v, want the connection error", err)
	}
}
