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
	b, err := approver.Listen(approver.SocketPath(config.StateDir(s.Getenv("XDG_STATE_HOME"))), approver.Options{Label: "mcphost run in " + s.WorkDir, Passkeys: passkeyVerifier(s)})
	if err != nil {
		return func() {}
	}
	store := later.New(later.Options{})
	may := st.mayApprove()
	st.later = func(o *host.GateOptions) {
		o.Later, o.MayApprove = store, may
		o.OnHold = func(ap later.Approval, q *host.Question) {
			g := *gate
			_ = b.Post(ap.ID, q, ap.Expires, func(ans host.Answer) error { return g.AnswerLater(ap.ID, ans) })
			desktopNotify(q.Server, q.Tool.Name)
		}
	}
	return func() { b.Close() }
}

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
