package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"
)

const anthropicDefaultBaseURL = "https://api.anthropic.com"

type anthropicModel struct {
	spec   string
	model  string
	client anthropic.Client
}

func newAnthropic(spec, model string, o Options) (Model, error) {
	key := o.APIKey
	if key == "" {
		key = o.getenv("ANTHROPIC_API_KEY")
	}
	if key == "" {
		return nil, configErrorf("anthropic: ANTHROPIC_API_KEY is not set; export it or choose another --model")
	}
	base, err := baseURL("anthropic", o.BaseURL, o.getenv("ANTHROPIC_BASE_URL"), anthropicDefaultBaseURL)
	if err != nil {
		return nil, err
	}
	opts := []option.RequestOption{
		// Without this the SDK would read ANTHROPIC_* variables, profiles and
		// federation settings from the process behind Options' back.
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(base),
		option.WithAPIKey(key),
		option.WithMaxRetries(o.retries()),
	}
	if o.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(o.HTTPClient))
	}
	return &anthropicModel{spec: spec, model: model, client: anthropic.NewClient(opts...)}, nil
}

func (m *anthropicModel) Name() string { return m.spec }

func (m *anthropicModel) Stream(ctx context.Context, req *Request, emit func(Event)) error {
	if err := req.check(); err != nil {
		return fmt.Errorf("anthropic: %w", err)
	}
	var failure httpFailure
	stream := m.client.Messages.NewStreaming(ctx, anthropicParams(m.model, req), option.WithMiddleware(failure.middleware))
	defer stream.Close()

	turn := anthropicTurn{calls: map[int64]*pendingCall{}}
	for stream.Next() {
		if err := turn.handle(stream.Current(), emit); err != nil {
			return fmt.Errorf("anthropic: %w", err)
		}
		if turn.stopped {
			break
		}
	}
	if err := stream.Err(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if apiErr := failure.apiError("anthropic", "check ANTHROPIC_API_KEY"); apiErr != nil {
			return apiErr
		}
		var sdkErr *anthropic.Error
		if errors.As(err, &sdkErr) {
			// An error event inside a stream that started with 200.
			return &APIError{Provider: "anthropic", Type: clean(string(sdkErr.Type())), Message: clean(sdkErr.Message)}
		}
		return fmt.Errorf("anthropic: reading the response stream: %w", err)
	}
	if ctx.Err() != nil {
		return ctx.Err()
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
	args     strings.Builder
	initial  any // the input in content_block_start, used when no fragment follows
}

func (p *pendingCall) finish() (*ToolCall, error) {
	args := json.RawMessage(p.args.String())
	if len(strings.TrimSpace(p.args.String())) == 0 && p.initial != nil {
		if b, err := json.Marshal(p.initial); err == nil {
			args = b
		}
	}
	args = argsOrEmpty(args)
	if !isJSONObject(args) {
		return nil, fmt.Errorf("tool call %q (%s): the arguments the model sent are not a JSON object: %s", p.name, p.id, clean(string(args)))
	}
	return &ToolCall{ID: p.id, Name: p.name, Args: args}, nil
}

// anthropicTurn follows the event sequence of one Messages stream:
// message_start, then per content block content_block_start,
// content_block_delta… and content_block_stop, then message_delta with the
// stop reason and final usage, then message_stop.
type anthropicTurn struct {
	calls   map[int64]*pendingCall // open tool_use blocks by index
	usage   Usage
	stop    string
	stopped bool
}

func (t *anthropicTurn) handle(ev anthropic.MessageStreamEventUnion, emit func(Event)) error {
	switch ev.Type {
	case "message_start":
		u := ev.Message.Usage
		t.usage.InputTokens = int(u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens)
		t.usage.OutputTokens = int(u.OutputTokens)
	case "content_block_start":
		b := ev.ContentBlock
		switch b.Type {
		case "text":
			if b.Text != "" {
				emit(Event{Kind: EventTextDelta, Text: b.Text})
			}
		case "tool_use":
			t.calls[ev.Index] = &pendingCall{id: b.ID, name: b.Name, initial: b.Input}
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
		if r := string(ev.Delta.StopReason); r != "" {
			t.stop = r
		}
		u := ev.Usage
		// The counts in message_delta are cumulative; input counts are sent
		// again only by some API versions.
		if in := u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens; in > 0 {
			t.usage.InputTokens = int(in)
		}
		if u.OutputTokens > 0 {
			t.usage.OutputTokens = int(u.OutputTokens)
		}
	case "message_stop":
		if len(t.calls) > 0 {
			return errors.New("the message ended inside a tool_use block")
		}
		t.stopped = true
	}
	return nil
}

// anthropicParams maps a request onto the Messages API. Tool results travel
// as tool_result blocks in a user message; adjacent messages of the same
// role are merged because the API wants the roles to alternate.
func anthropicParams(model string, req *Request) anthropic.MessageNewParams {
	p := anthropic.MessageNewParams{
		Model:     model,
		MaxTokens: int64(req.MaxTokens),
	}
	if p.MaxTokens <= 0 {
		p.MaxTokens = DefaultMaxTokens
	}
	if req.System != "" {
		p.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	var lastRole Role
	for _, m := range req.Messages {
		var blocks []anthropic.ContentBlockParamUnion
		role := RoleUser
		switch m.Role {
		case RoleAssistant:
			role = RoleAssistant
			if m.Text != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Text))
			}
			for _, c := range m.ToolCalls {
				blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, argsOrEmpty(c.Args), c.Name))
			}
		case RoleTool:
			for _, r := range m.ToolResults {
				blocks = append(blocks, toolResultBlock(r))
			}
			if m.Text != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Text))
			}
		default:
			if m.Text != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Text))
			}
		}
		if len(blocks) == 0 {
			continue // the API refuses empty content
		}
		if role == lastRole {
			last := p.Messages[len(p.Messages)-1]
			if role == RoleAssistant {
				last.OfAssistant.Content = append(last.OfAssistant.Content, blocks...)
			} else {
				last.OfUser.Content = append(last.OfUser.Content, blocks...)
			}
			continue
		}
		if role == RoleAssistant {
			p.Messages = append(p.Messages, anthropic.NewAssistantMessage(blocks...))
		} else {
			p.Messages = append(p.Messages, anthropic.NewUserMessage(blocks...))
		}
		lastRole = role
	}
	for _, t := range req.Tools {
		tool := anthropic.ToolParam{
			Name: t.Name,
			// Override sends the schema as given instead of through the SDK's
			// typed schema, which knows only a few keywords.
			InputSchema: param.Override[anthropic.ToolInputSchemaParam](schemaOrEmpty(t.InputSchema)),
		}
		if t.Description != "" {
			tool.Description = param.NewOpt(t.Description)
		}
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: &tool})
	}
	return p
}

func toolResultBlock(r ToolResult) anthropic.ContentBlockParamUnion {
	b := anthropic.ToolResultBlockParam{ToolUseID: r.CallID}
	if r.Content != "" {
		b.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: r.Content}}}
	}
	if r.IsError {
		b.IsError = param.NewOpt(true)
	}
	return anthropic.ContentBlockParamUnion{OfToolResult: &b}
}
