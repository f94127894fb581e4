package llm

import (
	"context"
	"encoding/json"
	"fmt"
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
	req := conversation(`{"type":"object","properties":{"path":{"type":"string","minLength":1}},"required":["path"]}`)
	benchRequest(b, spec, file, req)
}

// manyTools is the conversation of benchTurn offering n tools with schemas
// of a few hundred bytes, as ten servers of two dozen tools would.
func manyTools(n int) *Request {
	req := conversation(`{}`)
	req.Tools = nil
	for i := range n {
		req.Tools = append(req.Tools, Tool{
			Name:        fmt.Sprintf("server%d__tool_%d", i/26, i%26),
			Description: "Update the task's status, title or owner; the change is kept until the next update.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"task id, such as T-1"},"status":{"type":"string","enum":["open","doing","blocked","done"]},"title":{"type":"string","maxLength":200},"owner":{"type":"string"}},"required":["id"],"additionalProperties":false}`),
		})
	}
	return req
}

func benchRequest(b *testing.B, spec, file string, req *Request) {
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

// The host's turns with ten servers' tools: the request body is mostly the
// tool schemas, the same on every turn. A compatible server, because OpenAI
// itself takes at most 128 tools.
func BenchmarkStreamOpenAI260Tools(b *testing.B) {
	benchRequest(b, "openai-compatible:gpt-test", "openai/text_and_tool.sse", manyTools(260))
}

func BenchmarkStreamAnthropic260Tools(b *testing.B) {
	benchRequest(b, "anthropic:claude-test", "anthropic/text_and_tool.sse", manyTools(260))
}
