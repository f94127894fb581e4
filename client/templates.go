package client

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxCompletions bounds the values of one completion answer that are kept.
const maxCompletions = 100

// ResourceTemplates lists a server's resource templates, bounded like
// Resources; a server without the resources capability has none.
func (m *Manager) ResourceTemplates(ctx context.Context, server string) ([]*mcp.ResourceTemplate, error) {
	if !m.capable(server, func(c *mcp.ServerCapabilities) bool { return c.Resources != nil }) {
		return nil, nil
	}
	cs, err := m.session(server)
	if err != nil {
		return nil, err
	}
	return paginate(func(cursor string) ([]*mcp.ResourceTemplate, string, error) {
		res, err := cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
		if err != nil {
			return nil, "", fmt.Errorf("list resource templates of %q: %w", server, err)
		}
		return res.ResourceTemplates, res.NextCursor, nil
	})
}

// CanComplete reports whether a server offers argument completions
// (completion/complete).
func (m *Manager) CanComplete(server string) bool {
	return m.capable(server, func(c *mcp.ServerCapabilities) bool { return c.Completions != nil })
}

// Complete asks a server for values of the argument arg of ref (a prompt,
// "ref/prompt", or a resource template, "ref/resource") that complete
// value; others are the arguments already filled in. A server without the
// capability has none. At most maxCompletions values are returned; they
// are the server's words.
func (m *Manager) Complete(ctx context.Context, server string, ref *mcp.CompleteReference, arg, value string, others map[string]string) ([]string, error) {
	c, err := m.Completion(ctx, server, ref, arg, value, others)
	if err != nil || c == nil {
		return nil, err
	}
	return c.Values, nil
}

// Completion is Complete with the server's whole answer: at most
// maxCompletions values (HasMore is set when more were cut), and the
// total and hasMore it sent, unchecked. A server without the capability
// answers nil.
func (m *Manager) Completion(ctx context.Context, server string, ref *mcp.CompleteReference, arg, value string, others map[string]string) (*mcp.CompletionResultDetails, error) {
	if !m.CanComplete(server) {
		return nil, nil
	}
	cs, err := m.session(server)
	if err != nil {
		return nil, err
	}
	p := &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: arg, Value: value}}
	if len(others) > 0 {
		p.Context = &mcp.CompleteContext{Arguments: others}
	}
	res, err := cs.Complete(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("complete %s of %q: %w", arg, server, err)
	}
	c := res.Completion
	if len(c.Values) > maxCompletions {
		c.Values, c.HasMore = c.Values[:maxCompletions], true
	}
	return &c, nil
}
