package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/spf13/cobra"
)

type explainOptions struct {
	Ref      string // SERVER/TOOL
	RawArgs  string // ARGS, a JSON object or ""
	JSON     bool
	Headless bool
}

func newExplainCmd(g *globalOptions, s *streams) *cobra.Command {
	o := &explainOptions{}
	cmd := &cobra.Command{
		Use:   "explain SERVER/TOOL [ARGS]",
		Short: "Show the decision for one call and every reason behind it",
		Long: `Show what mcphost would decide for one call — allow, ask or deny — in this
configuration, with its class and tier, every reason in plain words, the rule
that matched, and what would change the decision, followed by the tool's full
description (escaped). ARGS is the call's arguments as a JSON object; without it
the call has none. Nothing is executed.

Only the named server is started.`,
		Example: `  mcphost explain tasks/delete_task '{"id":"T-1"}'
  mcphost explain --headless fs/write_file '{"path":"notes.txt","content":"hi"}'`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Ref, o.RawArgs = args[0], ""
			if len(args) == 2 {
				o.RawArgs = args[1]
			}
			return runExplain(cmd.Context(), g, o, s)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&o.Headless, "headless", false, "decide as a headless run would (asks become denials)")
	return cmd
}

// splitRef parses SERVER/TOOL; the tool part may itself contain '/'.
func splitRef(ref string) (server, tool string, err error) {
	server, tool, ok := strings.Cut(ref, "/")
	if !ok || server == "" || tool == "" {
		return "", "", usageError(fmt.Errorf("%q is not SERVER/TOOL (for example tasks/list_tasks)", ref))
	}
	return server, tool, nil
}

// findTool starts only the named server and finds the tool on it.
func findTool(ctx context.Context, st *setup, ref string) (*client.Manager, *client.Tool, error) {
	server, tool, err := splitRef(ref)
	if err != nil {
		return nil, nil, err
	}
	m, err := startOne(ctx, st, server)
	if err != nil {
		return nil, nil, err
	}
	t, ok := m.Tool(server, tool)
	if !ok {
		err := noSuchTool(m, server, tool)
		m.Close()
		return nil, nil, err
	}
	return m, t, nil
}

// parseArgs checks that raw is a JSON object (or empty).
func parseArgs(raw string) (json.RawMessage, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &obj); err != nil || obj == nil {
		return nil, usageError(fmt.Errorf("arguments must be a JSON object, like '{\"id\": \"T-1\"}': %v", err))
	}
	return json.RawMessage(raw), nil
}

type explainJSON struct {
	Server           string             `json:"server"`
	Tool             string             `json:"tool"`
	Title            string             `json:"title,omitempty"`
	ReadsAs          string             `json:"readsAs,omitempty"`
	Description      string             `json:"description,omitempty"`
	DescriptionFlags []string           `json:"descriptionFlags,omitempty"`
	Trusted          bool               `json:"trusted"`
	Annotations      client.Annotations `json:"annotations"`
	DefinitionHash   string             `json:"definitionHash"`
	Args             json.RawMessage    `json:"args,omitempty"`
	Mode             string             `json:"mode"`
	Decision         decisionJSON       `json:"decision"`
	HeadlessVerdict  string             `json:"headlessVerdict"`
	Suggestions      []string           `json:"suggestions"`
}

func runExplain(ctx context.Context, g *globalOptions, o *explainOptions, s *streams) error {
	ref, rawArgs := o.Ref, o.RawArgs
	args, err := parseArgs(rawArgs)
	if err != nil {
		return err
	}
	st, err := loadSetup(g, s)
	if err != nil {
		return err
	}
	policy, err := st.policy(g, s)
	if err != nil {
		return err
	}
	m, t, err := findTool(ctx, st, ref)
	if err != nil {
		return err
	}
	defer m.Close()

	mode := decide.Interactive
	if o.Headless {
		mode = decide.Headless
	}
	in := st.input(m, t, args, mode)
	d := policy.Decide(in)
	hd := d
	if mode == decide.Interactive {
		in.Mode = decide.Headless
		hd = policy.Decide(in)
		in.Mode = mode
	}
	var fields []string
	if ch, ok := m.LastChange(t.Server, t.Name); ok && ch.NewHash == t.Hash {
		fields = ch.Fields
	}
	tips := suggestions(st, t, d, hd, fields)

	if o.JSON {
		eff := d.Effective
		out := explainJSON{
			Server: t.Server, Tool: t.Name, Title: t.Title, Trusted: st.trusted[t.Server],
			ReadsAs: readsAs(t.Name), Description: t.Description, DescriptionFlags: decide.PoisonFlags(t.Description),
			Annotations: t.Annotations, DefinitionHash: t.Hash, Args: args, Mode: mode.String(),
			Decision: decisionJSON{
				Verdict: d.Verdict.String(), Tier: int(d.Tier), Class: d.Class.String(), Retry: d.Retry,
				Reasons: reasonCodes(d), Rule: d.Rule,
				Effective: &hintsJSON{ReadOnly: eff.ReadOnly == decide.True, Destructive: eff.Destructive == decide.True,
					Idempotent: eff.Idempotent == decide.True, OpenWorld: eff.OpenWorld == decide.True},
			},
			HeadlessVerdict: hd.Verdict.String(),
			Suggestions:     tips,
		}
		for _, r := range d.Reasons {
			out.Decision.Explained = append(out.Decision.Explained, reasonJSON{Code: r.Code, Text: reasonText(t, r), InFavour: d.InFavour(r)})
		}
		return writeJSON(s, out)
	}

	w := s.Out
	fmt.Fprintf(w, "%s", sanitize.Name(t.Ref()))
	if t.Title != "" {
		fmt.Fprintf(w, "  “%s” (the server's words)", sanitize.Line(sanitize.Truncate(t.Title, 80)))
	}
	fmt.Fprintln(w)
	if note := strings.TrimSpace(nameNote(t.Name)); note != "" {
		fmt.Fprintf(w, "  name:      %s; deny and ask rules also match what it looks like, allow rules only the name as written\n", note)
	}
	if flags := decide.PoisonFlags(t.Description); flags != nil {
		fmt.Fprintf(w, "  warning:   the description gives the model orders (%s); read it below before allowing a call\n", strings.Join(flags, ", "))
	}
	fmt.Fprintf(w, "  verdict:   %s (%s mode)\n", strings.ToUpper(d.Verdict.String()), mode)
	fmt.Fprintf(w, "  tier:      T%d — %s\n", d.Tier, decide.TierText(d.Tier))
	fmt.Fprintf(w, "  class:     %s\n", d.Class)
	fmt.Fprintf(w, "  retry:     %s\n", yesNo(d.Retry, "yes — safe to send again if its outcome is unknown", "no — at most once"))
	fmt.Fprintf(w, "  declared:  %s\n", t.Annotations)
	fmt.Fprintf(w, "  effective: readOnly=%s destructive=%s idempotent=%s openWorld=%s\n",
		d.Effective.ReadOnly, d.Effective.Destructive, d.Effective.Idempotent, d.Effective.OpenWorld)
	fmt.Fprintf(w, "  server:    %s\n", yesNo(st.trusted[t.Server], "trusted", "not trusted"))
	if d.Rule != "" {
		fmt.Fprintf(w, "  rule:      %s\n", d.Rule)
	}
	// The reasons to ask or refuse, then what lowers the risk, each under
	// its own heading: "it only reads" is never a reason to ask.
	ask, favour := d.Split()
	if len(ask) > 0 {
		h := d.AgainstHeading()
		fmt.Fprintf(w, "\n%s%s:\n", strings.ToUpper(h[:1]), h[1:])
		for _, r := range ask {
			fmt.Fprintf(w, "  - %s: %s\n", r.Code, reasonText(t, r))
		}
	}
	if len(favour) > 0 {
		fmt.Fprintln(w, "\nIn its favour:")
		for _, r := range favour {
			fmt.Fprintf(w, "  - %s: %s\n", r.Code, reasonText(t, r))
		}
	}
	if len(tips) > 0 {
		fmt.Fprintln(w, "\nWhat would change it:")
		for _, tip := range tips {
			fmt.Fprintf(w, "  - %s\n", tip)
		}
	}
	fmt.Fprintln(w, "\nDescription (the server's words):")
	fmt.Fprintln(w, indentText(describe(t), "  "))
	return nil
}

// reasonText is a reason's sentence, with the word of the tool's name that
// made its read-only claim unbelievable, escaped.
func reasonText(t *client.Tool, r decide.Reason) string {
	if r.Code == decide.CodeNameSuggestsWrite {
		if w, ok := decide.NameSuggestsWrite(t.Name); ok {
			return fmt.Sprintf("%s The word that says so: %s.", r.Text, sanitize.Name(fmt.Sprintf("%+q", w)))
		}
	}
	return r.Text
}

// suggestions say what a person could change to get another decision.
func suggestions(st *setup, t *client.Tool, d, headless decide.Decision, changedFields []string) []string {
	var out []string
	exact := fmt.Sprintf("%+q", t.Server+"/"+t.Name)
	if !st.trusted[t.Server] && !st.demo {
		how := fmt.Sprintf("add \"trust\": true to its entry in your config, or pass --trust %s", t.Server)
		if srv, ok := st.cfg.Server(t.Server); ok && srv.Source == config.SourceFlag {
			how = "pass --trust " + t.Server // a server given on the command line has no config entry
		}
		out = append(out, fmt.Sprintf("trust the server (%s) so its annotations count", how))
	}
	// A changed definition voids allow rules and grants: only accepting it
	// lifts that, so no allow rule is suggested.
	changed := d.Has(decide.CodeDefinitionChanged)
	if changed {
		out = append(out, host.ChangeNote(t.Server, t.Name, changedFields))
	}
	poisoned := decide.PoisonFlags(t.Description) != nil
	switch {
	case poisoned && (d.Verdict != decide.Deny || d.Rule == ""):
		out = append(out, "its description gives the model orders, so no allow rule lets it run without asking; only approving a call in the dialog does, after reading the description")
	case strings.HasPrefix(d.Rule, managedRulePrefix):
		out = append(out, "the rule "+d.Rule+" of the managed policy decides it, and no rule, flag or grant of yours can change that; only the administrator who writes "+managedPath+" can (mcphost policy shows the line)")
	case d.Verdict == decide.Deny && d.Rule != "" && !d.Has(decide.CodeNeedsApproval):
		out = append(out, "the rule "+d.Rule+" denies it; only removing or narrowing that rule changes this")
	case d.Verdict != decide.Allow && !d.Has(decide.CodeProtectedPath) && d.Rule == "":
		// The rule a headless refusal of this call would name, if any can
		// lift it (ApprovalFor offers none for a changed definition).
		if a := host.ApprovalFor(t.Server, t.Name, d, nil, host.ApproveInteractively); a.ByRule {
			out = append(out, fmt.Sprintf("an allow rule %s (\"permissions\": {\"allow\": [...]}, or %s) would run it without asking", exact, a.Flag))
		}
	case d.Verdict == decide.Allow && d.Class != decide.Read:
		out = append(out, fmt.Sprintf("an ask rule %s (or --ask) would make it ask first; a deny rule would refuse it", exact))
	}
	if d.Has(decide.CodeNoAnnotations) {
		out = append(out, "the server declares no annotations for this tool; its author can add them (mcphost lint lists what is missing)")
	}
	if d.Verdict == decide.Ask && headless.Verdict == decide.Deny {
		out = append(out, "in a headless run (mcphost run, or call without --yes) this call is denied: it needs approval and no one can be asked")
	}
	return out
}
