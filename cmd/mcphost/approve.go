package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcphost/mcphost/approver"
	"github.com/mcphost/mcphost/approver/tui"
	"github.com/mcphost/mcphost/config"
)

func newApproveCmd(_ *globalOptions, s *streams) *cobra.Command {
	return &cobra.Command{
		Use:   "approve",
		Short: "Answer the calls a running mcphost serve asks a person about",
		Long: `approve connects to the mcphost serve running for this user (over a Unix
socket in the state directory) and shows the confirmation dialog of the chat
for every call that needs a person and that the serve's client cannot ask
about: one at a time, in the order they were asked, with the same tiers,
grace period and typed confirmation for tier 3.

Several approvers may run; the first answer counts. When the last one quits,
calls that wait are refused.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runApprove(cmd.Context(), s)
		},
	}
}

// runApprove connects before it checks the terminal, so that "no serve"
// is said wherever approve runs; a connection that has not said hello is
// not an approver, so nothing is sent to it and no call is affected.
func runApprove(ctx context.Context, s *streams) error {
	path := approver.SocketPath(config.StateDir(s.Getenv("XDG_STATE_HOME")))
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	conn, err := approver.Dial(dctx, path)
	cancel()
	if errors.Is(err, approver.ErrNoServe) {
		return fmt.Errorf("%w: start it with `mcphost serve` (a host such as Claude Code starts it from its MCP config), then run mcphost approve again", err)
	}
	if err != nil {
		return err
	}
	defer conn.Close()
	if !s.Terminal {
		return usageError(errors.New("mcphost approve shows a dialog and needs a terminal on standard input and output: run it in a terminal window (not through a pipe or a script)"))
	}
	hello, err := conn.Hello()
	if err != nil {
		return fmt.Errorf("connect to mcphost serve at %s: %w", path, err)
	}
	err = tui.Run(ctx, tui.Streams{In: s.In, Out: s.Out}, conn, tui.Config{Serve: hello, NoColor: !s.Color})
	if err != nil {
		return fmt.Errorf("%w; calls still waiting are refused unless another approver runs", err)
	}
	return nil
}
