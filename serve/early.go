package serve

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A host that lists serve's tools once, as soon as it has connected, must
// not be shown none because a server takes seconds to start (a first npx
// run downloads its package). A server still starting whose tools mcphost
// has pinned in an earlier run is offered by its pinned definitions at once
// (host.Pins.Pinned: exactly the definitions the pins are hashes of), under
// the names and with the effective hints it will have once it is up, so
// that its start changes nothing the client was shown unless the server
// now lists something else. A call of such a tool waits for the server
// (awaitServer), then passes the gate as any call does: the gate decides on
// the definition the server lists, and one that differs from its pin is
// handled as a changed definition, never run as the pin described it. A
// server still starting with nothing pinned holds tools/list for up to
// listSettle after Start, and for up to ListWait while there would be no
// tool at all to offer (waitListable).

// DefaultListWait is how long tools/list waits, at most, while the servers
// still starting have nothing pinned and nothing else is ready to offer: a
// host is not answered with an empty list because its servers are slow (npx
// that downloads its package takes seconds), and the wait stays under the
// ten seconds some hosts give a server to start.
const DefaultListWait = 8 * time.Second

// listSettle is how long tools/list waits for the servers still starting
// with nothing pinned when others' tools are ready to offer. Some hosts
// (Codex) do not wait for a slow listing: they start the person's turn with
// whatever tools had been listed about a second after they started serve,
// so a longer wait would cost them the tools that were ready.
const listSettle = time.Second

// starting reports whether a server in state st is still starting: being
// started, restarted, or not started yet before every start has ended.
func (s *Server) starting(st client.State) bool {
	switch st {
	case client.StateStarting, client.StateRestarting:
		return true
	case client.StateReady, client.StateFailed:
		return false
	}
	select {
	case <-s.ready:
		return false
	default:
		return true // not started yet: Start has not reached it
	}
}

// withEarly returns live, the tools the servers list now, and the pinned
// definitions of each server still starting that lists none, each with its
// Server set: what clients are offered.
func (s *Server) withEarly(live []*client.Tool) []*client.Tool {
	early, _ := s.early(live)
	if len(early) == 0 {
		return live
	}
	return append(slices.Clip(live), early...)
}

// early returns the pinned definitions of the servers still starting that
// list no tools now, and the names of those among them that have none
// pinned.
func (s *Server) early(live []*client.Tool) (early []*client.Tool, unpinned []string) {
	listing := map[string]bool{}
	for _, t := range live {
		listing[t.Server] = true
	}
	for _, st := range s.o.Catalog.Servers() {
		if !s.starting(st.State) || listing[st.Name] {
			continue
		}
		spec, ok := s.o.Catalog.Spec(st.Name)
		if !ok {
			continue
		}
		ts := s.o.Pins.Pinned(spec.Identity())
		if len(ts) == 0 {
			unpinned = append(unpinned, st.Name)
			continue
		}
		for _, t := range ts {
			t.Server = st.Name
			early = append(early, t)
		}
	}
	return early, unpinned
}

// changes returns a channel closed the next time the servers' states may
// have changed (every catalog event, and the end of the start).
func (s *Server) changes() <-chan struct{} {
	s.tickMu.Lock()
	defer s.tickMu.Unlock()
	return s.tick
}

// bump wakes whoever waits on changes.
func (s *Server) bump() {
	s.tickMu.Lock()
	defer s.tickMu.Unlock()
	close(s.tick)
	s.tick = make(chan struct{})
}

// waitListable waits until no server is still starting without pinned
// definitions to offer: at most listSettle after Start while some tool is
// ready to offer, and at most ListWait after Start while none is; or until
// ctx ends.
func (s *Server) waitListable(ctx context.Context) {
	select {
	case <-s.started:
	default:
		return
	}
	settle := time.NewTimer(time.Until(s.startedAt.Add(min(listSettle, s.o.ListWait))))
	defer settle.Stop()
	limit := time.NewTimer(time.Until(s.startedAt.Add(s.o.ListWait)))
	defer limit.Stop()
	settled := false
	for {
		ch := s.changes()
		live := s.o.Catalog.Tools()
		early, unpinned := s.early(live)
		if len(unpinned) == 0 || settled && len(live)+len(early) > 0 {
			return
		}
		if s.listWaiting != nil {
			s.listWaiting()
		}
		select {
		case <-ch:
		case <-settle.C:
			settled = true
		case <-limit.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// awaitServer waits, at most callWait, while the server of e is still
// starting and does not list e's tool yet: e was offered by its pinned
// definition.
func (s *Server) awaitServer(ctx context.Context, e *export) {
	if _, ok := s.o.Catalog.Tool(e.server, e.tool); ok {
		return
	}
	t := time.NewTimer(callWait)
	defer t.Stop()
	for {
		ch := s.changes()
		if !s.isStarting(e.server) {
			return
		}
		select {
		case <-ch:
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// isStarting reports whether the named server is still starting.
func (s *Server) isStarting(server string) bool {
	for _, st := range s.o.Catalog.Servers() {
		if st.Name == server {
			return s.starting(st.State)
		}
	}
	return false
}

// notFoundYet turns a resources/read "not found" into one that says which
// servers are still starting, whose resources are offered only once they
// are ready: the URI may be one of theirs.
func (s *Server) notFoundYet(err error) error {
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != mcp.CodeResourceNotFound {
		return err
	}
	var names []string
	for _, st := range s.o.Catalog.Servers() {
		if s.starting(st.State) {
			names = append(names, sanitize.Name(st.Name))
		}
	}
	if len(names) == 0 {
		return err
	}
	verb := " is"
	if len(names) > 1 {
		verb = " are"
	}
	return &jsonrpc.Error{Code: je.Code, Data: je.Data,
		Message: "Resource not found yet: " + strings.Join(names, ", ") + verb + " still starting, and a server's resources are offered once it is ready (resources/list_changed says so); read it again then"}
}
