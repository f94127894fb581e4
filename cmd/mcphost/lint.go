package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/spf13/cobra"
)

type lintOptions struct {
	JSON   bool
	Strict bool
	// Server, if set, is the one server linted (only it starts).
	Server string
}

func newLintCmd(g *globalOptions, s *streams) *cobra.Command {
	o := &lintOptions{}
	cmd := &cobra.Command{
		Use:   "lint [SERVER]",
		Short: "Check the annotations of every configured server",
		Long: `Check every tool of every configured server, for server authors: tools with no
annotations, hints left out that default to the worst case, contradictions, a
name that says the tool writes on a read-only tool, idempotent claims on tools
that look additive (unless the tool's description itself says that repeating
a call has no further effect), openWorldHint unset, duplicate names, names with characters
outside ASCII (shown escaped; an error when they imitate ASCII letters, as a
Cyrillic е does an e),
descriptions that give the model orders (poisoned-description), and malformed
entries the client had to drop or degrade.

Exits 1 when there is an error-level finding (or a server failed to start), so
it can fail a build when a tool ships unclassified or misclassified. With
--strict, a hint left out (missing-hints, open-world-unset) is an error too: a
tool whose verdict rests on a spec default fails the build, so a server's CI can
require complete annotations.

With SERVER, only that server starts and is linted. With --server, only the
servers given with --server are linted, not the configuration's: a server's
CI lints just the server it builds.`,
		Example: `  mcphost lint --server 'mine=./my-server --stdio'
  mcphost lint tasks --strict`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Server = args[0]
			}
			return runLint(cmd.Context(), g, o, s)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&o.Strict, "strict", false, "treat hints left out (a verdict resting on a spec default) as errors")
	return cmd
}

type findingJSON struct {
	Severity string `json:"severity"`
	Server   string `json:"server"`
	Tool     string `json:"tool,omitempty"`
	Code     string `json:"code"`
	Message  string `json:"message"`
}

type lintJSON struct {
	Findings []findingJSON `json:"findings"`
	Errors   int           `json:"errors"`
	Warnings int           `json:"warnings"`
	Infos    int           `json:"infos"`
}

var severityRank = map[string]int{client.SevError: 0, client.SevWarning: 1, client.SevInfo: 2}

func runLint(ctx context.Context, g *globalOptions, o *lintOptions, s *streams) error {
	st, err := loadSetup(g, s)
	if err != nil {
		return err
	}
	if aim := lintAim(o, st); len(aim) > 0 {
		if err := st.keepOnly(aim...); err != nil {
			return err
		}
	}
	m, err := st.startChecked(ctx)
	if err != nil {
		return err
	}
	defer m.Close()

	var fs []findingJSON
	raised := 0 // findings --strict made errors
	for _, ss := range m.Servers() {
		if ss.State != client.StateReady {
			fs = append(fs, findingJSON{Severity: client.SevError, Server: ss.Name, Code: "server-failed",
				Message: "the server did not start, so its tools were not checked: " + ss.LastError})
		}
	}
	for _, f := range m.Findings() {
		fs = append(fs, findingJSON{Severity: f.Severity, Server: f.Server, Tool: f.Tool, Code: f.Code, Message: f.Message})
	}
	seen := map[[3]string]bool{}
	for _, f := range fs {
		seen[[3]string{f.Server, f.Tool, f.Code}] = true
	}
	for _, f := range decide.Lint(host.LintTools(m.Tools())) {
		if seen[[3]string{f.Server, f.Tool, f.Code}] {
			continue // the client already reported it, in its own words
		}
		sev := f.Severity.String()
		if o.Strict && decide.RestsOnDefault(f.Code) && sev != client.SevError {
			sev = client.SevError // --strict: a hint left out fails the build
			raised++
		}
		fs = append(fs, findingJSON{Severity: sev, Server: f.Server, Tool: f.Tool, Code: f.Code, Message: f.Message})
	}
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Server != b.Server {
			return a.Server < b.Server
		}
		if a.Tool != b.Tool {
			return a.Tool < b.Tool
		}
		return severityRank[a.Severity] < severityRank[b.Severity]
	})
	out := lintJSON{Findings: fs}
	if out.Findings == nil {
		out.Findings = []findingJSON{}
	}
	for _, f := range fs {
		switch f.Severity {
		case client.SevError:
			out.Errors++
		case client.SevWarning:
			out.Warnings++
		default:
			out.Infos++
		}
	}

	if o.JSON {
		if err := writeJSON(s, out); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
		for _, f := range fs {
			where := f.Server
			if f.Tool != "" {
				where += "/" + f.Tool
			}
			// A message may carry the server's stderr on its own lines
			// (a server that failed to start): the first line in the
			// table, the rest indented under it, each escaped.
			first, rest, _ := strings.Cut(f.Message, "\n")
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f.Severity, sanitize.Name(where), f.Code, sanitize.Line(first))
			for _, l := range strings.Split(rest, "\n") {
				if strings.TrimSpace(l) != "" {
					fmt.Fprintf(tw, "\t\t\t  %s\n", sanitize.Line(l))
				}
			}
		}
		tw.Flush()
		fmt.Fprintf(s.Err, "%s checked: %s, %s, %s%s\n", nounCount(len(m.Tools()), "tool"),
			nounCount(out.Errors, "error"), nounCount(out.Warnings, "warning"), nounCount(out.Infos, "note"), strictNote(o.Strict, raised))
	}
	if out.Errors > 0 {
		return withCode(exitError, nil)
	}
	return nil
}

// strictNote says in lint's summary what --strict changed, so a strict run
// that looks like a plain one still says it was strict.
func strictNote(strict bool, raised int) string {
	switch {
	case !strict:
		return ""
	case raised == 0:
		return " (--strict: no verdict rests on a spec default)"
	default:
		return fmt.Sprintf(" (--strict: %s resting on a spec default counted as errors)", nounCount(raised, "finding"))
	}
}

// lintAim is the servers lint checks when it is aimed: SERVER, else the
// servers given with --server (never the configuration's beside them);
// nil for every server.
func lintAim(o *lintOptions, st *setup) []string {
	if o.Server != "" {
		return []string{o.Server}
	}
	var flagged []string
	for _, srv := range st.cfg.Servers {
		if srv.Source == config.SourceFlag {
			flagged = append(flagged, srv.Name)
		}
	}
	return flagged
}
