package serve

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Subscriber is what serve needs of a catalog to forward resource
// subscriptions; *client.Manager is one, and publishes each update a
// server sends as a client.EventResourceUpdated.
type Subscriber interface {
	CanSubscribe(server string) bool
	SubscribeResource(ctx context.Context, server, uri string) error
	UnsubscribeResource(ctx context.Context, server, uri string) error
}

// subscriptions are the URIs clients subscribed to through serve. serve
// holds one subscription at the owning server per URI, for as long as
// one client session holds one.
type subscriptions struct {
	op sync.Mutex // one subscribe or unsubscribe at a time, the server's answer included

	mu        sync.Mutex // guards the maps; never held across a request
	byURI     map[string]*subscription
	bySession map[*mcp.ServerSession]map[string]bool
}

// subscription is one URI's: the server it was made at and the sessions
// that hold it.
type subscription struct {
	server   string
	sessions map[*mcp.ServerSession]bool
	sent     time.Time // when an update was last passed on
	pending  bool      // one more is due at sent+UpdateGap
}

// UpdateGap is the least time between two updates of one URI passed on to
// clients. An update is only "this URI changed", so those in between are
// folded into one sent when the gap has passed: a server that floods
// updates costs its subscribers one a gap, and the last change is never
// lost.
const UpdateGap = 100 * time.Millisecond

func (t *subscriptions) init() {
	t.byURI = map[string]*subscription{}
	t.bySession = map[*mcp.ServerSession]map[string]bool{}
}

// subscribe forwards resources/subscribe to the server a read of the URI
// would go to, once the client's gate allows it as a read of that URI
// (host.Gate.Subscribe): what a client may not read it may not watch. A
// URI no server offers is not found; one whose server offers no
// subscriptions is refused, saying so.
func (s *Server) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	owner := s.resourceOwner(uri)
	if owner == "" {
		return mcp.ResourceNotFoundError(uri)
	}
	sub, _ := s.o.Catalog.(Subscriber)
	if sub == nil || !sub.CanSubscribe(owner) {
		return invalidParams("mcphost: the server %s, which offers this resource, does not offer subscriptions", sanitize.Name(owner))
	}
	sess, a, err := s.gated(ctx, req.Session, req.Extra)
	if err != nil {
		return err
	}
	r := host.Asking{Gate: sess.gate, Asker: a}.Subscribe(ctx, owner, uri, func(ctx context.Context) error { return s.hold(ctx, sub, req.Session, owner, uri) })
	if r.Status != host.StatusSuccess {
		if r.Err != nil { // allowed, and the server refused it
			return errors.New("mcphost: " + bound(r.Err.Error(), 500))
		}
		return errors.New(s.refusal(r))
	}
	return nil
}

// hold adds ss to the holders of the subscription to uri at owner, making
// it at the server when ss is the first.
func (s *Server) hold(ctx context.Context, sub Subscriber, ss *mcp.ServerSession, owner, uri string) error {
	t := &s.fx.subs
	t.op.Lock()
	defer t.op.Unlock()
	t.mu.Lock()
	e := t.byURI[uri]
	t.mu.Unlock()
	if e == nil {
		ctx, cancel := context.WithTimeout(ctx, forwardTimeout)
		err := sub.SubscribeResource(ctx, owner, uri)
		cancel()
		if err != nil {
			return err
		}
		e = &subscription{server: owner, sessions: map[*mcp.ServerSession]bool{}}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.byURI[uri] = e
	e.sessions[ss] = true
	if t.bySession[ss] == nil {
		t.bySession[ss] = map[string]bool{}
		go s.watch(ss)
	}
	t.bySession[ss][uri] = true
	return nil
}

// unsubscribe forwards resources/unsubscribe once no session holds the
// subscription any more.
func (s *Server) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	s.fx.subs.op.Lock()
	defer s.fx.subs.op.Unlock()
	s.release(ctx, req.Session, req.Params.URI)
	return nil
}

// watch waits for a session that subscribed to end, and gives up what it
// held: a client that leaves without unsubscribing keeps no server busy.
func (s *Server) watch(ss *mcp.ServerSession) {
	_ = ss.Wait()
	t := &s.fx.subs
	t.op.Lock()
	defer t.op.Unlock()
	t.mu.Lock()
	var uris []string
	for uri := range t.bySession[ss] {
		uris = append(uris, uri)
	}
	t.mu.Unlock()
	for _, uri := range uris {
		s.release(context.Background(), ss, uri)
	}
	t.mu.Lock()
	delete(t.bySession, ss)
	t.mu.Unlock()
}

// release drops ss's hold on uri and, if it was the last, the
// subscription at the server. t.op is held.
func (s *Server) release(ctx context.Context, ss *mcp.ServerSession, uri string) {
	t := &s.fx.subs
	t.mu.Lock()
	e := t.byURI[uri]
	if e == nil || !e.sessions[ss] {
		t.mu.Unlock()
		return
	}
	delete(e.sessions, ss)
	delete(t.bySession[ss], uri)
	last := len(e.sessions) == 0
	if last {
		delete(t.byURI, uri)
	}
	t.mu.Unlock()
	if sub, ok := s.o.Catalog.(Subscriber); ok && last {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), forwardTimeout)
		_ = sub.UnsubscribeResource(ctx, e.server, uri)
		cancel()
	}
}

// resubscribe makes again, at a server that is ready again, the
// subscriptions clients hold to its resources: its new connection has
// none.
func (s *Server) resubscribe(ctx context.Context, server string) {
	sub, ok := s.o.Catalog.(Subscriber)
	if !ok {
		return
	}
	t := &s.fx.subs
	t.op.Lock()
	defer t.op.Unlock()
	t.mu.Lock()
	var uris []string
	for uri, e := range t.byURI {
		if e.server == server {
			uris = append(uris, uri)
		}
	}
	t.mu.Unlock()
	for _, uri := range uris {
		ctx, cancel := context.WithTimeout(ctx, forwardTimeout)
		_ = sub.SubscribeResource(ctx, server, uri)
		cancel()
	}
}

// relay passes a server's notifications/resources/updated to the client
// sessions subscribed to the URI, if that server is the one the
// subscription was made at: a server cannot speak for another's URIs. An
// update within UpdateGap of the last one passed on is folded into one
// sent when the gap has passed.
func (s *Server) relay(ctx context.Context, server, uri string) {
	t := &s.fx.subs
	t.mu.Lock()
	e := t.byURI[uri]
	if e == nil || e.server != server || e.pending {
		t.mu.Unlock()
		return
	}
	now := time.Now()
	if wait := e.sent.Add(UpdateGap).Sub(now); wait > 0 {
		e.pending = true
		t.mu.Unlock()
		time.AfterFunc(wait, func() { s.relayDue(ctx, e, uri) })
		return
	}
	e.sent = now
	t.mu.Unlock()
	_ = s.srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri})
}

// relayDue sends the update folded while e waited out its gap, if the
// subscription is still held.
func (s *Server) relayDue(ctx context.Context, e *subscription, uri string) {
	t := &s.fx.subs
	t.mu.Lock()
	e.pending = false
	e.sent = time.Now()
	held := t.byURI[uri] == e
	t.mu.Unlock()
	if held && ctx.Err() == nil {
		_ = s.srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri})
	}
}
