package llm

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// benchTurn measures one whole turn with a tool call against a local server
// replaying a recorded stream: building and sending the request, reading the
// stream, and assembling the events. The request carries a short
// conversation with two tools, as the host's second turn would.
func benchTurn(b *testing.B, spec, file string) {
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(data)
	}))
	b.Cleanup(srv.Close)
	m, err := New(spec, Options{BaseURL: srv.URL, APIKey: "k", Getenv: noEnv, MaxRetries: -1})
	if err != nil {
		b.Fatal(err)
	}
	req := conversation(`{"type":"object","properties":{"path":{"type":"string","minLength":1}},"required":["path"]}`)
	ctx := context.Background()
	var calls int
	emit := func(e Event) {
		if e.Kind == EventToolCall {
			calls++
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := m.Stream(ctx, req, emit); err != nil {
			b.Fatal(err)
		}
	}
	if calls == 0 {
		b.Fatal("no tool call was emitted")
	}
}

func BenchmarkStreamOpenAI(b *testing.B) {
	benchTurn(b, "openai:gpt-test", "openai/text_and_tool.sse")
}

func BenchmarkStreamAnthropic(b *testing.B) {
	benchTurn(b, "anthropic:claude-test", "anthropic/text_and_tool.sse")
}
