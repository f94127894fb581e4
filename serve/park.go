package serve

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A client of 2026-07-28 cannot be sent a request, so a server's own
// question during its call cannot reach it as one. Instead the call is
// parked: it runs on in the background while the client's request returns
// the question as an input-required result, and the client's retry with
// the sealed state and its answer resumes it. The upstream request waits
// meanwhile, as it would for a person.

// Bounds on parked calls: a client that never resumes holds one until
// AskTimeout. Past either bound a new call runs without parking, its
// server's questions answered by the headless rule.
const (
	MaxParkedPerClient = 16
	MaxParked          = 128
)

// stateRelay marks a request state that resumes a parked call; the gate's
// own approval round seals stateApprove. One is never taken for the other.
const (
	stateApprove = "approve"
	stateRelay   = "relay"
)

// parked is a call of a 2026-07-28 client that runs while the client is
// asked what its server asks.
type parked struct {
	id               string // the nonce its request states name
	sess             *session
	server, tool     string
	argsHash         string
	questions        chan *relayed // from the server's requests during the call
	done             chan struct{} // closed once res is set
	res              *mcp.CallToolResult
	gone             chan struct{} // closed when no client resumed it in time
	goneOnce         sync.Once
	mu               sync.Mutex
	caps             *mcp.ClientCapabilities // of the request that waits now, or waited last
	round            string                  // the nonce of the round the client may answer
	pending          []*relayed              // asked in that round, unanswered
	waiting          bool                    // a request of the client waits on it
	timer            *time.Timer             // armed while none does
	remove           func()
	answerTimeoutDur time.Duration
	cancel           context.CancelFunc // ends the call (runParked sets it before any wait)
}

// relayed is one question of the server, as put to the client.
type relayed struct {
	key    string
	req    mcp.InputRequest
	answer chan mcp.InputResponse // one value; nil declines
	asked  int                    // rounds it was put to the client in
}

// MaxAsks bounds the rounds one relayed question is put to a client that
// leaves it out of its answers: past them it is declined.
const MaxAsks = 3

// park registers a parked call of sess, or returns nil past the bounds.
func (s *Server) park(sess *session, e *export, args json.RawMessage, caps *mcp.ClientCapabilities) *parked {
	s.parkMu.Lock()
	defer s.parkMu.Unlock()
	if len(s.parked) >= MaxParked || s.parkedBy[sess] >= MaxParkedPerClient {
		return nil
	}
	p := &parked{id: rand.Text(), sess: sess, server: e.server, tool: e.tool, argsHash: decide.ArgsHash(args), caps: caps,
		questions: make(chan *relayed), done: make(chan struct{}), gone: make(chan struct{}), waiting: true,
		answerTimeoutDur: s.o.AskTimeout}
	s.parked[p.id] = p
	s.parkedBy[sess]++
	var once sync.Once
	p.remove = func() {
		once.Do(func() {
			s.parkMu.Lock()
			defer s.parkMu.Unlock()
			delete(s.parked, p.id)
			if s.parkedBy[sess]--; s.parkedBy[sess] <= 0 {
				delete(s.parkedBy, sess)
			}
		})
	}
	return p
}

// parkedCall returns the parked call named id, if it is still parked.
func (s *Server) parkedCall(id string) *parked {
	s.parkMu.Lock()
	defer s.parkMu.Unlock()
	return s.parked[id]
}

// abandon ends the wait for the client: what the server asked and asks
// from now on is declined, and the call's result goes to no one.
func (p *parked) abandon() {
	p.goneOnce.Do(func() {
		close(p.gone)
		p.remove()
	})
}

// runParked runs the call in the background and waits for its result or
// its server's first question.
func (s *Server) runParked(ctx context.Context, p *parked, call func(context.Context) *mcp.CallToolResult) *mcp.CallToolResult {
	// The call outlives this request: it is the client's retry that
	// receives its result.
	callCtx, cancel := context.WithCancel(context.WithValue(context.WithoutCancel(ctx), parkKey{}, p))
	p.cancel = cancel
	// Shutdown waits for it and cancels it, as for a call in its request.
	s.outlive(callCtx, cancel, func(callCtx context.Context) {
		defer cancel()
		p.res = call(callCtx)
		close(p.done)
		p.remove()
	})
	return s.wait(ctx, p)
}

// wait waits, for the request in ctx, for the parked call's result or the
// next questions of its server. It returns the result, or those questions
// as an input-required result whose sealed state resumes the call.
func (s *Server) wait(ctx context.Context, p *parked) *mcp.CallToolResult {
	select {
	case <-p.done:
		return p.res
	case q := <-p.questions:
		qs := []*relayed{q}
		for more := true; more; {
			select {
			case q := <-p.questions:
				qs = append(qs, q)
			default:
				more = false
			}
		}
		return s.ask(p, qs)
	case <-ctx.Done():
		if s.halted() {
			// Serve stops: the call is cancelled with the request, and
			// its gate says how it ended, which the client is told.
			select {
			case <-p.done:
				return p.res
			case <-time.After(haltAnswerWait):
			}
		}
		// No state went out, so nothing can resume the call: what its
		// server asks from now on is no one's to answer, and the call is
		// cancelled, as any call whose request ends is.
		p.abandon()
		p.cancel()
		return errorResult("mcphost: the request ended before the call did; its result is recorded in mcphost's audit log")
	}
}

// ask puts qs to the client: the call stays parked until its retry.
func (s *Server) ask(p *parked, qs []*relayed) *mcp.CallToolResult {
	reqs := mcp.InputRequestMap{}
	for i, q := range qs {
		q.key = "mcphost-server-" + strconv.Itoa(i+1)
		q.asked++
		reqs[q.key] = q.req
	}
	round := rand.Text()
	state := s.seal(callState{Kind: stateRelay, Session: p.sess.client.Session, Server: p.server, Tool: p.tool,
		ArgsHash: p.argsHash, Expires: time.Now().Add(s.o.AskTimeout).Unix(), Nonce: p.id + "." + round})
	p.idle(qs, round)
	return &mcp.CallToolResult{InputRequests: reqs, RequestState: state}
}

// idle records that no request waits on p now, with qs unanswered in
// round, and gives the client AskTimeout to resume it.
func (p *parked) idle(qs []*relayed, round string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if qs != nil {
		p.pending = qs
	}
	p.waiting = false
	p.round = round
	if p.timer != nil {
		p.timer.Stop()
	}
	p.timer = time.AfterFunc(p.answerTimeoutDur, p.abandon)
}

// claim takes p for the request that answers round, once: false when that
// round was answered already, another request waits on it, or no one
// resumed it in time.
func (p *parked) claim(round string, caps *mcp.ClientCapabilities) ([]*relayed, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.waiting || round == "" || round != p.round || (p.timer != nil && !p.timer.Stop()) {
		return nil, false
	}
	select {
	case <-p.gone:
		return nil, false
	default:
	}
	p.waiting, p.round, p.caps = true, "", caps
	qs := p.pending
	p.pending = nil
	return qs, true
}

// resume answers a parked call's questions with what the client's retry
// carries and waits again for its result or its server's next question.
// The state must be one mcphost sealed for a relayed question of this
// client, this tool and these exact arguments, for a round not answered
// yet, of a call still parked; anything else runs nothing.
func (s *Server) resume(ctx context.Context, sess *session, ss *mcp.ServerSession, e *export, args json.RawMessage, st callState, responses mcp.InputResponseMap) *mcp.CallToolResult {
	id, round, _ := strings.Cut(st.Nonce, ".") // the call's nonce, then the round's
	switch {
	case !st.boundTo(sess, e, args):
		return errorResult("mcphost: that answer was given for another call, so nothing ran; call again to start this one")
	case time.Now().Unix() > st.Expires:
		return errorResult("mcphost: that answer came too late: the call's questions were declined and it ended; call again")
	}
	p := s.parkedCall(id)
	if p == nil || p.sess != sess {
		return errorResult("mcphost: that call is no longer waiting for an answer (it ended, or no answer came in time), so nothing ran")
	}
	qs, ok := p.claim(round, capsOf(ss))
	if !ok {
		return errorResult("mcphost: that answer was used already, or the call stopped waiting for it, so nothing ran")
	}
	var again []*relayed
	for _, q := range qs {
		r, given := responses[q.key]
		if !given && q.asked < MaxAsks {
			// Left out, not declined: asked again, as a server asks
			// again for an input it is missing.
			again = append(again, q)
			continue
		}
		q.answer <- fit(q.req, r)
	}
	if len(again) > 0 {
		return s.ask(p, again)
	}
	return s.wait(ctx, p)
}

// fit returns the client's answer when it is of the kind asked, else nil
// (a malformed answer declines, as does one still missing after MaxAsks
// rounds).
func fit(req mcp.InputRequest, res mcp.InputResponse) mcp.InputResponse {
	switch req.(type) {
	case *mcp.ElicitParams:
		if r, ok := res.(*mcp.ElicitResult); ok && r != nil {
			return r
		}
	case *mcp.ListRootsParams:
		if r, ok := res.(*mcp.ListRootsResult); ok && r != nil {
			return r
		}
	case *mcp.CreateMessageParams:
		switch r := res.(type) {
		case *mcp.CreateMessageResult:
			if r != nil && r.Content != nil {
				return r
			}
		case *mcp.CreateMessageWithToolsResult:
			if r != nil && len(r.Content) == 1 {
				return &mcp.CreateMessageResult{Meta: r.Meta, Content: r.Content[0], Model: r.Model, Role: r.Role, StopReason: r.StopReason}
			}
		}
	}
	return nil
}

// capsOf returns the capabilities the client declared for ss's requests.
func capsOf(ss *mcp.ServerSession) *mcp.ClientCapabilities {
	if p := ss.InitializeParams(); p != nil {
		return p.Capabilities
	}
	return nil
}

// relay hands a server's question to the parked call it arose in, when
// the client declared the capability (can says), and waits for the
// client's answer: nil when none came (a decline). ok is false when it
// cannot go to the client: the caller answers with the headless rule. A
// question of a call whose client stopped being waited for is refused
// (errNotWaiting): a server that asks again on a decline would otherwise
// spend its allowance of questions on no one.
func (p *parked) relay(ctx context.Context, req mcp.InputRequest, can func(*mcp.ClientCapabilities) bool) (res mcp.InputResponse, ok bool, err error) {
	if p.isGone() {
		return nil, false, errNotWaiting
	}
	p.mu.Lock()
	caps := p.caps
	p.mu.Unlock()
	if !can(caps) {
		return nil, false, nil
	}
	q := &relayed{req: req, answer: make(chan mcp.InputResponse, 1)}
	select {
	case p.questions <- q:
	case <-p.gone:
		return nil, false, errNotWaiting
	case <-p.done:
		return nil, false, nil
	case <-ctx.Done():
		return nil, false, nil
	}
	select {
	case a := <-q.answer:
		return a, true, nil
	case <-p.gone:
		return nil, true, nil
	case <-ctx.Done():
		return nil, true, nil
	}
}

// errNotWaiting refuses a server's question during a parked call that no
// client resumed in time, or whose client moved on.
var errNotWaiting = errors.New("mcphost: no client waits for this call's questions any more")

// canElicit and canSample read a client's declared capabilities.
func canElicit(c *mcp.ClientCapabilities) bool {
	if c == nil || c.Elicitation == nil {
		return false
	}
	return c.Elicitation.Form != nil || c.Elicitation.URL == nil
}

func canSample(c *mcp.ClientCapabilities) bool { return c != nil && c.Sampling != nil }

// relayedQuestion is the server's question as the client is shown it: its
// words marked as the server's and escaped, as ServerElicitation does.
func relayedQuestion(server string, p *mcp.ElicitParams) *mcp.ElicitParams {
	q := *p
	q.Message = "The server " + sanitize.Name(server) + " asks (its words, passed on by mcphost):\n" +
		sanitize.Truncate(sanitize.Text(p.Message), MaxShownArgs)
	return &q
}

// parkKey carries, in the context of a parked call, the call: the
// manager's client answers a server's input-required result with the
// context of the call it is part of, so its questions are told to be
// that call's for certain (parkedOf).
type parkKey struct{}

// parkedOf returns the parked call that a server's request arose in:
// the one the context names, else the one call running on server, when
// that is a parked call; else nil.
func (s *Server) parkedOf(ctx context.Context, server string) *parked {
	if p, ok := ctx.Value(parkKey{}).(*parked); ok && p.server == server {
		return p
	}
	if r := s.caller(server); r != nil {
		return r.park
	}
	return nil
}

// isGone reports whether p stopped waiting for its client.
func (p *parked) isGone() bool {
	select {
	case <-p.gone:
		return true
	default:
		return false
	}
}

// abandonIdle ends the wait of sess's parked calls on server that no
// request waits on: a client whose call of the server runs instead of
// answering has moved on. Their questions are declined, and abandonIdle
// waits until they ended (at most abandonWait), so that what the server
// asks next can be told to be the new call's.
func (s *Server) abandonIdle(ctx context.Context, sess *session, server string, except *parked) {
	s.parkMu.Lock()
	var idle []*parked
	for _, p := range s.parked {
		if p.sess == sess && p.server == server && p != except {
			idle = append(idle, p)
		}
	}
	s.parkMu.Unlock()
	var stopped []*parked
	for _, p := range idle {
		p.mu.Lock()
		stop := !p.waiting
		if stop && p.timer != nil {
			p.timer.Stop()
		}
		p.mu.Unlock()
		if stop {
			p.abandon()
			stopped = append(stopped, p)
		}
	}
	if len(stopped) == 0 {
		return
	}
	t := time.NewTimer(abandonWait)
	defer t.Stop()
	for _, p := range stopped {
		select {
		case <-p.done:
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// abandonWait bounds how long a call waits for the calls it ended the
// wait of (abandonIdle).
const abandonWait = 5 * time.Second
