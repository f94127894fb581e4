package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// inline answers with the event stream s.
func inline(s string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, s)
	}
}

// Corners of the two stream formats that the recorded streams do not reach.
func TestStreamCorners(t *testing.T) {
	const (
		msgStart = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n"
		msgEnd   = "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":3}}\n\n" +
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
		chunk = `data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}` + "\n\n"
		stop  = `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n"
	)
	tests := []struct {
		name, spec, stream string
		want               []Event
		wantErr            string
	}{
		{"anthropic initial input kept as sent", "anthropic:claude-test", msgStart +
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"a\",\"input\":{\"z\": 1, \"a\": [2]}}}\n\n" +
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" + msgEnd,
			[]Event{
				{Kind: EventToolCall, Call: &ToolCall{ID: "t1", Name: "a", Args: json.RawMessage(`{"z": 1, "a": [2]}`)}},
				{Kind: EventUsage, Usage: Usage{InputTokens: 5, OutputTokens: 3}},
				{Kind: EventDone, StopReason: StopToolUse},
			}, ""},
		{"anthropic null input is an empty object", "anthropic:claude-test", msgStart +
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"a\",\"input\":null}}\n\n" +
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" + msgEnd,
			[]Event{
				{Kind: EventToolCall, Call: &ToolCall{ID: "t1", Name: "a", Args: json.RawMessage(`{}`)}},
				{Kind: EventUsage, Usage: Usage{InputTokens: 5, OutputTokens: 3}},
				{Kind: EventDone, StopReason: StopToolUse},
			}, ""},
		{"anthropic unknown and nameless events skipped", "anthropic:claude-test", msgStart +
			"event: thinking_about_it\ndata: {\"type\":\"thinking_about_it\"}\n\n" +
			"data: {\"type\":\"message_stop\"}\n\n" +
			": keep-alive\n\n" + msgEnd,
			[]Event{
				{Kind: EventUsage, Usage: Usage{InputTokens: 5, OutputTokens: 3}},
				{Kind: EventDone, StopReason: StopToolUse},
			}, ""},
		{"anthropic error event that is not JSON", "anthropic:claude-test", msgStart + "event: error\ndata: upstream went away\n\n",
			nil, "anthropic: error in the response stream: upstream went away"},
		{"anthropic event that is not JSON", "anthropic:claude-test", msgStart + "event: message_delta\ndata: {\"type\n\n",
			nil, `anthropic: reading the response stream: event "message_delta": unexpected end of JSON input`},
		{"openai error member null is no error", "openai:gpt-test", chunk +
			`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"error":null}` + "\n\n",
			[]Event{
				{Kind: EventTextDelta, Text: "hi"},
				{Kind: EventUsage},
				{Kind: EventDone, StopReason: StopEndTurn},
			}, ""},
		{"openai error chunk of another shape", "openai:gpt-test", chunk + `data: {"error":"model crashed","choices":5}` + "\n\n",
			[]Event{{Kind: EventTextDelta, Text: "hi"}}, "openai: error in the response stream: model crashed"},
		{"openai chunk that is not JSON", "openai:gpt-test", chunk + "data: {\"choices\n\n",
			[]Event{{Kind: EventTextDelta, Text: "hi"}}, "openai: reading the response stream: unexpected end of JSON input"},
		{"openai end without [DONE]", "openai:gpt-test", chunk + stop,
			[]Event{
				{Kind: EventTextDelta, Text: "hi"},
				{Kind: EventUsage},
				{Kind: EventDone, StopReason: StopEndTurn},
			}, ""},
		{"openai other choices ignored", "openai:gpt-test", chunk +
			`data: {"choices":[{"index":1,"delta":{"content":"no"},"finish_reason":null}]}` + "\n\n" + stop + "data: [DONE]\n\n",
			[]Event{
				{Kind: EventTextDelta, Text: "hi"},
				{Kind: EventUsage},
				{Kind: EventDone, StopReason: StopEndTurn},
			}, ""},
		{"openai refusal", "openai:gpt-test",
			`data: {"choices":[{"index":0,"delta":{"refusal":"I can't."},"finish_reason":"content_filter"}]}` + "\n\ndata: [DONE]\n\n",
			[]Event{
				{Kind: EventUsage},
				{Kind: EventDone, StopReason: StopRefusal, Text: "I can't."},
			}, ""},
		{"openai refusal ending with stop", "openai:gpt-test",
			`data: {"choices":[{"index":0,"delta":{"refusal":"I can't."},"finish_reason":null}]}` + "\n\n" + stop + "data: [DONE]\n\n",
			[]Event{
				{Kind: EventUsage},
				{Kind: EventDone, StopReason: StopRefusal, Text: "I can't."},
			}, ""},
		// Ollama sends each call whole, every one with index 0.
		{"openai whole calls sharing index 0", "openai:gpt-test",
			`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"x\":1}"}}]},"finish_reason":null}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"g","arguments":"{\"y\":2}"}}]},"finish_reason":null}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n",
			[]Event{
				{Kind: EventToolCall, Call: &ToolCall{ID: "a", Name: "f", Args: json.RawMessage(`{"x":1}`)}},
				{Kind: EventToolCall, Call: &ToolCall{ID: "b", Name: "g", Args: json.RawMessage(`{"y":2}`)}},
				{Kind: EventUsage},
				{Kind: EventDone, StopReason: StopToolUse},
			}, ""},
		{"openai too many calls in a turn", "openai:gpt-test", manyCalls(maxCallsPerTurn + 1),
			nil, fmt.Sprintf("openai: the model started more than %d tool calls in one turn", maxCallsPerTurn)},
		{"openai endless arguments", "openai:gpt-test", endlessArgs(maxArgBytesPerTurn),
			nil, fmt.Sprintf("openai: the model sent more than %d MiB of tool arguments in one turn", maxArgBytesPerTurn>>20)},
		{"anthropic escapes in a call id are not printed", "anthropic:claude-test", msgStart +
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"\\u001b]0;owned\\u0007\",\"name\":\"a\",\"input\":{}}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"[1]\"}}\n\n" +
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" + msgEnd,
			nil, `anthropic: tool call "a" (]0;owned): the arguments the model sent are not a JSON object: [1]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeAPI(t, inline(tt.stream))
			m, err := New(tt.spec, Options{BaseURL: f.URL(), APIKey: "k", Getenv: noEnv, MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			got, err := collect(context.Background(), m, hello())
			if tt.wantErr == "" && err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Errorf("got error %v, want %q", err, tt.wantErr)
				}
				var apiErr *APIError
				if errors.As(err, &apiErr) && apiErr.StatusCode != 0 {
					t.Errorf("StatusCode = %d for an error inside a stream, want 0", apiErr.StatusCode)
				}
			}
			if diff := cmp.Diff(tt.want, got, ignoreRaw); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// ignoreRaw leaves the raw assistant message out of a comparison of
// events; the tests of thinking and reasoning compare it.
var ignoreRaw = cmpopts.IgnoreFields(Event{}, "Raw", "RawFrom")

// The request bodies of a turn with nothing optional in it: no system
// prompt, no tools, no limit, an empty user message.
func TestRequestMinimal(t *testing.T) {
	tests := []struct {
		spec, file, want string
	}{
		{"openai:gpt-test", "openai/max_tokens.sse",
			`{"model":"gpt-test","messages":[{"role":"user","content":""}],"stream":true,"stream_options":{"include_usage":true}}`},
		{"anthropic:claude-test", "anthropic/max_tokens.sse",
			`{"model":"claude-test","max_tokens":32000,"messages":[{"role":"user","content":[{"type":"text","text":"x","cache_control":{"type":"ephemeral"}}]},{"role":"assistant","content":[{"type":"tool_use","id":"c","name":"a","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"c","cache_control":{"type":"ephemeral"}}]}],"stream":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			f := newFakeAPI(t, replay(t, tt.file))
			m, err := New(tt.spec, Options{BaseURL: f.URL(), APIKey: "k", Getenv: noEnv, MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			req := &Request{Messages: []Message{{Role: RoleUser}}}
			if strings.HasPrefix(tt.spec, "anthropic") {
				req.Messages = []Message{
					{Role: RoleUser, Text: "x"},
					{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c", Name: "a"}}},
					{Role: RoleTool, ToolResults: []ToolResult{{CallID: "c"}}},
				}
			}
			if _, err := collect(context.Background(), m, req); err != nil {
				t.Fatalf("Stream: %v", err)
			}
			r := f.requests()[0]
			if got := string(r.Raw); got != tt.want {
				t.Errorf("request body\n got %s\nwant %s", got, tt.want)
			}
			for k, want := range map[string]string{"Content-Type": "application/json", "Accept": "text/event-stream"} {
				if got := r.Header.Get(k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			if strings.HasPrefix(tt.spec, "anthropic") {
				if got := r.Header.Get("Anthropic-Version"); got != anthropicVersion {
					t.Errorf("Anthropic-Version = %q, want %q", got, anthropicVersion)
				}
			}
		})
	}
}

func TestValidToolName(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	names := []string{"", "a", "files_read", "A-Z_0-9", strings.Repeat("x", 64), strings.Repeat("x", 65),
		"files/read", "a b", "é", "a\n", "a.b", "a:b", "\x00", "[", "`", "{", "@"}
	for c := 0; c < 256; c++ {
		names = append(names, string(rune(c)), "x"+string([]byte{byte(c)}))
	}
	for _, n := range names {
		if got, want := validToolName(n), re.MatchString(n); got != want {
			t.Errorf("validToolName(%q) = %v, want %v", n, got, want)
		}
	}
}

// A schema reaches the provider as given, characters that HTML escaping
// would touch included.
func TestSchemaBytesKept(t *testing.T) {
	schema := `{"type":"object","description":"a < b & c > d, \u00e9t\u00e9 or été","properties":{"q":{"type":"string","pattern":"^<[a-z]+>$"}}}`
	for spec, file := range map[string]string{"anthropic:claude-test": "anthropic/max_tokens.sse", "openai:gpt-test": "openai/max_tokens.sse"} {
		t.Run(spec, func(t *testing.T) {
			f := newFakeAPI(t, replay(t, file))
			m, err := New(spec, Options{BaseURL: f.URL(), APIKey: "k", Getenv: noEnv, MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			req := hello()
			req.Tools = []Tool{{Name: "search", Description: "Find <things> & more", InputSchema: json.RawMessage(schema)}}
			if _, err := collect(context.Background(), m, req); err != nil {
				t.Fatalf("Stream: %v", err)
			}
			raw := string(f.requests()[0].Raw)
			for _, want := range []string{schema, `"Find <things> & more"`} {
				if !strings.Contains(raw, want) {
					t.Errorf("request does not contain %s:\n%s", want, raw)
				}
			}
		})
	}
}

// manyCalls is a Chat Completions stream that starts n tool calls.
func manyCalls(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":%d,"id":"c%d","function":{"name":"f","arguments":"{}"}}]},"finish_reason":null}]}`+"\n\n", i, i)
	}
	return b.String() + `data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n"
}

// endlessArgs is a Chat Completions stream whose one call's arguments grow
// past limit bytes, 64 KiB per chunk.
func endlessArgs(limit int) string {
	frag := strings.Repeat("x", 64<<10)
	var b strings.Builder
	b.WriteString(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":""}}]},"finish_reason":null}]}` + "\n\n")
	for n := 0; n <= limit; n += len(frag) {
		b.WriteString(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"` + frag + `"}}]},"finish_reason":null}]}` + "\n\n")
	}
	return b.String()
}
