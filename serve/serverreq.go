package serve

import (
	"context"

	"github.com/mcphost/mcphost/sanitize"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServerElicitation passes a server's own question (elicitation/create,
// already within the manager's rate limit) to a client: the one whose call
// is running on that server, when exactly one call is (sent with that call,
// on its stream over HTTP), else the one connected client, when it answers
// forms over elicitation/create; otherwise, or for a URL question, it
// answers with fallback (the headless rule). The message is marked as the
// server's words and escaped; the SDK checks the answer against the
// server's schema.
func (s *Server) ServerElicitation(fallback func(context.Context, string, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) func(context.Context, string, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(ctx context.Context, server string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		sendCtx, ss, done := s.asked(ctx, server)
		defer done()
		p := req.Params
		if ss == nil || p == nil || p.Mode == "url" || p.URL != "" {
			return fallback(ctx, server, req)
		}
		a := &asker{s: s, ss: ss}
		if !a.elicits() || a.multiRoundTrip() {
			return fallback(ctx, server, req)
		}
		sendCtx, cancel := context.WithTimeout(sendCtx, s.o.AskTimeout)
		defer cancel()
		q := *p
		q.Message = "The server " + sanitize.Name(server) + " asks (its words, passed on by mcphost):\n" +
			sanitize.Truncate(sanitize.Text(p.Message), MaxShownArgs)
		return ss.Elicit(sendCtx, &q)
	}
}

// asked returns the client session a request from server goes to and the
// context to send it in: the one call running on server, in that call's
// request (ended when ctx ends too), else the only session with ctx, else
// a nil session. done releases the context.
func (s *Server) asked(ctx context.Context, server string) (context.Context, *mcp.ServerSession, func()) {
	if r := s.caller(server); r != nil {
		callCtx, cancel := context.WithCancel(r.ctx)
		stop := context.AfterFunc(ctx, cancel)
		return callCtx, r.ss, func() { stop(); cancel() }
	}
	return ctx, s.onlySession(), func() {}
}

// onlySession returns the one connected client session, or nil when there
// is none or more than one (a question could not be told apart).
func (s *Server) onlySession() *mcp.ServerSession {
	var only *mcp.ServerSession
	for ss := range s.srv.Sessions() {
		if only != nil {
			return nil
		}
		only = ss
	}
	return only
}

// ServerSampling passes a server's sampling request (allowed at all only
// with --allow-sampling, and within the manager's rate limit) to a client
// that offers sampling, chosen as ServerElicitation chooses: serve has no
// model of its own. Otherwise fallback answers it.
func (s *Server) ServerSampling(fallback func(context.Context, string, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error)) func(context.Context, string, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	return func(ctx context.Context, server string, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		sendCtx, ss, done := s.asked(ctx, server)
		defer done()
		if ss == nil || req.Params == nil {
			return fallback(ctx, server, req)
		}
		p := ss.InitializeParams()
		if p == nil || p.Capabilities == nil || p.Capabilities.Sampling == nil || (&asker{s: s, ss: ss}).multiRoundTrip() {
			return fallback(ctx, server, req)
		}
		sendCtx, cancel := context.WithTimeout(sendCtx, s.o.AskTimeout)
		defer cancel()
		return ss.CreateMessage(sendCtx, req.Params)
	}
}
