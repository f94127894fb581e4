package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/spf13/cobra"
)

type tasksOptions struct {
	JSON   bool
	Cancel string
}

type taskJSON struct {
	Server string `json:"server"`
	client.RunningTask
}

func newTasksCmd(g *globalOptions, s *streams) *cobra.Command {
	o := &tasksOptions{}
	cmd := &cobra.Command{
		Use:   "tasks SERVER",
		Short: "List a server's MCP tasks, or cancel one",
		Long: `List the tasks a server reports (tasks/list) with their status, or, with
--cancel ID, ask it to cancel one (tasks/cancel). Status messages are the
server's words, escaped. Many servers keep tasks per session: a server that
mcphost starts for this command knows only the tasks it kept across
sessions.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			server := args[0]
			st, err := loadSetup(g, s)
			if err != nil {
				return err
			}
			m, err := startOne(cmd.Context(), st, server)
			if err != nil {
				return err
			}
			defer m.Close()
			var out []taskJSON
			if o.Cancel != "" {
				t, err := m.CancelTask(cmd.Context(), server, o.Cancel)
				if err != nil {
					return withCode(exitError, fmt.Errorf("%s", sanitize.Text(err.Error())))
				}
				out = append(out, taskJSON{Server: server, RunningTask: t})
			} else {
				tasks, err := m.Tasks(cmd.Context(), server)
				if err != nil {
					return withCode(exitError, fmt.Errorf("%s", sanitize.Text(err.Error())))
				}
				out = []taskJSON{}
				for _, t := range tasks {
					out = append(out, taskJSON{Server: server, RunningTask: t})
				}
			}
			if o.JSON {
				return writeJSON(s, out)
			}
			tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "SERVER\tTASK\tSTATUS\tMESSAGE (SERVER'S WORDS)")
			for _, t := range out {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", sanitize.Line(t.Server), sanitize.Line(t.ID), sanitize.Line(t.Status),
					dash(sanitize.Line(sanitize.Truncate(t.Message, 80))))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&o.Cancel, "cancel", "", "cancel the task `ID` instead of listing")
	return cmd
}
