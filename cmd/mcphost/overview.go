package main

import (
	"context"
	"fmt"
)

// runOverview is what mcphost does without a command. The interactive
// chat is not built yet; until then it shows the servers and tools it would
// work with and the commands that exist.
func runOverview(ctx context.Context, g *globalOptions, s *streams) error {
	st, err := loadSetup(g, s)
	if err != nil {
		return err
	}
	m := st.start(ctx)
	defer m.Close()
	ready, tools := 0, len(m.Tools())
	statuses := st.statuses(m)
	for _, ss := range statuses {
		if ss.State == "ready" {
			ready++
		}
	}
	fmt.Fprintf(s.Out, "mcphost %s: %d of %d servers ready, %d tools.\n", version, ready, len(statuses), tools)
	if st.demo && !g.Demo {
		fmt.Fprintln(s.Out, "No configuration found: these are the built-in demo servers (see mcphost --help for --config and --server).")
	}
	fmt.Fprintln(s.Out)
	fmt.Fprintln(s.Out, `Commands:
  mcphost servers   connection state of every server
  mcphost tools     every tool with its declared hints

The interactive chat is not available in this version.`)
	return startFailures(st, m)
}
