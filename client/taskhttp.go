package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// answer handles one message of a raw request's event stream when it is a
// request from the server, and reports whether it was. A task's server
// sends its questions (elicitation, sampling) on the stream of the
// tasks/result request that waits for the task; they are answered by the
// same handlers, under the same rate limit, as the requests the SDK
// receives, and the answer is posted back in the session.
func (r *rawHTTP) answer(ctx context.Context, data []byte) bool {
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return false
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() || r.serve == nil {
		return false
	}
	resp := map[string]any{"jsonrpc": "2.0", "id": req.ID.Raw()}
	if res, err := r.serve(ctx, req); err != nil {
		werr, ok := err.(*jsonrpc.Error)
		if !ok {
			werr = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
		resp["error"] = werr
	} else {
		resp["result"] = res
	}
	body, err := json.Marshal(resp)
	if err != nil {
		return true
	}
	if _, hresp, err := r.post(ctx, body, nil); err == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(hresp.Body, answerHead))
		hresp.Body.Close()
	}
	return true
}

// serveRaw answers a request the server sent outside the SDK's session
// (see rawHTTP.answer) with the handlers the Manager was given, through the
// same rate limit as limitRequests applies to the SDK's.
func (s *server) serveRaw(ctx context.Context, req *jsonrpc.Request) (any, error) {
	h := s.limitRequests(func(ctx context.Context, method string, r mcp.Request) (mcp.Result, error) {
		switch r := r.(type) {
		case *mcp.ElicitRequest:
			return s.m.opts.Elicitation(ctx, s.spec.Name, r)
		case *mcp.CreateMessageRequest:
			return s.m.opts.Sampling(ctx, s.spec.Name, r)
		}
		return nil, fmt.Errorf("%s is not answered here", method)
	})
	notFound := &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("%q is not offered on this stream", req.Method)}
	var r mcp.Request
	switch req.Method {
	case "elicitation/create":
		if s.m.opts.Elicitation == nil {
			return nil, notFound
		}
		var p mcp.ElicitParams
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "elicitation/create: " + err.Error()}
		}
		r = &mcp.ElicitRequest{Params: &p}
	case "sampling/createMessage":
		if s.m.opts.Sampling == nil {
			return nil, notFound
		}
		var p mcp.CreateMessageParams
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "sampling/createMessage: " + err.Error()}
		}
		r = &mcp.CreateMessageRequest{Params: &p}
	case "ping":
		return struct{}{}, nil
	default:
		return nil, notFound
	}
	return h(ctx, req.Method, r)
}
