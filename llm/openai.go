package llm

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

const (
	openaiDefaultBaseURL = "https://api.openai.com/v1"
	ollamaDefaultBaseURL = "http://localhost:11434/v1"
)

// openaiModel speaks Chat Completions to OpenAI and to the servers that
// imitate it (Ollama, llama.cpp, vLLM, LM Studio, OpenRouter).
type openaiModel struct {
	spec     string
	provider string
	model    string
	endpoint *endpoint
	tools    toolCache
	// legacyMaxTokens sends max_tokens, which compatible servers understand,
	// instead of max_completion_tokens, which OpenAI wants.
	legacyMaxTokens bool
	maxTokens       int    // Options.MaxTokens; 0 sends none
	effort          string // reasoning_effort; "" sends none
	// rawKey names the assistant messages this model produced, whose
	// reasoning and thought signatures it sends back.
	rawKey string
	ollama ollamaCheck // for provider "ollama" only
}

func newOpenAI(spec, model string, o Options) (Model, error) {
	key := cmp.Or(o.APIKey, o.getenv("OPENAI_API_KEY"))
	if key == "" {
		return nil, configErrorf("openai: OPENAI_API_KEY is not set; export it or choose another --model")
	}
	base, err := baseURL("openai", o.BaseURL, openaiDefaultBaseURL)
	if err != nil {
		return nil, err
	}
	return newChat(spec, "openai", model, base, key, "OPENAI_API_KEY", false, o)
}

// newOllama never reads OPENAI_API_KEY: that key belongs to OpenAI and has
// no business travelling to a local server.
func newOllama(spec, model string, o Options) (Model, error) {
	base, err := baseURL("ollama", o.BaseURL, ollamaDefaultBaseURL)
	if err != nil {
		return nil, err
	}
	return newChat(spec, "ollama", model, base, o.APIKey, "the API key", true, o)
}

func newOpenAICompatible(spec, model string, o Options) (Model, error) {
	if o.BaseURL == "" {
		return nil, configErrorf("openai-compatible: --base-url is required (for example http://localhost:8080/v1 for llama.cpp)")
	}
	base, err := baseURL("openai-compatible", o.BaseURL)
	if err != nil {
		return nil, err
	}
	key := cmp.Or(o.APIKey, o.getenv("OPENAI_API_KEY"))
	keyName := "OPENAI_API_KEY"
	if o.APIKey != "" {
		keyName = "the API key"
	}
	return newChat(spec, "openai-compatible", model, base, key, keyName, true, o)
}

// newChat reads nothing from the environment itself: the key and base URL
// come from the caller, so OPENAI_ORG_ID and the like never reach a request.
func newChat(spec, provider, model, base, key, keyName string, legacyMaxTokens bool, o Options) (Model, error) {
	if err := checkKeyTransport(provider, base, keyName, key, o); err != nil {
		return nil, err
	}
	th, err := parseThinking(provider, o.Thinking)
	if err != nil {
		return nil, err
	}
	var effort string
	switch th.mode {
	case "effort":
		effort = th.effort
	case "off":
		effort = "none"
	}
	header := http.Header{}
	if key != "" {
		header.Set("Authorization", "Bearer "+key)
	}
	hint := ""
	if strings.HasSuffix(keyName, "_KEY") {
		hint = "check " + keyName
	}
	e, err := newEndpoint(provider, hint, base, "chat/completions", header, o)
	if err != nil {
		return nil, err
	}
	return &openaiModel{
		spec:            spec,
		provider:        provider,
		model:           model,
		endpoint:        e,
		legacyMaxTokens: legacyMaxTokens,
		maxTokens:       max(o.MaxTokens, 0),
		effort:          effort,
		rawKey:          provider + " " + e.url,
	}, nil
}

func (m *openaiModel) Name() string { return m.spec }

func (m *openaiModel) Stream(ctx context.Context, req *Request, emit func(Event)) error {
	if err := req.checkMessages(); err != nil {
		return fmt.Errorf("%s: %w", m.provider, err)
	}
	limits := m.ToolLimits()
	if limits.MaxTools > 0 && len(req.Tools) > limits.MaxTools {
		return &TooManyToolsError{Provider: m.provider, Max: limits.MaxTools, Got: len(req.Tools)}
	}
	body, err := marshal(m.params(req))
	var warnings []string
	if err == nil && len(req.Tools) > 0 {
		var tools []byte
		tools, warnings, err = m.tools.encoded(req.Tools, limits, encodeChatTool)
		body = withTools(body, tools)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", m.provider, err)
	}
	for _, w := range warnings {
		emit(Event{Kind: EventWarning, Text: w})
	}
	var turn *openaiTurn
	for attempt := 0; ; attempt++ {
		turn = &openaiTurn{open: map[int]*pendingCall{}, emit: emit}
		err = m.endpoint.stream(ctx, body, func(ev sseEvent) (bool, error) {
			return turn.event(ev, m.provider)
		}, func(data []byte) error { return turn.whole(data, m.provider) })
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err == nil || turn.emitted || !m.endpoint.retryStream(ctx, err, attempt) {
			break
		}
	}
	if err != nil {
		return err
	}
	if turn.finish == "" {
		return fmt.Errorf("%s: the response stream ended without a finish_reason", m.provider)
	}
	stop := openaiStopReason(turn.finish)
	if Truncated(stop) {
		// The output limit cut the turn off: a call's arguments may end
		// anywhere, so none is emitted, complete-looking or not.
		turn.calls, turn.open = nil, map[int]*pendingCall{}
	}
	if err := turn.flush(); err != nil {
		return fmt.Errorf("%s: %w", m.provider, err)
	}
	switch {
	case stop == StopEndTurn && turn.emittedCalls > 0:
		// Some compatible servers say "stop" after a turn of tool calls.
		stop = StopToolUse
	case stop == StopEndTurn && turn.refused:
		// A refusal streams as delta.refusal and ends with "stop".
		stop = StopRefusal
	}
	if m.provider == "ollama" {
		m.ollama.check(ctx, m.endpoint, m.model, len(body), emit)
	}
	var explanation string
	if stop == StopRefusal {
		explanation = clean(turn.refusal.String())
	}
	emit(Event{Kind: EventUsage, Usage: turn.usage})
	done := Event{Kind: EventDone, StopReason: stop, Text: explanation, Raw: turn.raw()}
	if done.Raw != nil {
		done.RawFrom = m.rawKey
	}
	emit(done)
	return nil
}

func openaiStopReason(finish string) string {
	switch finish {
	case "stop":
		return StopEndTurn
	case "tool_calls", "function_call":
		return StopToolUse
	case "length":
		return StopMaxTokens
	case "content_filter":
		return StopRefusal
	}
	return finish
}

// chatRequest is the body of a streamed Chat Completions request. The field
// order is the order on the wire; the tools follow them, added by
// [withTools].
type chatRequest struct {
	Model               string `json:"model"`
	Messages            []any  `json:"messages"` // chatMessage or json.RawMessage
	MaxTokens           int    `json:"max_tokens,omitempty"`
	MaxCompletionTokens int    `json:"max_completion_tokens,omitempty"`
	ReasoningEffort     string `json:"reasoning_effort,omitempty"`
	Stream              bool   `json:"stream"`
	StreamOptions       struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// chatMessage is a message of any role. Content is left out only of an
// assistant message that has tool calls and no text; the other roles send
// it even when it is empty, as the API requires.
type chatMessage struct {
	Role             string            `json:"role"`
	Content          *string           `json:"content,omitempty"`
	ReasoningContent string            `json:"reasoning_content,omitempty"`
	ReasoningDetails []json.RawMessage `json:"reasoning_details,omitempty"`
	ToolCalls        []chatToolCall    `json:"tool_calls,omitempty"`
	ToolCallID       string            `json:"tool_call_id,omitempty"`
}

type chatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
	ExtraContent json.RawMessage `json:"extra_content,omitempty"`
}

// encodeChatTool appends t as a Chat Completions function tool, with schema
// (t's, compacted) as its parameters.
func encodeChatTool(b *bytes.Buffer, t Tool, schema []byte) error {
	return appendTool(b, `{"type":"function","function":{`, t, "parameters", schema, `}}`)
}

// params maps a request onto Chat Completions: the system prompt becomes a
// system message, each tool result a message of role tool with its
// tool_call_id. The API has no error flag on tool results, so a failed
// result's content starts with "Error: ". An assistant message this model
// produced with reasoning or thought signatures goes back as received.
func (m *openaiModel) params(req *Request) *chatRequest {
	p := &chatRequest{Model: m.model, Stream: true, ReasoningEffort: m.effort}
	p.StreamOptions.IncludeUsage = true
	maxTokens := cmp.Or(max(req.MaxTokens, 0), m.maxTokens)
	if maxTokens > 0 {
		if m.legacyMaxTokens {
			p.MaxTokens = maxTokens
		} else {
			p.MaxCompletionTokens = maxTokens
		}
	}
	text := func(role, s string) chatMessage { return chatMessage{Role: role, Content: &s} }
	if req.System != "" {
		p.Messages = append(p.Messages, text("system", req.System))
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case RoleAssistant:
			if msg.RawFrom == m.rawKey && isJSONObject(msg.Raw) {
				p.Messages = append(p.Messages, msg.Raw)
				continue
			}
			if msg.Text == "" && len(msg.ToolCalls) == 0 {
				continue
			}
			a := chatMessage{Role: "assistant"}
			if msg.Text != "" {
				a.Content = &msg.Text
			}
			for _, c := range msg.ToolCalls {
				tc := chatToolCall{ID: c.ID, Type: "function"}
				tc.Function.Name = c.Name
				tc.Function.Arguments = string(argsOrEmpty(c.Args))
				a.ToolCalls = append(a.ToolCalls, tc)
			}
			p.Messages = append(p.Messages, a)
		case RoleTool:
			for _, r := range msg.ToolResults {
				content := r.Content
				if r.IsError {
					content = strings.TrimSuffix("Error: "+content, " ")
				}
				tm := text("tool", content)
				tm.ToolCallID = r.CallID
				p.Messages = append(p.Messages, tm)
			}
			if msg.Text != "" {
				p.Messages = append(p.Messages, text("user", msg.Text))
			}
		default:
			p.Messages = append(p.Messages, text("user", msg.Text))
		}
	}
	return p
}
