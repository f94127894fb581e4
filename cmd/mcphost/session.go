package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
)

// session is a running set of servers with the gate in front of them.
type session struct {
	m     *client.Manager
	gate  *host.Gate
	audit *audit.Log
}

func (ss *session) Close() {
	ss.m.Close()
	if ss.audit != nil {
		ss.audit.Close()
	}
}

func (st *setup) auditPath(g *globalOptions) string {
	if g.Audit != "" {
		return g.Audit
	}
	return filepath.Join(st.stateDir, "audit.jsonl")
}

// openSession starts the servers and puts the gate in front of them. If the
// audit log cannot be opened, the session still runs, but only reads pass.
func (st *setup) openSession(ctx context.Context, g *globalOptions, s *streams, mode decide.Mode, asker host.Asker) (*session, error) {
	policy, err := st.policy(g, s)
	if err != nil {
		return nil, err
	}
	m, err := st.startChecked(ctx)
	if err != nil {
		return nil, err
	}
	ss := &session{m: m}
	return st.withGate(ss, policy, g, s, mode, asker), nil
}

// withGate puts the gate in front of ss's servers.
func (st *setup) withGate(ss *session, policy *decide.Policy, g *globalOptions, s *streams, mode decide.Mode, asker host.Asker) *session {
	var log host.AuditLog
	if l, err := audit.Open(st.auditPath(g), audit.Options{}); err != nil {
		fmt.Fprintf(s.Err, "mcphost: warning: %v; only read-only calls will run\n", err)
	} else {
		ss.audit, log = l, l
	}
	ss.gate = host.NewGate(host.GateOptions{
		Catalog:   ss.m,
		Policy:    policy,
		Trusted:   func(name string) bool { return st.trusted[name] },
		Asker:     asker,
		Mode:      mode,
		Audit:     log,
		Store:     st.store,
		SessionID: strconv.FormatInt(time.Now().UnixNano(), 36),
	})
	return ss
}

// exitFor maps how a call ended to the exit code of DESIGN §7.
func exitFor(r *host.Result) int {
	switch r.Status {
	case host.StatusSuccess:
		return exitOK
	case host.StatusBlocked:
		return exitBlocked
	case host.StatusDenied:
		return exitDenied
	case host.StatusToolError:
		return exitTool
	case host.StatusUnknown:
		return exitUnknown
	default:
		return exitError
	}
}
