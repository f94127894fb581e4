package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/pgstore"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/spf13/cobra"
)

type policyOptions struct {
	JSON bool
}

func newPolicyCmd(g *globalOptions, s *streams) *cobra.Command {
	o := &policyOptions{}
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Print the effective policy, each setting with where it comes from",
		Long: `Print the effective policy: every rule, the auto-approve level, which servers
start and which are trusted, the audit log, and what the managed policy fixes
for serve and telemetry. Each line names its source: managed (the
administrator's ` + config.ManagedPath + `), user (your config file),
flag, project (.mcp.json), state (a choice mcphost remembered) or default.

Managed rules are listed first because they are evaluated first; no user
rule, flag or grant can lift a managed deny or ask. Starts no server.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPolicy(cmd.Context(), g, o, s)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	return cmd
}

// Sources of a policy line.
const (
	srcManaged = "managed"
	srcUser    = "user"
	srcFlag    = "flag"
	srcProject = "project"
	srcState   = "state"
	srcDefault = "default"
	srcDemo    = "demo"
)

// policyLine is one setting of the effective policy: the stable --json
// shape of `mcphost policy` (fields may be added, meanings never change).
type policyLine struct {
	// Setting is "deny", "ask" or "allow" for a rule; "autoApprove",
	// "audit", "serve", "telemetry"; "server" and "trust" (with Server
	// set); "allowedServers" and "deniedServers" for managed entries.
	Setting string `json:"setting"`
	Server  string `json:"server,omitempty"`
	Value   string `json:"value"`
	Source  string `json:"source"`
	// At is where the setting is written: FILE:LINE:COL, a file, or the
	// flag.
	At string `json:"at,omitempty"`
	// Note says what the managed policy changed about the user's setting.
	Note string `json:"note,omitempty"`
}

type policyJSON struct {
	// ManagedFile is where the managed policy is read from; Managed says
	// whether there is one.
	ManagedFile string       `json:"managedFile"`
	Managed     bool         `json:"managed"`
	Lines       []policyLine `json:"lines"`
}

func runPolicy(_ context.Context, g *globalOptions, o *policyOptions, s *streams) error {
	st, err := loadSetup(g, s)
	if err != nil {
		return err
	}
	// Compile it as every call would, so that a rule that does not compile
	// fails here with its file and line too.
	if _, err := st.policy(g, s); err != nil {
		return err
	}
	out := policyJSON{ManagedFile: managedPath, Managed: st.managed != nil, Lines: st.policyLines(g, s)}
	if o.JSON {
		return writeJSON(s, out)
	}
	if st.managed == nil {
		fmt.Fprintf(s.Out, "managed policy: none (%s does not exist)\n\n", managedPath)
	} else {
		fmt.Fprintf(s.Out, "managed policy: %s\n\n", managedPath)
	}
	tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SETTING\tVALUE\tSOURCE\tWHERE")
	for _, l := range out.Lines {
		setting := l.Setting
		if l.Server != "" {
			setting += " " + l.Server
		}
		value := l.Value
		if l.Note != "" {
			value += " (" + l.Note + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", sanitize.Line(setting), sanitize.Line(value), l.Source, dash(sanitize.Line(l.At)))
	}
	return tw.Flush()
}

// policyLines lists the effective policy in the order it applies: rules
// (managed first), the auto-approve level, the managed server lists, each
// server and its trust, then audit, serve and telemetry.
func (st *setup) policyLines(g *globalOptions, s *streams) []policyLine {
	var out []policyLine
	m := st.managed
	if m != nil {
		for _, r := range m.Rules {
			out = append(out, policyLine{Setting: r.Effect, Value: string(r.Raw), Source: srcManaged, At: ruleAt(r)})
		}
	}
	for _, r := range st.cfg.Rules {
		src := srcUser
		if r.Line == 0 {
			src = srcFlag
		}
		out = append(out, policyLine{Setting: r.Effect, Value: string(r.Raw), Source: src, At: ruleAt(r)})
	}

	level, clamped := m.ClampAutoApprove(st.cfg.AutoApprove)
	auto := policyLine{Setting: "autoApprove", Value: cmp.Or(level, "additive"), Source: srcDefault}
	switch {
	case clamped:
		auto.Source, auto.At = srcManaged, m.At["permissions.autoApprove"]
		auto.Note = "lowered from " + cmp.Or(st.cfg.AutoApprove, "the default, additive")
	case st.cfg.AutoApprove != "":
		auto.Source, auto.At = srcUser, userFile(st.cfg)
		if m != nil && m.AutoApprove != "" {
			auto.Note = "the managed ceiling is " + m.AutoApprove
		}
	}
	out = append(out, auto)

	out = append(out, st.askViaLines()...)
	out = append(out, approverLines(m)...)

	if m != nil {
		if m.HasAllowed {
			if len(m.AllowedServers) == 0 {
				out = append(out, policyLine{Setting: "allowedServers", Value: "none", Source: srcManaged, At: m.At["allowedServers"]})
			}
			for _, e := range m.AllowedServers {
				out = append(out, policyLine{Setting: "allowedServers", Value: matchText(e), Source: srcManaged, At: e.At})
			}
		}
		for _, e := range m.DeniedServers {
			out = append(out, policyLine{Setting: "deniedServers", Value: matchText(e), Source: srcManaged, At: e.At})
		}
	}

	out = append(out, st.serverLines(g)...)

	audit := policyLine{Setting: "audit", Value: st.auditPath(g), Source: srcDefault}
	switch {
	case m != nil && m.Audit != "":
		audit.Source, audit.At = srcManaged, m.At["audit"]
	case g.Audit != "":
		audit.Source, audit.At = srcFlag, "--audit"
	case st.storeURL != "":
		// The chain in the store (store.go), named without its password.
		audit.Value, audit.Source, audit.At = pgstore.Redact(st.storeURL), srcUser, userFile(st.cfg)
	}
	out = append(out, audit)

	if m != nil && m.Serve != nil {
		v := "http: any address"
		switch {
		case !m.Serve.HTTP:
			v = "http: not allowed (stdio only)"
		case m.Serve.Addresses != nil:
			v = "http: only " + strings.Join(m.Serve.Addresses, ", ")
		}
		out = append(out, policyLine{Setting: "serve", Value: v, Source: srcManaged, At: m.At["serve"]})
	}
	if m != nil && m.Telemetry != nil {
		v := client.RedactURL(m.Telemetry.Endpoint)
		if len(m.Telemetry.Headers) > 0 {
			var names []string
			for k := range m.Telemetry.Headers {
				names = append(names, k)
			}
			slices.Sort(names)
			v += " (headers " + strings.Join(names, ", ") + ")" // never their values
		}
		out = append(out, policyLine{Setting: "telemetry", Value: v, Source: srcManaged, At: m.At["telemetry"], Note: "cannot be switched off"})
	}
	return out
}

// serverLines says, for every configured server, whether it starts and
// whether it is trusted, and why.
func (st *setup) serverLines(g *globalOptions) []policyLine {
	held := map[string]client.Status{}
	for _, h := range st.held {
		held[h.Name] = h
	}
	var out []policyLine
	add := func(name, source, at string, wantTrust, distrusted bool, trustSrc, trustAt string) {
		l := policyLine{Setting: "server", Server: name, Value: "starts", Source: source, At: at}
		if h, ok := held[name]; ok {
			l.Value = string(h.State)
			if h.State == stateManaged {
				l.Note = h.LastError
			}
		}
		out = append(out, l)
		if l.Value != "starts" {
			return
		}
		t := policyLine{Setting: "trust", Server: name, Value: "not trusted", Source: srcDefault}
		switch {
		case st.untrusted[name]:
			t.Source, t.At = srcManaged, st.managed.At["trust"]
			t.Note = "the managed policy does not let users trust it"
		case st.trusted[name]:
			t.Value, t.Source, t.At = "trusted", trustSrc, trustAt
		case distrusted:
			t.Source, t.At = srcUser, trustAt
			if st.overridden[name] {
				t.Note = "your config, overrides remembered trust"
			}
		}
		if wantTrust || distrusted || st.trusted[name] || st.untrusted[name] {
			out = append(out, t)
		}
	}
	if st.demo {
		for _, name := range demoServers {
			add(name, srcDemo, "", true, false, srcDemo, "")
		}
		return out
	}
	for _, srv := range st.cfg.Servers {
		source, at := srvSource(srv), srv.File
		trustSrc, trustAt := srcState, "remembered by mcphost"
		switch {
		case slices.Contains(g.Trust, srv.Name):
			trustSrc, trustAt = srcFlag, "--trust"
		case srv.Source == config.SourceProject:
			trustSrc, trustAt = srcProject, "your consent to "+srv.File
		case srv.Trust, srv.Distrusted():
			trustSrc, trustAt = srcUser, srv.File
		}
		if srv.Source == config.SourceFlag {
			at = "--server"
		}
		add(srv.Name, source, at, srv.Trust, srv.Distrusted(), trustSrc, trustAt)
	}
	return out
}

func srvSource(srv config.Server) string {
	switch srv.Source {
	case config.SourceProject:
		return srcProject
	case config.SourceFlag:
		return srcFlag
	case config.SourceDemo:
		return srcDemo
	}
	return srcUser
}

func ruleAt(r config.RuleSpec) string {
	if r.Line == 0 {
		return r.Source
	}
	return fmt.Sprintf("%s:%d:%d", r.Source, r.Line, r.Col)
}

// userFile is the user's own config file, the first file read.
func userFile(cfg *config.Config) string {
	if len(cfg.Files) > 0 {
		return cfg.Files[0]
	}
	return ""
}

// matchText is a managed server entry as the file writes it.
func matchText(e config.ServerMatch) string {
	if e.URL != "" {
		return "url " + e.URL
	}
	s := "command " + e.Command
	if e.HasArgs {
		s += " args [" + strings.Join(e.Args, " ") + "]"
	}
	return s
}
