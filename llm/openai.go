package llm

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"
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
	chat     openai.ChatCompletionService
	hint     string // what to check when the server refuses the key
	// legacyMaxTokens sends max_tokens, which compatible servers understand,
	// instead of max_completion_tokens, which OpenAI wants.
	legacyMaxTokens bool
}

func newOpenAI(spec, model string, o Options) (Model, error) {
	key := cmp.Or(o.APIKey, o.getenv("OPENAI_API_KEY"))
	if key == "" {
		return nil, configErrorf("openai: OPENAI_API_KEY is not set; export it or choose another --model")
	}
	base, err := baseURL("openai", o.BaseURL, o.getenv("OPENAI_BASE_URL"), openaiDefaultBaseURL)
	if err != nil {
		return nil, err
	}
	return newChat(spec, "openai", model, base, key, "check OPENAI_API_KEY", false, o), nil
}

// newOllama never reads OPENAI_API_KEY: that key belongs to OpenAI and has
// no business travelling to a local server.
func newOllama(spec, model string, o Options) (Model, error) {
	base, err := baseURL("ollama", o.BaseURL, ollamaDefaultBaseURL)
	if err != nil {
		return nil, err
	}
	return newChat(spec, "ollama", model, base, o.APIKey, "", true, o), nil
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
	return newChat(spec, "openai-compatible", model, base, key, "check OPENAI_API_KEY", true, o), nil
}

func newChat(spec, provider, model, base, key, hint string, legacyMaxTokens bool, o Options) *openaiModel {
	// The service is built without openai.NewClient, which would read
	// OPENAI_BASE_URL, OPENAI_API_KEY, OPENAI_ORG_ID and more from the process.
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithMaxRetries(o.retries()),
	}
	if key != "" {
		opts = append(opts, option.WithAPIKey(key))
	}
	if o.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(o.HTTPClient))
	}
	return &openaiModel{
		spec:            spec,
		provider:        provider,
		model:           model,
		chat:            openai.NewChatCompletionService(opts...),
		hint:            hint,
		legacyMaxTokens: legacyMaxTokens,
	}
}

func (m *openaiModel) Name() string { return m.spec }

func (m *openaiModel) Stream(ctx context.Context, req *Request, emit func(Event)) error {
	if err := req.check(); err != nil {
		return fmt.Errorf("%s: %w", m.provider, err)
	}
	params, err := m.params(req)
	if err != nil {
		return fmt.Errorf("%s: %w", m.provider, err)
	}
	var failure httpFailure
	stream := m.chat.NewStreaming(ctx, params, option.WithMiddleware(failure.middleware))
	defer stream.Close()

	turn := openaiTurn{calls: map[int64]*pendingCall{}}
	for stream.Next() {
		if err := turn.handle(stream.Current(), emit); err != nil {
			return fmt.Errorf("%s: %w", m.provider, err)
		}
	}
	if err := stream.Err(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if apiErr := failure.apiError(m.provider, m.hint); apiErr != nil {
			return apiErr
		}
		var streamErr *ssestream.StreamError
		if errors.As(err, &streamErr) {
			// An error chunk inside a stream that started with 200.
			typ, msg := parseErrorBody(streamErr.Event.Data)
			return &APIError{Provider: m.provider, Type: typ, Message: msg}
		}
		return fmt.Errorf("%s: reading the response stream: %w", m.provider, err)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if turn.finish == "" {
		return fmt.Errorf("%s: the response stream ended without a finish_reason", m.provider)
	}
	if err := turn.flush(emit); err != nil {
		return fmt.Errorf("%s: %w", m.provider, err)
	}
	stop := openaiStopReason(turn.finish)
	// Some compatible servers say "stop" after a turn of tool calls.
	if stop == StopEndTurn && turn.emitted > 0 {
		stop = StopToolUse
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
	calls   map[int64]*pendingCall
	finish  string
	usage   Usage
	emitted int
}

func (t *openaiTurn) handle(chunk openai.ChatCompletionChunk, emit func(Event)) error {
	if chunk.JSON.Usage.Valid() {
		t.usage = Usage{InputTokens: int(chunk.Usage.PromptTokens), OutputTokens: int(chunk.Usage.CompletionTokens)}
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
			emit(Event{Kind: EventTextDelta, Text: d.Refusal})
		}
		for _, tc := range d.ToolCalls {
			p := t.calls[tc.Index]
			if p == nil {
				p = &pendingCall{}
				t.calls[tc.Index] = p
			}
			if tc.ID != "" {
				p.id = tc.ID
			}
			if tc.Function.Name != "" && p.name == "" {
				p.name = tc.Function.Name
			}
			p.args.WriteString(tc.Function.Arguments)
		}
		if choice.FinishReason != "" {
			t.finish = choice.FinishReason
		}
	}
	return nil
}

// flush emits the assembled tool calls in index order.
func (t *openaiTurn) flush(emit func(Event)) error {
	indexes := make([]int64, 0, len(t.calls))
	for i := range t.calls {
		indexes = append(indexes, i)
	}
	slices.Sort(indexes)
	for _, i := range indexes {
		p := t.calls[i]
		if p.name == "" {
			return fmt.Errorf("tool call %d: the model sent no function name", i)
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
	t.calls = map[int64]*pendingCall{}
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

// params maps a request onto Chat Completions: the system prompt becomes a
// system message, each tool result a message of role tool with its
// tool_call_id. The API has no error flag on tool results, so a failed
// result's content starts with "Error: ".
func (m *openaiModel) params(req *Request) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{
		Model:         m.model,
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)},
	}
	if req.MaxTokens > 0 {
		if m.legacyMaxTokens {
			p.MaxTokens = param.NewOpt(int64(req.MaxTokens))
		} else {
			p.MaxCompletionTokens = param.NewOpt(int64(req.MaxTokens))
		}
	}
	if req.System != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(req.System))
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case RoleAssistant:
			if msg.Text == "" && len(msg.ToolCalls) == 0 {
				continue
			}
			a := openai.ChatCompletionAssistantMessageParam{}
			if msg.Text != "" {
				a.Content.OfString = param.NewOpt(msg.Text)
			}
			for _, c := range msg.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID: c.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
							Name:      c.Name,
							Arguments: string(argsOrEmpty(c.Args)),
						},
					},
				})
			}
			p.Messages = append(p.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case RoleTool:
			for _, r := range msg.ToolResults {
				content := r.Content
				if r.IsError {
					content = strings.TrimSuffix("Error: "+content, " ")
				}
				p.Messages = append(p.Messages, openai.ToolMessage(content, r.CallID))
			}
			if msg.Text != "" {
				p.Messages = append(p.Messages, openai.UserMessage(msg.Text))
			}
		default:
			p.Messages = append(p.Messages, openai.UserMessage(msg.Text))
		}
	}
	for _, t := range req.Tools {
		def, err := json.Marshal(struct {
			Name        string          `json:"name"`
			Description string          `json:"description,omitempty"`
			Parameters  json.RawMessage `json:"parameters"`
		}{t.Name, t.Description, schemaOrEmpty(t.InputSchema)})
		if err != nil {
			return p, fmt.Errorf("tool %q: %w", t.Name, err)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionToolUnionParam{
			OfFunction: &openai.ChatCompletionFunctionToolParam{
				// Override sends the schema as given; the SDK's
				// FunctionParameters is a map that would reorder it.
				Function: param.Override[shared.FunctionDefinitionParam](json.RawMessage(def)),
			},
		})
	}
	return p, nil
}
