package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcphost/mcphost/llm"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ElicitDefaults answers a form elicitation without a person: it accepts
// with each property's default when every required property has one, and
// declines otherwise. A URL elicitation is declined: nothing is opened
// without a person.
func ElicitDefaults(p *mcp.ElicitParams) *mcp.ElicitResult {
	if p == nil || p.Mode == "url" || p.URL != "" {
		return &mcp.ElicitResult{Action: "decline"}
	}
	raw, err := json.Marshal(p.RequestedSchema)
	if err != nil {
		return &mcp.ElicitResult{Action: "decline"}
	}
	var schema struct {
		Properties map[string]struct {
			Default json.RawMessage `json:"default"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		return &mcp.ElicitResult{Action: "decline"}
	}
	content := map[string]any{}
	for name, prop := range schema.Properties {
		if len(prop.Default) == 0 {
			continue
		}
		var v any
		if json.Unmarshal(prop.Default, &v) == nil {
			content[name] = v
		}
	}
	for _, r := range schema.Required {
		if _, ok := content[r]; !ok {
			return &mcp.ElicitResult{Action: "decline"}
		}
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}
}

// Sample answers a server's sampling request with the person's model. The
// request's text messages become the conversation; the server sees only the
// model's text answer. Tools are never offered to a sampled turn.
func Sample(ctx context.Context, model llm.Model, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, llm.Usage, error) {
	var usage llm.Usage
	if model == nil {
		return nil, usage, errors.New("no model is configured")
	}
	req := &llm.Request{System: p.SystemPrompt, MaxTokens: int(min(p.MaxTokens, 8192))}
	for _, m := range p.Messages {
		tc, ok := m.Content.(*mcp.TextContent)
		if !ok {
			return nil, usage, fmt.Errorf("sampling supports text messages only, got %T", m.Content)
		}
		role := llm.RoleUser
		if m.Role == "assistant" {
			role = llm.RoleAssistant
		}
		req.Messages = append(req.Messages, llm.Message{Role: role, Text: tc.Text})
	}
	var text strings.Builder
	stop := ""
	err := model.Stream(ctx, req, func(e llm.Event) {
		switch e.Kind {
		case llm.EventTextDelta:
			text.WriteString(e.Text)
		case llm.EventUsage:
			usage = e.Usage
		case llm.EventDone:
			stop = e.StopReason
		}
	})
	if err != nil {
		return nil, usage, err
	}
	reason := "endTurn"
	if stop == llm.StopMaxTokens {
		reason = "maxTokens"
	}
	return &mcp.CreateMessageResult{Role: "assistant", Model: model.Name(), Content: &mcp.TextContent{Text: text.String()}, StopReason: reason}, usage, nil
}
