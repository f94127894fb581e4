package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/oauth"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/spf13/cobra"
)

type authLoginOptions struct {
	Server    string // the SERVER argument
	NoBrowser bool
	Timeout   time.Duration
}

type authStatusOptions struct {
	JSON bool
}

type authLogoutOptions struct {
	Server string // the SERVER argument
}

func newAuthCmd(g *globalOptions, s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "auth",
		Short: "Log in to HTTP servers that require OAuth",
		Long: `Servers reached over streamable HTTP may require an OAuth login. auth login
runs it once, in a browser; every other command then uses the stored token,
refreshing it when it expires, and fails with exit code 2 when a server needs
a new login.

Tokens are kept under $XDG_STATE_HOME/mcphost/tokens, readable only by you,
and are only ever sent to the server (scheme, host and port) they were issued for.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError(errors.New("auth needs a command: login, status or logout"))
		},
	}
	lo := &authLoginOptions{}
	login := &cobra.Command{
		Use:   "login SERVER",
		Short: "Log in to a server in your browser",
		Long: `Log in to an HTTP server: mcphost asks the server where to log in, shows the
authorization URL, opens it in your browser (unless --no-browser), and waits
for the browser to come back to a one-time address on 127.0.0.1.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			lo.Server = args[0]
			return runAuthLogin(cmd.Context(), g, lo, s)
		},
	}
	login.Flags().BoolVar(&lo.NoBrowser, "no-browser", false, "only print the authorization URL; do not open a browser")
	login.Flags().DurationVar(&lo.Timeout, "timeout", oauth.DefaultLoginTimeout, "wait at most `DURATION` (such as 90s) for the browser")
	so := &authStatusOptions{}
	status := &cobra.Command{
		Use:   "status",
		Short: "Show, for each HTTP server, whether you are logged in",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAuthStatus(cmd.Context(), g, so, s)
		},
	}
	status.Flags().BoolVar(&so.JSON, "json", false, "print JSON")
	logout := &cobra.Command{
		Use:   "logout SERVER",
		Short: "Revoke and forget the token of a server",
		Long: `Forget a server's token, after asking the authorization server to revoke it
(RFC 7009) when it offers revocation. The token is removed here even when
revocation fails; mcphost then says so, since the token stays valid at the
authorization server until it expires.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAuthLogout(cmd.Context(), g, &authLogoutOptions{Server: args[0]}, s)
		},
	}
	cmd.AddCommand(login, status, logout)
	return cmd
}

func tokenStore(stateDir string) *oauth.Store {
	return oauth.NewStore(filepath.Join(stateDir, "tokens"))
}

// oauthClient returns the pre-registered OAuth client a server's
// configuration names, or nil for dynamic registration.
func oauthClient(st *setup, server string) *oauth.ClientConfig {
	srv, ok := st.cfg.Server(server)
	if !ok || srv.OAuth == nil {
		return nil
	}
	return &oauth.ClientConfig{ClientID: srv.OAuth.ClientID, ClientSecret: srv.OAuth.ClientSecret, Scopes: srv.OAuth.Scopes}
}

// attachOAuth gives every streamable HTTP server a handler that uses the
// stored token and refreshes it, but cannot log in: commands other than
// auth login run without a person at a browser.
func (st *setup) attachOAuth() {
	store := tokenStore(st.stateDir)
	for i := range st.specs {
		sp := &st.specs[i]
		if sp.Transport != client.TransportHTTP || sp.OAuth != nil {
			continue
		}
		h, err := oauth.NewHandler(oauth.Config{Server: sp.Name, URL: sp.URL, Store: store, Client: oauthClient(st, sp.Name), Headers: sp.Headers})
		if err != nil {
			continue // a URL the transport will refuse with its own error
		}
		sp.OAuth = h
	}
}

// loginNeeded returns a usage error (exit 2) naming the command to run for
// each server — of only, if given — that failed to start because it needs a
// login.
func (st *setup) loginNeeded(m *client.Manager, only ...string) error {
	var errs []error
	for _, ss := range m.Servers() {
		if ss.State == client.StateReady || len(only) > 0 && !slices.Contains(only, ss.Name) {
			continue
		}
		sp, ok := m.Spec(ss.Name)
		if !ok {
			continue
		}
		if h, ok := sp.OAuth.(*oauth.Handler); ok {
			if lr := h.LoginRequired(); lr != nil {
				errs = append(errs, lr)
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return usageError(errors.Join(errs...))
}

func runAuthLogin(ctx context.Context, g *globalOptions, o *authLoginOptions, s *streams) error {
	name := o.Server
	st, err := loadSetup(g, s)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(st.specs, func(sp client.Spec) bool { return sp.Name == name })
	if i < 0 {
		for _, h := range st.held {
			if h.Name == name {
				return usageError(fmt.Errorf("server %q is %s: %s", name, h.State, h.LastError))
			}
		}
		return usageError(fmt.Errorf("no server named %q", name))
	}
	sp := st.specs[i]
	if sp.Transport != client.TransportHTTP {
		transport := sp.Transport
		if transport == "" { // as the client names it
			transport = client.TransportStdio
			if sp.Dial != nil {
				transport = client.TransportInMemory
			}
		}
		why := "only streamable HTTP servers log in with OAuth"
		if transport == client.TransportStdio {
			why += "; a stdio server takes its credentials from its environment (\"env\" in its config)"
		}
		return usageError(fmt.Errorf("server %q uses the %s transport: %s", name, transport, why))
	}
	cfg := oauth.Config{Server: name, URL: sp.URL, Store: tokenStore(st.stateDir), Client: oauthClient(st, name), Headers: sp.Headers}
	prompt := func(_ context.Context, authURL string) error {
		fmt.Fprintf(s.Err, "To log in to %s, open this URL in a browser:\n", name)
		fmt.Fprintf(s.Out, "%s\n", sanitize.Line(authURL))
		if note := hostNote(authURL); note != "" {
			fmt.Fprintf(s.Err, "%s\n", note)
		}
		if o.NoBrowser {
			fmt.Fprintf(s.Err, "Waiting up to %s for the browser to come back…\n", o.Timeout)
			return nil
		}
		if err := oauth.OpenBrowser(authURL); err != nil {
			fmt.Fprintf(s.Err, "mcphost: could not open a browser (%v); open the URL yourself\n", err)
		}
		fmt.Fprintf(s.Err, "Waiting up to %s for the browser to come back…\n", o.Timeout)
		return nil
	}
	rec, err := oauth.Login(ctx, cfg, oauth.LoginOptions{Prompt: prompt, Timeout: o.Timeout})
	if errors.Is(err, oauth.ErrNotProtected) {
		fmt.Fprintf(s.Out, "server %s did not ask for authorization: there is nothing to log in to\n", name)
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "logged in to %s%s\n", name, describeGrant(rec.Scopes, rec.Expiry, rec.RefreshToken != ""))
	return nil
}

// hostNote spells out an internationalized host name in ASCII, so that a
// look-alike domain shows for what it is.
func hostNote(authURL string) string {
	u, err := oauth.CheckAuthorizationURL(authURL)
	if err != nil {
		return ""
	}
	return oauth.HostNote(u)
}

func describeGrant(scopes []string, expiry time.Time, refreshable bool) string {
	var parts []string
	if len(scopes) > 0 {
		parts = append(parts, "scopes "+sanitize.Line(strings.Join(scopes, " ")))
	}
	if !expiry.IsZero() {
		e := "token expires " + expiry.Local().Format("2006-01-02 15:04")
		if refreshable {
			e += ", renewed automatically"
		}
		parts = append(parts, e)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// httpServers are the configured streamable HTTP servers, started or not.
func httpServers(cfg *config.Config) []config.Server {
	var out []config.Server
	for _, srv := range cfg.Servers {
		if srv.Transport == client.TransportHTTP {
			out = append(out, srv)
		}
	}
	return out
}

func runAuthStatus(_ context.Context, g *globalOptions, o *authStatusOptions, s *streams) error {
	st, err := loadSetup(g, s)
	if err != nil {
		return err
	}
	store := tokenStore(st.stateDir)
	now := time.Now()
	out := []oauth.Status{}
	for _, srv := range httpServers(st.cfg) {
		if st.demo {
			break
		}
		ss, err := store.Status(srv.Name, srv.URL, now)
		if err != nil {
			return err
		}
		out = append(out, ss)
	}
	if o.JSON {
		return writeJSON(s, out)
	}
	if len(out) == 0 {
		fmt.Fprintln(s.Err, "no streamable HTTP servers are configured")
		return nil
	}
	tw := tabwriter.NewWriter(s.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tSTATUS\tEXPIRES\tSCOPES\tISSUER")
	for _, ss := range out {
		state := strings.ReplaceAll(ss.State, "-", " ")
		if ss.State == oauth.StateExpired {
			state = "expired (renewed on next use)"
		}
		expires := "-"
		if !ss.Expiry.IsZero() {
			expires = ss.Expiry.Local().Format("2006-01-02 15:04")
		}
		scopes := "-"
		if len(ss.Scopes) > 0 {
			scopes = sanitize.Line(strings.Join(ss.Scopes, " "))
		}
		issuer := "-"
		if ss.Issuer != "" {
			issuer = sanitize.Line(ss.Issuer)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", ss.Server, state, expires, scopes, issuer)
		if ss.Reason != "" && ss.State != oauth.StateNotLoggedIn {
			fmt.Fprintf(tw, "\t%s\t\t\t\n", sanitize.Line(ss.Reason))
		}
	}
	return tw.Flush()
}

// runAuthLogout needs no configuration, so that a token can be removed
// even when the configuration no longer names its server or does not load;
// the configuration is read only for a pre-registered client's secret.
func runAuthLogout(ctx context.Context, g *globalOptions, o *authLogoutOptions, s *streams) error {
	name := o.Server
	store := tokenStore(config.StateDir(s.Getenv("XDG_STATE_HOME")))
	rec, loadErr := store.Load(name)
	var revoked error
	if rec != nil {
		secret := ""
		if cfg, _, err := config.Load(loadOptions(g, s)); err == nil {
			if srv, ok := cfg.Server(name); ok && srv.OAuth != nil {
				secret = srv.OAuth.ClientSecret
			}
		}
		rctx, cancel := context.WithTimeout(ctx, revokeTimeout)
		revoked = oauth.Revoke(rctx, rec, secret)
		cancel()
	}
	removed, err := store.Delete(name)
	if err != nil {
		return err
	}
	if !removed {
		if loadErr != nil {
			return loadErr
		}
		fmt.Fprintf(s.Out, "no stored token for %s\n", name)
		return nil
	}
	switch {
	case rec == nil:
		fmt.Fprintf(s.Out, "logged out of %s: its token is removed (the file could not be read, so it was not revoked: %v)\n", name, loadErr)
	case revoked == nil:
		fmt.Fprintf(s.Out, "logged out of %s: its token is revoked and removed\n", name)
	case errors.Is(revoked, oauth.ErrNoRevocation):
		fmt.Fprintf(s.Out, "logged out of %s: its token is removed; the authorization server offers no revocation, so the token stays valid there until it expires\n", name)
	default:
		fmt.Fprintf(s.Out, "logged out of %s: its token is removed, but revoking it failed (%v), so it stays valid at the authorization server until it expires\n", name, sanitize.Line(revoked.Error()))
	}
	return nil
}

// revokeTimeout bounds the revocation requests of a logout.
const revokeTimeout = 15 * time.Second
