package serve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"
)

// Extras is what serve forwards besides tools, when the catalog offers it
// (*client.Manager does): prompts and resources. Their lists are passed on
// escaped and bounded; a read or a prompts/get passes the session's gate
// (host.Gate.ReadResource, host.Gate.GetPrompt), as in the chat.
type Extras interface {
	Prompts(ctx context.Context, server string) ([]*mcp.Prompt, error)
	GetPrompt(ctx context.Context, server, name string, args map[string]string) (*mcp.GetPromptResult, error)
	Resources(ctx context.Context, server string) ([]*mcp.Resource, error)
	ReadResource(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, error)
}

// Templates is what serve needs of a catalog (an Extras too) to forward
// resource templates.
type Templates interface {
	ResourceTemplates(ctx context.Context, server string) ([]*mcp.ResourceTemplate, error)
}

// Completer is what serve needs of a catalog to answer completion/complete
// for the prompts and templates it forwards (completion.go).
type Completer interface {
	CanComplete(server string) bool
	Completion(ctx context.Context, server string, ref *mcp.CompleteReference, arg, value string, others map[string]string) (*mcp.CompletionResultDetails, error)
}

// forwarded is what one server contributes: prompt names, resource URIs
// and URI templates as offered to clients.
type forwarded struct {
	prompts, resources, templates []string
}

// forwardState is what serve keeps of the forwarded prompts, templates
// and subscriptions besides the SDK's own lists. Its maps are made by
// declare; all but the subscriptions are guarded by Server.fwdMu.
type forwardState struct {
	prompts   map[string]promptRef // offered prompt name → where it comes from
	templates []*template          // in the order offered: the first that matches a URI owns it
	tmplOwner map[string]string    // URI template → the server that offers it
	rank      map[string]int       // server → the order in which it was first forwarded
	busy      map[string]bool      // server → a re-forward is running
	again     map[string]bool      // server → asked for again while it ran

	subs subscriptions // subscribe.go
}

// promptRef is the server and raw name of an offered prompt.
type promptRef struct{ server, raw string }

// template is one server's URI template as offered, with the expression
// that matches the URIs it covers.
type template struct {
	server string
	rank   int
	match  *regexp.Regexp
}

// forwardTimeout bounds the listing of one server's prompts and resources.
const forwardTimeout = 10 * time.Second

// maxURI bounds a URI or URI template that is forwarded.
const maxURI = 2048

// declare declares, before the SDK server is made, what serve forwards
// beyond tools and prompts: completions when the catalog can complete,
// subscriptions when it can subscribe. Both are declared up front, as the
// servers that answer them arrive after initialize; a request a server
// cannot answer is refused then, saying why.
func (s *Server) declare(caps *mcp.ServerCapabilities, opts *mcp.ServerOptions) {
	s.fx = forwardState{prompts: map[string]promptRef{}, tmplOwner: map[string]string{}, rank: map[string]int{},
		busy: map[string]bool{}, again: map[string]bool{}}
	s.fx.subs.init()
	if _, ok := s.o.Catalog.(Extras); !ok {
		return
	}
	if _, ok := s.o.Catalog.(Completer); ok {
		caps.Completions = &mcp.CompletionCapabilities{}
		opts.CompletionHandler = s.complete
	}
	if _, ok := s.o.Catalog.(Subscriber); ok && caps.Resources != nil {
		caps.Resources.Subscribe = true
		opts.SubscribeHandler = s.subscribe
		opts.UnsubscribeHandler = s.unsubscribe
	}
}

// onEvent handles the catalog's events that concern what forward offers,
// and reports whether it did (the tools need no sync for them).
func (s *Server) onEvent(ctx context.Context, e client.Event) bool {
	switch e.Kind {
	case client.EventPrompts, client.EventResources:
		s.reforward(ctx, e.Server)
	case client.EventResourceUpdated:
		s.relay(ctx, e.Server, e.URI)
	case client.EventToolsRelisted:
		if !s.sync() {
			s.announce(e.Server) // nothing changed here, but the server said so
		}
	default:
		return false
	}
	return true
}

// onReady forwards a server that is ready (again) and renews, on its new
// connection, the subscriptions clients hold to its resources.
func (s *Server) onReady(ctx context.Context, server string) {
	s.wg.Go(func() {
		s.forward(ctx, server)
		s.resubscribe(ctx, server)
	})
}

// reforward forwards server again after it said its prompts or resources
// changed. A storm of such notifications costs one listing at a time: the
// ones that arrive while it runs make one more.
func (s *Server) reforward(ctx context.Context, server string) {
	s.fwdMu.Lock()
	defer s.fwdMu.Unlock()
	if s.fx.busy[server] {
		s.fx.again[server] = true
		return
	}
	s.fx.busy[server] = true
	s.wg.Go(func() {
		for {
			s.forward(ctx, server)
			s.fwdMu.Lock()
			if !s.fx.again[server] || ctx.Err() != nil {
				delete(s.fx.busy, server)
				delete(s.fx.again, server)
				s.fwdMu.Unlock()
				return
			}
			delete(s.fx.again, server)
			s.fwdMu.Unlock()
		}
	})
}

// forward offers server's prompts (as promptName names them, or the raw
// name with Options.NoPrefix), resources (under their own URIs; the server that
// offered a URI first keeps it) and resource templates (the server that
// offered a URI template first keeps it, and a URI that no listed resource
// has goes to the first-forwarded server whose template matches it) to
// clients, replacing what it offered before.
func (s *Server) forward(ctx context.Context, server string) {
	x, ok := s.o.Catalog.(Extras)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, forwardTimeout)
	defer cancel()
	prompts, _ := x.Prompts(ctx, server)
	resources, _ := x.Resources(ctx, server)
	var templates []*mcp.ResourceTemplate
	if t, ok := s.o.Catalog.(Templates); ok {
		templates, _ = t.ResourceTemplates(ctx, server)
	}

	s.fwdMu.Lock()
	defer s.fwdMu.Unlock()
	old := s.fwd[server]
	if len(old.prompts) > 0 {
		s.srv.RemovePrompts(old.prompts...)
		for _, name := range old.prompts {
			delete(s.fx.prompts, name)
		}
	}
	if len(old.resources) > 0 {
		s.srv.RemoveResources(old.resources...)
		for _, uri := range old.resources {
			delete(s.uriOwner, uri)
		}
	}
	if len(old.templates) > 0 {
		s.srv.RemoveResourceTemplates(old.templates...)
		for _, ut := range old.templates {
			delete(s.fx.tmplOwner, ut)
		}
		s.fx.templates = slices.DeleteFunc(s.fx.templates, func(t *template) bool { return t.server == server })
	}
	rank, ok := s.fx.rank[server]
	if !ok {
		rank = len(s.fx.rank)
		s.fx.rank[server] = rank
	}
	var now forwarded
	for _, p := range prompts {
		if p == nil || !safeName(p.Name) {
			continue
		}
		name := promptName(server, p.Name)
		if s.o.NoPrefix {
			name = p.Name
		}
		if _, taken := s.fx.prompts[name]; taken {
			continue
		}
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
			sess, a, err := s.gated(ctx, req.Session, req.Extra)
			if err != nil {
				return nil, err
			}
			var state string
			var answers mcp.InputResponseMap
			if req.Params != nil {
				state, answers = req.Params.RequestState, req.Params.InputResponses
			}
			a, ask, state, err := s.operationRound(sess, a, server, host.PromptGetTool, host.PromptArgs(raw, args), state, answers)
			if err != nil {
				return nil, err
			}
			if ask != nil {
				return &mcp.GetPromptResult{InputRequests: ask, RequestState: state}, nil
			}
			// In flight like a call: what the server asks meanwhile is not
			// taken for another call's (relay.go).
			defer s.begin(server, req.Session, ctx, nil, nil)()
			res, r := host.Asking{Gate: sess.gate, Asker: a}.GetPrompt(ctx, server, raw, args)
			if res == nil {
				return nil, s.notRead(r)
			}
			return res, nil
		})
		s.fx.prompts[name] = promptRef{server: server, raw: raw}
		now.prompts = append(now.prompts, name)
	}
	for _, r := range resources {
		if r == nil || r.URI == "" || len(r.URI) > maxURI {
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
				return s.read(ctx, req, server, uri)
			})
		now.resources = append(now.resources, uri)
	}
	for _, t := range templates {
		if t == nil || !safeURI(t.URITemplate) {
			continue
		}
		if _, taken := s.fx.tmplOwner[t.URITemplate]; taken {
			continue // another server offered it first
		}
		def := &mcp.ResourceTemplate{URITemplate: t.URITemplate, Name: server + "__" + bound(t.Name, 200), Title: bound(t.Title, 200),
			Description: sanitize.Truncate(sanitize.Text(t.Description), MaxDescription), MIMEType: bound(t.MIMEType, 100)}
		match, ok := s.addTemplate(def)
		if !ok {
			continue
		}
		s.fx.tmplOwner[t.URITemplate] = server
		s.fx.templates = append(s.fx.templates, &template{server: server, rank: rank, match: match})
		now.templates = append(now.templates, t.URITemplate)
	}
	slices.SortStableFunc(s.fx.templates, func(a, b *template) int { return a.rank - b.rank })
	slices.Sort(now.prompts)
	s.fwd[server] = now
}

// addTemplate offers def to clients, every read of a URI it matches going
// to readTemplate. A template the SDK refuses (it panics on one it cannot
// parse) is left out. s.fwdMu is held.
func (s *Server) addTemplate(def *mcp.ResourceTemplate) (match *regexp.Regexp, ok bool) {
	defer func() {
		if recover() != nil {
			match, ok = nil, false
		}
	}()
	ut, err := uritemplate.New(def.URITemplate)
	if err != nil {
		return nil, false
	}
	match = ut.Regexp()
	s.srv.AddResourceTemplate(def, s.readTemplate)
	return match, true
}

// readTemplate reads a URI that no listed resource has from the server
// that owns it: whichever template the SDK matched, the one offered first
// decides, so a server cannot take the reads of URIs another server's
// template covers by offering a wider template later.
func (s *Server) readTemplate(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	server := s.templateOwner(uri)
	if server == "" {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	return s.read(ctx, req, server, uri)
}

// read reads uri from server through the gate of the client behind req:
// decided, asked about (for a 2026-07-28 client, in an input-required
// round of its own), audited and tainting as the chat's and `mcphost
// read`'s reads are.
func (s *Server) read(ctx context.Context, req *mcp.ReadResourceRequest, server, uri string) (*mcp.ReadResourceResult, error) {
	sess, a, err := s.gated(ctx, req.Session, req.Extra)
	if err != nil {
		return nil, err
	}
	a, ask, state, err := s.operationRound(sess, a, server, host.ResourceReadTool, host.ReadArgs(uri),
		req.Params.RequestState, req.Params.InputResponses)
	if err != nil {
		return nil, err
	}
	if ask != nil {
		return &mcp.ReadResourceResult{InputRequests: ask, RequestState: state}, nil
	}
	defer s.begin(server, req.Session, ctx, nil, nil)()
	res, r := host.Asking{Gate: sess.gate, Asker: a}.ReadResource(ctx, server, uri)
	if res == nil {
		return nil, s.notRead(r)
	}
	return res, nil
}

// gated returns the gate of the client behind a request on ss and the
// asker that can reach that client now, which the request passes to the
// gate (host.Asking).
func (s *Server) gated(ctx context.Context, ss *mcp.ServerSession, extra *mcp.RequestExtra) (*session, *asker, error) {
	sess, a, err := s.sessionOf(ctx, ss, extra)
	if err != nil {
		return nil, nil, errors.New("mcphost: " + err.Error())
	}
	return sess, a, nil
}

// notRead is the error for a read or prompts/get that returned nothing: the
// server's own error with its code (no such resource) and its message
// escaped and bounded, else why the gate did not let it through and how to
// get it approved.
func (s *Server) notRead(r *host.Result) error {
	if je := (*jsonrpc.Error)(nil); r.Status == host.StatusRejected && errors.As(r.Err, &je) {
		return &jsonrpc.Error{Code: je.Code, Message: bound(je.Message, 500)}
	}
	return errors.New(s.refusal(r))
}

// templateOwner returns the server whose template, first in the order
// offered, matches uri; "" if none does.
func (s *Server) templateOwner(uri string) string {
	if len(uri) > maxURI {
		return ""
	}
	s.fwdMu.Lock()
	defer s.fwdMu.Unlock()
	for _, t := range s.fx.templates {
		if t.match.MatchString(uri) {
			return t.server
		}
	}
	return ""
}

// resourceOwner returns the server a read of uri goes to: the one that
// listed it, else the owner of the first template that matches it.
func (s *Server) resourceOwner(uri string) string {
	s.fwdMu.Lock()
	owner := s.uriOwner[uri]
	s.fwdMu.Unlock()
	if owner != "" {
		return owner
	}
	return s.templateOwner(uri)
}

// promptName is the name a server's prompt is offered under:
// server__prompt when that splits back into this server and prompt only
// (neither holds "__" at the join, as a_ + _b or a__b + c would), else
// that cut and suffixed with a hash of the pair. So, as with tools'
// names, no server can take another's prompt name, whichever started
// first: the pairs that could meet under one plain name get distinct
// hashed ones.
func promptName(server, prompt string) string {
	name := server + "__" + prompt
	if strings.Index(name, "__") == len(server) && strings.LastIndex(name, "__") == len(server) {
		return name
	}
	sum := sha256.Sum256([]byte(server + "/" + prompt))
	suffix := "_" + hex.EncodeToString(sum[:])[:8]
	if len(name) > 128-len(suffix) {
		name = name[:128-len(suffix)]
	}
	return name + suffix
}

// safeName reports whether a server's name for a prompt or argument can be
// passed on as an identifier: printable ASCII without spaces, bounded.
func safeName(n string) bool {
	return n != "" && len(n) <= 128 && printable(n)
}

// safeURI reports whether a server's URI template can be passed on as it
// is: printable ASCII without spaces, bounded.
func safeURI(u string) bool {
	return u != "" && len(u) <= maxURI && printable(u)
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f {
			return false
		}
	}
	return true
}

// invalidParams is the JSON-RPC error for a request that names something
// serve does not offer.
func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}
