package serve

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/url"
	"strings"
	"time"

	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/later"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A call the host's form may not approve (tier 3, by default) is held for
// the approval page; a client that declares URL elicitation is sent the
// page's link for it. A 2025-11-25 client gets elicitation/create with mode
// "url" and, once the person has answered, notifications/elicitation/complete
// (asker.urlElicit). Protocol 2026-07-28 has neither requests from the server
// during a call nor that notification, nor the elicitation id that went with
// it: the URL elicitation is an input request of an input-required result,
// whose request state names the held call; the client's retry carries the
// client's answer (accept, decline, cancel) and that state; and the
// outcome on the page is the answer to the retry, which waits for it. The
// client's accept approves nothing: it only says the page was opened.

// stateURL marks a request state that names a call held for the approval
// page (Approval); its retry waits for the person's answer there.
const stateURL = "page"

// pageInput is the id of the URL elicitation in an input-required result.
const pageInput = "mcphost-approval-page"

// pageRound is the URL elicitation Ask could not send a 2026-07-28 client
// during the call: the held call ap, its page's link, and what the client
// is told. The request's handler returns it as an input-required result.
type pageRound struct {
	ap        later.Approval
	link, msg string
}

// offeringPage returns the asker of a request that may answer with a URL
// elicitation of the approval page, and where Ask leaves it.
func (a *asker) offeringPage() (*asker, *pageRound) {
	c := *a
	c.page = &pageRound{}
	return &c, c.page
}

// pageLink is the approval page's link of the held call id, "" when no page
// runs or the link it was given could carry a secret (a query or
// credentials): the client and its model read the link, and whoever has the
// page's secret can answer there.
func (s *Server) pageLink(id string) string {
	if s.o.Link == nil {
		return ""
	}
	link := s.o.Link(id)
	u, err := url.Parse(link)
	if err != nil || u.User != nil || u.RawQuery != "" || u.ForceQuery {
		return ""
	}
	return link
}

// pageMessage is what a URL elicitation of the approval page says about q.
func pageMessage(q *host.Question) string {
	return "mcphost asks a person to approve " + sanitize.Name(q.Tool.Name) + " on server " + sanitize.Name(q.Server) +
		" (class " + q.Decision.Class.String() + ", tier " + q.Decision.Tier.String() + ") on its approval page, where the call is shown in full."
}

// pageRequest is the first round of a call of a 2026-07-28 client held for
// the approval page: the URL elicitation, with a request state sealed for
// this session, tool and exact arguments that names the held call and
// expires with it.
func (s *Server) pageRequest(sess *session, e *export, args json.RawMessage, p *pageRound) *mcp.CallToolResult {
	state := s.seal(callState{Kind: stateURL, Session: sess.client.Session, Server: e.server, Tool: e.tool,
		ArgsHash: decide.ArgsHash(args), Def: p.ap.Call.Definition, Expires: p.ap.Expires.Unix(), Nonce: rand.Text(), Approval: p.ap.ID})
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{pageInput: &mcp.ElicitParams{Mode: "url", Message: p.msg, URL: p.link}},
		RequestState:  state,
	}
}

// pageAnswered is the retry of a page round (st, sealed stateURL). A retry
// that is not the same call, or comes after the held call expired, or
// again after its state was used, or whose client declined or cancelled
// the page, runs nothing: its refusal says why. One without the client's
// answer is sent the URL elicitation again. One the client accepted waits
// until the person answers on the page (or with `mcphost approve`), or
// AskTimeout passes, and returns nil: the gate then decides the call — it
// runs once if the person approved it, hears the reason if they denied it,
// and is held and refused with the approval id otherwise.
func (s *Server) pageAnswered(ctx context.Context, sess *session, e *export, args json.RawMessage, st callState, responses mcp.InputResponseMap) *mcp.CallToolResult {
	ref := sanitize.Name(e.server) + "/" + sanitize.Name(e.tool)
	if !st.boundTo(sess, e, args) {
		return errorResult("mcphost: the request state was given for another call, so nothing ran; call again to be asked about this one")
	}
	ap, held := s.o.Later.Get(st.Approval)
	if time.Now().Unix() > st.Expires || !held {
		return errorResult("mcphost: " + ref + " was held for approval under approval id " + sanitize.Name(st.Approval) +
			", which expired before it was used, so nothing ran; make the call again to have it held anew")
	}
	res, ok := responses[pageInput].(*mcp.ElicitResult)
	if !ok {
		// The spec's way with a missing answer: ask for it again.
		return &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{pageInput: &mcp.ElicitParams{Mode: "url",
				Message: "mcphost asks a person to approve " + ref + " on its approval page, where the call is shown in full.", URL: s.pageLink(ap.ID)}},
			RequestState: s.seal(st),
		}
	}
	if !s.spend(st) {
		return errorResult("mcphost: that answer was used already, so nothing ran; make the call again")
	}
	if res.Action != "accept" {
		var b strings.Builder
		b.WriteString("mcphost: " + ref + " did not run: the approval page was not opened (" + bound(sanitize.Line(res.Action), 20) + ").\n")
		s.heldNote(&b, &ap)
		return errorResult(b.String())
	}
	until := time.Now().Add(s.o.AskTimeout)
	if ap.Expires.Before(until) {
		until = ap.Expires
	}
	wait, cancel := context.WithDeadline(ctx, until)
	defer cancel()
	select {
	case <-s.o.Later.Answered(ap.ID):
	case <-wait.Done():
		if ctx.Err() != nil {
			return errorResult("mcphost: the request ended while " + ref + " waited for the approval page; nothing ran")
		}
	}
	return nil
}
