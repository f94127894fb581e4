package main

import (
	"context"
	"fmt"
	"slices"
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
	if err := st.keepOnly(server); err != nil {
		return nil, err
	}
	m, err := st.startChecked(ctx)
	if err != nil {
		return nil, err
	}
	if ss := m.Servers()[0]; ss.State != client.StateReady {
		m.Close()
		return nil, withCode(exitError, fmt.Errorf("server %q failed to start: %s", server, serverFailure(ss)))
	}
	return m, nil
}

// keepOnly narrows the servers a command starts to names, for a command
// aimed at some servers: a name no started server has is a usage error
// (noServerNamed), and so is a server held back (disabled, or waiting for
// consent), with the reason.
func (st *setup) keepOnly(names ...string) error {
	var keep []client.Spec
	var all []string
	for _, sp := range st.specs {
		all = append(all, sp.Name)
	}
	for _, name := range names {
		if i := slices.IndexFunc(st.specs, func(sp client.Spec) bool { return sp.Name == name }); i >= 0 {
			keep = append(keep, st.specs[i])
			continue
		}
		for _, h := range st.held {
			if h.Name == name {
				return usageError(fmt.Errorf("server %q is %s: %s", name, h.State, h.LastError))
			}
		}
		return st.noServerNamed(name, all)
	}
	st.specs, st.held = keep, nil
	return nil
}
