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

func newTestAnthropic(t *testing.T, f *fakeAPI, retries int) Model {
	t.Helper()
	m, err := New("anthropic:claude-test", Options{BaseURL: f.URL(), APIKey: "sk-ant-test", Getenv: noEnv, MaxRetries: retries})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestAnthropicStream(t *testing.T) {
	tests := []struct {
		file string
		want []Event
	}{
		{"anthropic/text_and_tool.sse", []Event{
			{Kind: EventTextDelta, Text: "Let me check "},
			{Kind: EventTextDelta, Text: "the weather."},
			{Kind: EventToolCall, Call: &ToolCall{ID: "toolu_01Weather", Name: "get_weather",
				Args: json.RawMessage(`{"location": "San Francisco, CA", "unit": "celsius", "days": [1, 2]}`)}},
			{Kind: EventUsage, Usage: Usage{InputTokens: 572, OutputTokens: 89, CacheReadTokens: 100}},
			{Kind: EventDone, StopReason: StopToolUse},
		}},
		{"anthropic/parallel_tools.sse", []Event{
			{Kind: EventToolCall, Call: &ToolCall{ID: "toolu_01ReadA", Name: "files_read", Args: json.RawMessage(`{"path": "a.txt"}`)}},
			{Kind: EventToolCall, Call: &ToolCall{ID: "toolu_01ListB", Name: "files_list", Args: json.RawMessage(`{}`)}},
			{Kind: EventUsage, Usage: Usage{InputTokens: 310, OutputTokens: 61}},
			{Kind: EventDone, StopReason: StopToolUse},
		}},
		{"anthropic/max_tokens.sse", []Event{
			{Kind: EventTextDelta, Text: "Once upon"},
			{Kind: EventUsage, Usage: Usage{InputTokens: 12, OutputTokens: 2}},
			{Kind: EventDone, StopReason: StopMaxTokens},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f := newFakeAPI(t, replay(t, tt.file))
			got, err := collect(context.Background(), newTestAnthropic(t, f, -1), hello())
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, ignoreRaw); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAnthropicRequest(t *testing.T) {
	f := newFakeAPI(t, replay(t, "anthropic/max_tokens.sse"))
	schema := `{"type":"object","properties":{"path":{"type":"string","minLength":1}},"required":["path"],"additionalProperties":false,"$defs":{"x":{"oneOf":[{"type":"null"}]}}}`
	req := &Request{
		System:    "You are terse.",
		MaxTokens: 1000,
		Messages: []Message{
			{Role: RoleUser, Text: "Read a.txt and list ."},
			{Role: RoleAssistant, Text: "Reading.", ToolCalls: []ToolCall{
				{ID: "toolu_1", Name: "files_read", Args: json.RawMessage(`{"path":"a.txt"}`)},
				{ID: "toolu_2", Name: "files_list"},
			}},
			{Role: RoleTool, ToolResults: []ToolResult{
				{CallID: "toolu_1", Content: "hello"},
				{CallID: "toolu_2", Content: "denied by rule", IsError: true},
			}},
			{Role: RoleUser, Text: "Go on."},
		},
		Tools: []Tool{
			{Name: "files_read", Description: "Read a file.", InputSchema: json.RawMessage(schema)},
			{Name: "files_list"},
		},
	}
	if _, err := collect(context.Background(), newTestAnthropic(t, f, -1), req); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	reqs := f.requests()
	if len(reqs) != 1 {
		t.Fatalf("got %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Method != http.MethodPost || r.Path != "/v1/messages" {
		t.Errorf("got %s %s, want POST /v1/messages", r.Method, r.Path)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer sk-ant-test" && r.Header.Get("X-Api-Key") != "sk-ant-test" {
		t.Errorf("no credential: Authorization %q, X-Api-Key %q", got, r.Header.Get("X-Api-Key"))
	}
	if r.Header.Get("Anthropic-Version") == "" {
		t.Error("no anthropic-version header")
	}
	want := mustJSON(t, `{
		"model": "claude-test",
		"max_tokens": 1000,
		"stream": true,
		"system": [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}],
		"messages": [
			{"role": "user", "content": [{"type": "text", "text": "Read a.txt and list .", "cache_control": {"type": "ephemeral"}}]},
			{"role": "assistant", "content": [
				{"type": "text", "text": "Reading."},
				{"type": "tool_use", "id": "toolu_1", "name": "files_read", "input": {"path": "a.txt"}},
				{"type": "tool_use", "id": "toolu_2", "name": "files_list", "input": {}}
			]},
			{"role": "user", "content": [
				{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "hello"}]},
				{"type": "tool_result", "tool_use_id": "toolu_2", "is_error": true, "content": [{"type": "text", "text": "denied by rule"}]},
				{"type": "text", "text": "Go on.", "cache_control": {"type": "ephemeral"}}
			]}
		],
		"tools": [
			{"name": "files_read", "description": "Read a file.", "input_schema": `+schema+`},
			{"name": "files_list", "input_schema": {"type": "object", "properties": {}}, "cache_control": {"type": "ephemeral"}}
		]
	}`)
	if diff := cmp.Diff(want, r.Body); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
	// The schema travels unchanged, key order included.
	if !strings.Contains(string(r.Raw), schema) {
		t.Errorf("schema not sent as given:\n%s", r.Raw)
	}
}

func TestAnthropicAPIErrors(t *testing.T) {
	tests := []struct {
		status int
		body   string
		want   []string
	}{
		{401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_1"}`,
			[]string{"anthropic: API error (HTTP 401 Unauthorized, authentication_error): invalid x-api-key", "check ANTHROPIC_API_KEY"}},
		{429, `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`,
			[]string{"anthropic: rate limited by the provider (HTTP 429 Too Many Requests, rate_limit_error): Number of request tokens", "wait a moment and try again"}},
		{500, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`,
			[]string{"anthropic: API error (HTTP 500 Internal Server Error, api_error): Internal server error"}},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			f := newFakeAPI(t, errorReply(tt.status, tt.body, nil))
			events, err := collect(context.Background(), newTestAnthropic(t, f, -1), hello())
			checkAPIError(t, f, events, err, tt.status, tt.want)
		})
	}
}

func TestAnthropicStreamErrors(t *testing.T) {
	tests := []struct {
		file string
		want string
	}{
		{"anthropic/stream_error.sse", "anthropic: error in the response stream (overloaded_error): Overloaded"},
		{"anthropic/truncated.sse", "anthropic: the response stream ended before message_stop"},
		{"anthropic/bad_args.sse", `tool call "files_read" (toolu_01Bad): the arguments the model sent are not a JSON object`},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f := newFakeAPI(t, replay(t, tt.file))
			events, err := collect(context.Background(), newTestAnthropic(t, f, -1), hello())
			checkFailedTurn(t, events, err, tt.want)
		})
	}
}

func TestAnthropicCancel(t *testing.T) {
	handlerDone := make(chan struct{})
	f := newFakeAPI(t, stalled(t, "anthropic/cancel_head.sse", handlerDone))
	m := newTestAnthropic(t, f, -1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var events []Event
	err := m.Stream(ctx, hello(), func(e Event) {
		events = append(events, e)
		if e.Kind == EventTextDelta {
			cancel() // the server now holds the stream open forever
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
