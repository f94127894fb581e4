package llm

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func newTestOpenAI(t *testing.T, spec string, f *fakeAPI, key string) Model {
	t.Helper()
	m, err := New(spec, Options{BaseURL: f.URL(), APIKey: key, Getenv: noEnv, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestOpenAIStream(t *testing.T) {
	tests := []struct {
		spec, file string
		want       []Event
	}{
		{"openai:gpt-test", "openai/text_and_tool.sse", []Event{
			{Kind: EventTextDelta, Text: "Let me check "},
			{Kind: EventTextDelta, Text: "the weather."},
			{Kind: EventToolCall, Call: &ToolCall{ID: "call_Weather1", Name: "get_weather",
				Args: json.RawMessage(`{"location": "San Francisco, CA", "unit": "celsius", "days": [1, 2]}`)}},
			{Kind: EventUsage, Usage: Usage{InputTokens: 472, OutputTokens: 89}},
			{Kind: EventDone, StopReason: StopToolUse},
		}},
		{"openai:gpt-test", "openai/parallel_tools.sse", []Event{
			{Kind: EventToolCall, Call: &ToolCall{ID: "call_ReadA", Name: "files_read", Args: json.RawMessage(`{"path": "a.txt"}`)}},
			{Kind: EventToolCall, Call: &ToolCall{ID: "call_ListB", Name: "files_list", Args: json.RawMessage(`{"dir": "."}`)}},
			{Kind: EventUsage, Usage: Usage{InputTokens: 310, OutputTokens: 61}},
			{Kind: EventDone, StopReason: StopToolUse},
		}},
		{"openai:gpt-test", "openai/max_tokens.sse", []Event{
			{Kind: EventTextDelta, Text: "Once upon"},
			{Kind: EventUsage, Usage: Usage{InputTokens: 12, OutputTokens: 2}},
			{Kind: EventDone, StopReason: StopMaxTokens},
		}},
		// A compatible server that leaves out the call id, the usage chunk,
		// and says "stop" after a tool call.
		{"ollama:llama-test", "openai/compat_no_id.sse", []Event{
			{Kind: EventToolCall, Call: &ToolCall{ID: "call_0", Name: "files_list", Args: json.RawMessage(`{}`)}},
			{Kind: EventUsage},
			{Kind: EventDone, StopReason: StopToolUse},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f := newFakeAPI(t, replay(t, tt.file))
			got, err := collect(context.Background(), newTestOpenAI(t, tt.spec, f, "sk-test"), hello())
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func conversation(schema string) *Request {
	return &Request{
		System:    "You are terse.",
		MaxTokens: 1000,
		Messages: []Message{
			{Role: RoleUser, Text: "Read a.txt and list ."},
			{Role: RoleAssistant, Text: "Reading.", ToolCalls: []ToolCall{
				{ID: "call_1", Name: "files_read", Args: json.RawMessage(`{"path":"a.txt"}`)},
				{ID: "call_2", Name: "files_list"},
			}},
			{Role: RoleTool, ToolResults: []ToolResult{
				{CallID: "call_1", Content: "hello"},
				{CallID: "call_2", Content: "denied by rule", IsError: true},
			}},
			{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "call_3", Name: "files_list", Args: json.RawMessage(`{}`)}}},
			{Role: RoleTool, ToolResults: []ToolResult{{CallID: "call_3", Content: "a.txt"}}},
		},
		Tools: []Tool{
			{Name: "files_read", Description: "Read a file.", InputSchema: json.RawMessage(schema)},
			{Name: "files_list"},
		},
	}
}

func TestOpenAIRequest(t *testing.T) {
	schema := `{"type":"object","properties":{"path":{"type":"string","minLength":1}},"required":["path"],"additionalProperties":false,"$defs":{"x":{"oneOf":[{"type":"null"}]}}}`
	messages := `[
		{"role": "system", "content": "You are terse."},
		{"role": "user", "content": "Read a.txt and list ."},
		{"role": "assistant", "content": "Reading.", "tool_calls": [
			{"id": "call_1", "type": "function", "function": {"name": "files_read", "arguments": "{\"path\":\"a.txt\"}"}},
			{"id": "call_2", "type": "function", "function": {"name": "files_list", "arguments": "{}"}}
		]},
		{"role": "tool", "tool_call_id": "call_1", "content": "hello"},
		{"role": "tool", "tool_call_id": "call_2", "content": "Error: denied by rule"},
		{"role": "assistant", "tool_calls": [
			{"id": "call_3", "type": "function", "function": {"name": "files_list", "arguments": "{}"}}
		]},
		{"role": "tool", "tool_call_id": "call_3", "content": "a.txt"}
	]`
	tools := `[
		{"type": "function", "function": {"name": "files_read", "description": "Read a file.", "parameters": ` + schema + `}},
		{"type": "function", "function": {"name": "files_list", "parameters": {"type": "object", "properties": {}}}}
	]`
	tests := []struct {
		spec, key, auth, maxField string
	}{
		{"openai:gpt-test", "sk-test", "Bearer sk-test", "max_completion_tokens"},
		{"ollama:llama-test", "", "", "max_tokens"},
		{"openai-compatible:qwen-test", "local-key", "Bearer local-key", "max_tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			f := newFakeAPI(t, replay(t, "openai/max_tokens.sse"))
			if _, err := collect(context.Background(), newTestOpenAI(t, tt.spec, f, tt.key), conversation(schema)); err != nil {
				t.Fatalf("Stream: %v", err)
			}
			reqs := f.requests()
			if len(reqs) != 1 {
				t.Fatalf("got %d requests, want 1", len(reqs))
			}
			r := reqs[0]
			if r.Method != http.MethodPost || r.Path != "/chat/completions" {
				t.Errorf("got %s %s, want POST /chat/completions", r.Method, r.Path)
			}
			if got := r.Header.Get("Authorization"); got != tt.auth {
				t.Errorf("Authorization = %q, want %q", got, tt.auth)
			}
			model := strings.SplitN(tt.spec, ":", 2)[1]
			want := mustJSON(t, `{
				"model": "`+model+`",
				"stream": true,
				"stream_options": {"include_usage": true},
				"`+tt.maxField+`": 1000,
				"messages": `+messages+`,
				"tools": `+tools+`
			}`)
			if diff := cmp.Diff(want, r.Body); diff != "" {
				t.Errorf("request body (-want +got):\n%s", diff)
			}
			if !strings.Contains(string(r.Raw), schema) {
				t.Errorf("schema not sent as given:\n%s", r.Raw)
			}
		})
	}
}

func TestOpenAIAPIErrors(t *testing.T) {
	tests := []struct {
		spec   string
		status int
		body   string
		want   []string
	}{
		{"openai:gpt-test", 401, `{"error":{"message":"Incorrect API key provided: sk-test.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			[]string{"openai: API error (HTTP 401 Unauthorized, invalid_api_key): Incorrect API key provided: sk-test; check OPENAI_API_KEY"}},
		{"openai:gpt-test", 429, `{"error":{"message":"Rate limit reached for gpt-test on requests per min (RPM): Limit 3, Used 3, Requested 1.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
			[]string{"openai: rate limited by the provider (HTTP 429 Too Many Requests, rate_limit_exceeded): Rate limit reached", "wait a moment and try again"}},
		{"openai:gpt-test", 500, `{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}`,
			[]string{"openai: API error (HTTP 500 Internal Server Error, server_error): The server had an error"}},
		// Ollama's own error shape, for a model that was never pulled.
		{"ollama:llama-test", 404, `{"error":"model \"llama-test\" not found, try pulling it first"}`,
			[]string{`ollama: API error (HTTP 404 Not Found): model "llama-test" not found, try pulling it first`}},
		// A proxy in front of a compatible server, answering in plain text
		// with a terminal escape sequence in it.
		{"openai-compatible:qwen-test", 502, "upstream \x1b[31mconnect\x1b[0m error",
			[]string{"openai-compatible: API error (HTTP 502 Bad Gateway): upstream [31mconnect [0m error"}},
	}
	for _, tt := range tests {
		t.Run(tt.spec+" "+http.StatusText(tt.status), func(t *testing.T) {
			f := newFakeAPI(t, errorReply(tt.status, tt.body, nil))
			events, err := collect(context.Background(), newTestOpenAI(t, tt.spec, f, "sk-test"), hello())
			checkAPIError(t, f, events, err, tt.status, tt.want)
		})
	}
}

func TestOpenAIStreamErrors(t *testing.T) {
	tests := []struct {
		file string
		want string
	}{
		{"openai/stream_error.sse", "openai: error in the response stream (server_error): The server had an error while processing your request"},
		{"openai/truncated.sse", "openai: the response stream ended without a finish_reason"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f := newFakeAPI(t, replay(t, tt.file))
			events, err := collect(context.Background(), newTestOpenAI(t, "openai:gpt-test", f, "sk-test"), hello())
			checkFailedTurn(t, events, err, tt.want)
		})
	}
}

func TestOpenAICancel(t *testing.T) {
	handlerDone := make(chan struct{})
	f := newFakeAPI(t, stalled(t, "openai/cancel_head.sse", handlerDone))
	m := newTestOpenAI(t, "openai:gpt-test", f, "sk-test")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var events []Event
	err := m.Stream(ctx, hello(), func(e Event) {
		events = append(events, e)
		if e.Kind == EventTextDelta {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got error %v, want context.Canceled", err)
	}
	if len(events) != 1 || events[0].Text != "Thinking about it" {
		t.Errorf("got events %v, want the one text delta", events)
	}
	waitClosed(t, handlerDone, "the handler seeing the request context done")
}
