package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

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
		// PromptTokensDetails.CachedTokens: the prompt tokens the server's
		// automatic prefix cache served (OpenAI, and compatible servers
		// that say so).
		PromptTokensDetails *struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
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
		if d := chunk.Usage.PromptTokensDetails; d != nil {
			t.usage.CacheReadTokens = d.CachedTokens
		}
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
