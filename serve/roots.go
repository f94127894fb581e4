package serve

import (
	"context"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/mcphost/mcphost/sanitize"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds on the roots a client's answer passes on to a server: the rest
// are left out.
const (
	MaxRoots       = 100
	MaxRootURI     = 2048 // bytes; a longer URI is left out, not cut
	MaxRootNameLen = 256  // bytes of the sanitized name
)

// ServerRoots answers a server's roots/list (within the manager's rate
// limit) with the roots of the client whose call is the one running on
// that server: asked with the call (on its stream over HTTP; for a
// 2026-07-28 client, as an input request of its parked call), waiting at
// most AskTimeout. It is the manager's ListRoots. When the person
// configured roots (configured is not empty), those are the answer and no
// client is asked: the person's explicit choice wins. It says not ok, so
// that the configured roots (possibly none) answer, when no call or more
// than one runs on the server (unlike a question, roots never go to the
// only connected client outside a call), when the client did not declare
// the roots capability, or when it does not answer in time. What a
// client answers is bounded (boundRoots) before it reaches the server.
func (s *Server) ServerRoots(configured []*mcp.Root) func(context.Context, string) (*mcp.ListRootsResult, bool) {
	return func(ctx context.Context, server string) (*mcp.ListRootsResult, bool) {
		if len(configured) > 0 {
			return nil, false
		}
		if pk := s.parkedOf(ctx, server); pk != nil {
			ctx, cancel := context.WithTimeout(ctx, s.o.AskTimeout)
			defer cancel()
			a, ok, err := pk.relay(ctx, &mcp.ListRootsParams{}, canListRoots)
			if err != nil || !ok {
				return nil, false
			}
			res, _ := a.(*mcp.ListRootsResult)
			if res == nil {
				return nil, false
			}
			return boundRoots(res), true
		}
		r := s.caller(server)
		if r == nil || !canListRoots(capsOf(r.ss)) || (&asker{s: s, ss: r.ss}).multiRoundTrip() {
			return nil, false
		}
		// Sent with the call, on its stream over HTTP.
		sendCtx, cancel := context.WithTimeout(r.ctx, s.o.AskTimeout)
		defer cancel()
		stop := context.AfterFunc(ctx, cancel)
		defer stop()
		res, err := r.ss.ListRoots(sendCtx, nil)
		if err != nil || res == nil {
			return nil, false
		}
		return boundRoots(res), true
	}
}

// canListRoots reads a client's declared roots capability.
func canListRoots(c *mcp.ClientCapabilities) bool { return c != nil && c.RootsV2 != nil }

// boundRoots returns the first MaxRoots of res's roots that are file://
// URIs of at most MaxRootURI bytes of printable UTF-8, each with its name sanitized to one
// line of at most MaxRootNameLen bytes and nothing else of the client's
// (no _meta). The list is never nil, so it is sent as [].
func boundRoots(res *mcp.ListRootsResult) *mcp.ListRootsResult {
	out := &mcp.ListRootsResult{Roots: []*mcp.Root{}}
	for _, r := range res.Roots {
		if len(out.Roots) == MaxRoots {
			break
		}
		if r == nil || len(r.URI) > MaxRootURI || !utf8.ValidString(r.URI) || strings.ContainsFunc(r.URI, sanitize.Unsafe) {
			continue
		}
		u, err := url.Parse(r.URI)
		if err != nil || !strings.EqualFold(u.Scheme, "file") {
			continue
		}
		out.Roots = append(out.Roots, &mcp.Root{URI: r.URI, Name: bound(r.Name, MaxRootNameLen)})
	}
	return out
}
