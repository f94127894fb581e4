package main

// mcphost mcp add, remove, list and import: managing servers in config
// files without editing JSON by hand, as other MCP hosts' mcp commands do.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/spf13/cobra"
)

func newMCPCmd(g *globalOptions, s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Add, remove, list and import servers in your config; trust and consent",
		Long: `Manage the servers in mcphost's config files without editing JSON by hand.

add and remove change your own config (the file --config names, else
$XDG_CONFIG_HOME/mcphost/config.json), or with --scope project the .mcp.json
of the working directory. Only the "mcpServers" member changes; the rest of
the file stays as written. A file that does not load is never written, nor a
result that would not load.

trust lists the trust and project consents mcphost remembers (or trusts a
server), untrust takes trust back, and consent answers a project server's
consent without the chat (or, with --revoke, takes it back); revoke forgets
"always" grants.`,
	}
	cmd.AddCommand(newMCPAddCmd(g, s), newMCPRemoveCmd(g, s), newMCPListCmd(g, s), newMCPImportCmd(g, s),
		newMCPTrustCmd(g, s), newMCPUntrustCmd(g, s), newMCPConsentCmd(g, s), newMCPRevokeCmd(g, s))
	return cmd
}

type mcpAddOptions struct {
	Name      string   // the NAME argument
	Command   []string // the COMMAND and its ARGS, after --
	Env       []string
	Headers   []string
	Trust     bool
	Scope     string
	URL       string
	Transport string
	// AllowInsecureHTTP writes "allowInsecureHTTP": true.
	AllowInsecureHTTP bool
}

func newMCPAddCmd(g *globalOptions, s *streams) *cobra.Command {
	o := &mcpAddOptions{}
	cmd := &cobra.Command{
		Use:   "add NAME [flags] -- COMMAND [ARGS...] | add NAME --url URL [flags] | add NAME URL [flags]",
		Short: "Add a server to your config (or the project's .mcp.json)",
		Long: `Add a server started as a program (its command after --) or reached by URL.

The server is added to your own config unless --scope project writes it to
.mcp.json in the working directory, where mcphost asks for consent before it
starts it (and a project file can never trust it). ${NAME} in arguments, env
values, the URL and header values is read from the environment when mcphost
starts the server; quote it so that your shell leaves it alone.

mcp add NAME URL, as other hosts write it, is the same as --url URL (with
--transport http or sse as given); a URL is never written as a command.`,
		Example: `  mcphost mcp add tasks -- tasks-server --db tasks.db
  mcphost mcp add github --env 'GITHUB_TOKEN=${GITHUB_TOKEN}' -- npx -y @modelcontextprotocol/server-github
  mcphost mcp add notion --url https://mcp.notion.com/mcp
  mcphost mcp add api --url https://api.example.com/mcp --header 'Authorization: Bearer ${API_TOKEN}'
  mcphost mcp add linter --scope project -- python3 tools/linter.py`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// The command goes after --, so that its own flags are its own
			// and a mistyped mcphost flag is not taken for an argument.
			switch dash := cmd.ArgsLenAtDash(); {
			case dash == -1 && len(args) == 2 && isURL(args[1]):
				// Claude Code's form, mcp add NAME URL: the URL is the
				// server's address, never a program to start.
				if o.URL != "" {
					return usageError(fmt.Errorf("two URLs: %s and --url %s; give one", sanitize.Line(args[1]), sanitize.Line(o.URL)))
				}
				o.Name, o.URL = args[0], args[1]
				return runMCPAdd(cmd.Context(), g, o, s)
			case dash == -1 && len(args) > 1 && isURL(args[1]):
				// A URL and more words: runMCPAdd refuses it, naming --url.
			case dash == -1 && len(args) > 1:
				return usageError(fmt.Errorf("put the server's command after --: mcphost mcp add %s -- %s", args[0], strings.Join(quoteWords(args[1:]), " ")))
			case dash == 0:
				return usageError(errors.New("the server's name comes before --: mcphost mcp add NAME -- COMMAND [ARGS...]"))
			case dash > 1:
				return usageError(fmt.Errorf("one name before --, got %d: %s", dash, strings.Join(quoteWords(args[:dash]), " ")))
			}
			o.Name, o.Command = args[0], args[1:]
			return runMCPAdd(cmd.Context(), g, o, s)
		},
	}
	f := cmd.Flags()
	f.StringArrayVarP(&o.Env, "env", "e", nil, "set `KEY=VALUE` in the server's environment (repeatable)")
	f.StringArrayVarP(&o.Headers, "header", "H", nil, "send header `'NAME: VALUE'` to a remote server (repeatable)")
	f.BoolVar(&o.Trust, "trust", false, "believe the server's tool annotations (your own config only)")
	f.StringVarP(&o.Scope, "scope", "s", "user", "where to write: `user` (your config) or project (.mcp.json here)")
	f.StringVar(&o.URL, "url", "", "reach the server at `URL` instead of starting a program")
	f.StringVarP(&o.Transport, "transport", "t", "", "`TRANSPORT` of a --url server: http (streamable HTTP, the default) or sse")
	f.BoolVar(&o.AllowInsecureHTTP, "allow-insecure-http", false, "let the --header values go over plain http to another machine (your own config only; only on a network that is yours)")
	return cmd
}

// scopeFile is the file a scope's edits go to, and how the loader reads it.
func scopeFile(g *globalOptions, s *streams, scope string) (string, config.Source, error) {
	switch scope {
	case "user":
		if g.ConfigFile != "" {
			return g.ConfigFile, config.SourceUser, nil
		}
		return config.DefaultPath(s.Getenv("XDG_CONFIG_HOME")), config.SourceUser, nil
	case "project":
		if g.ConfigFile != "" {
			return "", 0, usageError(errors.New("--scope project writes .mcp.json in the working directory; --config names your own file: leave one out"))
		}
		if s.WorkDir == "" {
			return "", 0, usageError(errors.New("--scope project: the working directory is not known"))
		}
		return filepath.Join(s.WorkDir, config.ProjectFile), config.SourceProject, nil
	}
	return "", 0, usageError(fmt.Errorf("--scope %q: use user or project", scope))
}

func runMCPAdd(_ context.Context, g *globalOptions, o *mcpAddOptions, s *streams) error {
	name, command := o.Name, o.Command
	if why := config.NameProblem(name); why != "" {
		return usageError(errors.New(why))
	}
	var e config.Entry
	switch {
	case o.URL != "" && len(command) > 0:
		return usageError(fmt.Errorf("give either --url or a command after --, not both"))
	case o.URL != "":
		if len(o.Env) > 0 {
			return usageError(errors.New("--env sets a started program's environment; a --url server takes --header"))
		}
		switch t := strings.ToLower(o.Transport); t {
		case "", "http", "streamable-http":
			e.Type = config.TransportHTTP
		case "sse":
			e.Type = config.TransportSSE
		default:
			return usageError(fmt.Errorf("--transport %q: a --url server speaks http or sse", o.Transport))
		}
		e.URL = o.URL
		headers, err := keyValues(o.Headers, ":", "--header", "'NAME: VALUE'")
		if err != nil {
			return err
		}
		e.Headers = headers
		e.AllowInsecureHTTP = o.AllowInsecureHTTP
	case len(command) == 0:
		return usageError(fmt.Errorf("no command: mcphost mcp add %s -- COMMAND [ARGS...], or --url URL for a remote server", name))
	case isURL(command[0]):
		return usageError(fmt.Errorf("%s is a URL, not a program to start: mcphost mcp add %s --url %s", sanitize.Line(command[0]), name, sanitize.Line(command[0])))
	default:
		if len(o.Headers) > 0 {
			return usageError(errors.New("--header applies to a --url server; a started program takes --env"))
		}
		if t := strings.ToLower(o.Transport); t != "" && t != "stdio" {
			return usageError(fmt.Errorf("--transport %s needs --url; a command is started and spoken to over stdio", o.Transport))
		}
		e.Command, e.Args = command[0], command[1:]
		env, err := keyValues(o.Env, "=", "--env", "KEY=VALUE")
		if err != nil {
			return err
		}
		e.Env = env
	}
	if o.AllowInsecureHTTP && o.URL == "" {
		return usageError(errors.New("--allow-insecure-http applies to a --url server"))
	}
	if o.AllowInsecureHTTP && o.Scope == "project" {
		return usageError(errors.New("--allow-insecure-http with --scope project: a project file cannot have credentials sent in clear; add the server to your own config"))
	}
	if o.Trust && o.Scope == "project" {
		return usageError(errors.New("--trust with --scope project: a project file cannot grant trust; add the server to your own config, or pass --trust NAME when you run mcphost"))
	}
	e.Trust = o.Trust
	file, src, err := scopeFile(g, s, o.Scope)
	if err != nil {
		return err
	}
	w, err := config.AddServers(file, src, []config.NamedEntry{{Name: name, Entry: e}}, s.Getenv)
	if err != nil {
		return err
	}
	verb := "added"
	if w.Created {
		verb = "created " + w.Path + " and added"
	}
	fmt.Fprintf(s.Out, "%s server %q to %s (%s scope)\n", verb, name, w.Path, o.Scope)
	switch {
	case src == config.SourceProject:
		fmt.Fprintf(s.Out, "%s is a project file: mcphost asks for your consent before it starts %q (run mcphost in a terminal to see it and choose, or pass --trust %s for one run)\n", config.ProjectFile, name, name)
	case !o.Trust:
		fmt.Fprintf(s.Out, "%q is not trusted: its tools' annotations count as the worst case; trust it with --trust %s, or add it again with --trust\n", name, name)
	}
	return nil
}

// isURL reports whether arg is written as an http or https URL, which no
// server's command is.
func isURL(arg string) bool {
	scheme, rest, ok := strings.Cut(arg, "://")
	return ok && rest != "" && (strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https"))
}

// keyValues parses repeated KEY<sep>VALUE flags. Spaces around a header's
// value are dropped, as HTTP drops them.
func keyValues(vals []string, sep, flag, form string) (map[string]string, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, v := range vals {
		k, val, ok := strings.Cut(v, sep)
		if sep == ":" {
			k, val = strings.TrimSpace(k), strings.TrimSpace(val)
		}
		if !ok || k == "" {
			return nil, usageError(fmt.Errorf("%s %q: write it as %s", flag, sanitize.Line(v), form))
		}
		out[k] = val
	}
	return out, nil
}

type mcpRemoveOptions struct {
	Name  string // the NAME argument
	Scope string
}

func newMCPRemoveCmd(g *globalOptions, s *streams) *cobra.Command {
	o := &mcpRemoveOptions{}
	cmd := &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove a server from your config (or the project's .mcp.json)",
		Long: `Remove a server's entry. Without --scope, the server is looked for in your
own config and in .mcp.json in the working directory; when both define it,
say which with --scope.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return runMCPRemove(cmd.Context(), g, o, s)
		},
	}
	cmd.Flags().StringVarP(&o.Scope, "scope", "s", "", "remove from `user` (your config) or project (.mcp.json here)")
	return cmd
}

func runMCPRemove(_ context.Context, g *globalOptions, o *mcpRemoveOptions, s *streams) error {
	name := o.Name
	scope := o.Scope
	if scope == "" {
		var found, looked []string
		for _, sc := range []string{"user", "project"} {
			if sc == "project" && (g.ConfigFile != "" || s.WorkDir == "") {
				continue
			}
			file, src, err := scopeFile(g, s, sc)
			if err != nil {
				return err
			}
			looked = append(looked, file)
			names, _, err := config.ServerNames(file, src, s.Getenv)
			if err != nil {
				return err
			}
			if slices.Contains(names, name) {
				found = append(found, sc)
			}
		}
		switch len(found) {
		case 0:
			return usageError(fmt.Errorf("no server named %q in %s", sanitize.Line(name), strings.Join(looked, " or ")))
		case 2:
			return usageError(fmt.Errorf("server %q is defined in your config and in %s; say which to remove with --scope user or --scope project", name, config.ProjectFile))
		}
		scope = found[0]
	}
	file, src, err := scopeFile(g, s, scope)
	if err != nil {
		return err
	}
	w, err := config.RemoveServer(file, src, name, s.Getenv)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "removed server %q from %s (%s scope)\n", name, w.Path, scope)
	return nil
}

type mcpListOptions struct {
	JSON bool
}

func newMCPListCmd(g *globalOptions, s *streams) *cobra.Command {
	o := &mcpListOptions{}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List every configured server with where it comes from",
		Long: `List every configured server, without starting any: its scope (user, project
or flag), transport, trust, command or URL, and the file that defines it.

TRUST is "trusted" (by your config, --trust, or a consent that trusted it),
"-" (not trusted), "needs-consent" (a project server you have not answered
for) or "disabled".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runMCPList(cmd.Context(), g, o, s)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	return cmd
}

// mcpServerJSON is the stable --json shape of one listed server.
type mcpServerJSON struct {
	Name         string   `json:"name"`
	Scope        string   `json:"scope"`
	File         string   `json:"file,omitempty"`
	Transport    string   `json:"transport"`
	Command      string   `json:"command,omitempty"`
	Args         []string `json:"args,omitempty"`
	URL          string   `json:"url,omitempty"` // query values and userinfo redacted
	EnvNames     []string `json:"envNames,omitempty"`
	HeaderNames  []string `json:"headerNames,omitempty"`
	Trusted      bool     `json:"trusted"`
	NeedsConsent bool     `json:"needsConsent"`
	Disabled     bool     `json:"disabled"`
}

func runMCPList(_ context.Context, g *globalOptions, o *mcpListOptions, s *streams) error {
	st, err := loadSetup(g, s)
	if err != nil {
		return err
	}
	held := map[string]client.State{}
	for _, h := range st.held {
		held[h.Name] = h.State
	}
	out := []mcpServerJSON{}
	if !st.demo {
		for _, srv := range st.cfg.Servers {
			srv = srv.Shown() // no value read from the environment
			out = append(out, mcpServerJSON{
				Name: srv.Name, Scope: srv.Source.String(), File: srv.File, Transport: srv.Transport,
				Command: srv.Command, Args: srv.Args, URL: redactedURL(srv.URL),
				EnvNames: slices.Sorted(maps.Keys(srv.Env)), HeaderNames: slices.Sorted(maps.Keys(srv.Headers)),
				Trusted:      st.trusted[srv.Name] || srv.Disabled && srv.Trust,
				NeedsConsent: held[srv.Name] == stateNeedsConsent,
				Disabled:     srv.Disabled,
			})
		}
	}
	if o.JSON {
		return writeJSON(s, out)
	}
	if len(out) == 0 {
		fmt.Fprintln(s.Err, "no servers configured (without any, mcphost runs its built-in demo servers); add one with: mcphost mcp add NAME -- COMMAND [ARGS...]")
		return nil
	}
	tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSCOPE\tTRANSPORT\tTRUST\tCOMMAND/URL\tFILE")
	for _, srv := range out {
		trust := "-"
		switch {
		case srv.Disabled:
			trust = "disabled"
		case srv.NeedsConsent:
			trust = "needs-consent"
		case srv.Trusted:
			trust = "trusted"
		}
		target := srv.URL
		if srv.Command != "" {
			target = strings.Join(quoteWords(append([]string{srv.Command}, srv.Args...)), " ")
		}
		file := srv.File
		if file == "" {
			file = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", sanitize.Line(srv.Name), srv.Scope, srv.Transport, trust,
			sanitize.Line(sanitize.Truncate(target, 80)), sanitize.Line(file))
	}
	return tw.Flush()
}

func redactedURL(u string) string {
	if u == "" {
		return ""
	}
	return client.RedactURL(u)
}

type mcpImportOptions struct {
	From         string
	Yes          bool
	RenamePrefix string
}

func newMCPImportCmd(g *globalOptions, s *streams) *cobra.Command {
	o := &mcpImportOptions{}
	cmd := &cobra.Command{
		Use:   "import",
		Short: "Import servers from other MCP hosts' configs into yours",
		Long: `Find the servers other MCP hosts have configured on this machine and add them to
your own config, after showing what would be added and asking.

Read: Claude Desktop's claude_desktop_config.json; Claude Code's ~/.claude.json
(its user servers, and those of the working directory's project) and the
project's .mcp.json; Cursor's ~/.cursor/mcp.json and .cursor/mcp.json; VS Code's
user mcp.json and .vscode/mcp.json; Codex's ~/.codex/config.toml
($CODEX_HOME) and .codex/config.toml.

Nothing is trusted on import, and no auto-approval or allowed-tools list is
carried over: another program's approval is not yours. Values mcphost cannot
resolve, such as VS Code's ${input:...} prompts, are left out with a note. A
name your config already has is skipped (or imported under --rename-prefix).
Without a terminal to ask on, --yes is needed; otherwise the plan is shown and
the command exits 2.`,
		Example: `  mcphost mcp import
  mcphost mcp import --from claude-desktop --yes
  mcphost mcp import --from vscode --rename-prefix vscode-`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runMCPImport(cmd.Context(), g, o, s)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.From, "from", "", "import only from `HOST`: "+strings.Join(config.ImportSources, ", "))
	f.BoolVarP(&o.Yes, "yes", "y", false, "add the servers without asking")
	f.StringVar(&o.RenamePrefix, "rename-prefix", "", "import a server whose name is taken as `PREFIX`NAME")
	return cmd
}

// homeDir is the person's home directory, from the injected environment.
func homeDir(s *streams) string {
	if h := s.Getenv("HOME"); h != "" {
		return h
	}
	return s.Getenv("USERPROFILE")
}

func runMCPImport(_ context.Context, g *globalOptions, o *mcpImportOptions, s *streams) error {
	if o.From != "" && !slices.Contains(config.ImportSources, o.From) {
		return usageError(fmt.Errorf("--from %q: use one of %s", sanitize.Line(o.From), strings.Join(config.ImportSources, ", ")))
	}
	home := homeDir(s)
	if home == "" {
		return usageError(errors.New("cannot tell where your home directory is: HOME is not set"))
	}
	target, _, err := scopeFile(g, s, "user")
	if err != nil {
		return err
	}
	taken, _, err := config.ServerNames(target, config.SourceUser, s.Getenv)
	if err != nil {
		return fmt.Errorf("%w\nnothing was imported: fix your config first", err)
	}
	pl := config.ImportPlace{Home: home, GOOS: runtime.GOOS, WorkDir: s.WorkDir, Getenv: s.Getenv}
	takenBy := map[string]string{}
	for _, n := range taken {
		takenBy[n] = "your config"
	}
	var add []config.NamedEntry
	var looked []string
	found, broken := 0, 0
	for _, f := range config.ImportFiles(pl, o.From) {
		imps, err := config.ReadImport(f, pl)
		if errors.Is(err, fs.ErrNotExist) {
			if !slices.Contains(looked, f.Path) {
				looked = append(looked, f.Path)
			}
			continue
		}
		if err != nil {
			fmt.Fprintf(s.Err, "mcphost: warning: %s; its servers are not imported\n", sanitize.Line(err.Error()))
			broken++
			continue
		}
		if len(imps) == 0 {
			continue
		}
		found++
		fmt.Fprintf(s.Out, "From %s (%s, %s scope):\n", f.From, sanitize.Line(f.Path), f.Scope)
		for _, imp := range imps {
			name, why := importName(imp, takenBy, o.RenamePrefix, target)
			if why == "" {
				why = imp.Skip
			}
			ne := config.NamedEntry{Name: name, Entry: imp.Entry}
			if why == "" {
				if err := config.CheckAdd(target, config.SourceUser, []config.NamedEntry{ne}, s.Getenv); err != nil {
					var ce *config.Error
					why = err.Error()
					if errors.As(err, &ce) {
						why = strings.TrimSuffix(ce.Msg, "; the file was not changed")
					}
				}
			}
			if why != "" {
				fmt.Fprintf(s.Out, "  skip %s: %s\n", planText(imp.Name), planText(why))
				continue
			}
			takenBy[name] = f.From
			add = append(add, ne)
			printPlanned(s, imp, name)
		}
	}
	if found == 0 && broken > 0 {
		return usageError(errors.New("nothing to import: the files found do not parse (see above)"))
	}
	if found == 0 {
		where := "any other MCP host"
		if o.From != "" {
			where = o.From
		}
		fmt.Fprintf(s.Err, "no servers of %s found; looked in:\n  %s\n", where, strings.Join(looked, "\n  "))
		return nil
	}
	if len(add) == 0 {
		fmt.Fprintln(s.Err, "nothing to import")
		return nil
	}
	question := fmt.Sprintf("Add %s to %s?", nounCount(len(add), "server"), target)
	switch {
	case o.Yes:
	case !s.Terminal:
		return usageError(fmt.Errorf("%s Not without confirmation, and there is no terminal to ask on: run again with --yes to add the servers shown above", question))
	default:
		fmt.Fprintf(s.Out, "%s [y/N] ", question)
		line, _ := bufio.NewReader(s.In).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(s.Err, "nothing was added")
			return nil
		}
	}
	w, err := config.AddServers(target, config.SourceUser, add, s.Getenv)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "added %s to %s\n", nounCount(len(add), "server"), w.Path)
	fmt.Fprintln(s.Out, "none of them is trusted: their tools' annotations count as the worst case until you trust a server (--trust NAME, or \"trust\": true in your config)")
	return nil
}

// importName is the name imp is imported under, or why it cannot be.
func importName(imp config.Imported, takenBy map[string]string, prefix, target string) (string, string) {
	name := imp.Name
	if !config.ValidName(name) {
		return "", fmt.Sprintf("mcphost cannot name a server %q (letters, digits, '-', '_' and '.', at most 64 characters)", name)
	}
	by, taken := takenBy[name]
	if !taken {
		return name, ""
	}
	if prefix == "" {
		where := "is already in " + target
		if by != "your config" {
			where = "was imported above from " + by
		}
		return "", fmt.Sprintf("a server named %q %s (--rename-prefix PREFIX imports it as PREFIX%s)", name, where, name)
	}
	renamed := prefix + name
	if !config.ValidName(renamed) {
		return "", fmt.Sprintf("its name is taken, and %q is not a valid name either", renamed)
	}
	if _, taken := takenBy[renamed]; taken {
		return "", fmt.Sprintf("its name is taken, and so is %q", renamed)
	}
	return renamed, ""
}

// printPlanned shows one server that would be added: its command or URL,
// and the names (never the values) of its environment and headers.
func printPlanned(s *streams, imp config.Imported, name string) {
	e := imp.Entry
	label := sanitize.Line(name)
	if name != imp.Name {
		label += " (renamed from " + sanitize.Line(imp.Name) + ")"
	}
	target := redactedURL(e.URL) + " (" + e.Type + ")"
	if e.Command != "" {
		target = strings.Join(quoteWords(append([]string{e.Command}, e.Args...)), " ")
	}
	fmt.Fprintf(s.Out, "  + %s: %s\n", label, planText(target))
	if len(e.Env) > 0 {
		fmt.Fprintf(s.Out, "      env: %s (values not shown)\n", planText(strings.Join(slices.Sorted(maps.Keys(e.Env)), ", ")))
	}
	if len(e.Headers) > 0 {
		fmt.Fprintf(s.Out, "      headers: %s (values not shown)\n", planText(strings.Join(slices.Sorted(maps.Keys(e.Headers)), ", ")))
	}
	if e.Disabled {
		fmt.Fprintln(s.Out, "      disabled there, and so here")
	}
	for i, n := range imp.Notes {
		if i == maxImportNotes {
			fmt.Fprintf(s.Out, "      note: %d more notes about this server are not shown\n", len(imp.Notes)-i)
			break
		}
		fmt.Fprintf(s.Out, "      note: %s\n", planText(n))
	}
}

// maxImportNotes bounds the notes shown per server: a project's file comes
// with whatever was cloned, and must not flood the terminal.
const maxImportNotes = 10

// planText is a value from another host's file, fit for one line of the
// plan: escaped, and cut when long.
func planText(v string) string {
	return sanitize.Line(sanitize.Truncate(v, 300))
}
