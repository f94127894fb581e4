package host

import "github.com/mcphost/mcphost/decide"

// SessionState keeps a session's "this session" grants (decide.ScopeSession
// and decide.ScopeArgs) and its taint outside the gate's memory: in a store
// that several processes share (pgstore.Sessions), so that a client whose
// requests reach several replicas of `mcphost serve` is one session to all
// of them. Implementations are safe for concurrent use, also by several
// processes updating the same session at once.
type SessionState interface {
	// Load returns the session's grants, oldest first, and its taint. The
	// grants are only ones a gate keeps for a session (scope ScopeSession
	// or ScopeArgs, bound to a server, tool and definition): what a store
	// holds that is not one is left out, never handed to the decision.
	Load() (grants []decide.Grant, openWorld, privateRead bool, err error)
	// AddGrant keeps a grant for the session.
	AddGrant(g decide.Grant) error
	// Revoke removes every grant of the session equal to g and reports how
	// many there were.
	Revoke(g decide.Grant) (int, error)
	// AddTaint adds to the session's taint: it only ever grows, so two
	// processes adding at once keep the union of both.
	AddTaint(openWorld, privateRead bool) error
}

// session returns the grants and taint in force now: the gate's own
// (always grants, read afresh from a Store that is LiveGrants, and with no
// SessionState the session's too) and those
// the SessionState keeps, read afresh, so that what another process added
// or revoked counts here at once.
//
// Taint that cannot be read is assumed (both kinds, so an open-world call
// asks), and grants that cannot be read do not count: a store that fails
// makes the gate ask more, never less. Taint the store has and the gate
// lacked is kept in the gate's memory too (it only grows); taint the gate
// has and the store lacks (a write that failed) is written again.
func (g *Gate) session() ([]decide.Grant, Taint) {
	g.mu.Lock()
	grants := append([]decide.Grant(nil), g.grants...)
	mine := Taint{OpenWorld: g.sawOpen, PrivateRead: g.sawPriv}
	g.mu.Unlock()
	if g.o.Store != nil && liveGrants(g.o.Store) {
		grants = append(grants, g.o.Store.AlwaysGrants()...)
	}
	if g.o.State == nil {
		return grants, mine
	}
	kept, open, priv, err := g.o.State.Load()
	if err != nil {
		return grants, Taint{OpenWorld: true, PrivateRead: true}
	}
	theirs := Taint{OpenWorld: open, PrivateRead: priv}
	if mine.OpenWorld && !open || mine.PrivateRead && !priv {
		_ = g.o.State.AddTaint(mine.OpenWorld, mine.PrivateRead) // tried again at the next decision
	}
	if theirs.OpenWorld && !mine.OpenWorld || theirs.PrivateRead && !mine.PrivateRead {
		g.RestoreTaint(theirs)
	}
	return append(grants, kept...), Taint{OpenWorld: mine.OpenWorld || open, PrivateRead: mine.PrivateRead || priv}
}

// keepSessionGrant keeps a grant for this session: in the SessionState
// when there is one, else (or when it cannot be written, so that it still
// holds in this process) in the gate's memory.
func (g *Gate) keepSessionGrant(gr decide.Grant) {
	if g.o.State != nil && g.o.State.AddGrant(gr) == nil {
		return
	}
	g.mu.Lock()
	g.grants = append(g.grants, gr)
	g.mu.Unlock()
}
