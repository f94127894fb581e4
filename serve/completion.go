package serve

import (
	"context"
	"errors"

	"github.com/mcphost/mcphost/decide"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"
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
	if !s.mayComplete(ctx, req.Session, req.Extra, server, &ref, p.Argument, others) {
		return res, nil
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

// mayComplete reports whether the client's gate would let it make, now and
// without asking anyone, the request a completion is for: the prompts/get
// with these arguments, or the read of the template or URI. A completion
// sends the client's words to the server and returns the server's, so it
// is not sent for what the client may not read unasked; no one is asked
// about it (a completion comes at each keystroke), its values are simply
// none.
func (s *Server) mayComplete(ctx context.Context, ss *mcp.ServerSession, extra *mcp.RequestExtra, server string, ref *mcp.CompleteReference, arg mcp.CompleteParamsArgument, others map[string]string) bool {
	sess, _, err := s.sessionOf(ctx, ss, extra)
	if err != nil {
		return false
	}
	args := make(map[string]string, len(others)+1)
	for k, v := range others {
		args[k] = v
	}
	args[arg.Name] = arg.Value
	var d decide.Decision
	if ref.Type == "ref/prompt" {
		d, err = sess.gate.ExplainPrompt(server, ref.Name, args)
	} else {
		d, err = sess.gate.ExplainRead(server, expand(ref.URI, args))
	}
	return err == nil && d.Verdict == decide.Allow
}

// expand fills the URI template ut with args, as the read the completion
// leads to would name it; ut itself when it is no template.
func expand(ut string, args map[string]string) string {
	t, err := uritemplate.New(ut)
	if err != nil {
		return ut
	}
	vals := uritemplate.Values{}
	for k, v := range args {
		vals.Set(k, uritemplate.String(v))
	}
	uri, err := t.Expand(vals)
	if err != nil {
		return ut
	}
	return uri
}
