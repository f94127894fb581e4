package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

const (
	anthropicDefaultBaseURL = "https://api.anthropic.com"
	// anthropicVersion is the Messages API version this file speaks: the
	// one the pinned Go SDK sent before mcphost spoke the wire format
	// itself, so that leaving the SDK changed nothing the API sees.
	anthropicVersion = "2026-10-21"
)

type anthropicModel struct {
	spec      string
	model     string
	endpoint  *endpoint
	tools     toolCache
	maxTokens int // Options.MaxTokens, or the table's
	thinking  thinking
	// rawKey names the assistant messages this model produced, whose raw
	// content (thinking blocks and their signatures) it sends back.
	rawKey string
}

func newAnthropic(spec, model string, o Options) (Model, error) {
	key := o.APIKey
	if key == "" {
		key = o.getenv("ANTHROPIC_API_KEY")
	}
	if key == "" {
		return nil, configErrorf("anthropic: ANTHROPIC_API_KEY is not set; export it or choose another --model")
	}
	base, err := baseURL("anthropic", o.BaseURL, anthropicDefaultBaseURL)
	if err != nil {
		return nil, err
	}
	if err := checkKeyTransport("anthropic", base, "ANTHROPIC_API_KEY", key, o); err != nil {
		return nil, err
	}
	th, err := parseThinking("anthropic", o.Thinking)
	if err != nil {
		return nil, err
	}
	header := http.Header{}
	// A bearer token, as the SDK this replaced sent the key; the tests pin it.
	header.Set("Authorization", "Bearer "+key)
	header.Set("Anthropic-Version", anthropicVersion)
	e, err := newEndpoint("anthropic", "check ANTHROPIC_API_KEY", base, "v1/messages", header, o)
	if err != nil {
		return nil, err
	}
	maxTokens := o.MaxTokens
	if maxTokens <= 0 {
		maxTokens = MaxTokensFor(model)
	}
	if th.mode == "budget" && th.budget >= maxTokens {
		return nil, configErrorf("anthropic: thinking budget %d must be less than maxTokens %d (thinking counts toward it); raise \"maxTokens\" or lower the budget", th.budget, maxTokens)
	}
	return &anthropicModel{spec: spec, model: model, endpoint: e, maxTokens: maxTokens, thinking: th, rawKey: "anthropic " + e.url}, nil
}

func (m *anthropicModel) Name() string { return m.spec }

func (m *anthropicModel) Stream(ctx context.Context, req *Request, emit func(Event)) error {
	if err := req.checkMessages(); err != nil {
		return fmt.Errorf("anthropic: %w", err)
	}
	body, err := marshal(m.params(req))
	var warnings []string
	if err == nil && len(req.Tools) > 0 {
		var tools []byte
		tools, warnings, err = m.tools.encoded(req.Tools, m.ToolLimits(), encodeAnthropicTool)
		body = withCachedTools(body, tools)
	}
	if err != nil {
		return fmt.Errorf("anthropic: %w", err)
	}
	for _, w := range warnings {
		emit(Event{Kind: EventWarning, Text: w})
	}
	var turn *anthropicTurn
	for attempt := 0; ; attempt++ {
		turn = &anthropicTurn{calls: map[int]*pendingCall{}, emit: emit}
		err = m.endpoint.stream(ctx, body, func(ev sseEvent) (bool, error) {
			if err := turn.event(ev); err != nil {
				return false, err
			}
			return turn.stopped, nil
		}, turn.whole)
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
	if !turn.stopped {
		return errors.New("anthropic: the response stream ended before message_stop")
	}
	emit(Event{Kind: EventUsage, Usage: turn.usage})
	done := Event{Kind: EventDone, StopReason: turn.stop, Text: turn.explanation, Raw: turn.raw()}
	if done.Raw != nil {
		done.RawFrom = m.rawKey
	}
	emit(done)
	return nil
}

// messagesRequest is the body of a streamed Messages request. The field
// order is the order on the wire; the tools follow them, added by
// [withTools].
type messagesRequest struct {
	Model        string             `json:"model"`
	MaxTokens    int                `json:"max_tokens"`
	System       []textBlock        `json:"system,omitempty"`
	Messages     []anthropicMessage `json:"messages"`
	Stream       bool               `json:"stream"`
	Thinking     *thinkingConfig    `json:"thinking,omitempty"`
	OutputConfig *outputConfig      `json:"output_config,omitempty"`
}

type thinkingConfig struct {
	Type         string `json:"type"` // "enabled", "disabled", "adaptive"
	BudgetTokens int    `json:"budget_tokens,omitempty"`
}

type outputConfig struct {
	Effort string `json:"effort"`
}

type anthropicMessage struct {
	Role    Role  `json:"role"`
	Content []any `json:"content"` // textBlock, toolUseBlock, toolResultBlock, json.RawMessage
}

type textBlock struct {
	Type         string        `json:"type"` // "text"
	Text         string        `json:"text"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

// cacheControl marks a prompt cache breakpoint: the request up to and
// including the marked block is cached, and a later request with the same
// prefix reads it from the cache.
type cacheControl struct {
	Type string `json:"type"` // "ephemeral"
}

var ephemeral = &cacheControl{Type: "ephemeral"}

type thinkingBlock struct {
	Type      string `json:"type"` // "thinking"
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
}

type toolUseBlock struct {
	Type  string          `json:"type"` // "tool_use"
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`

	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type toolResultBlock struct {
	Type         string        `json:"type"` // "tool_result"
	ToolUseID    string        `json:"tool_use_id"`
	Content      []textBlock   `json:"content,omitempty"`
	IsError      bool          `json:"is_error,omitempty"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

// hasText reports whether s is text the API accepts in a text block: it
// refuses blocks that are empty or nothing but white space.
func hasText(s string) bool { return strings.TrimSpace(s) != "" }

// params maps a request onto the Messages API. Tool results travel as
// tool_result blocks in a user message; adjacent messages of the same role
// are merged because the API wants the roles to alternate. An assistant
// message this model produced goes back as its raw content blocks, thinking
// and signatures unchanged, as the API requires of a turn that used tools.
func (m *anthropicModel) params(req *Request) *messagesRequest {
	p := &messagesRequest{Model: m.model, MaxTokens: req.MaxTokens, Stream: true}
	if p.MaxTokens <= 0 {
		p.MaxTokens = m.maxTokens
	}
	switch m.thinking.mode {
	case "off":
		p.Thinking = &thinkingConfig{Type: "disabled"}
	case "adaptive":
		p.Thinking = &thinkingConfig{Type: "adaptive"}
	case "effort":
		p.Thinking = &thinkingConfig{Type: "adaptive"}
		p.OutputConfig = &outputConfig{Effort: m.thinking.effort}
	case "budget":
		// A request with a smaller limit of its own (a server's sampling
		// request) cannot hold the budget: it gets the provider's default.
		if m.thinking.budget < p.MaxTokens {
			p.Thinking = &thinkingConfig{Type: "enabled", BudgetTokens: m.thinking.budget}
		}
	}
	if hasText(req.System) {
		p.System = []textBlock{{Type: "text", Text: req.System, CacheControl: ephemeral}}
	}
	var lastRole Role
	for _, msg := range req.Messages {
		var blocks []any
		role := RoleUser
		switch msg.Role {
		case RoleAssistant:
			role = RoleAssistant
			if raw := m.rawBlocks(msg); raw != nil {
				blocks = raw
				break
			}
			if hasText(msg.Text) {
				blocks = append(blocks, textBlock{Type: "text", Text: msg.Text})
			}
			for _, c := range msg.ToolCalls {
				blocks = append(blocks, toolUseBlock{Type: "tool_use", ID: c.ID, Name: c.Name, Input: argsOrEmpty(c.Args)})
			}
		case RoleTool:
			for _, r := range msg.ToolResults {
				b := toolResultBlock{Type: "tool_result", ToolUseID: r.CallID, IsError: r.IsError}
				if hasText(r.Content) {
					b.Content = []textBlock{{Type: "text", Text: r.Content}}
				}
				blocks = append(blocks, b)
			}
			if hasText(msg.Text) {
				blocks = append(blocks, textBlock{Type: "text", Text: msg.Text})
			}
		default:
			if hasText(msg.Text) {
				blocks = append(blocks, textBlock{Type: "text", Text: msg.Text})
			}
		}
		if len(blocks) == 0 {
			continue // the API refuses empty content
		}
		if role == lastRole {
			last := &p.Messages[len(p.Messages)-1]
			last.Content = append(last.Content, blocks...)
			continue
		}
		p.Messages = append(p.Messages, anthropicMessage{Role: role, Content: blocks})
		lastRole = role
	}
	markConversation(p.Messages)
	return p
}

// markConversation places the conversation's cache breakpoints: on the last
// block of the last message, which moves with every turn, and on the last
// block of the user message before the last assistant message, where the
// previous turn's moving breakpoint was, so the cache it wrote is read even
// when a turn added more blocks than the API looks back over. With the
// breakpoints on the tools and the system prompt that is four, the API's
// maximum. A raw block (an assistant message sent back as received) is
// never changed.
func markConversation(msgs []anthropicMessage) {
	if len(msgs) == 0 {
		return
	}
	last := len(msgs) - 1
	markLast(&msgs[last])
	for i := last - 1; i > 0; i-- {
		if msgs[i].Role == RoleAssistant && msgs[i-1].Role == RoleUser {
			if i-1 != last {
				markLast(&msgs[i-1])
			}
			break
		}
	}
}

// markLast puts a cache breakpoint on the last block of m, when it is a
// block that takes one.
func markLast(m *anthropicMessage) {
	i := len(m.Content) - 1
	switch b := m.Content[i].(type) {
	case textBlock:
		b.CacheControl = ephemeral
		m.Content[i] = b
	case toolUseBlock:
		b.CacheControl = ephemeral
		m.Content[i] = b
	case toolResultBlock:
		b.CacheControl = ephemeral
		m.Content[i] = b
	}
}

// withCachedTools is withTools with a cache breakpoint on the last tool,
// which caches every definition. It builds the body in one allocation and
// leaves tools, which belong to the tool cache, unchanged.
func withCachedTools(body, tools []byte) []byte {
	const mark = `,"cache_control":{"type":"ephemeral"}`
	n := len(tools)
	if n < 3 || tools[n-2] != '}' || tools[n-1] != ']' || len(body) < 2 || body[len(body)-1] != '}' {
		return withTools(body, tools)
	}
	out := make([]byte, 0, len(body)+n+len(mark)+len(`,"tools":`))
	out = append(out, body[:len(body)-1]...)
	if len(body) > 2 {
		out = append(out, ',')
	}
	out = append(out, `"tools":`...)
	out = append(out, tools[:n-1]...)
	out = append(out[:len(out)-1], mark...)
	return append(out, "}]}"...)
}

// rawBlocks returns the content blocks of msg as this model received them,
// or nil when msg is not its own.
func (m *anthropicModel) rawBlocks(msg Message) []any {
	if msg.RawFrom != m.rawKey || len(msg.Raw) == 0 {
		return nil
	}
	var raw []json.RawMessage
	if json.Unmarshal(msg.Raw, &raw) != nil || len(raw) == 0 {
		return nil
	}
	out := make([]any, len(raw))
	for i, r := range raw {
		out[i] = r
	}
	return out
}

// encodeAnthropicTool appends t as a Messages API tool. The schema is the
// server's, compacted and normalised (see [normalizeSchema]): keywords, key
// order and values stay as the server declared them unless the API would
// refuse them.
func encodeAnthropicTool(b *bytes.Buffer, t Tool, schema []byte) error {
	return appendTool(b, `{`, t, "input_schema", schema, `}`)
}
