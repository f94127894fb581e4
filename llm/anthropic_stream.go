package llm

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// pendingCall is a tool call whose arguments are still arriving.
type pendingCall struct {
	id, name string
	index    int // the provider's index of the call or block
	args     strings.Builder
	initial  json.RawMessage // the input in content_block_start, used when no fragment follows
	extra    json.RawMessage // a Chat Completions call's extra_content, sent back with it
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
// stop reason and final usage, then message_stop. It keeps every content
// block as received, in order, for the raw message sent back next turn.
type anthropicTurn struct {
	emit        func(Event)
	emitted     bool                 // an event went to emit
	calls       map[int]*pendingCall // open tool_use blocks by index
	blocks      []*anthropicBlock    // every content block, in order
	budget      callBudget
	usage       Usage
	stop        string
	explanation string // a refusal's, from stop_details
	stopped     bool
}

// anthropicBlock is one content block as it arrived.
type anthropicBlock struct {
	index int
	typ   string
	start json.RawMessage // content_block of content_block_start
	text  strings.Builder // a text block's text, a thinking block's thinking
	sig   string          // a thinking block's signature
	call  *ToolCall       // a tool_use block's call, once complete
}

func (t *anthropicTurn) send(e Event) {
	t.emitted = true
	t.emit(e)
}

// anthropicEvent is the part of a Messages stream event that is read; which
// members are set depends on Type.
type anthropicEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message struct {
		Usage anthropicUsage `json:"usage"`
	} `json:"message"`
	ContentBlock json.RawMessage `json:"content_block"`
	Delta        struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
		StopDetails *struct {
			Explanation string `json:"explanation"`
			Category    string `json:"category"`
		} `json:"stop_details"`
	} `json:"delta"`
	Usage anthropicUsage `json:"usage"`
}

// contentBlock is the part of a content block that is read.
type contentBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
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
func (t *anthropicTurn) event(ev sseEvent) error {
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
	if err := t.handle(&e); err != nil {
		return fmt.Errorf("anthropic: %w", err)
	}
	return nil
}

func (t *anthropicTurn) block(index int) *anthropicBlock {
	for i := len(t.blocks) - 1; i >= 0; i-- {
		if t.blocks[i].index == index {
			return t.blocks[i]
		}
	}
	return nil
}

func (t *anthropicTurn) handle(ev *anthropicEvent) error {
	switch ev.Type {
	case "message_start":
		u := ev.Message.Usage
		t.usage.InputTokens = u.input()
		t.usage.OutputTokens = u.OutputTokens
		t.usage.CacheReadTokens, t.usage.CacheWriteTokens = u.CacheReadInputTokens, u.CacheCreationInputTokens
	case "content_block_start":
		var b contentBlock
		if err := json.Unmarshal(ev.ContentBlock, &b); err != nil {
			return fmt.Errorf("content block %d: %w", ev.Index, err)
		}
		blk := &anthropicBlock{index: ev.Index, typ: b.Type, start: append(json.RawMessage(nil), ev.ContentBlock...)}
		t.blocks = append(t.blocks, blk)
		switch b.Type {
		case "text":
			blk.text.WriteString(b.Text)
			if b.Text != "" {
				t.send(Event{Kind: EventTextDelta, Text: b.Text})
			}
		case "thinking":
			blk.text.WriteString(b.Thinking)
			blk.sig = b.Signature
			if b.Thinking != "" {
				t.send(Event{Kind: EventThinking, Text: b.Thinking})
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
		blk := t.block(ev.Index)
		switch ev.Delta.Type {
		case "text_delta":
			if blk != nil {
				blk.text.WriteString(ev.Delta.Text)
			}
			if ev.Delta.Text != "" {
				t.send(Event{Kind: EventTextDelta, Text: ev.Delta.Text})
			}
		case "thinking_delta":
			if blk != nil {
				blk.text.WriteString(ev.Delta.Thinking)
			}
			if ev.Delta.Thinking != "" {
				t.send(Event{Kind: EventThinking, Text: ev.Delta.Thinking})
			}
		case "signature_delta":
			if blk != nil {
				blk.sig += ev.Delta.Signature
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
			if blk := t.block(ev.Index); blk != nil {
				blk.call = call
			}
			t.send(Event{Kind: EventToolCall, Call: call})
		}
	case "message_delta":
		if r := ev.Delta.StopReason; r != "" {
			t.stop = r
		}
		if d := ev.Delta.StopDetails; d != nil {
			t.explanation = clean(cmp.Or(d.Explanation, d.Category))
		}
		u := ev.Usage
		// The counts in message_delta are cumulative; input counts are sent
		// again only by some API versions.
		if in := u.input(); in > 0 {
			t.usage.InputTokens = in
			t.usage.CacheReadTokens, t.usage.CacheWriteTokens = u.CacheReadInputTokens, u.CacheCreationInputTokens
		}
		if u.OutputTokens > 0 {
			t.usage.OutputTokens = u.OutputTokens
		}
	case "message_stop":
		if len(t.calls) > 0 && !Truncated(t.stop) {
			return errors.New("the message ended inside a tool_use block")
		}
		// A tool_use block the output limit cut off was never emitted and
		// is left out of the raw message: it must not run, nor be echoed.
		t.calls = map[int]*pendingCall{}
		t.stopped = true
	}
	return nil
}

// raw returns the assistant message's content blocks as received, in
// order, for the next request: thinking blocks with their signatures,
// redacted_thinking blocks untouched, text and complete tool_use blocks.
// A text block of nothing but white space is left out, because the API
// refuses it when it is sent back. nil when there is nothing to send.
func (t *anthropicTurn) raw() json.RawMessage {
	var b bytes.Buffer
	n := 0
	add := func(v any) {
		enc, err := marshal(v)
		if err != nil {
			return
		}
		if n > 0 {
			b.WriteByte(',')
		}
		b.Write(enc)
		n++
	}
	b.WriteByte('[')
	for _, blk := range t.blocks {
		switch blk.typ {
		case "text":
			if strings.TrimSpace(blk.text.String()) != "" {
				add(textBlock{Type: "text", Text: blk.text.String()})
			}
		case "thinking":
			add(thinkingBlock{Type: "thinking", Thinking: blk.text.String(), Signature: blk.sig})
		case "tool_use":
			if blk.call != nil {
				add(toolUseBlock{Type: "tool_use", ID: blk.call.ID, Name: blk.call.Name, Input: blk.call.Args})
			}
		default:
			// redacted_thinking and any block not known here: as received.
			add(blk.start)
		}
	}
	b.WriteByte(']')
	if n == 0 {
		return nil
	}
	return b.Bytes()
}

// whole handles an answer that came as one JSON message instead of a
// stream (a proxy that does not stream), by replaying it as the events a
// stream would have carried.
func (t *anthropicTurn) whole(data []byte) error {
	var msg struct {
		Content     []json.RawMessage `json:"content"`
		StopReason  string            `json:"stop_reason"`
		StopDetails json.RawMessage   `json:"stop_details"`
		Usage       anthropicUsage    `json:"usage"`
	}
	if err := json.Unmarshal(data, &msg); err != nil {
		return fmt.Errorf("anthropic: reading the answer: %w", err)
	}
	evs := []anthropicEvent{{Type: "message_start"}}
	evs[0].Message.Usage = msg.Usage
	for i, c := range msg.Content {
		evs = append(evs, anthropicEvent{Type: "content_block_start", Index: i, ContentBlock: c}, anthropicEvent{Type: "content_block_stop", Index: i})
	}
	end := anthropicEvent{Type: "message_delta", Usage: msg.Usage}
	end.Delta.StopReason = msg.StopReason
	if present(msg.StopDetails) {
		_ = json.Unmarshal(msg.StopDetails, &end.Delta.StopDetails)
	}
	evs = append(evs, end, anthropicEvent{Type: "message_stop"})
	for i := range evs {
		if err := t.handle(&evs[i]); err != nil {
			return fmt.Errorf("anthropic: %w", err)
		}
	}
	return nil
}
