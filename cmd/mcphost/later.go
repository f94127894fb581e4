package main

import (
	"context"
	"strings"
	"time"

	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/ui/notify"
)

// mayApprove is the channel policy that applies ("askVia", narrowed by the
// managed policy) as the gate asks it.
func (st *setup) mayApprove() func(decide.Tier, host.Channel) bool {
	eff, _ := config.EffectiveAskVia(st.cfg.AskVia, st.managed)
	return func(t decide.Tier, via host.Channel) bool { return eff.Allows(t.String(), string(via)) }
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
