package llm

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// model builds spec against f with retries off.
func model(t *testing.T, spec string, f *fakeAPI, o Options) Model {
	t.Helper()
	o.BaseURL, o.Getenv, o.MaxRetries = f.URL(), noEnv, -1
	if o.APIKey == "" {
		o.APIKey = "k"
	}
	m, err := New(spec, o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// turnOf runs one turn and returns its events and the Done event.
func turnOf(t *testing.T, m Model, req *Request) ([]Event, Event) {
	t.Helper()
	events, err := collect(context.Background(), m, req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	done := events[len(events)-1]
	if done.Kind != EventDone {
		t.Fatalf("last event %+v, want done", done)
	}
	return events, done
}

// next is the request after a turn that called tools: the turn's message,
// built from its events as a host does, and a result for each call.
func next(events []Event) *Request {
	a := Message{Role: RoleAssistant}
	var results []ToolResult
	for _, e := range events {
		switch e.Kind {
		case EventTextDelta:
			a.Text += e.Text
		case EventToolCall:
			a.ToolCalls = append(a.ToolCalls, *e.Call)
			results = append(results, ToolResult{CallID: e.Call.ID, Content: "ok"})
		case EventDone:
			a.Raw, a.RawFrom = e.Raw, e.RawFrom
		}
	}
	return &Request{Messages: []Message{{Role: RoleUser, Text: "hello"}, a, {Role: RoleTool, ToolResults: results}}}
}

// sentMessage returns message i of the request body as sent, byte for byte.
func sentMessage(t *testing.T, r gotRequest, i int) string {
	t.Helper()
	var body struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(r.Raw, &body); err != nil || i >= len(body.Messages) {
		t.Fatalf("request has no message %d: %s", i, r.Raw)
	}
	return string(body.Messages[i])
}

// sequence answers the requests with the given handlers in turn.
func sequence(hs ...http.HandlerFunc) http.HandlerFunc {
	var n atomic.Int32
	return func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		hs[min(i, len(hs)-1)](w, r)
	}
}

// Anthropic: the thinking block, with its signature, the text and the
// tool_use go back in the order received, and the thinking is shown as
// thinking, not as text.
func TestAnthropicThinkingEchoed(t *testing.T) {
	f := newFakeAPI(t, sequence(replay(t, "anthropic/thinking_tool.sse"), replay(t, "anthropic/max_tokens.sse")))
	m := model(t, "anthropic:claude-test", f, Options{})
	events, done := turnOf(t, m, hello())
	want := `[{"type":"thinking","thinking":"The user wants the weather. I should call get_weather for Paris.","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds/Sig+/=="},` +
		`{"type":"text","text":"Checking Paris <now> & then."},` +
		`{"type":"tool_use","id":"toolu_01Paris","name":"get_weather","input":{"city":"Paris"}}]`
	if string(done.Raw) != want {
		t.Errorf("raw content\n got %s\nwant %s", done.Raw, want)
	}
	var thinking []string
	for _, e := range events {
		if e.Kind == EventThinking {
			thinking = append(thinking, e.Text)
		}
		if e.Kind == EventTextDelta && strings.Contains(e.Text, "get_weather") {
			t.Errorf("thinking emitted as text: %q", e.Text)
		}
	}
	if diff := cmp.Diff([]string{"The user wants the weather. ", "I should call get_weather for Paris."}, thinking); diff != "" {
		t.Errorf("thinking events (-want +got):\n%s", diff)
	}
	turnOf(t, m, next(events))
	got := sentMessage(t, f.requests()[1], 1)
	if wantMsg := `{"role":"assistant","content":` + want + `}`; got != wantMsg {
		t.Errorf("assistant message sent back\n got %s\nwant %s", got, wantMsg)
	}
}

// A redacted_thinking block goes back exactly as it came; a text block of
// white space does not go back at all.
func TestAnthropicRedactedThinkingAndWhitespace(t *testing.T) {
	f := newFakeAPI(t, sequence(replay(t, "anthropic/redacted_thinking.sse"), replay(t, "anthropic/max_tokens.sse")))
	m := model(t, "anthropic:claude-test", f, Options{})
	events, _ := turnOf(t, m, hello())
	turnOf(t, m, next(events))
	got := sentMessage(t, f.requests()[1], 1)
	want := `{"role":"assistant","content":[` +
		`{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj2pxmvUKbA=="},` +
		`{"type":"thinking","thinking":"Read the file first.","signature":"ErUBCkYIBRgCIkCs"},` +
		`{"type":"tool_use","id":"toolu_01Read","name":"files_read","input":{"path":"a.txt"}}]}`
	if got != want {
		t.Errorf("assistant message sent back\n got %s\nwant %s", got, want)
	}
}

// No text block that is empty or white space is ever sent: the API refuses
// it, and one in the history fails every later turn.
func TestAnthropicNoWhitespaceTextBlocks(t *testing.T) {
	f := newFakeAPI(t, replay(t, "anthropic/max_tokens.sse"))
	m := model(t, "anthropic:claude-test", f, Options{})
	req := &Request{System: " \n", Messages: []Message{
		{Role: RoleUser, Text: "hi"},
		{Role: RoleAssistant, Text: "\n\n", ToolCalls: []ToolCall{{ID: "c", Name: "a"}}},
		{Role: RoleTool, ToolResults: []ToolResult{{CallID: "c", Content: " "}}, Text: "\t"},
		{Role: RoleUser, Text: "  "},
		{Role: RoleAssistant, Text: "\n"},
		{Role: RoleUser, Text: "go on"},
	}}
	turnOf(t, m, req)
	want := `"messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"c","name":"a","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"c"},{"type":"text","text":"go on","cache_control":{"type":"ephemeral"}}]}]`
	if raw := string(f.requests()[0].Raw); !strings.Contains(raw, want) || strings.Contains(raw, `"system"`) {
		t.Errorf("request\n%s\nwant messages %s and no system", raw, want)
	}
}

// Another provider's raw content is not sent: the message is rebuilt.
func TestRawContentOnlyToItsProvider(t *testing.T) {
	f := newFakeAPI(t, replay(t, "openai/max_tokens.sse"))
	m := model(t, "openai:gpt-test", f, Options{})
	req := &Request{Messages: []Message{
		{Role: RoleUser, Text: "hi"},
		{Role: RoleAssistant, Text: "Hello.", Raw: json.RawMessage(`[{"type":"thinking","thinking":"x","signature":"s"}]`), RawFrom: "anthropic https://api.anthropic.com/v1/messages"},
		{Role: RoleUser, Text: "again"},
	}}
	turnOf(t, m, req)
	if got := sentMessage(t, f.requests()[0], 1); got != `{"role":"assistant","content":"Hello."}` {
		t.Errorf("assistant message sent %s", got)
	}
}

// Reasoning that OpenAI-compatible providers require back, as each
// documents its stream.
func TestChatReasoningEchoed(t *testing.T) {
	tests := []struct {
		file, spec string
		thinking   string // the thinking shown
		raw        string // the assistant message sent back
	}{
		{"openai/deepseek_reasoning.sse", "openai-compatible:deepseek-test", "Need the date. Call get_date.",
			`{"role":"assistant","reasoning_content":"Need the date. Call get_date.","tool_calls":[{"id":"call_00_date","type":"function","function":{"name":"get_date","arguments":"{}"}}]}`},
		{"openai/openrouter_reasoning.sse", "openai-compatible:anthropic/claude-test", "Look up the stock.",
			`{"role":"assistant","reasoning_details":[{"type":"reasoning.text","text":"Look up the stock.","format":"anthropic-claude-v1","index":0,"signature":"ErcBCkgIBxAC"}],"tool_calls":[{"id":"toolu_01Stock","type":"function","function":{"name":"stock","arguments":"{\"sym\":\"ACME\"}"}}]}`},
		{"openai/gemini_thought_signature.sse", "openai-compatible:gemini-test", "",
			`{"role":"assistant","tool_calls":[{"id":"function-call-1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"},"extra_content":{"google":{"thought_signature":"CiQBjz1rX/sig=="}}}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f := newFakeAPI(t, sequence(replay(t, tt.file), replay(t, "openai/max_tokens.sse")))
			m := model(t, tt.spec, f, Options{})
			events, done := turnOf(t, m, hello())
			if done.StopReason != StopToolUse || string(done.Raw) != tt.raw {
				t.Errorf("done %s, raw\n got %s\nwant %s", done.StopReason, done.Raw, tt.raw)
			}
			var thinking string
			for _, e := range events {
				if e.Kind == EventThinking {
					thinking += e.Text
				}
			}
			if thinking != tt.thinking {
				t.Errorf("thinking shown %q, want %q", thinking, tt.thinking)
			}
			turnOf(t, m, next(events))
			if got := sentMessage(t, f.requests()[1], 1); got != tt.raw {
				t.Errorf("assistant message sent back\n got %s\nwant %s", got, tt.raw)
			}
		})
	}
}

// The request asks for the thinking and output limit the config set.
func TestThinkingAndMaxTokensSent(t *testing.T) {
	tests := []struct {
		spec, thinking string
		maxTokens      int
		want           []string
	}{
		{"anthropic:claude-sonnet-4-5", "", 0, []string{`"max_tokens":32000,`}},
		{"anthropic:claude-3-5-haiku-latest", "", 0, []string{`"max_tokens":8192,`}},
		{"anthropic:claude-sonnet-4-5", "high", 64000, []string{`"max_tokens":64000,`, `"thinking":{"type":"adaptive"},"output_config":{"effort":"high"}`}},
		{"anthropic:claude-sonnet-4-5", "10000", 0, []string{`"thinking":{"type":"enabled","budget_tokens":10000}`}},
		{"anthropic:claude-sonnet-4-5", "off", 0, []string{`"thinking":{"type":"disabled"}`}},
		{"openai:gpt-test", "low", 5000, []string{`"max_completion_tokens":5000,"reasoning_effort":"low",`}},
		{"openai-compatible:x", "off", 100, []string{`"max_tokens":100,"reasoning_effort":"none",`}},
	}
	for _, tt := range tests {
		t.Run(tt.spec+"/"+tt.thinking, func(t *testing.T) {
			file := "openai/max_tokens.sse"
			if strings.HasPrefix(tt.spec, "anthropic") {
				file = "anthropic/max_tokens.sse"
			}
			f := newFakeAPI(t, replay(t, file))
			turnOf(t, model(t, tt.spec, f, Options{Thinking: tt.thinking, MaxTokens: tt.maxTokens}), hello())
			raw := string(f.requests()[0].Raw)
			for _, w := range tt.want {
				if !strings.Contains(raw, w) {
					t.Errorf("request %s\ndoes not contain %s", raw, w)
				}
			}
		})
	}
	f := newFakeAPI(t, replay(t, "anthropic/max_tokens.sse"))
	req := hello()
	req.MaxTokens = 500
	turnOf(t, model(t, "anthropic:claude-sonnet-4-5", f, Options{Thinking: "2048"}), req)
	if raw := string(f.requests()[0].Raw); strings.Contains(raw, `"thinking"`) || !strings.Contains(raw, `"max_tokens":500,`) {
		t.Errorf("request with a limit below the budget: %s; want no thinking parameter", raw)
	}
	for _, bad := range []struct{ spec, thinking, want string }{
		{"openai:gpt-test", "8000", "a token budget is an Anthropic setting"},
		{"anthropic:claude-test", "lots", `want "off", "adaptive", an effort`},
		{"anthropic:claude-3-5-haiku-latest", "9000", "must be less than maxTokens 8192"},
		{"anthropic:claude-test", "minimal", "Anthropic's efforts are low, medium"},
		{"openai:gpt-test", "max", "OpenAI's efforts are minimal, low"},
	} {
		_, err := New(bad.spec, Options{APIKey: "k", Getenv: noEnv, Thinking: bad.thinking})
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s thinking %q: err = %v, want %q", bad.spec, bad.thinking, err, bad.want)
		}
	}
}
