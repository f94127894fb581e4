package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"sync"
)

// toolCache keeps the encoded tools of the last request a model sent. A
// host offers the same tools on every turn, and with a few servers they are
// most of the request (ten servers of two dozen tools: about 100 KB of
// schemas); checking and encoding them once instead of on every turn is
// most of the cost of building a request. The cache is keyed by a hash of
// the tools' content, not by the slice, so a caller that changes a tool in
// place still gets it sent. The zero value is ready to use.
type toolCache struct {
	mu   sync.Mutex
	seed maphash.Seed
	sum  uint64
	n    int
	json []byte // the encoded array, or nil before the first miss
}

// encoded returns the JSON array of tools, encoding each with encode, which
// appends one tool's JSON to a buffer. The tools are checked with
// [checkTools] when they are not the ones of the last call; each schema is
// normalised for the providers (see [normalizeSchema]) and each description
// cut to limits.MaxDescription. A tool whose schema cannot be offered is
// left out. warnings says what was cut or left out; it is set only when the
// tools were encoded afresh, so that a host hears of it once, not on every
// turn. The returned bytes must not be modified.
func (c *toolCache) encoded(tools []Tool, limits ToolLimits, encode func(b *bytes.Buffer, t Tool, schema []byte) error) (out []byte, warnings []string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.json == nil {
		c.seed = maphash.MakeSeed()
	}
	sum := c.hash(tools)
	if c.json != nil && sum == c.sum && len(tools) == c.n {
		return c.json, nil, nil
	}
	if err := checkTools(tools); err != nil {
		return nil, nil, err
	}
	var b, schema bytes.Buffer
	b.WriteByte('[')
	first := true
	for _, t := range tools {
		schema.Reset()
		if err := json.Compact(&schema, schemaOrEmpty(t.InputSchema)); err != nil {
			return nil, nil, err // checkTools let through only valid objects
		}
		norm, _, err := normalizeSchema(schema.Bytes())
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("tool %s is not offered to the model: %v", t.Name, err))
			continue
		}
		var cut bool
		t.Description, cut = cutDescription(t.Description, limits.MaxDescription)
		if cut {
			warnings = append(warnings, fmt.Sprintf("tool %s: its description was cut to the provider's limit of %d characters", t.Name, limits.MaxDescription))
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		if err := encode(&b, t, norm); err != nil {
			return nil, nil, err
		}
	}
	b.WriteByte(']')
	c.sum, c.n, c.json = sum, len(tools), b.Bytes()
	return c.json, warnings, nil
}

// hash is a hash of every field of every tool, each field prefixed with
// its length so that moving bytes between fields changes it.
func (c *toolCache) hash(tools []Tool) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	for _, t := range tools {
		maphash.WriteComparable(&h, len(t.Name))
		_, _ = h.WriteString(t.Name)
		maphash.WriteComparable(&h, len(t.Description))
		_, _ = h.WriteString(t.Description)
		maphash.WriteComparable(&h, len(t.InputSchema))
		_, _ = h.Write(t.InputSchema)
	}
	return h.Sum64()
}

// withTools returns body, a JSON object, with a last member "tools": tools
// when tools is not nil or empty: OpenAI refuses an empty list. Splicing keeps encoding/json from validating and
// compacting the cached schemas again, which it does to every
// json.RawMessage it writes.
func withTools(body, tools []byte) []byte {
	if tools == nil || string(tools) == "[]" || len(body) < 2 || body[len(body)-1] != '}' {
		return body
	}
	out := make([]byte, 0, len(body)+len(tools)+len(`,"tools":`))
	out = append(out, body[:len(body)-1]...)
	if len(body) > 2 {
		out = append(out, ',')
	}
	out = append(out, `"tools":`...)
	out = append(out, tools...)
	return append(out, '}')
}

// appendTool appends a tool object: open, then "name" and "description"
// (left out when empty), then schemaKey with the schema, then close.
func appendTool(b *bytes.Buffer, open string, t Tool, schemaKey string, schema []byte, close string) error {
	b.WriteString(open)
	b.WriteString(`"name":`)
	if err := appendString(b, t.Name); err != nil {
		return err
	}
	if t.Description != "" {
		b.WriteString(`,"description":`)
		if err := appendString(b, t.Description); err != nil {
			return err
		}
	}
	b.WriteString(`,"` + schemaKey + `":`)
	b.Write(schema)
	b.WriteString(close)
	return nil
}

// appendString appends s as a JSON string, with <, > and & left as they
// are, as [marshal] does.
func appendString(b *bytes.Buffer, s string) error {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1) // the newline Encode adds
	return nil
}
