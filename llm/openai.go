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
	maxTokens       int    // Options.MaxTokens; 0 sends none
	effort          string // reasoning_effort; "" sends none
	// rawKey names the assistant messages this model produced, whose
	// reasoning and thought signatures it sends back.
	rawKey string
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
	if m.provider == "ollama" && turn.usage.InputTokens > 0 && len(body)/4 > 2*turn.usage.InputTokens {
		emit(Event{Kind: EventWarning, Text: fmt.Sprintf("ollama counted %d prompt tokens for a request of about %d: it seems to have cut the prompt to its context length; start Ollama with OLLAMA_CONTEXT_LENGTH=32768 (or more), or create a model with PARAMETER num_ctx", turn.usage.InputTokens, len(body)/4)})
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

// openaiTurn assembles one Chat Completions stream. Tool calls arrive as
// fragments keyed by index (several calls may interleave); they are emitted
// in index order once the choice has a finish_reason. Usage arrives in a last
// chunk without choices. Reasoning that compatible servers stream beside
// the text is kept for the raw message: DeepSeek's reasoning_content,
// OpenRouter's reasoning_details, Gemini's thought signatures on tool calls.
type openaiTurn struct {
	emit         func(Event)
	emitted      bool                 // an event went to emit
	calls        []*pendingCall       // in the order they started
	open         map[int]*pendingCall // the call each index is filling
	budget       callBudget
	finish       string
	refused      bool // the model sent refusal text
	refusal      strings.Builder
	usage        Usage
	emittedCalls int

	text      strings.Builder
	reasoning strings.Builder   // reasoning_content
	details   []reasoningDetail // reasoning_details, merged by index
	done      []chatToolCall    // the calls emitted, for the raw message
	special   bool              // something only the raw message can carry arrived
}

// reasoningDetail is one entry of OpenRouter's reasoning_details, its
// members kept in order; streamed pieces with the same index are joined.
type reasoningDetail struct {
	index   int
	members []member
}

func (t *openaiTurn) send(e Event) {
	t.emitted = true
	t.emit(e)
}

// chatChunk is the part of a streamed chat.completion.chunk that is read.
type chatChunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content          string            `json:"content"`
			Refusal          string            `json:"refusal"`
			ReasoningContent string            `json:"reasoning_content"`
			Reasoning        string            `json:"reasoning"`
			ReasoningDetails []json.RawMessage `json:"reasoning_details"`
			ToolCalls        []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
				ExtraContent json.RawMessage `json:"extra_content"`
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

// event handles one event: a chunk, an error, or "[DONE]", which is the
// last event.
func (t *openaiTurn) event(ev sseEvent, provider string) (last bool, err error) {
	data := ev.data
	if string(ev.name) == "error" {
		// llama.cpp's "error:" line, or an event named error.
		typ, msg := parseErrorBody(data)
		return false, &APIError{Provider: provider, Type: typ, Message: msg}
	}
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
	if err := t.handle(&chunk); err != nil {
		return false, fmt.Errorf("%s: %w", provider, err)
	}
	return false, nil
}

// present reports whether a member was sent with a value other than null.
func present(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

func (t *openaiTurn) handle(chunk *chatChunk) error {
	if chunk.Usage != nil {
		t.usage = Usage{InputTokens: chunk.Usage.PromptTokens, OutputTokens: chunk.Usage.CompletionTokens}
	}
	for _, choice := range chunk.Choices {
		if choice.Index != 0 {
			continue // only one choice is asked for
		}
		d := choice.Delta
		if d.ReasoningContent != "" {
			t.special = true
			t.reasoning.WriteString(d.ReasoningContent)
			t.send(Event{Kind: EventThinking, Text: d.ReasoningContent})
		} else if d.Reasoning != "" {
			// OpenRouter's and Ollama's plain text of the reasoning; what
			// is sent back is reasoning_details.
			t.send(Event{Kind: EventThinking, Text: d.Reasoning})
		}
		for _, rd := range d.ReasoningDetails {
			if err := t.addDetail(rd); err != nil {
				return err
			}
		}
		if d.Content != "" {
			t.text.WriteString(d.Content)
			t.send(Event{Kind: EventTextDelta, Text: d.Content})
		}
		if d.Refusal != "" {
			t.refused = true
			t.refusal.WriteString(d.Refusal)
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
			if present(tc.ExtraContent) {
				// Gemini's thought_signature rides here; it must go back
				// on the same call.
				if err := t.budget.addArgs(len(tc.ExtraContent)); err != nil {
					return err
				}
				p.extra = append(json.RawMessage(nil), tc.ExtraContent...)
				t.special = true
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

// addDetail merges one streamed reasoning_details entry into the one with
// the same index: text, summary and data are joined, other members take
// the latest value that is not null.
func (t *openaiTurn) addDetail(raw json.RawMessage) error {
	if err := t.budget.addArgs(len(raw)); err != nil {
		return err
	}
	ms, err := objectMembers(raw)
	if err != nil {
		return fmt.Errorf("reasoning_details: %w", err)
	}
	t.special = true
	index := len(t.details)
	if v, _ := lookup(ms, "index"); v != nil {
		_ = json.Unmarshal(v, &index)
	}
	var d *reasoningDetail
	for i := range t.details {
		if t.details[i].index == index {
			d = &t.details[i]
		}
	}
	if d == nil {
		t.details = append(t.details, reasoningDetail{index: index})
		d = &t.details[len(t.details)-1]
	}
	for _, m := range ms {
		old, i := lookup(d.members, m.key)
		switch {
		case i < 0:
			d.members = append(d.members, member{m.key, m.val})
		case !present(m.val):
		case m.key == "text" || m.key == "summary" || m.key == "data":
			var a, b string
			if json.Unmarshal(old, &a) == nil && json.Unmarshal(m.val, &b) == nil {
				var buf bytes.Buffer
				_ = appendString(&buf, a+b)
				d.members[i].val = buf.Bytes()
			}
		default:
			d.members[i].val = m.val
		}
	}
	return nil
}

// flush emits the assembled tool calls in index order, calls that shared
// an index in the order they started.
func (t *openaiTurn) flush() error {
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
		tc := chatToolCall{ID: call.ID, Type: "function", ExtraContent: p.extra}
		tc.Function.Name = call.Name
		tc.Function.Arguments = string(call.Args)
		t.done = append(t.done, tc)
		t.send(Event{Kind: EventToolCall, Call: call})
		t.emittedCalls++
	}
	t.calls, t.open = nil, map[int]*pendingCall{}
	return nil
}

// raw returns the assistant message to send back next turn when it carries
// something Text and ToolCalls cannot: reasoning_content, reasoning_details
// or a tool call's extra_content. nil otherwise, and the message is built
// as usual.
func (t *openaiTurn) raw() json.RawMessage {
	if !t.special {
		return nil
	}
	a := chatMessage{Role: "assistant", ToolCalls: t.done, ReasoningContent: t.reasoning.String()}
	if s := t.text.String(); s != "" || len(t.done) == 0 {
		a.Content = &s
	}
	for _, d := range t.details {
		a.ReasoningDetails = append(a.ReasoningDetails, writeObject(d.members))
	}
	b, err := marshal(a)
	if err != nil {
		return nil
	}
	return b
}

// whole handles a chat.completion answer that came as one JSON object
// instead of a stream, by replaying it as one chunk.
func (t *openaiTurn) whole(data []byte, provider string) error {
	var c struct {
		Choices []struct {
			Index        int             `json:"index"`
			Message      json.RawMessage `json:"message"`
			FinishReason string          `json:"finish_reason"`
		} `json:"choices"`
		Usage json.RawMessage `json:"usage"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("%s: reading the answer: %w", provider, err)
	}
	// A message has the shape of a delta, but for the index of each tool
	// call, which is its position.
	var chunk struct {
		Choices []map[string]any `json:"choices"`
		Usage   json.RawMessage  `json:"usage,omitempty"`
	}
	chunk.Usage = c.Usage
	for _, ch := range c.Choices {
		var msg map[string]any
		if err := json.Unmarshal(ch.Message, &msg); err != nil {
			return fmt.Errorf("%s: reading the answer: %w", provider, err)
		}
		if calls, ok := msg["tool_calls"].([]any); ok {
			for i, c := range calls {
				if m, ok := c.(map[string]any); ok {
					m["index"] = i
				}
			}
		}
		chunk.Choices = append(chunk.Choices, map[string]any{"index": ch.Index, "delta": msg, "finish_reason": ch.FinishReason})
	}
	b, err := json.Marshal(chunk)
	if err != nil {
		return err
	}
	var cc chatChunk
	if err := json.Unmarshal(b, &cc); err != nil {
		return fmt.Errorf("%s: reading the answer: %w", provider, err)
	}
	if err := t.handle(&cc); err != nil {
		return fmt.Errorf("%s: %w", provider, err)
	}
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
