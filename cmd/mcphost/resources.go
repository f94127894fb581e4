package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
)

type listOptions struct{ JSON bool }

type resourceJSON struct {
	Server string `json:"server"`
	*mcp.Resource
}

type promptJSON struct {
	Server string `json:"server"`
	*mcp.Prompt
}

func newResourcesCmd(g *globalOptions, s *streams) *cobra.Command {
	o := &listOptions{}
	cmd := &cobra.Command{
		Use:   "resources",
		Short: "List every server's resources",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			list := func(ctx context.Context, m *client.Manager, name string) ([]resourceJSON, error) {
				rs, err := m.Resources(ctx, name)
				out := make([]resourceJSON, len(rs))
				for i, r := range rs {
					out[i] = resourceJSON{Server: name, Resource: r}
				}
				return out, err
			}
			return listEvery(cmd, g, s, o, "resources", list, "SERVER\tURI\tNAME (SERVER'S WORDS)\tTYPE", func(r resourceJSON) string {
				return fmt.Sprintf("%s\t%s\t%s\t%s", sanitize.Line(r.Server), sanitize.Line(r.URI),
					sanitize.Line(sanitize.Truncate(r.Name, 60)), dash(sanitize.Line(r.MIMEType)))
			})
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	return cmd
}

func newReadCmd(g *globalOptions, s *streams) *cobra.Command {
	o := &listOptions{}
	var yes bool
	cmd := &cobra.Command{
		Use:   "read SERVER URI",
		Short: "Read one resource of a server",
		Long: `Read one resource and print its text contents (escaped for the terminal) or,
for binary contents, their type and size. Resource contents are the server's
data: untrusted, like a tool result.

The read passes the gate as a call of SERVER/resources/read with {"uri": URI}:
decided by the same rules and trust, audited, and refused (exit 3) when it
needs approval, as an untrusted server's read does, unless --yes approves it
once.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := loadSetup(g, s)
			if err != nil {
				return err
			}
			sess, err := st.gatedOne(cmd.Context(), g, s, args[0], yes, nil)
			if err != nil {
				return err
			}
			defer sess.Close()
			res, r := sess.gate.ReadResource(cmd.Context(), args[0], args[1])
			if r.Status != host.StatusSuccess {
				msg := callMessage(r)
				if r.Status != host.StatusBlocked && r.Err != nil {
					msg += " (" + r.Err.Error() + ")"
				}
				return withCode(exitFor(r), fmt.Errorf("read %s: %s", sanitize.Line(args[1]), sanitize.Text(msg)))
			}
			if o.JSON {
				return writeJSON(s, res)
			}
			for _, c := range res.Contents {
				if c.Text != "" || c.Blob == nil {
					fmt.Fprintln(s.Out, sanitize.Text(c.Text))
				} else {
					fmt.Fprintf(s.Out, "[%s, %s]\n", dash(sanitize.Line(c.MIMEType)), nounCount(len(c.Blob), "byte"))
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&yes, "yes", false, "approve this one read if it needs approval (never overrides a deny rule)")
	return cmd
}

func newPromptsCmd(g *globalOptions, s *streams) *cobra.Command {
	o := &listOptions{}
	cmd := &cobra.Command{
		Use:   "prompts",
		Short: "List every server's prompts",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			list := func(ctx context.Context, m *client.Manager, name string) ([]promptJSON, error) {
				ps, err := m.Prompts(ctx, name)
				out := make([]promptJSON, len(ps))
				for i, p := range ps {
					out[i] = promptJSON{Server: name, Prompt: p}
				}
				return out, err
			}
			return listEvery(cmd, g, s, o, "prompts", list, "PROMPT\tARGUMENTS\tDESCRIPTION (SERVER'S WORDS)", func(p promptJSON) string {
				var names []string
				for _, a := range p.Arguments {
					n := a.Name
					if a.Required {
						n += "*"
					}
					names = append(names, n)
				}
				return fmt.Sprintf("%s/%s\t%s\t%s", sanitize.Line(p.Server), sanitize.Line(p.Name),
					dash(sanitize.Line(strings.Join(names, ","))), dash(sanitize.Line(sanitize.Truncate(p.Description, 60))))
			})
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	return cmd
}

func newPromptCmd(g *globalOptions, s *streams) *cobra.Command {
	o := &listOptions{}
	var yes bool
	cmd := &cobra.Command{
		Use:   "prompt SERVER/NAME ['{\"arg\": \"value\"}']",
		Short: "Get one prompt with its arguments filled in",
		Long: `Get one prompt with its arguments filled in and print its messages (escaped
for the terminal). A prompt's messages are the server's words: untrusted,
like a tool result.

The get passes the gate as a call of SERVER/prompts/get, as a resource read
passes it as SERVER/resources/read: decided by the same rules and trust,
audited, and refused (exit 3) when it needs approval, as an untrusted
server's does, unless --yes approves it once.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			server, name, err := splitRef(args[0])
			if err != nil {
				return err
			}
			var pargs map[string]string
			if len(args) == 2 {
				if err := json.Unmarshal([]byte(args[1]), &pargs); err != nil {
					return usageError(fmt.Errorf("prompt arguments must be a JSON object of strings: %v", err))
				}
			}
			st, err := loadSetup(g, s)
			if err != nil {
				return err
			}
			sess, err := st.gatedOne(cmd.Context(), g, s, server, yes, func(m *client.Manager) error {
				return checkPromptArgs(cmd.Context(), m, server, name, pargs)
			})
			if err != nil {
				return err
			}
			defer sess.Close()
			res, r := sess.gate.GetPrompt(cmd.Context(), server, name, pargs)
			if r.Status != host.StatusSuccess {
				msg := callMessage(r)
				if r.Status != host.StatusBlocked && r.Err != nil {
					msg += " (" + r.Err.Error() + ")"
				}
				return withCode(exitFor(r), fmt.Errorf("prompt %s: %s", sanitize.Line(args[0]), sanitize.Text(msg)))
			}
			if o.JSON {
				return writeJSON(s, res)
			}
			for _, msg := range res.Messages {
				text := ""
				if tc, ok := msg.Content.(*mcp.TextContent); ok {
					text = tc.Text
				} else {
					b, _ := json.Marshal(msg.Content)
					text = string(b)
				}
				fmt.Fprintf(s.Out, "[%s]\n%s\n", msg.Role, sanitize.Text(text))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&yes, "yes", false, "approve this one get if it needs approval (never overrides a deny rule)")
	return cmd
}

// listEvery starts every server, asks each for its items with list, and
// prints them as JSON (--json) or as a table: header, then one line per
// item. A server whose listing fails, or that did not start, makes the
// command fail after printing what the others listed.
func listEvery[T any](cmd *cobra.Command, g *globalOptions, s *streams, o *listOptions, what string,
	list func(ctx context.Context, m *client.Manager, server string) ([]T, error), header string, line func(T) string) error {
	st, err := loadSetup(g, s)
	if err != nil {
		return err
	}
	m, err := st.startChecked(cmd.Context())
	if err != nil {
		return err
	}
	defer m.Close()
	out := []T{}
	var errs []string
	for _, ss := range m.Servers() {
		items, err := list(cmd.Context(), m, ss.Name)
		out = append(out, items...)
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	if o.JSON {
		if err := writeJSON(s, out); err != nil {
			return err
		}
	} else {
		if len(out) == 0 && len(errs) == 0 {
			// A bare header reads as a failure; say what was asked.
			fmt.Fprintf(s.Err, "mcphost: no %s: asked %s\n", what, askedServers(m))
		} else {
			tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, header)
			for _, it := range out {
				fmt.Fprintln(tw, line(it))
			}
			tw.Flush()
		}
	}
	return listFailures(st, m, errs)
}

// listFailures reports listing errors, then servers that failed to start.
func listFailures(st *setup, m *client.Manager, errs []string) error {
	if len(errs) > 0 {
		return withCode(exitError, fmt.Errorf("%s", sanitize.Text(strings.Join(errs, "; "))))
	}
	return startFailures(st, m)
}

// askedServers names the ready servers a listing asked, for the line that
// says the listing is empty.
func askedServers(m *client.Manager) string {
	var names []string
	for _, ss := range m.Servers() {
		if ss.State == client.StateReady {
			names = append(names, sanitize.Name(ss.Name))
		}
	}
	if len(names) == 0 {
		return "no server (none is ready)"
	}
	return strings.Join(names, ", ")
}

// checkPromptArgs checks a prompt's arguments against what the server lists
// for it, so that a missing or misspelt argument is a usage error said
// here, not the server's -32602; so is a server that offers no prompts. A
// server whose listing fails is left to judge for itself.
func checkPromptArgs(ctx context.Context, m *client.Manager, server, name string, args map[string]string) error {
	list, err := m.Prompts(ctx, server)
	if err != nil {
		return nil
	}
	if len(list) == 0 {
		return usageError(fmt.Errorf("%s offers no prompts", sanitize.Name(server)))
	}
	var p *mcp.Prompt
	var names []string
	for _, q := range list {
		names = append(names, sanitize.Name(q.Name))
		if q.Name == name {
			p = q
		}
	}
	if p == nil {
		return usageError(fmt.Errorf("%s has no prompt %s; its prompts: %s", sanitize.Name(server), sanitize.Name(name), strings.Join(names, ", ")))
	}
	known := map[string]bool{}
	var missing, all []string
	for _, a := range p.Arguments {
		known[a.Name] = true
		all = append(all, sanitize.Name(a.Name))
		if _, ok := args[a.Name]; a.Required && !ok {
			missing = append(missing, sanitize.Name(a.Name))
		}
	}
	var unknown []string
	for k := range args {
		if !known[k] {
			unknown = append(unknown, sanitize.Name(k))
		}
	}
	sort.Strings(unknown)
	ref := sanitize.Name(server + "/" + name)
	switch {
	case len(unknown) > 0 && len(all) == 0:
		return usageError(fmt.Errorf("prompt %s takes no arguments; got %s", ref, strings.Join(unknown, ", ")))
	case len(unknown) > 0:
		return usageError(fmt.Errorf("prompt %s has no argument %s; its arguments: %s", ref, strings.Join(unknown, ", "), strings.Join(all, ", ")))
	case len(missing) > 0:
		example := map[string]string{}
		for _, a := range missing {
			example[a] = "…"
		}
		b, _ := json.Marshal(example)
		them := "them"
		if len(missing) == 1 {
			them = "it"
		}
		return usageError(fmt.Errorf("prompt %s needs %s: pass %s as '%s'", ref, strings.Join(missing, ", "), them, b))
	}
	return nil
}
