package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/mcphost/mcphost/state"
	"github.com/spf13/cobra"
)

type mcpRevokeOptions struct {
	Name, Tool string
}

func newMCPRevokeCmd(g *globalOptions, s *streams) *cobra.Command {
	o := &mcpRevokeOptions{}
	return &cobra.Command{
		Use:   "revoke NAME [TOOL]",
		Short: `Forget the "always" grants given for a server's tools`,
		Long: `Forget the "always" grants given for server NAME: for its tool TOOL, or for
every tool of it. They are removed from this machine's state file and, when
the config names a store ("store"), from the store, where every mcphost serve
replica on it stops running those calls unasked at its next call.`,
		Example: `  mcphost mcp revoke tasks delete_task
  mcphost mcp revoke tasks`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			if len(args) == 2 {
				o.Tool = args[1]
			}
			return runMCPRevoke(cmd.Context(), g, o, s)
		},
	}
}

func runMCPRevoke(ctx context.Context, g *globalOptions, o *mcpRevokeOptions, s *streams) error {
	st, err := loadSetup(g, s)
	if err != nil {
		return err
	}
	name := o.Name
	if why := config.NameProblem(name); why != "" {
		return usageError(errors.New(why))
	}
	identity := ""
	for _, spec := range st.specs {
		if spec.Name == name {
			identity = spec.Identity()
		}
	}
	if identity == "" {
		if srv, ok := st.configured(name); ok {
			spec := specFromConfig(srv)
			identity = spec.Identity()
		}
	}
	if identity == "" {
		return noServerNamed(name)
	}
	var n int
	if err := state.Update(st.statePath(), time.Now, func(ss *state.State) error {
		n = ss.RevokeGrants(identity, o.Tool)
		return nil
	}); err != nil {
		return err
	}
	if st.storeURL != "" {
		shared, err := openStore(ctx, st.storeURL)
		if err != nil {
			return withCode(exitError, fmt.Errorf("this machine's state file no longer has them, but the serve replicas on the store still do: %w", err))
		}
		defer shared.Close()
		m, err := shared.Grants().RevokeGrants(identity, o.Tool)
		if err != nil {
			return withCode(exitError, fmt.Errorf("this machine's state file no longer has them, but the serve replicas on the store %s still do: %w", shared, err))
		}
		n += m
	}
	what := name
	if o.Tool != "" {
		what += "/" + sanitize.Line(o.Tool)
	}
	if n == 0 {
		fmt.Fprintf(s.Err, "mcphost keeps no always grant for %s: nothing to revoke\n", what)
		return nil
	}
	fmt.Fprintf(s.Out, "revoked %d always grant(s) for %s: those calls ask again from the next one\n", n, what)
	return nil
}
