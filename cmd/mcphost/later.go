package main

import (
	"context"
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
