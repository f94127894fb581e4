package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/spf13/cobra"
)

func newPinCmd(g *globalOptions, s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pin",
		Short: "Accept changed tool definitions",
		Long: `mcphost remembers the definition of every tool of a trusted server (its pin).
When a server changes a tool's definition — its description, schema or
annotations — the tool counts as unannotated and every call to it asks, until
a person accepts the change: by approving a call to it, or with pin accept.`,
	}
	accept := &cobra.Command{
		Use:   "accept SERVER[/TOOL]",
		Short: "Accept the current definition of a server's tools (or one tool)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			server, tool, _ := strings.Cut(args[0], "/")
			st, err := loadSetup(g, s)
			if err != nil {
				return err
			}
			m, err := startOne(cmd.Context(), st, server)
			if err != nil {
				return err
			}
			defer m.Close()
			spec, _ := m.Spec(server)
			ident := spec.Identity()
			n := 0
			for _, t := range m.Tools() {
				if tool != "" && t.Name != tool {
					continue
				}
				old, had := st.store.Pin(ident, t.Name)
				if had && old == t.Hash {
					continue
				}
				if err := st.store.SetPin(ident, t.Name, t.Hash); err != nil {
					return err
				}
				verb := "pinned"
				if had {
					verb = "accepted the new definition of"
				}
				fmt.Fprintf(s.Out, "%s %s\n", verb, sanitize.Line(t.Ref()))
				n++
			}
			if tool != "" && n == 0 {
				if _, ok := m.Tool(server, tool); !ok {
					return noSuchTool(m, server, tool)
				}
			}
			fmt.Fprintf(s.Err, "%d pin%s updated\n", n, plural(n))
			return nil
		},
	}
	cmd.AddCommand(accept)
	return cmd
}

// startOne starts only the named server.
func startOne(ctx context.Context, st *setup, server string) (*client.Manager, error) {
	var keep []client.Spec
	var names []string
	for _, sp := range st.specs {
		names = append(names, sp.Name)
		if sp.Name == server {
			keep = append(keep, sp)
		}
	}
	if len(keep) == 0 {
		for _, h := range st.held {
			if h.Name == server {
				return nil, usageError(fmt.Errorf("server %q is %s: %s", server, h.State, h.LastError))
			}
		}
		return nil, usageError(fmt.Errorf("no server named %q; configured: %s", server, strings.Join(names, ", ")))
	}
	st.specs = keep
	m, err := st.startChecked(ctx)
	if err != nil {
		return nil, err
	}
	if ss := m.Servers()[0]; ss.State != client.StateReady {
		m.Close()
		return nil, withCode(exitError, fmt.Errorf("server %q failed to start: %s", server, sanitize.Text(ss.LastError)))
	}
	return m, nil
}
