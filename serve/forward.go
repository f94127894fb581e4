package serve

import (
	"context"
	"slices"
	"time"

	"github.com/mcphost/mcphost/sanitize"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Extras is what serve forwards besides tools, when the catalog offers it
// (*client.Manager does): prompts and resources, read from their servers
// as data. Neither runs a tool, so neither passes the gate; their text is
// the server's, passed on escaped and bounded.
type Extras interface {
	Prompts(ctx context.Context, server string) ([]*mcp.Prompt, error)
	GetPrompt(ctx context.Context, server, name string, args map[string]string) (*mcp.GetPromptResult, error)
	Resources(ctx context.Context, server string) ([]*mcp.Resource, error)
	ReadResource(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, error)
}

// forwarded is what one server contributes: prompt names and resource
// URIs as offered to clients.
type forwarded struct {
	prompts, resources []string
}

// forwardTimeout bounds the listing of one server's prompts and resources.
const forwardTimeout = 10 * time.Second

// forward offers server's prompts (as server__name) and resources (under
// their own URIs; the server that offered a URI first keeps it) to clients, replacing what it offered before.
func (s *Server) forward(ctx context.Context, server string) {
	x, ok := s.o.Catalog.(Extras)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, forwardTimeout)
	defer cancel()
	prompts, _ := x.Prompts(ctx, server)
	resources, _ := x.Resources(ctx, server)

	s.fwdMu.Lock()
	defer s.fwdMu.Unlock()
	old := s.fwd[server]
	if len(old.prompts) > 0 {
		s.srv.RemovePrompts(old.prompts...)
	}
	if len(old.resources) > 0 {
		s.srv.RemoveResources(old.resources...)
		for _, uri := range old.resources {
			delete(s.uriOwner, uri)
		}
	}
	var now forwarded
	for _, p := range prompts {
		if p == nil || !safeName(p.Name) {
			continue
		}
		name := server + "__" + p.Name
		def := &mcp.Prompt{Name: name, Title: bound(p.Title, 200), Description: sanitize.Truncate(sanitize.Text(p.Description), MaxDescription)}
		for _, a := range p.Arguments {
			if a == nil || !safeName(a.Name) {
				continue
			}
			def.Arguments = append(def.Arguments, &mcp.PromptArgument{Name: a.Name, Title: bound(a.Title, 200),
				Description: sanitize.Truncate(sanitize.Text(a.Description), 1024), Required: a.Required})
		}
		raw := p.Name
		s.srv.AddPrompt(def, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			var args map[string]string
			if req.Params != nil {
				args = req.Params.Arguments
			}
			return x.GetPrompt(ctx, server, raw, args)
		})
		now.prompts = append(now.prompts, name)
	}
	for _, r := range resources {
		if r == nil || r.URI == "" || len(r.URI) > 2048 {
			continue
		}
		if owner, taken := s.uriOwner[r.URI]; taken && owner != server {
			continue // another server offered it first
		}
		uri := r.URI
		s.uriOwner[uri] = server
		s.srv.AddResource(&mcp.Resource{URI: uri, Name: server + "__" + bound(r.Name, 200), Title: bound(r.Title, 200),
			Description: sanitize.Truncate(sanitize.Text(r.Description), MaxDescription), MIMEType: bound(r.MIMEType, 100)},
			func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return x.ReadResource(ctx, server, uri)
			})
		now.resources = append(now.resources, uri)
	}
	slices.Sort(now.prompts)
	s.fwd[server] = now
}

// safeName reports whether a server's name for a prompt or argument can be
// passed on as an identifier: printable ASCII without spaces, bounded.
func safeName(n string) bool {
	if n == "" || len(n) > 128 {
		return false
	}
	for i := 0; i < len(n); i++ {
		if c := n[i]; c <= ' ' || c >= 0x7f {
			return false
		}
	}
	return true
}
