package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// globalOptions are the flags every command accepts.
type globalOptions struct {
	ConfigFile string
	Servers    []string
	Trust      []string
	Allow      []string
	Ask        []string
	Deny       []string
	Model      string
	BaseURL    string
	// AllowPlainHTTP lets the model's key go to a plain-http --base-url
	// that is not loopback.
	AllowPlainHTTP bool
	Audit          string
	Demo           bool
	// Server-initiated requests.
	Elicit        string   // "decline" (default) or "defaults"
	AllowSampling bool     // let servers use the model, headless
	Roots         []string // directories offered to servers as roots
	// StartTimeout bounds the start of servers that set no startTimeout
	// of their own; 0 selects the client's defaults.
	StartTimeout time.Duration
	// Session is --continue and --resume (sessions.go).
	Session sessionFlags
	// Trace is --trace: the file that gets every JSON-RPC message.
	Trace string
}

// run is the whole program: it parses args, runs the command and returns
// the exit code. It writes only to s.
func run(ctx context.Context, args []string, s *streams) int {
	stopProfiles := startProfiles(s.Getenv, s.Err)
	defer stopProfiles()
	root := newRootCmd(ctx, s)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	s.notes.flush(s.Err)
	if terr := closeTrace(s); terr != nil && err == nil {
		err = withCode(exitError, terr)
	}
	if err != nil {
		var ce *codeError
		if !errors.As(err, &ce) || ce.err != nil {
			fmt.Fprintf(s.Err, "mcphost: %v\n", err)
		}
	}
	return exitCode(err)
}

func newRootCmd(ctx context.Context, s *streams) *cobra.Command {
	g := &globalOptions{}
	root := &cobra.Command{
		Use:   "mcphost",
		Short: "A terminal host for MCP that decides before it acts",
		Long: `mcphost connects to Model Context Protocol servers, reads the risk hints each
tool declares, and decides before a call runs whether it may run silently, must
be confirmed by a person, or is refused.

Without a configuration it runs against built-in demo servers.`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runOverview(cmd.Context(), g, s)
		},
	}
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })

	f := root.PersistentFlags()
	f.StringVar(&g.ConfigFile, "config", "", "read the configuration from `FILE` (default: $XDG_CONFIG_HOME/mcphost/config.json)")
	f.StringArrayVar(&g.Servers, "server", nil, "add a server: `NAME=COMMAND [ARGS...]` or NAME=URL (repeatable)")
	f.StringArrayVar(&g.Trust, "trust", nil, "believe the annotations of server `NAME` (repeatable)")
	f.StringArrayVar(&g.Allow, "allow", nil, "allow calls matching `RULE`, e.g. 'fs/read_*' (repeatable)")
	f.StringArrayVar(&g.Ask, "ask", nil, "ask before calls matching `RULE` (repeatable)")
	f.StringArrayVar(&g.Deny, "deny", nil, "deny calls matching `RULE` (repeatable)")
	f.StringVar(&g.Model, "model", "", "model as `PROVIDER:MODEL`")
	f.StringVar(&g.BaseURL, "base-url", "", "base `URL` of an OpenAI-compatible endpoint")
	f.BoolVar(&g.AllowPlainHTTP, "allow-plain-http", false, "send the model's API key to a plain-http --base-url that is not this machine")
	f.StringVar(&g.Audit, "audit", "", "write the audit log to `FILE` (default: under $XDG_STATE_HOME/mcphost)")
	f.BoolVar(&g.Demo, "demo", false, "run against the built-in demo servers")
	f.StringVar(&g.Elicit, "elicit", "decline", "answer servers' questions without a person by `MODE`: decline, or defaults (accept the defaults the form gives)")
	f.BoolVar(&g.AllowSampling, "allow-sampling", false, "let servers ask the model for completions without a person (tokens are counted)")
	f.StringArrayVar(&g.Roots, "root", nil, "offer `DIR` to servers as a root (repeatable; none by default)")
	f.StringVar(&g.Trace, "trace", "", "append every JSON-RPC message exchanged with the servers to `FILE` (JSON Lines, secrets redacted; \"-\": standard error)")
	f.DurationVar(&g.StartTimeout, "start-timeout", 0, "let servers start for up to `DURATION` unless their config sets startTimeout (default 30s; 2m for npx, uvx, docker run and other package launchers)")

	root.AddCommand(
		newServersCmd(g, s),
		newToolsCmd(g, s),
		newExplainCmd(g, s),
		newLintCmd(g, s),
		newCallCmd(g, s),
		newAuditCmd(g, s),
		newPinCmd(g, s),
		newRunCmd(g, s),
		newResourcesCmd(g, s),
		newReadCmd(g, s),
		newPromptsCmd(g, s),
		newPromptCmd(g, s),
		newAuthCmd(g, s),
		newTasksCmd(g, s),
		newSessionsCmd(g, s),
		newPingCmd(g, s),
		newMCPCmd(g, s),
		newApproveCmd(g, s),
		newPolicyCmd(g, s),
		newServeCmd(g, s),
	)
	addSessionFlags(root, g)
	strictUsage(root)
	_ = ctx
	return root
}
