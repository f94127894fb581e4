package serve

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds on a completion answer passed to a client: the spec's count,
// and one line of bounded length for each value.
const (
	maxCompletions     = 100
	maxCompletionValue = 512
)

// complete answers completion/complete for a forwarded prompt (by its
// offered name) or resource template (by its URI template, or a listed
// URI) from the server that offers it, under that server's own name for
// it. A server that cannot complete has no values; a reference serve does
// not offer is invalid.
func (s *Server) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p := req.Params
	if p == nil || p.Ref == nil {
		return nil, invalidParams("mcphost: completion/complete needs a ref")
	}
	ref := *p.Ref
	var server string
	switch ref.Type {
	case "ref/prompt":
		s.fwdMu.Lock()
		pr, ok := s.fx.prompts[ref.Name]
		s.fwdMu.Unlock()
		if !ok {
			return nil, invalidParams("mcphost: no prompt named %q", bound(ref.Name, 128))
		}
		server, ref.Name = pr.server, pr.raw
	case "ref/resource":
		s.fwdMu.Lock()
		server = s.fx.tmplOwner[ref.URI]
		if server == "" {
			server = s.uriOwner[ref.URI]
		}
		s.fwdMu.Unlock()
		if server == "" {
			return nil, invalidParams("mcphost: no resource template %q", bound(ref.URI, 256))
		}
	default:
		return nil, invalidParams("mcphost: unknown reference type %q", bound(ref.Type, 64))
	}
	res := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
	c, _ := s.o.Catalog.(Completer)
	if c == nil || !c.CanComplete(server) {
		return res, nil
	}
	var others map[string]string
	if p.Context != nil {
		others = p.Context.Arguments
	}
	got, err := c.Completion(ctx, server, &ref, p.Argument.Name, p.Argument.Value, others)
	if err != nil {
		return nil, errors.New("mcphost: " + bound(err.Error(), 500))
	}
	if got != nil {
		res.Completion = completions(got)
	}
	return res, nil
}

// completions bounds a server's answer: at most maxCompletions values,
// each one sanitized line cut to maxCompletionValue bytes; a total smaller
// than what was kept says nothing and is dropped.
func completions(c *mcp.CompletionResultDetails) mcp.CompletionResultDetails {
	out := mcp.CompletionResultDetails{Values: []string{}, HasMore: c.HasMore}
	for _, v := range c.Values {
		if len(out.Values) == maxCompletions {
			out.HasMore = true
			break
		}
		if v = bound(v, maxCompletionValue); v != "" {
			out.Values = append(out.Values, v)
		}
	}
	if c.Total >= len(out.Values) {
		out.Total = c.Total
	}
	return out
}
