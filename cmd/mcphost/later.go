package main

import (
	"context"
	"strings"
	"time"

	"github.com/mcphost/mcphost/approver"
	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/later"
	"github.com/mcphost/mcphost/ui/notify"
)

// mayApprove is the channel policy that applies ("askVia", narrowed by the
// managed policy) as the gate asks it.
func (st *setup) mayApprove() func(decide.Tier, audit.Channel) bool {
	eff, _ := config.EffectiveAskVia(st.cfg.AskVia, st.managed)
	return host.AskViaPolicy(eff)
}

// askViaLines are the "askVia" lines of `mcphost policy`: per tier, the
// channels whose answer approves a call, and where that comes from.
func (st *setup) askViaLines() []policyLine {
	eff, src := config.EffectiveAskVia(st.cfg.AskVia, st.managed)
	var out []policyLine
	for _, tier := range config.AskTiers {
		l := policyLine{Setting: "askVia " + tier, Value: strings.Join(eff[tier], ", "), Source: srcDefault}
		switch src[tier] {
		case "managed":
			l.Source, l.At = srcManaged, st.managed.Where("askVia")
			if _, ok := st.cfg.AskVia[tier]; ok {
				l.Note = "narrowed from " + strings.Join(st.cfg.AskVia[tier], ", ")
			} else {
				l.Note = "narrowed from the default"
			}
		case "user":
			l.Source, l.At = srcUser, userFile(st.cfg)
		}
		if l.Value == "" {
			l.Value = "none (only a rule or a grant runs such a call)"
		}
		out = append(out, l)
	}
	return out
}

// holdLater makes a headless run hold the calls that need a person for a
// later approval: they are put to `mcphost approve` through an approver
// socket of the run's own (it connects to it as to a serve's), the person
// is notified, and the model, told the approval id, makes the call again
// once it is approved, which then runs once. Without a socket (it could not
// be made) nothing is held. It returns what closes the socket.
func (st *setup) holdLater(s *streams, gate **host.Gate) func() {
	h := st.holdFor(s, "mcphost run in "+s.WorkDir, 0, gate)
	if h == nil {
		return func() {}
	}
	return h.close
}

// heldCalls are the calls a process of mcphost's own (a headless run, the
// chat, `mcphost call`) holds for a person's later approval, and the
// approver socket of its own through which `mcphost approve` and the web
// page see them, as they see a serve's.
type heldCalls struct {
	b     *approver.Broker
	store *later.Store
	may   func(decide.Tier, audit.Channel) bool
}

// heldCalls opens the approver socket of the process, named label to the
// approvers, and a store whose held calls live for lifetime (0: the
// default). Nil when the socket could not be made: then nothing is held.
func (st *setup) heldCalls(s *streams, label string, lifetime time.Duration) *heldCalls {
	b, err := approver.Listen(approver.SocketPath(config.StateDir(s.Getenv("XDG_STATE_HOME"))), approver.Options{Label: label, Passkeys: passkeyVerifier(s)})
	if err != nil {
		return nil
	}
	return &heldCalls{b: b, store: later.New(later.Options{Lifetime: lifetime}), may: st.mayApprove()}
}

// holdFor is heldCalls for a gate that withGate makes (st.later): a held
// call is put to the approvers, answered through *gate, and told to the
// person with a desktop notification, since no terminal of theirs shows
// it.
func (st *setup) holdFor(s *streams, label string, lifetime time.Duration, gate **host.Gate) *heldCalls {
	h := st.heldCalls(s, label, lifetime)
	if h == nil {
		return nil
	}
	st.later = func(o *host.GateOptions) {
		o.Later, o.MayApprove = h.store, h.may
		o.OnHold = func(ap later.Approval, q *host.Question) error {
			if err := h.post(*gate, ap, q); err != nil {
				return err // withdrawn by the gate: nothing to notify of
			}
			desktopNotify(q.Server, q.Tool.Name)
			return nil
		}
	}
	return h
}

// chatHolds applies askVia to the chat's gate o: a call its dialog may not
// approve is held for `mcphost approve` and the web page, through an
// approver socket of the chat's own. It returns what shows a held call to
// the approvers (ui.Config.PostHeld; nil when no socket could be made) and
// what closes the socket, to be called when the chat ends (before a
// /resume starts the next).
func (st *setup) chatHolds(s *streams, o *host.GateOptions) (post func(*host.Gate, later.Approval, *host.Question) error, close func()) {
	o.MayApprove = st.mayApprove()
	h := st.heldCalls(s, "mcphost chat in "+s.WorkDir, 0)
	if h == nil {
		return nil, func() {}
	}
	o.Later = h.store
	return h.post, h.close
}

// post shows the call held under ap to the approvers; their answer goes to
// g, which holds it. Its error says why they cannot be shown it: the
// approvers are the only ones who could answer a call this process holds,
// so the gate then withdraws it and the refusal says why.
func (h *heldCalls) post(g *host.Gate, ap later.Approval, q *host.Question) error {
	return h.b.Post(ap.ID, q, ap.Expires, func(ans host.Answer) error { return g.AnswerLater(ap.ID, ans) })
}

// close closes the approver socket: what was held is forgotten with the
// process.
func (h *heldCalls) close() { h.b.Close() }

// desktopNotify tells the person, with a desktop notification where the
// system has one, that a call of server's tool waits for them. It never
// blocks the call and never fails it.
func desktopNotify(server, tool string) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		notify.DefaultExec.Desktop(ctx, notify.Subject(server, tool))
	}()
}
