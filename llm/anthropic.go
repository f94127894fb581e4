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
	spec     string
	model    string
	endpoint *endpoint
	tools    toolCache
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
	header := http.Header{}
	// A bearer token, as the SDK this replaced sent the key; the tests pin it.
	header.Set("Authorization", "Bearer "+key)
	header.Set("Anthropic-Version", anthropicVersion)
	e, err := newEndpoint("anthropic", "check ANTHROPIC_API_KEY", base, "v1/messages", header, o)
	if err != nil {
		return nil, err
	}
	return &anthropicModel{spec: spec, model: model, endpoint: e}, nil
}

func (m *anthropicModel) Name() string { return m.spec }

func (m *anthropicModel) Stream(ctx context.Context, req *Request, emit func(Event)) error {
	if err := req.checkMessages(); err != nil {
		return fmt.Errorf("anthropic: %w", err)
	}
	body, err := marshal(anthropicParams(m.model, req))
	if err == nil && len(req.Tools) > 0 {
		var tools []byte
		tools, err = m.tools.encoded(req.Tools, encodeAnthropicTool)
		body = withTools(body, tools)
	}
	if err != nil {
		return fmt.Errorf("anthropic: %w", err)
	}
	turn := anthropicTurn{calls: map[int]*pendingCall{}}
	err = m.endpoint.stream(ctx, body, func(ev sseEvent) (bool, error) {
		if err := turn.event(ev, emit); err != nil {
			return false, err
		}
		return turn.stopped, nil
	})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return err
	}
	if !turn.stopped {
		return errors.New("anthropic: the response stream ended before message_stop")
	}
	emit(Event{Kind: EventUsage, Usage: turn.usage})
	emit(Event{Kind: EventDone, StopReason: turn.stop})
	return nil
}

// pendingCall is a tool call whose arguments are still arriving.
type pendingCall struct {
	id, name string
	index    int // the provider's index of the call or block
	args     strings.Builder
	initial  json.RawMessage // the input in content_block_start, used when no fragment follows
}

// Bounds on one turn's tool calls. A single event is already bounded (see
// maxEventBytes); these stop a broken or hostile endpoint from growing
// memory with endless fragments or ever new calls.
const (
	maxCallsPerTurn    = 256
	maxArgBytesPerTurn = 16 << 20
)

// callBudget counts what one turn's tool calls hold.
type callBudget struct{ calls, bytes int }

// newCall counts a call that starts.
func (b *callBudget) newCall() error {
	b.calls++
	if b.calls > maxCallsPerTurn {
		return fmt.Errorf("the model started more than %d tool calls in one turn", maxCallsPerTurn)
	}
	return nil
}

// addArgs counts n more bytes of arguments.
func (b *callBudget) addArgs(n int) error {
	b.bytes += n
	if b.bytes > maxArgBytesPerTurn {
		return fmt.Errorf("the model sent more than %d MiB of tool arguments in one turn", maxArgBytesPerTurn>>20)
	}
	return nil
}

func (p *pendingCall) finish() (*ToolCall, error) {
	args := json.RawMessage(p.args.String())
	if len(strings.TrimSpace(p.args.String())) == 0 && present(p.initial) {
		args = p.initial
	}
	args = argsOrEmpty(args)
	if !isJSONObject(args) {
		return nil, fmt.Errorf("tool call %q (%s): the arguments the model sent are not a JSON object: %s", clean(p.name), clean(p.id), clean(string(args)))
	}
	return &ToolCall{ID: p.id, Name: p.name, Args: args}, nil
}

// anthropicTurn follows the event sequence of one Messages stream:
// message_start, then per content block content_block_start,
// content_block_delta… and content_block_stop, then message_delta with the
// stop reason and final usage, then message_stop.
type anthropicTurn struct {
	calls   map[int]*pendingCall // open tool_use blocks by index
	budget  callBudget
	usage   Usage
	stop    string
	stopped bool
}

// anthropicEvent is the part of a Messages stream event that is read; which
// members are set depends on Type.
type anthropicEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message struct {
		Usage anthropicUsage `json:"usage"`
	} `json:"message"`
	ContentBlock struct {
		Type  string          `json:"type"`
		Text  string          `json:"text"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"content_block"`
	Delta struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage anthropicUsage `json:"usage"`
}

type anthropicUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// input counts every input token, cached or not.
func (u anthropicUsage) input() int {
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

// event handles one event of the stream. Events are told apart by the type
// in their data; an event without a name, a ping, and a type not known here
// are skipped, and an error event ends the turn with an *APIError.
func (t *anthropicTurn) event(ev sseEvent, emit func(Event)) error {
	switch string(ev.name) {
	case "", "ping":
		return nil
	case "error":
		// An error inside a stream that started with 200:
		// {"type":"error","error":{"type":…,"message":…}}.
		typ, msg := parseErrorBody(ev.data)
		return &APIError{Provider: "anthropic", Type: typ, Message: msg}
	}
	if len(bytes.TrimSpace(ev.data)) == 0 {
		return nil
	}
	var e anthropicEvent
	if err := json.Unmarshal(ev.data, &e); err != nil {
		return fmt.Errorf("anthropic: reading the response stream: event %q: %w", clean(string(ev.name)), err)
	}
	if err := t.handle(&e, emit); err != nil {
		return fmt.Errorf("anthropic: %w", err)
	}
	return nil
}

func (t *anthropicTurn) handle(ev *anthropicEvent, emit func(Event)) error {
	switch ev.Type {
	case "message_start":
		u := ev.Message.Usage
		t.usage.InputTokens = u.input()
		t.usage.OutputTokens = u.OutputTokens
	case "content_block_start":
		b := ev.ContentBlock
		switch b.Type {
		case "text":
			if b.Text != "" {
				emit(Event{Kind: EventTextDelta, Text: b.Text})
			}
		case "tool_use":
			if err := t.budget.newCall(); err != nil {
				return err
			}
			if err := t.budget.addArgs(len(b.Input)); err != nil {
				return err
			}
			t.calls[ev.Index] = &pendingCall{id: b.ID, name: b.Name, index: ev.Index, initial: b.Input}
		}
	case "content_block_delta":
		switch ev.Delta.Type {
		case "text_delta":
			if ev.Delta.Text != "" {
				emit(Event{Kind: EventTextDelta, Text: ev.Delta.Text})
			}
		case "input_json_delta":
			// Server tool blocks stream input too; only tool_use blocks are ours.
			if p := t.calls[ev.Index]; p != nil {
				if err := t.budget.addArgs(len(ev.Delta.PartialJSON)); err != nil {
					return err
				}
				p.args.WriteString(ev.Delta.PartialJSON)
			}
		}
	case "content_block_stop":
		if p := t.calls[ev.Index]; p != nil {
			delete(t.calls, ev.Index)
			call, err := p.finish()
			if err != nil {
				return err
			}
			emit(Event{Kind: EventToolCall, Call: call})
		}
	case "message_delta":
		if r := ev.Delta.StopReason; r != "" {
			t.stop = r
		}
		u := ev.Usage
		// The counts in message_delta are cumulative; input counts are sent
		// again only by some API versions.
		if in := u.input(); in > 0 {
			t.usage.InputTokens = in
		}
		if u.OutputTokens > 0 {
			t.usage.OutputTokens = u.OutputTokens
		}
	case "message_stop":
		if len(t.calls) > 0 {
			return errors.New("the message ended inside a tool_use block")
		}
		t.stopped = true
	}
	return nil
}

// messagesRequest is the body of a streamed Messages request. The field
// order is the order on the wire; the tools follow them, added by
// [withTools].
type messagesRequest struct {
	Model     string             `json:"model"`
	MaxTokens int                `json:"max_tokens"`
	System    []textBlock        `json:"system,omitempty"`
	Messages  []anthropicMessage `json:"messages"`
	Stream    bool               `json:"stream"`
}

type anthropicMessage struct {
	Role    Role  `json:"role"`
	Content []any `json:"content"` // textBlock, toolUseBlock, toolResultBlock
}

type textBlock struct {
	Type string `json:"type"` // "text"
	Text string `json:"text"`
}

type toolUseBlock struct {
	Type  string          `json:"type"` // "tool_use"
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type toolResultBlock struct {
	Type      string      `json:"type"` // "tool_result"
	ToolUseID string      `json:"tool_use_id"`
	Content   []textBlock `json:"content,omitempty"`
	IsError   bool        `json:"is_error,omitempty"`
}

// anthropicParams maps a request onto the Messages API. Tool results travel
// as tool_result blocks in a user message; adjacent messages of the same
// role are merged because the API wants the roles to alternate.
func anthropicParams(model string, req *Request) *messagesRequest {
	p := &messagesRequest{Model: model, MaxTokens: req.MaxTokens, Stream: true}
	if p.MaxTokens <= 0 {
		p.MaxTokens = DefaultMaxTokens
	}
	if req.System != "" {
		p.System = []textBlock{{Type: "text", Text: req.System}}
	}
	var lastRole Role
	for _, m := range req.Messages {
		var blocks []any
		role := RoleUser
		switch m.Role {
		case RoleAssistant:
			role = RoleAssistant
			if m.Text != "" {
				blocks = append(blocks, textBlock{Type: "text", Text: m.Text})
			}
			for _, c := range m.ToolCalls {
				blocks = append(blocks, toolUseBlock{Type: "tool_use", ID: c.ID, Name: c.Name, Input: argsOrEmpty(c.Args)})
			}
		case RoleTool:
			for _, r := range m.ToolResults {
				b := toolResultBlock{Type: "tool_result", ToolUseID: r.CallID, IsError: r.IsError}
				if r.Content != "" {
					b.Content = []textBlock{{Type: "text", Text: r.Content}}
				}
				blocks = append(blocks, b)
			}
			if m.Text != "" {
				blocks = append(blocks, textBlock{Type: "text", Text: m.Text})
			}
		default:
			if m.Text != "" {
				blocks = append(blocks, textBlock{Type: "text", Text: m.Text})
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
	return p
}

// encodeAnthropicTool appends t as a Messages API tool. The schema is sent
// as given (compacted): keywords, key order and values stay as the server
// declared them.
func encodeAnthropicTool(b *bytes.Buffer, t Tool, schema []byte) error {
	return appendTool(b, `{`, t, "input_schema", schema, `}`)
}
