package client

import (
	"bytes"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// formOrderKey is the _meta key under which the client hands the order of
// an elicitation form's fields, as the server wrote them, to the
// Elicitation handler: the SDK decodes the requested schema into a Go map,
// which loses it. The client sets it from the raw request, replacing any
// value the server sent.
const formOrderKey = "mcphost/propertyOrder"

// Bounds on the requests whose order is kept: a larger one is left as the
// SDK decodes it (its fields then show in name order).
const (
	maxOrderParams = 1 << 20
	maxOrderFields = 256
)

// FormOrder returns the names of the elicitation form's fields in the
// order the server wrote them, or nil when it is not known (streamable
// HTTP, whose connection the client cannot wrap, or an oversized request).
func FormOrder(req *mcp.ElicitRequest) []string {
	if req == nil || req.Params == nil {
		return nil
	}
	v, ok := req.Params.Meta[formOrderKey].([]any)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(v))
	for _, x := range v {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// keepFormOrder records, in an elicitation/create request, the order of
// its form's fields under formOrderKey. Any other message, or a request it
// cannot read, is returned as it is.
func keepFormOrder(msg jsonrpc.Message) jsonrpc.Message {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.Method != "elicitation/create" || len(req.Params) > maxOrderParams {
		return msg
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(req.Params, &params) != nil {
		return msg
	}
	var schema struct {
		Properties json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(params["requestedSchema"], &schema) != nil {
		return msg
	}
	order, ok := objectKeys(schema.Properties)
	if !ok {
		return msg
	}
	meta := map[string]any{}
	if raw, ok := params["_meta"]; ok && json.Unmarshal(raw, &meta) != nil {
		return msg
	}
	if meta == nil {
		meta = map[string]any{}
	}
	meta[formOrderKey] = order
	b, err := json.Marshal(meta)
	if err != nil {
		return msg
	}
	params["_meta"] = b
	p, err := json.Marshal(params)
	if err != nil {
		return msg
	}
	out := *req
	out.Params = p
	return &out
}

// objectKeys returns the keys of a JSON object in the order they appear,
// each once.
func objectKeys(raw json.RawMessage) ([]string, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var keys []string
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		k, ok := t.(string)
		if !ok {
			return nil, false
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, false
		}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
		if len(keys) > maxOrderFields {
			return nil, false
		}
	}
	return keys, true
}
