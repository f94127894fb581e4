package llm

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
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
	return newChat(spec, "openai", model, base, key, "check OPENAI_API_KEY", false, o)
}

// newOllama never reads OPENAI_API_KEY: that key belongs to OpenAI and has
// no business travelling to a local server.
func newOllama(spec, model string, o Options) (Model, error) {
	base, err := baseURL("ollama", o.BaseURL, ollamaDefaultBaseURL)
	if err != nil {
		return nil, err
	}
	return newChat(spec, "ollama", model, base, o.APIKey, "", true, o)
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
	return newChat(spec, "openai-compatible", model, base, key, "check OPENAI_API_KEY", true, o)
}

// newChat reads nothing from the environment itself: the key and base URL
// come from the caller, so OPENAI_ORG_ID and the like never reach a request.
func newChat(spec, provider, model, base, key, hint string, legacyMaxTokens bool, o Options) (Model, error) {
	header := http.Header{}
	if key != "" {
		header.Set("Authorization", "Bearer "+key)
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
	}, nil
}

func (m *openaiModel) Name() string { return m.spec }

func (m *openaiModel) Stream(ctx context.Context, req *Request, emit func(Event)) error {
	if err := req.checkMessages(); err != nil {
		return fmt.Errorf("%s: %w", m.provider, err)
	}
	body, err := marshal(m.params(req))
	if err == nil && len(req.Tools) > 0 {
		var tools []byte
		tools, err = m.tools.encoded(req.Tools, encodeChatTool)
		body = withTools(body, tools)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", m.provider, err)
	}
	turn := openaiTurn{open: map[int]*pendingCall{}}
	err = m.endpoint.stream(ctx, body, func(ev sseEvent) (bool, error) {
		return turn.event(ev.data, m.provider, emit)
	})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return err
	}
	if turn.finish == "" {
		return fmt.Errorf("%s: the response stream ended without a finish_reason", m.provider)
	}
	if err := turn.flush(emit); err != nil {
		return fmt.Errorf("%s: %w", m.provider, err)
	}
	stop := openaiStopReason(turn.finish)
	switch {
	case stop == StopEndTurn && turn.emitted > 0:
		// Some compatible servers say "stop" after a turn of tool calls.
		stop = StopToolUse
	case stop == StopEndTurn && turn.refused:
		// A refusal streams as delta.refusal and ends with "stop".
		stop = StopRefusal
	}
	emit(Event{Kind: EventUsage, Usage: turn.usage})
	emit(Event{Kind: EventDone, StopReason: stop})
	return nil
}

// openaiTurn assembles one Chat Completions stream. Tool calls arrive as
// fragments keyed by index (several calls may interleave); they are emitted
// in index order once the choice has a finish_reason. Usage arrives in a last
// chunk without choices.
type openaiTurn struct {
	calls   []*pendingCall       // in the order they started
	open    map[int]*pendingCall // the call each index is filling
	budget  callBudget
	finish  string
	refused bool // the model sent refusal text
	usage   Usage
	emitted int
}

// chatChunk is the part of a streamed chat.completion.chunk that is read.
type chatChunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   string `json:"content"`
			Refusal   string `json:"refusal"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// event handles the data of one event: a chunk, an error, or "[DONE]",
// which is the last event.
func (t *openaiTurn) event(data []byte, provider string, emit func(Event)) (last bool, err error) {
	if bytes.HasPrefix(data, []byte("[DONE]")) {
		return true, nil
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return false, nil
	}
	var chunk chatChunk
	if err := json.Unmarshal(data, &chunk); err != nil {
		// An error chunk need not fit the chunk's shape.
		var e struct {
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(data, &e) != nil || !present(e.Error) {
			return false, fmt.Errorf("%s: reading the response stream: %w", provider, err)
		}
		chunk.Error = e.Error
	}
	if present(chunk.Error) {
		// An error inside a stream that started with 200.
		typ, msg := parseErrorBody(data)
		return false, &APIError{Provider: provider, Type: typ, Message: msg}
	}
	if err := t.handle(&chunk, emit); err != nil {
		return false, fmt.Errorf("%s: %w", provider, err)
	}
	return false, nil
}

// present reports whether a member was sent with a value other than null.
func present(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

func (t *openaiTurn) handle(chunk *chatChunk, emit func(Event)) error {
	if chunk.Usage != nil {
		t.usage = Usage{InputTokens: chunk.Usage.PromptTokens, OutputTokens: chunk.Usage.CompletionTokens}
	}
	for _, choice := range chunk.Choices {
		if choice.Index != 0 {
			continue // only one choice is asked for
		}
		d := choice.Delta
		if d.Content != "" {
			emit(Event{Kind: EventTextDelta, Text: d.Content})
		}
		if d.Refusal != "" {
			t.refused = true
			emit(Event{Kind: EventTextDelta, Text: d.Refusal})
		}
		for _, tc := range d.ToolCalls {
			p := t.open[tc.Index]
			// Some servers (Ollama among them) send every call whole, each
			// with index 0: a fragment with another id starts another call.
			if p == nil || tc.ID != "" && p.id != "" && tc.ID != p.id {
				if err := t.budget.newCall(); err != nil {
					return err
				}
				p = &pendingCall{index: tc.Index}
				t.calls = append(t.calls, p)
				t.open[tc.Index] = p
			}
			if tc.ID != "" {
				p.id = tc.ID
			}
			if tc.Function.Name != "" && p.name == "" {
				p.name = tc.Function.Name
			}
			if err := t.budget.addArgs(len(tc.Function.Arguments)); err != nil {
				return err
			}
			p.args.WriteString(tc.Function.Arguments)
		}
		if choice.FinishReason != "" {
			t.finish = choice.FinishReason
		}
	}
	return nil
}

// flush emits the assembled tool calls in index order, calls that shared
// an index in the order they started.
func (t *openaiTurn) flush(emit func(Event)) error {
	slices.SortStableFunc(t.calls, func(a, b *pendingCall) int { return a.index - b.index })
	for i, p := range t.calls {
		if p.name == "" {
			return fmt.Errorf("tool call %d: the model sent no function name", p.index)
		}
		if p.id == "" {
			// Some compatible servers leave the id out; the result still
			// needs one to refer to.
			p.id = fmt.Sprintf("call_%d", i)
		}
		call, err := p.finish()
		if err != nil {
			return err
		}
		emit(Event{Kind: EventToolCall, Call: call})
		t.emitted++
	}
	t.calls, t.open = nil, map[int]*pendingCall{}
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
	Model               string        `json:"model"`
	Messages            []chatMessage `json:"messages"`
	MaxTokens           int           `json:"max_tokens,omitempty"`
	MaxCompletionTokens int           `json:"max_completion_tokens,omitempty"`
	Stream              bool          `json:"stream"`
	StreamOptions       struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// chatMessage is a message of any role. Content is left out only of an
// assistant message that has tool calls and no text; the other roles send
// it even when it is empty, as the API requires.
type chatMessage struct {
	Role       string         `json:"role"`
	Content    *string        `json:"content,omitempty"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type chatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// encodeChatTool appends t as a Chat Completions function tool, with schema
// (t's, compacted) as its parameters.
func encodeChatTool(b *bytes.Buffer, t Tool, schema []byte) error {
	return appendTool(b, `{"type":"function","function":{`, t, "parameters", schema, `}}`)
}

// params maps a request onto Chat Completions: the system prompt becomes a
// system message, each tool result a message of role tool with its
// tool_call_id. The API has no error flag on tool results, so a failed
// result's content starts with "Error: ".
func (m *openaiModel) params(req *Request) *chatRequest {
	p := &chatRequest{Model: m.model, Stream: true}
	p.StreamOptions.IncludeUsage = true
	if req.MaxTokens > 0 {
		if m.legacyMaxTokens {
			p.MaxTokens = req.MaxTokens
		} else {
			p.MaxCompletionTokens = req.MaxTokens
		}
	}
	text := func(role, s string) chatMessage { return chatMessage{Role: role, Content: &s} }
	if req.System != "" {
		p.Messages = append(p.Messages, text("system", req.System))
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case RoleAssistant:
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
