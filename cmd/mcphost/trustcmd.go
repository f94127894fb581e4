package main

// mcphost mcp trust, untrust and consent: the trust and project consents
// mcphost remembers in its state file, listed, given and taken back from
// the command line, as /trust gives them in the chat.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/pgstore"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/mcphost/mcphost/state"
	"github.com/mcphost/mcphost/ui"
	"github.com/spf13/cobra"
)

type mcpTrustOptions struct {
	Name string // the NAME argument; "" lists
	JSON bool
}

func newMCPTrustCmd(g *globalOptions, s *streams) *cobra.Command {
	o := &mcpTrustOptions{}
	cmd := &cobra.Command{
		Use:   "trust [NAME]",
		Short: "List remembered trust and consents, or trust a server",
		Long: `Without NAME, list the trust mcphost remembers (given with /trust in the chat
or with mcp trust) and the project consents it keeps, with whether each is in
force here.

With NAME, trust that server of your config: its tool annotations count from
now on, remembered for its exact command or URL, as /trust NAME does. A
project server is trusted through its consent (mcp consent NAME). A
"trust": false in your own config wins over remembered trust; mcp untrust NAME
takes trust back.`,
		Example: `  mcphost mcp trust
  mcphost mcp trust tasks
  mcphost mcp untrust tasks`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Name = args[0]
			}
			return runMCPTrust(cmd.Context(), g, o, s)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the list as JSON")
	return cmd
}

type mcpUntrustOptions struct {
	Name string
}

func newMCPUntrustCmd(g *globalOptions, s *streams) *cobra.Command {
	o := &mcpUntrustOptions{}
	return &cobra.Command{
		Use:   "untrust NAME",
		Short: "Take back the trust mcphost remembers for a server",
		Long: `Forget the trust mcphost remembers for server NAME (given with /trust or mcp
trust), and turn a project server's trusting consent into one without trust
(it still starts; mcp consent NAME --revoke forgets the consent). Trust
written in your own config ("trust": true) stays: the command says where to
remove it.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return runMCPUntrust(cmd.Context(), g, o, s)
		},
	}
}

type mcpConsentOptions struct {
	Name      string
	Untrusted bool
	Revoke    bool
}

func newMCPConsentCmd(g *globalOptions, s *streams) *cobra.Command {
	o := &mcpConsentOptions{}
	cmd := &cobra.Command{
		Use:   "consent NAME [--untrusted | --revoke]",
		Short: "Consent to a project server without the chat, or take consent back",
		Long: `Consent to server NAME of the working directory's .mcp.json, as the chat's
consent dialog does: it starts from now on, in every mode, for this exact
entry of this project file (a change to the entry asks again). The consent
trusts the server unless --untrusted is given. --revoke forgets the consent:
the server waits for consent again.`,
		Example: `  mcphost mcp consent linter --untrusted
  mcphost mcp consent linter --revoke`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return runMCPConsent(cmd.Context(), g, o, s)
		},
	}
	cmd.Flags().BoolVar(&o.Untrusted, "untrusted", false, "start the server, but do not believe its annotations")
	cmd.Flags().BoolVar(&o.Revoke, "revoke", false, "forget the consent: the server waits for consent again")
	return cmd
}

func (st *setup) statePath() string { return filepath.Join(st.stateDir, "state.json") }

// configured is the server named name in the loaded configuration.
func (st *setup) configured(name string) (config.Server, bool) {
	if st.demo {
		return config.Server{}, false
	}
	for _, srv := range st.cfg.Servers {
		if srv.Name == name {
			return srv, true
		}
	}
	return config.Server{}, false
}

func noServerNamed(name string) error {
	return usageError(fmt.Errorf("no server named %q in your config, --server or the working directory's %s (mcphost mcp list lists them)", sanitize.Line(name), config.ProjectFile))
}

func runMCPTrust(ctx context.Context, g *globalOptions, o *mcpTrustOptions, s *streams) error {
	st, err := loadSetup(g, s)
	if err != nil {
		return err
	}
	if o.Name == "" {
		return st.listTrust(ctx, o.JSON, s)
	}
	if o.JSON {
		return usageError(errors.New("--json lists; it takes no NAME"))
	}
	name := o.Name
	srv, ok := st.configured(name)
	switch {
	case !ok:
		return noServerNamed(name)
	case srv.Source == config.SourceProject:
		return usageError(fmt.Errorf("%s is a project server (%s): it is trusted through its consent: mcphost mcp consent %s", name, srv.File, name))
	case !st.managed.MayTrust(name):
		return usageError(fmt.Errorf("the managed policy (%s) does not let users trust %s; its calls keep asking", st.managed.At["trust"], name))
	case srv.Trust:
		fmt.Fprintf(s.Out, "%s is already trusted by %s\n", name, trustWhere(srv))
		return nil
	case srv.Distrusted():
		return usageError(fmt.Errorf(`your config (%s) says "trust": false for %s, and that wins over remembered trust: change it there to trust the server`, srv.File, name))
	}
	spec := specFromConfig(srv)
	if err := state.Update(st.statePath(), time.Now, func(ss *state.State) error {
		ss.SetTrust(spec.Identity(), name, true)
		return nil
	}); err != nil {
		return err
	}
	if err := st.storeTrust(ctx, func(t *pgstore.Trust) (int, error) {
		return 0, t.SetTrust(spec.Identity(), name, true)
	}); err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "%s is trusted from now on: its annotations count, so its closed-world reads and additive writes may run without asking; remembered for this exact command or URL (mcphost mcp untrust %s takes it back)\n", name, name)
	return nil
}

// trustWhere says where srv's trust is written.
func trustWhere(srv config.Server) string {
	if srv.Source == config.SourceFlag || srv.File == "" {
		return "--trust"
	}
	return `"trust": true in ` + srv.File
}

func runMCPUntrust(ctx context.Context, g *globalOptions, o *mcpUntrustOptions, s *streams) error {
	st, err := loadSetup(g, s)
	if err != nil {
		return err
	}
	name := o.Name
	if why := config.NameProblem(name); why != "" {
		return usageError(errors.New(why))
	}
	srv, configured := st.configured(name)
	identity, key := "", ""
	if configured && srv.Source == config.SourceProject {
		key = consentKey(srv)
	} else if configured {
		spec := specFromConfig(srv)
		identity = spec.Identity()
	}
	var forgot int
	var downgraded bool
	if err := state.Update(st.statePath(), time.Now, func(ss *state.State) error {
		forgot, downgraded = ss.Untrust(identity, name, key)
		return nil
	}); err != nil {
		return err
	}
	if err := st.storeTrust(ctx, func(t *pgstore.Trust) (int, error) {
		n, err := t.Untrust(identity, name)
		forgot += n
		return n, err
	}); err != nil {
		return err
	}
	switch {
	case forgot > 0:
		fmt.Fprintf(s.Out, "mcphost no longer remembers trust in %s: its annotations count as the worst case from its next start\n", name)
	case downgraded:
		fmt.Fprintf(s.Out, "project server %s still starts, but is no longer trusted: its annotations count as the worst case (mcphost mcp consent %s --revoke stops it until you consent again)\n", name, name)
	default:
		fmt.Fprintf(s.Err, "mcphost remembers no trust in %s: nothing to take back\n", name)
	}
	if configured && srv.Trust {
		fmt.Fprintf(s.Out, "%s is still trusted by %s: remove it there to stop trusting it\n", name, trustWhere(srv))
	}
	return nil
}

func runMCPConsent(_ context.Context, g *globalOptions, o *mcpConsentOptions, s *streams) error {
	if o.Revoke && o.Untrusted {
		return usageError(errors.New("--revoke forgets the consent, --untrusted gives one: leave one out"))
	}
	st, err := loadSetup(g, s)
	if err != nil {
		return err
	}
	name := o.Name
	srv, ok := st.configured(name)
	if !ok || srv.Source != config.SourceProject {
		what := "no project server"
		if ok {
			what = "no project server (" + name + " is not from a project file, so it needs no consent)"
		}
		return usageError(fmt.Errorf("%s named %q in %s of the working directory", what, sanitize.Line(name), config.ProjectFile))
	}
	key, hash := consentKey(srv), consentHash(srv)
	choice := state.ChoiceTrusted
	if o.Untrusted {
		choice = state.ChoiceUntrusted
	}
	if !o.Revoke && choice == state.ChoiceTrusted && !st.managed.MayTrust(name) {
		return usageError(fmt.Errorf("the managed policy (%s) does not let users trust %s: consent without trust with mcphost mcp consent %s --untrusted", st.managed.At["trust"], name, name))
	}
	forgot := false
	if err := state.Update(st.statePath(), time.Now, func(ss *state.State) error {
		if o.Revoke {
			forgot = ss.ForgetConsent(key)
			return nil
		}
		ss.SetConsent(key, hash, choice)
		return nil
	}); err != nil {
		return err
	}
	switch {
	case o.Revoke && forgot:
		fmt.Fprintf(s.Out, "forgot your consent to %s of %s: it waits for consent again\n", name, srv.File)
	case o.Revoke:
		fmt.Fprintf(s.Err, "mcphost keeps no consent to %s of %s: nothing to take back\n", name, srv.File)
	default:
		what := "it starts from now on, and its annotations are trusted"
		if choice == state.ChoiceUntrusted {
			what = "it starts from now on; its annotations are not trusted, so its calls ask"
		}
		target := redactedURL(srv.Shown().URL)
		if cl := resolvedCommandLine(srv.Shown()); len(cl) > 0 {
			target = strings.Join(quoteWords(cl), " ")
		}
		fmt.Fprintf(s.Out, "consented to %s of %s (%s): %s; a change to its entry asks again (mcphost mcp consent %s --revoke takes it back)\n",
			name, srv.File, sanitize.Line(sanitize.Truncate(target, 200)), what, name)
	}
	return nil
}

// trustListJSON is the stable --json shape of mcp trust without a name.
type trustListJSON struct {
	Trust    []trustEntryJSON   `json:"trust"`
	Consents []consentEntryJSON `json:"consents"`
}

type trustEntryJSON struct {
	Name      string `json:"name"`
	Identity  string `json:"identity"`
	TrustedAt string `json:"trustedAt,omitempty"`
	// Status: "in force", "overridden" (the config says "trust": false),
	// or "not configured" (no server here has this command or URL).
	Status string `json:"status"`
	// In is where the trust is remembered: "state" (this machine's state
	// file, read by the chat, run and call) or "store" (the store the
	// config names, read by every serve on it).
	In string `json:"in"`
}

type consentEntryJSON struct {
	Server   string `json:"server"`
	File     string `json:"file"`
	Choice   string `json:"choice"`
	ChosenAt string `json:"chosenAt,omitempty"`
	// Status: "in force", "changed" (the entry changed since: it asks
	// again) or "elsewhere" (not the working directory's project).
	Status string `json:"status"`
}

func (st *setup) listTrust(ctx context.Context, asJSON bool, s *streams) error {
	ss, err := state.Load(st.statePath())
	if err != nil {
		return err
	}
	byIdentity := map[string]config.Server{}
	// hashes are the consent hashes of the working directory's project
	// servers and of its instructions file (AGENTS.md), by consent key.
	hashes := map[string]string{}
	if !st.demo {
		for _, srv := range st.cfg.Servers {
			if srv.Source == config.SourceProject {
				hashes[consentKey(srv)] = consentHash(srv)
				continue
			}
			spec := specFromConfig(srv)
			byIdentity[spec.Identity()] = srv
		}
	}
	out := trustListJSON{Trust: []trustEntryJSON{}, Consents: []consentEntryJSON{}}
	entry := func(r state.TrustRecord, in string) trustEntryJSON {
		e := trustEntryJSON{Name: r.Name, Identity: r.Identity, TrustedAt: stamp(r.TrustedAt), Status: "not configured", In: in}
		if srv, ok := byIdentity[r.Identity]; ok {
			e.Status = "in force"
			if srv.Distrusted() {
				e.Status = "overridden"
			}
		}
		return e
	}
	for _, r := range ss.TrustRecords() {
		out.Trust = append(out.Trust, entry(r, "state"))
	}
	// With a store, the trust serve's replicas read is the store's: list
	// it too, and fail (after listing the rest) when it cannot be read.
	var storeErr error
	shown := ""
	if st.storeURL != "" {
		var recs []state.TrustRecord
		recs, shown, storeErr = listStoreTrust(ctx, st.storeURL)
		for _, r := range recs {
			out.Trust = append(out.Trust, entry(r, "store"))
		}
	}
	// An unreadable instructions file is warned about where it would be
	// sent, not here.
	if in, _ := config.FindInstructions(s.WorkDir); in != nil {
		hashes[in.Key] = in.Hash
	}
	for _, c := range ss.ConsentRecords() {
		i := strings.LastIndexByte(c.Name, '#')
		file, server := c.Name[:max(i, 0)], c.Name[i+1:]
		e := consentEntryJSON{Server: server, File: file, Choice: c.Choice.String(), ChosenAt: stamp(c.ChosenAt), Status: "elsewhere"}
		if hash, ok := hashes[c.Name]; ok {
			e.Status = "in force"
			if hash != c.Hash {
				e.Status = "changed"
			}
		}
		out.Consents = append(out.Consents, e)
	}
	if storeErr != nil {
		storeErr = withCode(exitError, fmt.Errorf("the trust remembered in the store, which serve's replicas read, could not be listed: %w", storeErr))
	}
	if asJSON {
		if err := writeJSON(s, out); err != nil {
			return err
		}
		return storeErr
	}
	if err := printTrust(s, out, shown); err != nil {
		return err
	}
	return storeErr
}

// listStoreTrust returns the trust remembered in the store at url, and
// how the store is shown.
func listStoreTrust(ctx context.Context, url string) ([]state.TrustRecord, string, error) {
	shared, err := openStore(ctx, url)
	if err != nil {
		return nil, "", err
	}
	defer shared.Close()
	recs, err := shared.Trust().List(ctx)
	return recs, shared.String(), err
}

// printTrust prints the trust and consent lists; store names the store
// whose trust is listed too ("" without one).
func printTrust(s *streams, out trustListJSON, store string) error {
	if len(out.Trust) == 0 {
		fmt.Fprintln(s.Out, "remembered trust: none (mcphost mcp trust NAME or /trust NAME in the chat gives it)")
	} else {
		fmt.Fprintln(s.Out, "remembered trust (mcphost mcp untrust NAME takes it back):")
		if store != "" {
			fmt.Fprintf(s.Out, "  (IN: \"state\" is this machine's state file, read by the chat, run and call; \"store\" is %s, read by every serve on it)\n", sanitize.Line(store))
		}
		// in is the IN column, shown only beside a store.
		in := func(v string) string {
			if store == "" {
				return ""
			}
			return v + "\t"
		}
		tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  NAME\t"+in("IN")+"SINCE\tSTATUS")
		for _, e := range out.Trust {
			status := e.Status
			switch status {
			case "overridden":
				status = `overridden: your config says "trust": false`
			case "not configured":
				status = "no server here has this command or URL"
			}
			fmt.Fprintf(tw, "  %s\t%s%s\t%s\n", sanitize.Line(e.Name), in(e.In), dash(e.TrustedAt), status)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(out.Consents) == 0 {
		fmt.Fprintln(s.Out, "project consents: none")
		return nil
	}
	fmt.Fprintln(s.Out, "project consents (mcphost mcp untrust NAME keeps one without trust; mcphost mcp consent NAME --revoke forgets it):")
	tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  NAME\tCHOICE\tSINCE\tSTATUS\tFILE")
	for _, e := range out.Consents {
		status := e.Status
		switch status {
		case "changed":
			status = "entry changed since: asks again"
		case "elsewhere":
			status = "another project"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", sanitize.Line(e.Server), e.Choice, dash(e.ChosenAt), status, sanitize.Line(e.File))
	}
	return tw.Flush()
}

// stamp is a recorded time for a listing; "" when unknown.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// trustInfo tells the chat where each server's trust at the start comes
// from, as mcphost policy does.
func (st *setup) trustInfo(g *globalOptions) func(string) ui.TrustInfo {
	return func(name string) ui.TrustInfo {
		srv, ok := st.configured(name)
		if !ok {
			return ui.TrustInfo{}
		}
		var i ui.TrustInfo
		if srv.Source == config.SourceProject {
			i.ConsentKey = consentKey(srv)
		}
		if srv.Distrusted() {
			i.Distrusted = srv.File
		}
		if !st.trusted[name] {
			return i
		}
		switch {
		case slices.Contains(g.Trust, name):
			i.From, i.Written = "--trust", true
		case srv.Source == config.SourceProject:
			i.From = "your consent to " + srv.File
		case srv.Trust:
			i.From, i.Written = trustWhere(srv), true
		default:
			i.From = "remembered by mcphost"
		}
		return i
	}
}

// mayTrust reports whether trusting the server is a fix a refusal may
// name: the managed policy lets users trust it, and the person's own
// config does not say "trust": false for it.
func (st *setup) mayTrust(name string) bool {
	if !st.managed.MayTrust(name) {
		return false
	}
	srv, ok := st.configured(name)
	return !ok || !srv.Distrusted()
}
