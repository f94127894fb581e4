package serve

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
)

// The paths of the health endpoints serve --http answers without the
// bearer token: the conventional ones of Kubernetes probes and load
// balancers. deploy/ probes them; a test there keeps the two in step.
const (
	// LivePath answers 200 while the process serves HTTP at all.
	LivePath = "/healthz"
	// ReadyPath answers 200 only while serve can take calls (Ready).
	ReadyPath = "/readyz"
)

// Reasons Ready gives. They are short and fixed: the endpoints need no
// token, so they name no server, path or person.
var (
	ErrDraining       = errors.New("draining: serve is stopping and lets its calls finish")
	ErrStarting       = errors.New("servers starting: the configured servers have not all finished their first start")
	ErrNoAudit        = errors.New("audit log not open: only reads could run")
	ErrAuditUnwritten = errors.New("audit log not writable")
)

// writable is what an audit log may offer to say it can still append
// (audit.Log does).
type writable interface{ Writable() error }

// Ready reports whether serve can take calls: nil, or the reason it
// cannot. It can once every configured server has finished its first
// start, ready or failed (Start); while the audit log is open and still
// appends; and until Drain or Halt.
func (s *Server) Ready() error {
	s.drain.mu.Lock()
	draining := s.drain.draining || s.drain.closing
	s.drain.mu.Unlock()
	if draining {
		return ErrDraining
	}
	select {
	case <-s.ready:
	default:
		return ErrStarting
	}
	if s.o.Audit == nil {
		return ErrNoAudit
	}
	if w, ok := s.o.Audit.(writable); ok && w.Writable() != nil {
		return ErrAuditUnwritten
	}
	return nil
}

// Drain makes Ready say no from now on, so that a load balancer that
// probes ReadyPath stops sending new clients, while every request keeps
// being served and every call that runs goes on. It may be called more
// than once. Idle waits for the calls; Shutdown then ends what is left.
func (s *Server) Drain() {
	s.drain.mu.Lock()
	s.drain.draining = true
	s.drain.mu.Unlock()
}

// Idle waits until no request or parked call runs, or ctx ends (its error
// then). A request that comes meanwhile is waited for too.
func (s *Server) Idle(ctx context.Context) error {
	s.drain.mu.Lock()
	if s.drain.active == 0 {
		s.drain.mu.Unlock()
		return nil
	}
	if s.drain.quiet == nil {
		s.drain.quiet = make(chan struct{})
	}
	quiet := s.drain.quiet
	s.drain.mu.Unlock()
	select {
	case <-quiet:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// health is the JSON body of both endpoints: a status, and for a no, the
// short reason.
type health struct {
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// Health serves LivePath and ReadyPath, to be mounted beside the MCP
// endpoint and outside its token check. Liveness is 200 {"status":"ok"}
// whenever the process answers; readiness is 200 {"status":"ready"} or 503
// {"status":"not ready","reason":…} (Ready). Only GET and HEAD are
// answered, and nothing is cached.
func (s *Server) Health() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "Method Not Allowed: use GET", http.StatusMethodNotAllowed)
			return
		}
		code, body := http.StatusOK, health{Status: "ok"}
		switch r.URL.Path {
		case LivePath:
		case ReadyPath:
			body.Status = "ready"
			if err := s.Ready(); err != nil {
				code, body = http.StatusServiceUnavailable, health{Status: "not ready", Reason: err.Error()}
			}
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(code)
		if r.Method == http.MethodGet {
			_ = json.NewEncoder(w).Encode(body)
		}
	})
}

// MountHealth mounts Health on mux at LivePath and ReadyPath.
func (s *Server) MountHealth(mux *http.ServeMux) {
	h := s.Health()
	mux.Handle(LivePath, h)
	mux.Handle(ReadyPath, h)
}
