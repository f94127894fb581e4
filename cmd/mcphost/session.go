package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
)

// session is a running set of servers with the gate in front of them.
type session struct {
	m     *client.Manager
	gate  *host.Gate
	audit auditLog
	// taint and onTaint are the gate's Taint and OnTaint: set for a saved
	// chat that continues (resumeState), before withGate.
	taint   host.Taint
	onTaint func(host.Taint)
	tel     *sessionTelemetry // nil: no export
	// telWarn is what the last export said, printed by the first wait.
	telWarn  string
	warnOnce sync.Once

	closeOnce sync.Once
	closed    chan struct{} // closed when Close's work is done
}

// Close stops the servers and closes the audit log, at the same time: the
// log's last sync does not need to wait for the servers to exit. It returns
// when both are done; calling it again waits for the first call's work.
func (ss *session) Close() { ss.startClose()() }

// startClose starts what Close does and returns a function that waits for
// it, so that a command can write its output while the servers stop.
func (ss *session) startClose() (wait func()) {
	ss.closeOnce.Do(func() {
		ss.closed = make(chan struct{})
		go func() {
			defer close(ss.closed)
			var wg sync.WaitGroup
			if ss.audit != nil {
				wg.Go(func() { ss.audit.Close() })
			}
			wg.Go(func() { ss.telWarn = ss.tel.flush() })
			ss.m.Close()
			wg.Wait()
		}()
	})
	return func() { <-ss.closed; ss.warnOnce.Do(ss.tel.warnOf(ss.telWarn)) }
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
	return st.openSessionFrom(ctx, g, s, mode, asker, host.Taint{}, nil)
}

// openSessionFrom is openSession for a saved chat that continues: the gate
// starts from the chat's taint and reports its growth to onTaint.
func (st *setup) openSessionFrom(ctx context.Context, g *globalOptions, s *streams, mode decide.Mode, asker host.Asker, taint host.Taint, onTaint func(host.Taint)) (*session, error) {
	policy, err := st.policy(g, s)
	if err != nil {
		return nil, err
	}
	opened := st.openAudit(g)
	m, err := st.startChecked(ctx)
	if err != nil {
		opened.discard()
		return nil, err
	}
	ss := &session{m: m, taint: taint, onTaint: onTaint}
	return st.withGate(ss, policy, opened, s, mode, asker), nil
}

// openingAudit is an audit log being opened in the background.
type openingAudit struct {
	done chan struct{}
	log  auditLog
	err  error
}

// openAudit starts opening the audit log, which reads back to the log's
// last record, so that it happens while the servers start rather than
// after.
func (st *setup) openAudit(g *globalOptions) *openingAudit {
	o := &openingAudit{done: make(chan struct{})}
	go func() {
		defer close(o.done)
		o.log, o.err = st.openAuditLog(g) // store.go: the file, or the store's chain
	}()
	return o
}

// wait returns the opened log or why it could not be opened.
func (o *openingAudit) wait() (auditLog, error) {
	<-o.done
	return o.log, o.err
}

// discard closes the log once it is open, for a session that never started.
func (o *openingAudit) discard() {
	if l, _ := o.wait(); l != nil {
		l.Close()
	}
}

// gatedOne starts only server and puts the gate in front of it, for a
// command that makes one call of it (call, read): --yes approves that call
// once, and a call that needs a person is refused otherwise. check, if set,
// runs once the server is up and before the audit log is taken: its error
// ends the command with nothing recorded.
func (st *setup) gatedOne(ctx context.Context, g *globalOptions, s *streams, server string, yes bool, check func(*client.Manager) error) (*session, error) {
	mode, asker := cliAsker(yes)
	policy, err := st.policy(g, s)
	if err != nil {
		return nil, err
	}
	opened := st.openAudit(g)
	m, err := startOne(ctx, st, server) // only the server the call needs
	if err != nil {
		opened.discard()
		return nil, err
	}
	if check != nil {
		if err := check(m); err != nil {
			m.Close()
			opened.discard()
			return nil, err
		}
	}
	return st.withGate(&session{m: m}, policy, opened, s, mode, asker), nil
}

// withGate puts the gate in front of ss's servers, with the audit log being
// opened by opened.
func (st *setup) withGate(ss *session, policy *decide.Policy, opened *openingAudit, s *streams, mode decide.Mode, asker host.Asker) *session {
	var log host.AuditLog
	if l, err := opened.wait(); err != nil {
		fmt.Fprintf(s.Err, "mcphost: warning: %v; only read-only calls will run\n", err)
	} else {
		ss.audit, log = l, l
	}
	ss.tel = st.startTelemetry(s)
	o := host.GateOptions{
		Catalog:   ss.m,
		Policy:    policy,
		Trusted:   func(name string) bool { return st.trusted[name] },
		MayTrust:  st.mayTrust,
		Asker:     asker,
		Mode:      mode,
		Audit:     log,
		Store:     st.store,
		Pins:      st.pins,
		SessionID: strconv.FormatInt(time.Now().UnixNano(), 36),
		Taint:     ss.taint,
		OnTaint:   ss.onTaint,
		Observer:  ss.tel.observer(),
		// askVia holds for every command: `call --yes` approves nothing
		// at a tier where the chat may not.
		MayApprove: st.mayApprove(),
	}
	if st.later != nil {
		st.later(&o)
	}
	ss.gate = host.NewGate(o)
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
