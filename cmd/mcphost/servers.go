package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/spf13/cobra"
)

type serversOptions struct {
	JSON bool
}

func newServersCmd(g *globalOptions, s *streams) *cobra.Command {
	o := &serversOptions{}
	cmd := &cobra.Command{
		Use:   "servers",
		Short: "Start every configured server and report its state",
		Long: `Start every configured server and report, for each: transport, state, protocol
version, number of tools and the last error with the tail of its stderr.

Exits 1 when a server failed to start.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServers(cmd.Context(), g, o, s)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	return cmd
}

// serverJSON is the stable --json shape of one server.
type serverJSON struct {
	Name            string   `json:"name"`
	Transport       string   `json:"transport"`
	URL             string   `json:"url,omitempty"` // query values and userinfo redacted
	State           string   `json:"state"`
	Trusted         bool     `json:"trusted"`
	ProtocolVersion string   `json:"protocolVersion,omitempty"`
	ServerName      string   `json:"serverName,omitempty"`
	ServerVersion   string   `json:"serverVersion,omitempty"`
	Tools           int      `json:"tools"`
	Restarts        int      `json:"restarts"`
	LastError       string   `json:"lastError,omitempty"`
	StderrTail      string   `json:"stderrTail,omitempty"`
	Identity        string   `json:"identity,omitempty"`
	Log             []string `json:"log,omitempty"`
	// Tasks is the server's tasks capability as it declared it.
	Tasks *client.TasksCapability `json:"tasksCapability,omitempty"`
	// Entry is, for a server from a project file, every field of its entry
	// that a consent to it covers, as the consent shows them.
	Entry []entryFieldJSON `json:"entry,omitempty"`
}

// entryFieldJSON is one field of a project server's entry.
type entryFieldJSON struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// writeEntry lists, one a line, every field of the project server srv's
// entry that a consent to it covers (secrets hidden: values read from the
// environment as written, see config.Server.Shown, and see logged).
func writeEntry(w io.Writer, srv config.Server) {
	srv = srv.Shown()
	for _, f := range logged(srv, entryFields(srv)) {
		fmt.Fprintf(w, "  %s: %s\n", f.Name, sanitize.Line(f.Value))
	}
}

func runServers(ctx context.Context, g *globalOptions, o *serversOptions, s *streams) error {
	st, err := loadSetup(g, s)
	if err != nil {
		return err
	}
	m := st.start(ctx)
	defer m.Close()
	statuses := st.statuses(m)

	failed := 0
	for _, ss := range statuses {
		if ss.State == client.StateFailed {
			failed++
		}
	}
	if o.JSON {
		out := make([]serverJSON, 0, len(statuses))
		for _, ss := range statuses {
			var url string
			if srv, ok := st.cfg.Server(ss.Name); ok && srv.URL != "" {
				url = client.RedactURL(srv.Shown().URL)
			}
			sj := serverJSON{
				Name: ss.Name, Transport: ss.Transport, URL: url, State: string(ss.State), Trusted: st.trusted[ss.Name],
				ProtocolVersion: ss.ProtocolVersion, ServerName: ss.ServerName, ServerVersion: ss.ServerVersion,
				Tools: ss.Tools, Restarts: ss.Restarts, LastError: ss.LastError, StderrTail: ss.StderrTail, Identity: ss.Identity, Log: ss.Log,
				Tasks: ss.Tasks,
			}
			if srv, ok := st.cfg.Server(ss.Name); ok && srv.Source == config.SourceProject {
				srv = srv.Shown()
				for _, f := range logged(srv, entryFields(srv)) {
					sj.Entry = append(sj.Entry, entryFieldJSON{Name: f.Name, Value: f.Value})
				}
			}
			out = append(out, sj)
		}
		if err := writeJSON(s, out); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "SERVER\tTRANSPORT\tSTATE\tTRUST\tPROTOCOL\tTOOLS\tSERVER INFO")
		for _, ss := range statuses {
			info := strings.TrimSpace(ss.ServerName + " " + ss.ServerVersion)
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", sanitize.Line(ss.Name), ss.Transport, ss.State,
				yesNo(st.trusted[ss.Name], "trusted", "-"), dash(ss.ProtocolVersion), toolCount(ss), dash(sanitize.Line(info)))
		}
		tw.Flush()
		for _, ss := range statuses {
			if srv, ok := st.cfg.Server(ss.Name); ok && srv.Source == config.SourceProject {
				fmt.Fprintf(s.Out, "\n%s, from the project file %s (a consent to it covers every field):\n", sanitize.Line(ss.Name), sanitize.Line(srv.File))
				writeEntry(s.Out, srv)
			}
		}
		for _, ss := range statuses {
			if len(ss.Log) > 0 {
				fmt.Fprintf(s.Out, "\n%s log:\n", sanitize.Line(ss.Name))
				for _, l := range ss.Log {
					fmt.Fprintf(s.Out, "  %s\n", sanitize.Line(l))
				}
			}
			if ss.LastError == "" && ss.StderrTail == "" {
				continue
			}
			fmt.Fprintf(s.Out, "\n%s: %s\n", sanitize.Line(ss.Name), serverFailure(ss))
		}
	}
	if err := st.loginNeeded(m); err != nil {
		return err
	}
	if failed > 0 {
		return withCode(exitError, fmt.Errorf("%d of %s failed to start", failed, nounCount(len(statuses), "server")))
	}
	return nil
}

func toolCount(ss client.Status) string {
	if ss.State != client.StateReady {
		return "-"
	}
	return strconv.Itoa(ss.Tools)
}

func sortStatuses(ss []client.Status) {
	sort.Slice(ss, func(i, j int) bool { return ss[i].Name < ss[j].Name })
}

func writeJSON(s *streams, v any) error {
	enc := json.NewEncoder(s.Out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func yesNo(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n  ") }

// serverFailure is how a command shows why a server is not ready: what
// happened (how its process ended first, when it did), then the tail of
// its stderr once (the client folds a package launcher's notices), every
// line escaped, the lines after the first indented by two spaces.
func serverFailure(ss client.Status) string {
	why, tail, _ := strings.Cut(ss.LastError, "\nstderr:\n")
	if ss.StderrTail != "" {
		tail = ss.StderrTail // the longer tail: LastError keeps its last lines only
	}
	out := indent(sanitize.Text(why))
	if tail != "" {
		out += "\n  stderr:\n    " + strings.ReplaceAll(sanitize.Text(tail), "\n", "\n    ")
	}
	return out
}
