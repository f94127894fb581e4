package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/mcphost/mcphost/sanitize"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"
)

// What a server's request or message carries with it has to reach the
// client whose call caused it. Nothing on the wire says which call that
// is, so serve keeps, per upstream server, the calls running there: when
// all of them belong to one client session, that session is the one.

// running is a call in flight on an upstream server.
type running struct {
	ss   *mcp.ServerSession
	ctx  context.Context // the client's request: what is sent with it goes on its stream
	sess *session
	park *parked // set for a call of a 2026-07-28 client (park.go)

	logs    *rate.Limiter // the log messages relayed for this call
	logMu   sync.Mutex
	dropped bool // a message was dropped and the client told so
}

// begin records that a call of ss (client sess) runs on server, until the
// returned function is called.
func (s *Server) begin(server string, ss *mcp.ServerSession, ctx context.Context, sess *session, park *parked) (end func()) {
	r := &running{ss: ss, ctx: ctx, sess: sess, park: park, logs: rate.NewLimiter(LogRate, LogBurst)}
	s.runMu.Lock()
	s.inflight[server] = append(s.inflight[server], r)
	s.runMu.Unlock()
	return func() {
		s.runMu.Lock()
		defer s.runMu.Unlock()
		list := s.inflight[server]
		for i, x := range list {
			if x == r {
				list = append(list[:i:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(s.inflight, server)
		} else {
			s.inflight[server] = list
		}
	}
}

// caller returns the call in flight on server when there is exactly one,
// or nil: with none, or more than one, what the server sends cannot be
// told to belong to one call.
func (s *Server) caller(server string) *running {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	if list := s.inflight[server]; len(list) == 1 {
		return list[0]
	}
	return nil
}

// callerSession returns the session whose calls are the only ones in
// flight on server (one call or several), with one of those calls, or nil.
func (s *Server) callerSession(server string) *running {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	list := s.inflight[server]
	if len(list) == 0 {
		return nil
	}
	for _, r := range list[1:] {
		if r.ss != list[0].ss {
			return nil
		}
	}
	return list[0]
}

// relayWait bounds the sending of one relayed log message.
const relayWait = 5 * time.Second

// MaxLogData bounds the data of one relayed log message, in bytes.
const MaxLogData = 4 << 10

// LogRate and LogBurst bound the log messages relayed for one call: a
// server that floods its log during a call costs its caller at most this
// many messages (per second, and at once); the rest are dropped, and the
// client is told once, in a message of mcphost's own.
const (
	LogRate  = 50
	LogBurst = 100
)

// RelayLog passes a server's log message (notifications/message) to the
// client session whose calls are the only ones running on that server, at
// or above the level that session set with logging/setLevel (none set:
// nothing is sent, as the SDK rules). The logger names the server
// ("server" or "server/logger"); the data goes as one sanitized string of
// at most MaxLogData bytes (JSON that is not a string is sent as its
// text). A message that arrives when no call of the server runs, or while
// calls of more than one session do, is not relayed: it could be anyone's;
// nor is one past LogRate and LogBurst for the call (the client is told
// once that they are dropped). The manager keeps it in the server's log tail either way. It is the
// manager's OnLog.
func (s *Server) RelayLog(server string, p *mcp.LoggingMessageParams) {
	if p == nil {
		return
	}
	r := s.callerSession(server)
	if r == nil {
		return
	}
	if !r.logs.Allow() {
		r.dropLogs(server)
		return
	}
	data, ok := p.Data.(string)
	if !ok {
		b, _ := json.Marshal(p.Data)
		data = string(b)
	}
	logger := sanitize.Name(server)
	if p.Logger != "" {
		logger += "/" + bound(p.Logger, 64)
	}
	// It runs on the server connection's reader: a client that does not
	// read holds that server up at most this long per message.
	ctx, cancel := context.WithTimeout(r.ctx, relayWait)
	defer cancel()
	_ = r.ss.Log(ctx, &mcp.LoggingMessageParams{Level: p.Level, Logger: logger,
		Data: sanitize.Truncate(sanitize.Text(data), MaxLogData)})
}

// dropLogs tells the client, once per call, that server's log messages are
// being dropped.
func (r *running) dropLogs(server string) {
	r.logMu.Lock()
	first := !r.dropped
	r.dropped = true
	r.logMu.Unlock()
	if !first {
		return
	}
	ctx, cancel := context.WithTimeout(r.ctx, relayWait)
	defer cancel()
	_ = r.ss.Log(ctx, &mcp.LoggingMessageParams{Level: "warning", Logger: "mcphost",
		Data: fmt.Sprintf("mcphost: %s sends log messages faster than %d a second during this call; the rest of them are dropped (its last messages are in mcphost servers)", sanitize.Name(server), LogRate)})
}
