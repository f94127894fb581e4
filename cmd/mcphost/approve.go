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
		Short: "Answer the calls the running mcphost serves ask a person about",
		Long: `approve connects to every mcphost serve running for this user (each has a
Unix socket in the state directory; one that starts later is connected to
as well) and shows the confirmation dialog of the chat for every call that
needs a person and that the serve's client cannot ask about: one at a time,
in the order they were asked, with the same tiers, grace period and typed
confirmation for tier 3. With several serves, the status line names the one
that asked the call shown.

Several approvers may run; the first answer counts. When the last one quits,
calls that wait are refused.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runApprove(cmd.Context(), s)
		},
	}
}

// watchEvery is how often approve looks for a serve that started since.
const watchEvery = time.Second

// runApprove connects before it checks the terminal, so that "no serve"
// is said wherever approve runs; a connection that has not said hello is
// not an approver, so nothing is sent to it and no call is affected.
func runApprove(ctx context.Context, s *streams) error {
	dir := approver.SocketDir(config.StateDir(s.Getenv("XDG_STATE_HOME")))
	socks, err := approver.Sockets(dir)
	if err != nil {
		return fmt.Errorf("list the approver sockets in %s: %w", dir, err)
	}
	if len(socks) == 0 {
		return fmt.Errorf("%w (no approver socket in %s): start it with `mcphost serve` (a host such as Claude Code starts it from its MCP config), then run mcphost approve again", approver.ErrNoServe, dir)
	}
	if !s.Terminal {
		return usageError(errors.New("mcphost approve shows a dialog and needs a terminal on standard input and output: run it in a terminal window (not through a pipe or a script)"))
	}
	mux := approver.NewMux()
	defer mux.Close()
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	problems, err := mux.Dial(dctx, dir)
	cancel()
	if errors.Is(err, approver.ErrNoServe) {
		return fmt.Errorf("%w: start it with `mcphost serve` (a host such as Claude Code starts it from its MCP config), then run mcphost approve again", err)
	}
	if err != nil {
		return err
	}
	for _, p := range problems {
		fmt.Fprintf(s.Err, "mcphost: warning: %v\n", p)
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	go mux.Watch(wctx, dir, watchEvery)
	err = tui.Run(ctx, tui.Streams{In: s.In, Out: s.Out}, mux, tui.Config{Serves: mux.Serves, NoColor: !s.Color})
	if err != nil {
		return fmt.Errorf("%w; calls still waiting are refused unless another approver runs", err)
	}
	return nil
}
