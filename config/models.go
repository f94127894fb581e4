package config

import (
	"fmt"
	"strconv"
)

// ModelSettings are the settings of one model, from "models" in the user's
// own config: {"models": {"anthropic:claude-sonnet-4-5": {"maxTokens":
// 32000, "thinking": "high"}}}. The llm package checks the values against
// the provider when the model is built.
type ModelSettings struct {
	// MaxTokens is the output limit; 0 means the model's default.
	MaxTokens int
	// Thinking is "off", "adaptive", an effort ("low", "medium", "high",
	// …) or a token budget written as a number; "" means the provider's
	// default.
	Thinking string
	// ContextWindow is the model's context window in tokens; 0 means
	// mcphost's table of common models.
	ContextWindow int
}

var modelKeys = []string{"maxTokens", "thinking", "contextWindow"}

// models parses "models": an object from "provider:model" specs to
// settings.
func (p *parser) models(m member) error {
	n := m.val
	if n.kind != kindObject {
		return p.errorf(n.start, `expected an object for "models", got %s; it maps model specs to settings: {"anthropic:claude-sonnet-4-5": {"maxTokens": 32000}}`, n.kind)
	}
	for _, sm := range p.uniq(n, `in "models"`) {
		if sm.val.kind != kindObject {
			return p.errorf(sm.val.start, "expected an object for model %q, got %s", short(sm.key), sm.val.kind)
		}
		where := fmt.Sprintf("in model %q", short(sm.key))
		var s ModelSettings
		for _, f := range p.uniq(sm.val, where) {
			v := f.val
			switch f.key {
			case "maxTokens":
				k, err := strconv.Atoi(v.str)
				if v.kind != kindNumber || err != nil || k <= 0 {
					return p.errorf(v.start, `expected a positive whole number of tokens for "maxTokens" %s, like 32000`, where)
				}
				s.MaxTokens = k
			case "contextWindow":
				k, err := strconv.Atoi(v.str)
				if v.kind != kindNumber || err != nil || k < 1024 {
					return p.errorf(v.start, `expected a whole number of tokens, at least 1024, for "contextWindow" %s, like 200000`, where)
				}
				s.ContextWindow = k
			case "thinking":
				if v.kind != kindString && v.kind != kindNumber {
					return p.typeError(v, `a string ("off", "adaptive", "low", "medium", "high") or a token budget`, quote(f.key), where)
				}
				s.Thinking = v.str
			default:
				p.unknown(f, where, modelKeys, nil)
			}
		}
		if p.cfg.Models == nil {
			p.cfg.Models = map[string]ModelSettings{}
		}
		p.cfg.Models[sm.key] = s
	}
	return nil
}
