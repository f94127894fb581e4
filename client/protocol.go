package client

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// newProtocol is the first protocol version with a stateless lifecycle:
// every request carries the protocol version and the client's capabilities
// in _meta.
const newProtocol = "2026-07-28"

// requestMeta returns the _meta members a request mcphost sends beside the
// SDK (tools/list, the task methods) needs on session cs, or nil when the
// negotiated protocol needs none. The SDK adds them to its own requests.
func (s *server) requestMeta(cs *mcp.ClientSession) map[string]any {
	ir := cs.InitializeResult()
	if ir == nil || ir.ProtocolVersion < newProtocol {
		return nil
	}
	caps := map[string]any{}
	if len(s.m.opts.Roots) > 0 {
		caps["roots"] = map[string]any{}
	}
	if s.m.opts.Elicitation != nil {
		caps["elicitation"] = map[string]any{"form": map[string]any{}}
	}
	if s.m.opts.Sampling != nil {
		caps["sampling"] = map[string]any{}
	}
	return map[string]any{
		mcp.MetaKeyProtocolVersion:    ir.ProtocolVersion,
		mcp.MetaKeyClientInfo:         &mcp.Implementation{Name: s.m.opts.ClientName, Version: s.m.opts.ClientVersion},
		mcp.MetaKeyClientCapabilities: caps,
	}
}

// withMeta adds meta to a raw request's params (nil or an object), keeping
// members the params already have.
func withMeta(params any, meta map[string]any) any {
	if meta == nil {
		return params
	}
	p, _ := params.(map[string]any)
	out := make(map[string]any, len(p)+1)
	for k, v := range p {
		out[k] = v
	}
	m, _ := out["_meta"].(map[string]any)
	merged := make(map[string]any, len(m)+len(meta))
	for k, v := range meta {
		merged[k] = v
	}
	for k, v := range m {
		merged[k] = v
	}
	out["_meta"] = merged
	return out
}

// standardHeaders are the headers the streamable HTTP transport of the
// 2026-07-28 protocol wants on a request beside its body: the method, and
// for a tool call the tool's name.
func (r *rawHTTP) standardHeaders(method string, params any) map[string]string {
	if r.meta == nil {
		return nil
	}
	h := map[string]string{"Mcp-Method": method}
	if p, ok := params.(map[string]any); ok && method == "tools/call" {
		if name, ok := p["name"].(string); ok {
			h["Mcp-Name"] = name
		}
	}
	return h
}

// FindHeaderAnnotations: the tool's x-mcp-header annotations are invalid
// (2026-07-28, SEP-2243), so no conforming client may call it.
const FindHeaderAnnotations = "invalid-header-annotations"

// sdkListing lists the tools through the SDK as well, on a 2026-07-28
// session over streamable HTTP: the SDK keeps what it listed to put a
// tool's x-mcp-header arguments in Mcp-Param-* headers when it is called,
// and leaves out tools whose annotations for them are invalid, which lst
// then drops too. The exact reading of every other field stays lst's.
func (s *server) sdkListing(ctx context.Context, l *live, lst *listing) {
	if _, ok := l.raw.(*rawHTTP); !ok || l.protocol < newProtocol {
		return
	}
	lim := s.m.opts.Limits.withDefaults()
	kept := map[string]bool{}
	n := 0
	for t, err := range l.session.Tools(ctx, nil) {
		if err != nil {
			return // the SDK could not list: keep lst as it is
		}
		if n++; n > 2*lim.MaxTools {
			return
		}
		kept[t.Name] = true
	}
	tools := lst.tools[:0]
	for _, t := range lst.tools {
		if kept[t.Name] {
			tools = append(tools, t)
			continue
		}
		delete(lst.fields, t.Name)
		lst.findings = append(lst.findings, Finding{Server: s.spec.Name, Tool: t.Name, Severity: SevError, Code: FindHeaderAnnotations,
			Message: "the tool's x-mcp-header annotations are invalid (SEP-2243); the tool was dropped"})
	}
	lst.tools = tools
}

// traceKey carries W3C trace context in a call's context.
type traceKey struct{}

// WithTraceContext returns ctx carrying W3C trace context (the members
// "traceparent" and, if any, "tracestate"): a tools/call sent with it carries
// them in params._meta, so that a traced server's spans join the host's
// trace. Other members are ignored.
func WithTraceContext(ctx context.Context, fields map[string]string) context.Context {
	return context.WithValue(ctx, traceKey{}, fields)
}

// addTraceMeta copies the trace context of ctx into params' _meta, leaving
// members already there (the progress token) alone.
func addTraceMeta(ctx context.Context, params *mcp.CallToolParams) {
	fields, _ := ctx.Value(traceKey{}).(map[string]string)
	for _, k := range []string{"traceparent", "tracestate"} {
		v := fields[k]
		if v == "" {
			continue
		}
		if params.Meta == nil {
			params.Meta = mcp.Meta{}
		}
		if _, set := params.Meta[k]; !set {
			params.Meta[k] = v
		}
	}
}
