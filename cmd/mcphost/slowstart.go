package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/sanitize"
)

// slowStartAfter is how long a server starts before a command says that
// it is still starting.
const slowStartAfter = 5 * time.Second

// slowStart tells a person, once, which servers are still starting after a
// while, what may take the time and how to allow more: a first npx or uvx
// run downloads its package, and a silent wait looks like a hang.
type slowStart struct {
	w     io.Writer
	after time.Duration
	// timer is time.After, injectable so that tests choose the moment.
	timer func(time.Duration) <-chan time.Time
}

// watch starts watching m start its servers. The returned function stops
// watching and returns once nothing more will be written. A nil slowStart
// watches nothing.
func (n *slowStart) watch(m *client.Manager) (stop func()) {
	if n == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-n.timer(n.after):
		case <-done:
			return
		}
		for _, ss := range m.Servers() {
			if ss.State != client.StateStarting {
				continue
			}
			if spec, ok := m.Spec(ss.Name); ok {
				fmt.Fprintln(n.w, sanitize.Line(n.notice(spec, m.StartTimeout(ss.Name))))
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// notice is the line that says spec's server is still starting; limit is
// its start timeout.
func (n *slowStart) notice(spec client.Spec, limit time.Duration) string {
	why := ""
	if l := spec.Launcher(); l != "" {
		why = l + " may be downloading the package; "
	}
	raise := "the limit is " + limit.String()
	if spec.StartTimeoutSetting != "" {
		raise = spec.StartTimeoutSetting + " raises the limit of " + limit.String()
	}
	return fmt.Sprintf("mcphost: %s is still starting (%s; %s%s)", spec.Name, n.after, why, raise)
}
