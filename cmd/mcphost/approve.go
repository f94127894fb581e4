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
Unix socket in the state directory) and shows the confirmation dialog of the
chat for every call that needs a person and that the serve's client cannot
ask about: one at a time, in the order they were asked, with the same tiers,
grace period and typed confirmation for tier 3. The status line names the
client whose call is shown (as it named itself to serve) and, with several
serves, the serve that asked.

It stays open: when no serve runs it waits for one to start, it connects to
each serve that starts later, and again to a serve that restarts, so it can
be left open in a terminal of its own.

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

// runApprove shows the approver's screen until the person quits: it
// connects to the serves that run, waits for one when none does, and
// connects to each serve that starts (or restarts) while it is open.
func runApprove(ctx context.Context, s *streams) error {
	if !s.Terminal {
		return usageError(errors.New("mcphost approve shows a dialog and needs a terminal on standard input and output: run it in a terminal window (not through a pipe or a script)"))
	}
	dir := approver.SocketDir(config.StateDir(s.Getenv("XDG_STATE_HOME")))
	mux := approver.NewMux()
	mux.StayOpen()
	defer mux.Close()
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	problems, err := mux.Dial(dctx, dir)
	cancel()
	if err != nil && !errors.Is(err, approver.ErrNoServe) {
		// A serve that cannot be spoken to (another version, say) is
		// named; approve waits for the others.
		problems = append(problems, err)
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
