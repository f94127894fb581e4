package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/host"
)

// managedPath is the managed policy this program reads: config.ManagedPath,
// fixed per operating system. It is a variable only so that the test
// binary (main_test.go) can point its stories at a policy of their own; the
// released binary has no flag, environment variable or file that changes
// it.
var managedPath = config.ManagedPath

// managedRulePrefix starts the id of every managed rule
// ("managed:deny[0]"), in reasons, the audit log and messages.
const managedRulePrefix = "managed:"

// stateManaged is the state of a server the managed policy keeps from
// starting.
const stateManaged client.State = "blocked-by-policy"

// loadManaged reads the managed policy and prints its warnings. A missing
// file is no policy (nil); a file that cannot be read or parsed is a usage
// error naming the file and line, so that every command that would start a
// server or run a call exits 2 without doing so.
func loadManaged(s *streams) (*config.Managed, error) {
	m, warnings, err := config.LoadManaged(managedPath)
	for _, w := range warnings {
		fmt.Fprintf(s.Err, "mcphost: warning: %s\n", w)
	}
	if err != nil {
		return nil, usageError(err)
	}
	return m, nil
}

// applyManagedAudit fixes the audit log where the managed policy requires
// it, whatever --audit says.
func applyManagedAudit(m *config.Managed, g *globalOptions, s *streams) {
	if m == nil || m.Audit == "" {
		return
	}
	if g.Audit != "" && g.Audit != m.Audit {
		fmt.Fprintf(s.Err, "mcphost: warning: --audit %s is ignored: the managed policy (%s) writes the audit log to %s\n", g.Audit, m.At["audit"], m.Audit)
	}
	g.Audit = m.Audit
}

// managedServerHeld reports whether the managed policy keeps srv from
// starting, and says so on stderr with the entry or list responsible.
func (st *setup) managedServerHeld(srv config.Server, s *streams) bool {
	ok, why := st.managed.ServerVerdict(srv)
	if ok {
		return false
	}
	fmt.Fprintf(s.Err, "mcphost: server %q (%s) is not started: %s\n", srv.Name, serverOrigin(srv), why)
	st.held = append(st.held, client.Status{Name: srv.Name, Transport: srv.Transport, State: stateManaged, LastError: why})
	return true
}

// clampTrust drops the trust of every server the managed policy does not
// let a user trust, saying so for each one that was trusted.
func (st *setup) clampTrust(s *streams) {
	if st.managed == nil || !st.managed.HasTrust {
		return
	}
	var names []string
	for name, on := range st.trusted {
		if on && !st.managed.MayTrust(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		delete(st.trusted, name)
		if st.untrusted == nil {
			st.untrusted = map[string]bool{}
		}
		st.untrusted[name] = true
		fmt.Fprintf(s.Err, "mcphost: warning: server %q is not trusted: the managed policy (%s) does not let users trust it\n", name, st.managed.At["trust"])
	}
}

// serverOrigin says where a server entry came from, for messages.
func serverOrigin(srv config.Server) string {
	switch srv.Source {
	case config.SourceFlag:
		return "from --server"
	case config.SourceDemo:
		return "built in"
	}
	return "from " + srv.File
}

// managedDemo holds the demo servers when the managed policy has an allow
// list (they match none of its entries: they have no command or URL) and
// clamps their trust like any other server's.
func (st *setup) managedDemo(s *streams) {
	if st.managed == nil {
		return
	}
	var kept []client.Spec
	for _, spec := range st.specs {
		if st.managedServerHeld(config.Server{Name: spec.Name, Source: config.SourceDemo}, s) {
			delete(st.trusted, spec.Name)
			continue
		}
		kept = append(kept, spec)
	}
	st.specs = kept
	st.clampTrust(s)
}

// managedAsksUnanswered passes questions to an asker that answers in the
// person's name without showing them anything (call --yes), except those a
// managed ask rule raised: the administrator asked for a person to see
// such a call, so it is refused as a headless run refuses it (exit 3).
type managedAsksUnanswered struct{ host.Asker }

func (a managedAsksUnanswered) Ask(ctx context.Context, q *host.Question) (host.Answer, error) {
	if strings.HasPrefix(q.Decision.Rule, managedRulePrefix) {
		return host.Answer{}, fmt.Errorf("the managed policy's ask rule %s needs a person to confirm the call, which --yes does not do: %w", q.Decision.Rule, host.ErrNoPerson)
	}
	return a.Asker.Ask(ctx, q)
}
