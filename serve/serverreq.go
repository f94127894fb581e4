package serve

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServerElicitation passes a server's own question (elicitation/create,
// already within the manager's rate limit) to a client: the one whose call
// is running on that server, when exactly one call is (sent with that call,
// on its stream over HTTP; for a 2026-07-28 client, returned from its
// parked call as an input request, park.go), else the one connected
// 2025-11-25 client, when it answers forms over elicitation/create;
// otherwise, or for a URL question, or to a client that did not declare
// form elicitation, it answers with fallback (the headless rule). The
// message is marked as the server's words and escaped; the SDK checks the
// answer against the server's schema. A relayed question the client does
// not answer, or answers with something other than an elicitation result,
// is declined.
func (s *Server) ServerElicitation(fallback func(context.Context, string, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) func(context.Context, string, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(ctx context.Context, server string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		p := req.Params
		if p == nil || p.Mode == "url" || p.URL != "" {
			return fallback(ctx, server, req)
		}
		if pk := s.parkedOf(ctx, server); pk != nil {
			a, ok, err := pk.relay(ctx, relayedQuestion(server, p), canElicit)
			if err != nil {
				return nil, err
			}
			if !ok {
				return fallback(ctx, server, req)
			}
			if res, _ := a.(*mcp.ElicitResult); res != nil {
				return res, nil
			}
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
		sendCtx, ss, done := s.asked(ctx, server)
		defer done()
		if ss == nil {
			return fallback(ctx, server, req)
		}
		a := &asker{s: s, ss: ss}
		if !a.elicits() || a.multiRoundTrip() {
			return fallback(ctx, server, req)
		}
		sendCtx, cancel := context.WithTimeout(sendCtx, s.o.AskTimeout)
		defer cancel()
		return ss.Elicit(sendCtx, relayedQuestion(server, p))
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
// model of its own. Otherwise fallback answers it. A relayed request the
// client answers with no single message is refused.
func (s *Server) ServerSampling(fallback func(context.Context, string, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error)) func(context.Context, string, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	return func(ctx context.Context, server string, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		if pk := s.parkedOf(ctx, server); pk != nil && req.Params != nil {
			a, ok, err := pk.relay(ctx, req.Params, canSample)
			if err != nil {
				return nil, err
			}
			if !ok {
				return fallback(ctx, server, req)
			}
			if res, _ := a.(*mcp.CreateMessageResult); res != nil {
				return res, nil
			}
			return nil, errors.New("the client gave no answer to the sampling request")
		}
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
