package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"
)

// OpenAI takes at most 128 tools: more is a configuration error before
// anything is sent, never a 400 on every turn.
func TestOpenAITooManyTools(t *testing.T) {
	f := newFakeAPI(t, replay(t, "openai/max_tokens.sse"))
	m := model(t, "openai:gpt-test", f, Options{})
	req := hello()
	req.Tools = manyTools(129).Tools
	_, err := collect(context.Background(), m, req)
	var tm *TooManyToolsError
	if !errors.As(err, &tm) || tm.Max != 128 || tm.Got != 129 || !errors.Is(err, ErrConfig) {
		t.Fatalf("err = %v, want a TooManyToolsError 129 > 128 matching ErrConfig", err)
	}
	if n := len(f.requests()); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
	req.Tools = req.Tools[:128]
	if _, err := collect(context.Background(), m, req); err != nil {
		t.Errorf("128 tools: %v", err)
	}
}

// A description over OpenAI's 1,024 characters is cut with a marker, and
// the person is told once, not on every turn; Anthropic gets it whole.
func TestDescriptionCutToTheProviderLimit(t *testing.T) {
	long := strings.Repeat("Think step by step, é. ", 121)[:2780] // the size of the reference sequential-thinking server's
	tools := []Tool{{Name: "think", Description: long}, {Name: "short", Description: "Short."}}
	for _, tt := range []struct {
		spec, file string
		cut        bool
	}{{"openai:gpt-test", "openai/max_tokens.sse", true}, {"anthropic:claude-test", "anthropic/max_tokens.sse", false}} {
		t.Run(tt.spec, func(t *testing.T) {
			f := newFakeAPI(t, replay(t, tt.file))
			m := model(t, tt.spec, f, Options{})
			req := hello()
			req.Tools = tools
			var warnings []string
			for range 2 {
				events, _ := turnOf(t, m, req)
				for _, e := range events {
					if e.Kind == EventWarning {
						warnings = append(warnings, e.Text)
					}
				}
			}
			var body struct {
				Tools []map[string]any `json:"tools"`
			}
			if err := json.Unmarshal(f.requests()[0].Raw, &body); err != nil {
				t.Fatal(err)
			}
			desc, _ := body.Tools[0]["description"].(string)
			if fn, ok := body.Tools[0]["function"].(map[string]any); ok {
				desc, _ = fn["description"].(string)
			}
			if !tt.cut {
				if desc != long || len(warnings) != 0 {
					t.Errorf("description of %d bytes, warnings %v; want it whole and no warning", len(desc), warnings)
				}
				return
			}
			if n := utf8.RuneCountInString(desc); n > 1024 || n < 1000 || !strings.HasSuffix(desc, cutMarker) || !utf8.ValidString(desc) {
				t.Errorf("description of %d characters ending %q; want at most 1024 ending with the marker", n, desc[max(0, len(desc)-40):])
			}
			if len(warnings) != 1 || !strings.Contains(warnings[0], "think") {
				t.Errorf("warnings = %v, want one, naming the tool, for two turns", warnings)
			}
		})
	}
}

func TestNormalizeSchema(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, "", ""}, // unchanged
		{`{"type":"object"}`, `{"type":"object","properties":{}}`, ""},
		{`{"properties":{"a":{}}}`, `{"type":"object","properties":{"a":{}}}`, ""},
		{`{"type":["object","null"],"properties":{}}`, `{"type":"object","properties":{}}`, ""},
		{`{"type":"object","allOf":[{"properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{}},"required":["b"]}]}`,
			`{"type":"object","properties":{"a":{"type":"string"},"b":{}},"required":["a","b"]}`, ""},
		{`{"type":"object","description":"Find.","anyOf":[{"properties":{"id":{}},"required":["id"]},{"properties":{"name":{}},"required":["name"]}]}`,
			`{"type":"object","description":"Find.\nArguments must match one of these schemas (anyOf): [{\"properties\":{\"id\":{}},\"required\":[\"id\"]},{\"properties\":{\"name\":{}},\"required\":[\"name\"]}]","properties":{"id":{},"name":{}}}`, ""},
		{`{"oneOf":[{"type":"object","properties":{"q":{}},"required":["q","k"]},{"type":"object","properties":{"k":{}},"required":["k"]}]}`,
			`{"type":"object","properties":{"q":{},"k":{}},"required":["k"],"description":"Arguments must match one of these schemas (oneOf): [{\"type\":\"object\",\"properties\":{\"q\":{}},\"required\":[\"q\",\"k\"]},{\"type\":\"object\",\"properties\":{\"k\":{}},\"required\":[\"k\"]}]"}`, ""},
		{`{"type":"array","items":{}}`, "", `top-level type is "array"`},
		{`{"anyOf":[{"type":"string"}]}`, "", `anyOf has a branch of type "string"`},
	}
	for _, tt := range tests {
		got, changed, err := normalizeSchema([]byte(tt.in))
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: err = %v, want %q", tt.in, err, tt.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tt.in, err)
		case tt.want == "":
			if changed || string(got) != tt.in {
				t.Errorf("%s changed to %s, want it as given", tt.in, got)
			}
		case string(got) != tt.want || !changed:
			t.Errorf("%s\n got %s\nwant %s", tt.in, got, tt.want)
		}
	}
}

// A tool whose schema no provider accepts is left out and reported; the
// others are offered, so one bad server does not fail every turn.
func TestUnofferableToolLeftOut(t *testing.T) {
	for spec, file := range map[string]string{"anthropic:claude-test": "anthropic/max_tokens.sse", "openai:gpt-test": "openai/max_tokens.sse"} {
		t.Run(spec, func(t *testing.T) {
			f := newFakeAPI(t, replay(t, file))
			req := hello()
			req.Tools = []Tool{{Name: "bad", InputSchema: json.RawMessage(`{"type":"string"}`)}, {Name: "bare", InputSchema: json.RawMessage(`{"type":"object"}`)}}
			events, _ := turnOf(t, model(t, spec, f, Options{}), req)
			if events[0].Kind != EventWarning || !strings.Contains(events[0].Text, "tool bad is not offered") {
				t.Errorf("first event %+v, want a warning about tool bad", events[0])
			}
			raw := string(f.requests()[0].Raw)
			if strings.Contains(raw, `"bad"`) || !strings.Contains(raw, `"name":"bare"`) || !strings.Contains(raw, `{"type":"object","properties":{}}`) {
				t.Errorf("request %s: want bare offered with properties and bad left out", raw)
			}
		})
	}
}

// A key never travels over plain http to another machine unless the
// person said so.
func TestKeyNotSentOverPlainHTTP(t *testing.T) {
	tests := []struct {
		spec, base, key string
		allow           bool
		wantErr         string
	}{
		{"openai-compatible:x", "http://gpu.example.com:8000/v1", "sk", false, "refusing to send the API key over plain http to gpu.example.com:8000"},
		{"anthropic:claude-test", "http://proxy.example.com", "sk", false, "refusing to send ANTHROPIC_API_KEY over plain http"},
		{"openai:gpt-test", "http://10.0.0.5/v1", "sk", false, "--allow-plain-http"},
		{"openai-compatible:x", "http://gpu.example.com:8000/v1", "sk", true, ""},
		{"openai-compatible:x", "http://127.0.0.1:8080/v1", "sk", false, ""},
		{"openai-compatible:x", "http://localhost:8080/v1", "sk", false, ""},
		{"openai-compatible:x", "http://[::1]:8080/v1", "sk", false, ""},
		{"openai-compatible:x", "http://LOCALHOST:8080/v1", "sk", false, ""},
		// A name under .localhost is resolved by DNS in Go's own resolver,
		// which could answer with another machine's address.
		{"openai-compatible:x", "http://gpu.localhost:8080/v1", "sk", false, "refusing to send the API key over plain http to gpu.localhost:8080"},
		{"openai-compatible:x", "https://gpu.example.com/v1", "sk", false, ""},
		{"ollama:llama3", "http://gpu.example.com:11434/v1", "", false, ""},
	}
	_, err := New("openai-compatible:x", Options{BaseURL: "http://gpu.example.com/v1", Getenv: envOf(map[string]string{"OPENAI_API_KEY": "sk"})})
	if err == nil || !strings.Contains(err.Error(), "refusing to send OPENAI_API_KEY") || !strings.Contains(err.Error(), "unset OPENAI_API_KEY") {
		t.Errorf("key from the environment: err = %v, want a refusal that says how to do without the key", err)
	}
	for _, tt := range tests {
		_, err := New(tt.spec, Options{BaseURL: tt.base, APIKey: tt.key, Getenv: noEnv, AllowPlainHTTP: tt.allow})
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrConfig)) {
			t.Errorf("%s at %s (allow %v): err = %v, want %q", tt.spec, tt.base, tt.allow, err, tt.wantErr)
		}
	}
}

// Stop reasons: a refusal's explanation comes with the done event; a turn
// cut off inside a tool call emits no call, on either API, even one whose
// arguments happen to be complete JSON.
func TestStopReasons(t *testing.T) {
	cutComplete := `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"rm","arguments":"{\"path\":\"/\"}"}}]},"finish_reason":null}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}` + "\n\ndata: [DONE]\n\n"
	tests := []struct {
		spec    string
		h       http.HandlerFunc
		stop    string
		text    string // all text deltas
		explain string
	}{
		{"anthropic:claude-test", replay(t, "anthropic/refusal.sse"), StopRefusal, "Step one is to", "This request asks for help attacking systems the person does not own."},
		{"anthropic:claude-test", replay(t, "anthropic/max_tokens_tool.sse"), StopMaxTokens, "Writing the file.", ""},
		{"openai:gpt-test", replay(t, "openai/length_tool.sse"), StopMaxTokens, "", ""},
		{"openai:gpt-test", inline(cutComplete), StopMaxTokens, "", ""},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			f := newFakeAPI(t, tt.h)
			events, done := turnOf(t, model(t, tt.spec, f, Options{}), hello())
			var text string
			for _, e := range events {
				if e.Kind == EventToolCall {
					t.Errorf("tool call %+v emitted from a turn that stopped for %s", e.Call, done.StopReason)
				}
				if e.Kind == EventTextDelta {
					text += e.Text
				}
			}
			if done.StopReason != tt.stop || text != tt.text || done.Text != tt.explain {
				t.Errorf("stop %q, text %q, explanation %q; want %q, %q, %q", done.StopReason, text, done.Text, tt.stop, tt.text, tt.explain)
			}
			if strings.Contains(string(done.Raw), "tool_use") || strings.Contains(string(done.Raw), "tool_calls") {
				t.Errorf("raw content %s keeps the cut-off call", done.Raw)
			}
		})
	}
}

// An overloaded_error at the start of a stream is retried like a 529; one
// after output is not, because the output was already shown.
func TestOverloadedInStreamRetried(t *testing.T) {
	f := newFakeAPI(t, sequence(replay(t, "anthropic/overloaded.sse"), replay(t, "anthropic/text_and_tool.sse")))
	m, err := New("anthropic:claude-test", Options{BaseURL: f.URL(), APIKey: "k", Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	var waits []time.Duration
	endpointOf(t, m).sleep = func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	if _, done := turnOf(t, m, hello()); done.StopReason != StopToolUse {
		t.Errorf("stop %q", done.StopReason)
	}
	if n := len(f.requests()); n != 2 || len(waits) != 1 {
		t.Errorf("%d requests and %d waits, want 2 and 1", n, len(waits))
	}

	late := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"Hi\"}}\n\n" +
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
	f = newFakeAPI(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Request-Id", "req_011Late")
		inline(late)(w, r)
	})
	m, _ = New("anthropic:claude-test", Options{BaseURL: f.URL(), APIKey: "k", Getenv: noEnv})
	endpointOf(t, m).sleep = func(context.Context, time.Duration) error { return nil }
	_, err = collect(context.Background(), m, hello())
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Type != "overloaded_error" || len(f.requests()) != 1 {
		t.Errorf("err = %v after %d requests, want the overloaded error after one", err, len(f.requests()))
	}
	if !strings.Contains(fmt.Sprint(err), "request id req_011Late") {
		t.Errorf("error %v does not carry the request id", err)
	}
}

// The provider's request id is kept in an HTTP error, and a wait longer
// than mcphost's is reported with what the provider asked for.
func TestErrorRequestIDAndLongRetryAfter(t *testing.T) {
	f := newFakeAPI(t, errorReply(429, `{"error":{"type":"rate_limit_error","message":"slow down"}}`, map[string]string{"x-request-id": "req_abc123", "Retry-After": "120"}))
	m := model(t, "openai:gpt-test", f, Options{})
	endpointOf(t, m).retries = 2
	_, err := collect(context.Background(), m, hello())
	for _, want := range []string{"request id req_abc123", "asked to wait 2m0s", "try again later"} {
		if !strings.Contains(fmt.Sprint(err), want) {
			t.Errorf("error %v does not contain %q", err, want)
		}
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("%d requests, want 1: a two-minute wait is not retried within the turn", n)
	}
}

// A 200 answer with a JSON body (a server or proxy that does not stream)
// is an answer, not an API error.
func TestNonStreamingAnswer(t *testing.T) {
	tests := []struct{ spec, body string }{
		{"openai-compatible:x", `{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Reading.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"files_read","arguments":"{\"path\":\"a.txt\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":9,"completion_tokens":7}}`},
		{"anthropic:claude-test", `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"Reading."},{"type":"tool_use","id":"call_1","name":"files_read","input":{"path":"a.txt"}}],"stop_reason":"tool_use","usage":{"input_tokens":9,"output_tokens":7}}`},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			f := newFakeAPI(t, errorReply(200, tt.body, nil))
			events, done := turnOf(t, model(t, tt.spec, f, Options{}), hello())
			var calls []string
			var text string
			for _, e := range events {
				switch e.Kind {
				case EventToolCall:
					calls = append(calls, e.Call.ID+" "+e.Call.Name+" "+string(e.Call.Args))
				case EventTextDelta:
					text += e.Text
				case EventUsage:
					if e.Usage != (Usage{InputTokens: 9, OutputTokens: 7}) {
						t.Errorf("usage %+v", e.Usage)
					}
				}
			}
			if text != "Reading." || len(calls) != 1 || calls[0] != `call_1 files_read {"path":"a.txt"}` || done.StopReason != StopToolUse {
				t.Errorf("text %q, calls %v, stop %q", text, calls, done.StopReason)
			}
		})
	}
	f := newFakeAPI(t, errorReply(200, `{"error":{"message":"upstream timeout","type":"gateway_error"}}`, nil))
	_, err := collect(context.Background(), model(t, "openai-compatible:x", f, Options{}), hello())
	if err == nil || !strings.Contains(err.Error(), "upstream timeout") {
		t.Errorf("err = %v, want the gateway's error", err)
	}
}

// llama.cpp's older "error:" line ends the turn with its message.
func TestLlamaCppErrorLine(t *testing.T) {
	f := newFakeAPI(t, replay(t, "openai/llamacpp_error.sse"))
	_, err := collect(context.Background(), model(t, "openai-compatible:local", f, Options{}), hello())
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Type != "exceed_context_size_error" || !strings.Contains(apiErr.Message, "exceeds the available context size") {
		t.Errorf("err = %v, want the server's error", err)
	}
}

// Ollama's OpenAI-compatible endpoint cannot be given a context size; a
// request larger than the context Ollama runs the model with (as /api/ps
// reports it) draws one warning naming OLLAMA_CONTEXT_LENGTH.
func TestOllamaContextWarned(t *testing.T) {
	stream := `data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}` + "\n\n" +
		`data: {"choices":[],"usage":{"prompt_tokens":4096,"completion_tokens":1}}` + "\n\ndata: [DONE]\n\n"
	var ps atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/ps":
			ps.Add(1)
			_, _ = io.WriteString(w, `{"models":[{"name":"llama3:latest","model":"llama3:latest","size":5137025024,"context_length":4096}]}`)
		case "/v1/chat/completions":
			_, _ = io.Copy(io.Discard, r.Body)
			inline(stream)(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	m, err := New("ollama:llama3", Options{BaseURL: srv.URL + "/v1", Getenv: noEnv, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	warnings := func(req *Request) (n int, text string) {
		events, _ := turnOf(t, m, req)
		for _, e := range events {
			if e.Kind == EventWarning {
				n, text = n+1, e.Text
			}
		}
		return n, text
	}
	if n, _ := warnings(hello()); n != 0 || ps.Load() != 0 {
		t.Errorf("a small request drew %d warnings and %d questions to the server, want none", n, ps.Load())
	}
	big := &Request{System: strings.Repeat("You are a careful assistant. ", 1000), Messages: hello().Messages}
	n, text := warnings(big)
	if n != 1 || !strings.Contains(text, "context of 4096 tokens") || !strings.Contains(text, "OLLAMA_CONTEXT_LENGTH=16384") {
		t.Errorf("%d warnings, %q; want one naming the context and OLLAMA_CONTEXT_LENGTH", n, text)
	}
	if n, _ := warnings(big); n != 0 || ps.Load() != 1 {
		t.Errorf("second large turn: %d warnings after %d questions, want none after one", n, ps.Load())
	}
}
