package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/charmbracelet/x/ansi"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/spf13/cobra"
)

type toolsOptions struct {
	JSON bool
	// Server, if set, is the one server whose tools are listed (only it
	// starts).
	Server string
}

func newToolsCmd(g *globalOptions, s *streams) *cobra.Command {
	o := &toolsOptions{}
	cmd := &cobra.Command{
		Use:   "tools [SERVER]",
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

With SERVER, only that server starts and only its tools are listed.

On a terminal (or with $COLUMNS set) the table fits its width: when every
column does not fit, the four hints share one HINTS column (readOnly,
destructive, idempotent, openWorld: y true, n false, - left out) and the
title is cut, or moves to the descriptions when there is no room for it.
Names are never cut. Descriptions are wrapped to the width; piped output
(without $COLUMNS) keeps the whole table and each description line whole,
for scripts.

With --json, strings are kept exactly as sent (the table escapes control
characters and invisible text), and each tool carries its definition hash.

Exits 1 when a server failed to start; when every server failed, there is no
table, only each server's failure.`,
		Example: `  mcphost tools
  mcphost tools tasks --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Server = args[0]
			}
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
	if o.Server != "" {
		if err := st.keepOnly(o.Server); err != nil {
			return err
		}
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
		if err := allFailed(m); err != nil {
			return err // an empty table would look like servers without tools
		}
		untrusted := map[string]bool{}
		rows := make([]toolRow, 0, len(tools))
		for _, t := range tools {
			rows = append(rows, toolRow{t: t, d: st.decideDefault(policy, m, t, decide.Interactive), trusted: st.trusted[t.Server]})
			if !st.trusted[t.Server] {
				untrusted[t.Server] = true
			}
		}
		width := s.columns()
		table, narrowed, titled := toolsTable(rows, width)
		fmt.Fprint(s.Out, table)
		// note writes a footnote to stderr, wrapped at word breaks when
		// the width is known.
		note := func(text string) {
			if width > 0 {
				text = ansi.Wordwrap(text, width, "")
			}
			fmt.Fprintln(s.Err, text)
		}
		fmt.Fprintln(s.Out, "\nDESCRIPTIONS (THE SERVERS' WORDS)")
		for _, r := range rows {
			head := sanitize.Name(r.t.Ref()) + nameNote(r.t.Name)
			if !titled && r.t.Title != "" {
				head += "  " + toolTitle(r.t)
			}
			desc := describe(r.t)
			if width > 0 {
				// Fitted to a screen; piped output keeps each line of a
				// description whole, for the scripts that read it.
				desc = ansi.Wrap(desc, max(width-4, 20), "")
			}
			fmt.Fprintf(s.Out, "%s\n%s\n", head, indentText(desc, "    "))
		}
		note(`"-": the server left the hint out. CLASS, TIER and VERDICT are the default decision in an interactive session; run mcphost explain SERVER/TOOL for the reasons.`)
		if narrowed {
			note(`HINTS are readOnly, destructive, idempotent and openWorld in that order: y true, n false, - left out; "none": no annotations.`)
		}
		if n := len(untrusted); n > 0 {
			note(fmt.Sprintf("%s: its hints are not believed, so its tools count as the worst case; if you trust it, mark it with --trust %s or \"trust\": true in its config entry.",
				untrustedList(untrusted), sanitize.Name(slices.Sorted(maps.Keys(untrusted))[0])))
		}
	}
	return startFailures(st, m)
}

// toolRow is one line of tools' table: a tool and its default decision.
type toolRow struct {
	t       *client.Tool
	d       decide.Decision
	trusted bool
}

// toolTitle is a tool's title as the table shows it: in quotes (the
// server's words), escaped, cut to 60 bytes; "-" for none.
func toolTitle(t *client.Tool) string {
	if t.Title == "" {
		return "-"
	}
	return "“" + sanitize.Line(sanitize.Truncate(t.Title, 60)) + "”"
}

// toolsTable is tools' table: every column, when it fits width (or width
// is 0, output that is not fitted); else the narrow form, with the four
// hints in one HINTS column and the title only when room is left for it
// (narrowed reports the narrow form, titled whether the title is there).
// Names are never cut: a cut name could pass for another.
func toolsTable(rows []toolRow, width int) (table string, narrowed, titled bool) {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tTITLE (SERVER'S WORDS)\tREAD-ONLY\tDESTRUCTIVE\tIDEMPOTENT\tOPEN-WORLD\tCLASS\tTIER\tVERDICT\tSERVER")
	for _, r := range rows {
		a := r.t.Annotations
		hints := fmt.Sprintf("%s\t%s\t%s\t%s", hint(a.ReadOnly), hint(a.Destructive), hint(a.Idempotent), hint(a.OpenWorld))
		switch {
		case !a.Present:
			hints = "no annotations\t\t\t"
		case a.Malformed != "":
			hints = "malformed annotations\t\t\t"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\tT%d\t%s\t%s%s\n", sanitize.Name(r.t.Ref()), toolTitle(r.t), hints, r.d.Class, r.d.Tier, r.d.Verdict, trustWord(r.trusted), poisonMark(r.t))
	}
	tw.Flush()
	if width <= 0 || widest(b.String()) <= width {
		return b.String(), false, true
	}

	// The narrow form: the columns but the title take what they take; the
	// title gets the rest, if that is worth showing.
	narrow := func(titleMax int) string {
		var b strings.Builder
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		head := "TOOL\tHINTS\tCLASS\tTIER\tVERDICT\tSERVER"
		if titleMax > 0 {
			head = "TOOL\tTITLE\tHINTS\tCLASS\tTIER\tVERDICT\tSERVER"
		}
		fmt.Fprintln(tw, head)
		for _, r := range rows {
			title := ""
			if titleMax > 0 {
				title = ansi.Truncate(toolTitle(r.t), titleMax, "…") + "\t"
			}
			fmt.Fprintf(tw, "%s\t%s%s\t%s\tT%d\t%s\t%s%s\n", sanitize.Name(r.t.Ref()), title, hintCode(r.t.Annotations), r.d.Class, r.d.Tier, r.d.Verdict, trustWord(r.trusted), poisonMark(r.t))
		}
		tw.Flush()
		return b.String()
	}
	bare := narrow(0)
	if room := width - widest(bare) - 2; room >= 12 {
		return narrow(room), true, true
	}
	return bare, true, false
}

// hintCode is the narrow table's HINTS: readOnly, destructive, idempotent,
// openWorld, each y (true), n (false) or - (left out).
func hintCode(a client.Annotations) string {
	switch {
	case !a.Present:
		return "none"
	case a.Malformed != "":
		return "malformed"
	}
	var b strings.Builder
	for _, h := range []*bool{a.ReadOnly, a.Destructive, a.Idempotent, a.OpenWorld} {
		switch {
		case h == nil:
			b.WriteByte('-')
		case *h:
			b.WriteByte('y')
		default:
			b.WriteByte('n')
		}
	}
	return b.String()
}

// widest is the width in columns of the widest line of s.
func widest(s string) int {
	w := 0
	for _, l := range strings.Split(s, "\n") {
		w = max(w, ansi.StringWidth(l))
	}
	return w
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

// allFailed is tools' error when every server failed to start, so there
// is nothing to list: each server with why. nil when any started, or
// when there are none.
func allFailed(m *client.Manager) error {
	ss := m.Servers()
	for _, s := range ss {
		if s.State != client.StateFailed {
			return nil
		}
	}
	if len(ss) == 0 {
		return nil
	}
	return withCode(exitError, fmt.Errorf("no tools to list: %s failed to start:\n  %s", everyServer(len(ss)), strings.Join(failureLines(m), "\n  ")))
}

// everyServer is "the server" or "every server (N)".
func everyServer(n int) string {
	if n == 1 {
		return "the server"
	}
	return fmt.Sprintf("every server (%d)", n)
}

// failureLines are the failed servers, each with why, escaped.
func failureLines(m *client.Manager) []string {
	var failed []string
	for _, ss := range m.Servers() {
		if ss.State == client.StateFailed {
			failed = append(failed, sanitize.Line(ss.Name)+": "+indent(serverFailure(ss)))
		}
	}
	return failed
}

// startFailures reports servers that failed to start, each with why, in
// a stderr-bound error.
func startFailures(st *setup, m *client.Manager) error {
	failed := failureLines(m)
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
