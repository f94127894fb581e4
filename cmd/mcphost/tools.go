package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/spf13/cobra"
)

type toolsOptions struct {
	JSON bool
}

func newToolsCmd(g *globalOptions, s *streams) *cobra.Command {
	o := &toolsOptions{}
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List every tool with its declared hints",
		Long: `List every tool of every ready server: server/tool, the title the server gave
(shown in quotes: the server's words, not mcphost's), the four hints exactly
as declared — true, false, or "-" when the server left the hint out — and the
default decision: class (read, additive, destructive, unknown), tier (T0–T3)
and verdict (allow, ask, deny) for a call in an interactive session before
anything was approved. Names are shown with every character outside printable
ASCII escaped (d\u0435lete_all), so a look-alike never passes for the name it
imitates. A tool whose description gives the model orders (another tool,
secrets, keeping something from you, an instruction block) is marked
"!poisoned-description:..." after its verdict; its calls always ask. Below the
table each tool's full description follows, escaped.

With --json, strings are kept exactly as sent (the table escapes control
characters and invisible text), and each tool carries its definition hash.

Exits 1 when a server failed to start.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTools(cmd.Context(), g, o, s)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	return cmd
}

// toolJSON is the stable --json shape of one tool. Fields may be added,
// never renamed.
type toolJSON struct {
	Server         string             `json:"server"`
	Name           string             `json:"name"`
	ModelName      string             `json:"modelName"`
	Title          string             `json:"title,omitempty"`
	Description    string             `json:"description,omitempty"`
	DescriptionCut int                `json:"descriptionCut,omitempty"`
	Annotations    client.Annotations `json:"annotations"`
	DefinitionHash string             `json:"definitionHash"`
	InputSchema    json.RawMessage    `json:"inputSchema"`
	OutputSchema   json.RawMessage    `json:"outputSchema,omitempty"`
	Trusted        bool               `json:"trusted"`
	// ReadsAs is the ASCII name a look-alike name imitates, if it does.
	ReadsAs string `json:"readsAs,omitempty"`
	// DescriptionFlags are the poisoned-description heuristics that fire.
	DescriptionFlags []string `json:"descriptionFlags,omitempty"`

	// The default decision: no arguments, nothing approved yet, in an
	// interactive session; headlessVerdict is the same call in headless mode.
	Class           string   `json:"class"`
	Tier            int      `json:"tier"`
	Verdict         string   `json:"verdict"`
	HeadlessVerdict string   `json:"headlessVerdict"`
	Retry           bool     `json:"retry"`
	Reasons         []string `json:"reasons"`
}

func runTools(ctx context.Context, g *globalOptions, o *toolsOptions, s *streams) error {
	st, err := loadSetup(g, s)
	if err != nil {
		return err
	}
	policy, err := st.policy(g, s)
	if err != nil {
		return err
	}
	m, err := st.startChecked(ctx)
	if err != nil {
		return err
	}
	defer m.Close()
	tools := m.Tools()
	names := client.BuildNames(tools)

	if o.JSON {
		out := make([]toolJSON, 0, len(tools))
		for _, t := range tools {
			d := st.decideDefault(policy, m, t, decide.Interactive)
			hd := st.decideDefault(policy, m, t, decide.Headless)
			out = append(out, toolJSON{
				Server: t.Server, Name: t.Name, ModelName: names.Model(t), Title: t.Title,
				Description: t.Description, DescriptionCut: t.DescriptionCut,
				Annotations: t.Annotations, DefinitionHash: t.Hash, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema,
				Trusted: st.trusted[t.Server], ReadsAs: readsAs(t.Name), DescriptionFlags: decide.PoisonFlags(t.Description),
				Class: d.Class.String(), Tier: int(d.Tier), Verdict: d.Verdict.String(), HeadlessVerdict: hd.Verdict.String(),
				Retry: d.Retry, Reasons: reasonCodes(d),
			})
		}
		if err := writeJSON(s, out); err != nil {
			return err
		}
	} else {
		untrusted := map[string]bool{}
		tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "TOOL\tTITLE (SERVER'S WORDS)\tREAD-ONLY\tDESTRUCTIVE\tIDEMPOTENT\tOPEN-WORLD\tCLASS\tTIER\tVERDICT\tSERVER")
		for _, t := range tools {
			title := "-"
			if t.Title != "" {
				title = "“" + sanitize.Line(sanitize.Truncate(t.Title, 60)) + "”"
			}
			a := t.Annotations
			hints := fmt.Sprintf("%s\t%s\t%s\t%s", hint(a.ReadOnly), hint(a.Destructive), hint(a.Idempotent), hint(a.OpenWorld))
			switch {
			case !a.Present:
				hints = "no annotations\t\t\t"
			case a.Malformed != "":
				hints = "malformed annotations\t\t\t"
			}
			d := st.decideDefault(policy, m, t, decide.Interactive)
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\tT%d\t%s\t%s%s\n", sanitize.Name(t.Ref()), title, hints, d.Class, d.Tier, d.Verdict, trustWord(st.trusted[t.Server]), poisonMark(t))
			if !st.trusted[t.Server] {
				untrusted[t.Server] = true
			}
		}
		tw.Flush()
		fmt.Fprintln(s.Out, "\nDESCRIPTIONS (THE SERVERS' WORDS)")
		for _, t := range tools {
			fmt.Fprintf(s.Out, "%s%s\n%s\n", sanitize.Name(t.Ref()), nameNote(t.Name), indentText(describe(t), "    "))
		}
		fmt.Fprintln(s.Err, `"-": the server left the hint out. CLASS, TIER and VERDICT are the default decision in an interactive session; run mcphost explain SERVER/TOOL for the reasons.`)
		if n := len(untrusted); n > 0 {
			fmt.Fprintf(s.Err, "%s: its hints are not believed, so its tools count as the worst case; if you trust it, mark it with --trust %s or \"trust\": true in its config entry.\n",
				untrustedList(untrusted), sanitize.Name(slices.Sorted(maps.Keys(untrusted))[0]))
		}
	}
	return startFailures(st, m)
}

func hint(b *bool) string {
	switch {
	case b == nil:
		return "-"
	case *b:
		return "true"
	default:
		return "false"
	}
}

// startFailures reports servers that failed to start, each with why, in
// a stderr-bound error.
func startFailures(st *setup, m *client.Manager) error {
	var failed []string
	for _, ss := range m.Servers() {
		if ss.State == client.StateFailed {
			failed = append(failed, sanitize.Line(ss.Name)+": "+indent(indent(sanitize.Text(ss.LastError))))
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return withCode(exitError, fmt.Errorf("server(s) failed to start:\n  %s", strings.Join(failed, "\n  ")))
}

// readsAs is the ASCII name a look-alike name imitates, or "".
func readsAs(name string) string {
	r, _ := decide.ReadsAs(name)
	return r
}

// nameNote says what a name with characters outside ASCII looks like,
// for a person who sees it escaped.
func nameNote(name string) string {
	if r, ok := decide.ReadsAs(name); ok {
		return fmt.Sprintf("  (look-alike letters: reads as %q)", r)
	}
	for i := 0; i < len(name); i++ {
		if name[i] >= 0x80 {
			return "  (non-ASCII name, shown escaped)"
		}
	}
	return ""
}

// poisonMark is the mark at the end of a tools line for a tool whose description
// gives the model orders; "" for an ordinary one.
func poisonMark(t *client.Tool) string {
	flags := decide.PoisonFlags(t.Description)
	if flags == nil {
		return ""
	}
	return " !" + decide.CodePoisonedPrefix + strings.Join(flags, ",")
}

// describe is a tool's whole description, escaped, with a note when the
// client cut it.
func describe(t *client.Tool) string {
	if t.Description == "" {
		return "(no description)"
	}
	d := sanitize.Text(t.Description)
	if t.DescriptionCut > 0 {
		d += fmt.Sprintf("\n[mcphost cut %d bytes from this description]", t.DescriptionCut)
	}
	return d
}

func indentText(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

// trustWord is the SERVER column of tools: whether the server's hints are
// believed.
func trustWord(trusted bool) string {
	if trusted {
		return "trusted"
	}
	return "untrusted"
}

// untrustedList names the untrusted servers for tools' footnote.
func untrustedList(set map[string]bool) string {
	names := slices.Sorted(maps.Keys(set))
	for i, n := range names {
		names[i] = sanitize.Name(n)
	}
	if len(names) == 1 {
		return "untrusted server " + names[0]
	}
	return "untrusted servers " + strings.Join(names, ", ")
}
