package client

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds on what listing resources and prompts may return from one server.
const (
	maxListPages = 100
	maxListItems = 10000
)

// session returns the live session of a ready server.
func (m *Manager) session(server string) (*mcp.ClientSession, error) {
	s := m.byName[server]
	if s == nil {
		return nil, fmt.Errorf("no server named %q", server)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil || s.state != StateReady {
		return nil, fmt.Errorf("server %q is %s", server, s.state)
	}
	return s.conn.session, nil
}

// capable reports whether the server declared a capability at initialize.
func (m *Manager) capable(server string, has func(*mcp.ServerCapabilities) bool) bool {
	cs, err := m.session(server)
	if err != nil {
		return false
	}
	ir := cs.InitializeResult()
	return ir != nil && ir.Capabilities != nil && has(ir.Capabilities)
}

// Resources lists a server's resources, at most maxListPages pages and
// maxListItems items; a server without the resources capability has none.
func (m *Manager) Resources(ctx context.Context, server string) ([]*mcp.Resource, error) {
	if !m.capable(server, func(c *mcp.ServerCapabilities) bool { return c.Resources != nil }) {
		return nil, nil
	}
	cs, err := m.session(server)
	if err != nil {
		return nil, err
	}
	return paginate(func(cursor string) ([]*mcp.Resource, string, error) {
		res, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil {
			return nil, "", fmt.Errorf("list resources of %q: %w", server, err)
		}
		return res.Resources, res.NextCursor, nil
	})
}

// paginate collects pages until the cursor ends or repeats, within the
// page and item bounds; what was read before an error is returned with it.
func paginate[T any](page func(cursor string) ([]T, string, error)) ([]T, error) {
	var out []T
	cursor := ""
	seen := map[string]bool{}
	for range maxListPages {
		items, next, err := page(cursor)
		out = append(out, items...)
		if err != nil {
			return out, err
		}
		if len(out) >= maxListItems {
			return out[:maxListItems], nil
		}
		if next == "" || seen[next] {
			break
		}
		seen[next] = true
		cursor = next
	}
	return out, nil
}

// ReadResource reads one resource of a server. Its contents are the
// server's data, untrusted like a tool result.
func (m *Manager) ReadResource(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, error) {
	cs, err := m.session(server)
	if err != nil {
		return nil, err
	}
	return cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
}

// Prompts lists a server's prompts, bounded like Resources.
func (m *Manager) Prompts(ctx context.Context, server string) ([]*mcp.Prompt, error) {
	if !m.capable(server, func(c *mcp.ServerCapabilities) bool { return c.Prompts != nil }) {
		return nil, nil
	}
	cs, err := m.session(server)
	if err != nil {
		return nil, err
	}
	return paginate(func(cursor string) ([]*mcp.Prompt, string, error) {
		res, err := cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
		if err != nil {
			return nil, "", fmt.Errorf("list prompts of %q: %w", server, err)
		}
		return res.Prompts, res.NextCursor, nil
	})
}

// GetPrompt fetches one prompt with its arguments filled in.
func (m *Manager) GetPrompt(ctx context.Context, server, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	cs, err := m.session(server)
	if err != nil {
		return nil, err
	}
	return cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
}
