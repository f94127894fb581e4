package main

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/spf13/cobra"
)

func newAuditCmd(g *globalOptions, s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Read and check the audit log",
		Long: `mcphost writes an intent record before every tool call runs and an outcome
record after it, each chained to the one before by its hash. The log lives at
$XDG_STATE_HOME/mcphost/audit.jsonl unless --audit names another file.`,
	}
	var n int
	var asJSON bool
	tail := &cobra.Command{
		Use:   "tail",
		Short: "Show the last records",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			recs, err := audit.Tail(auditFile(g, s), n)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(s, recs)
			}
			tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "TIME\tKIND\tCALL\tTOOL\tCLASS\tTIER\tVERDICT\tBY\tSTATUS")
			for _, r := range recs {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Time.Time.Local().Format(time.DateTime), r.Kind, sanitize.Line(r.CallID),
					sanitize.Line(r.Server+"/"+r.Tool), dash(r.Class), dash(r.Tier), dash(r.Verdict), dash(sanitize.Line(r.DecidedBy)), dash(string(r.Status)))
			}
			return tw.Flush()
		},
	}
	tail.Flags().IntVarP(&n, "lines", "n", 20, "how many records")
	tail.Flags().BoolVar(&asJSON, "json", false, "print JSON")

	verify := &cobra.Command{
		Use:   "verify [FILE]",
		Short: "Check that no record was edited, removed or reordered",
		Long: `Check every record of the audit log: that it parses, that its hash is right, and
that it follows the record before it. Exits 1 and names the first line at fault
when the log was tampered with. An intent with no outcome (mcphost stopped while
a call ran) is reported but is not an error.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := auditFile(g, s)
			if len(args) == 1 {
				path = args[0]
			}
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			rep, err := audit.Verify(f)
			if err != nil {
				return err
			}
			for _, oi := range rep.OpenIntents {
				fmt.Fprintf(s.Out, "note: %s\n", sanitize.Line(fmt.Sprint(oi)))
			}
			for _, p := range rep.Problems {
				fmt.Fprintf(s.Out, "%s:%s\n", path, sanitize.Line(fmt.Sprint(p)))
			}
			fmt.Fprintf(s.Out, "%d records (%d intents, %d outcomes), %d open intents, %d problems\n",
				rep.Records, rep.Intents, rep.Outcomes, len(rep.OpenIntents), len(rep.Problems))
			if len(rep.Problems) > 0 {
				return withCode(exitError, fmt.Errorf("%s does not verify: %s", path, strings.TrimSpace(fmt.Sprint(rep.Problems[0]))))
			}
			return nil
		},
	}
	cmd.AddCommand(tail, verify)
	return cmd
}

func auditFile(g *globalOptions, s *streams) string {
	if g.Audit != "" {
		return g.Audit
	}
	return config.StateDir(s.Getenv("XDG_STATE_HOME")) + string(os.PathSeparator) + "audit.jsonl"
}
