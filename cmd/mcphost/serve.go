package main

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcphost/mcphost/approver"
	"github.com/mcphost/mcphost/approver/web"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/later"
	"github.com/mcphost/mcphost/pgstore"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/mcphost/mcphost/serve"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
)

// serveOptions are the flags of `mcphost serve`.
type serveOptions struct {
	AskRoute string
	NoPrefix bool
	HTTP     string
	// AllowRemote lets --http listen on an address that is not loopback.
	AllowRemote bool
	TokenFile   string
	// ToolSearch is never, auto or always; MaxTools the host's cap on
	// tools, for auto.
	ToolSearch string
	MaxTools   int
	// NoToken serves HTTP without the bearer token, on loopback only.
	NoToken bool
	// TLSCert and TLSKey serve HTTPS; PlainHTTP lets --allow-remote serve
	// plain HTTP without them.
	TLSCert, TLSKey string
	PlainHTTP       bool
	// ListWait bounds how long tools/list waits for servers still
	// starting that have no pinned tools to offer.
	ListWait time.Duration
	// ApprovalLifetime is how long a call no one approved is held for a
	// later approval, and how long that approval waits for the retry.
	ApprovalLifetime time.Duration
	// Web serves the approval page on WebAddr (approve.go).
	Web     bool
	WebAddr string
	// AuthIssuer, AuthAudience, AuthScopes and AuthClientID override the
	// config's "serve"."auth" (serveAuth): serve --http as an OAuth
	// resource server. The introspection secret comes from the config or
	// MCPHOST_SERVE_CLIENT_SECRET, never a flag (others can read argv).
	AuthIssuer, AuthAudience, AuthClientID string
	AuthScopes                             []string
	// Store is the PostgreSQL store (store.go) that replicas share: the
	// audit chain, the held calls, pins, and stateless clients' session
	// state; "" for the config's "store", if any.
	Store string
	// DrainTimeout, over --http, is how long a stop signal lets the calls
	// in flight finish, readiness saying no, before the rest are cancelled.
	DrainTimeout time.Duration
}

func newServeCmd(g *globalOptions, s *streams) *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Be an MCP server that puts the gate in front of your servers, for any host",
		Long: `Serve the tools of every configured server to another MCP host (Claude Code,
Claude Desktop, Cursor, VS Code, Codex...) through the gate: the host sees each
tool as server__tool with the annotations mcphost decided on (an untrusted
server's claims as the worst case), and every call is decided, asked, run and
audited as in the chat.

A call that needs approval is asked through the host's own form (MCP
elicitation) when the host offers one, else through a waiting approver
(mcphost approve), else refused with what needed approval and how to get it.
--ask-via forces one of them (elicit, approver or deny).

On standard input and output by default; --http ADDR serves streamable HTTP
(2025-11-25, each client its own session, and 2026-07-28, each client
identity one gate while serve runs) on loopback unless --allow-remote, with
a bearer token from the state directory (--token-file). An address other
machines can reach is served only over TLS (--tls-cert, --tls-key), unless
--insecure-plain-http says plain HTTP is meant.
--insecure-no-token drops the token on a loopback address, for a client that
cannot send one; any process on the machine can then call the tools.
For a team, --auth-issuer URL --auth-audience URL (or "serve": {"auth": ...}
in your config) accept the issuer's OAuth access tokens for this server
instead of the one token: each person has their own grants and taint, and
the audit log names them.
/healthz (live) and /readyz (ready: servers started, audit log writable, not
stopping) answer without the token, for a load balancer; --drain-timeout lets
the calls in flight at a stop signal finish, not ready meanwhile, before the
rest are cancelled.

--tool-search (or --tool-search=auto) offers mcphost__search_tools and the
tools found so far instead of every tool when there are more than 100 tools
of trusted servers, their definitions pass the budget, or there are more
tools than --max-tools (the host's cap, 128 for OpenAI-backed hosts);
--tool-search=always searches whatever the tools.

While a server is still starting, the host is offered the tools mcphost
pinned for it in an earlier run, exactly as pinned; a call of one waits for
the server and is decided on what the server then lists. A server with
nothing pinned holds the host's tools/list for up to a second, and up to
--list-wait while no tool at all is ready to offer.`,
		Example: `  {"mcpServers": {"mcphost": {"command": "mcphost", "args": ["serve"]}}}
  mcphost serve --http 127.0.0.1:8765
  mcphost serve --tool-search --max-tools 128`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), g, o, s)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.AskRoute, "ask-via", "auto", "ask through `WAY`: auto (the client's form, else an approver, else refuse), elicit, approver or deny")
	f.BoolVar(&o.NoPrefix, "no-prefix", false, "export raw tool and prompt names (only when one server is served)")
	f.StringVar(&o.HTTP, "http", "", "serve streamable HTTP on `ADDR` (such as 127.0.0.1:8765) at /mcp instead of stdio")
	f.BoolVar(&o.AllowRemote, "allow-remote", false, "let --http listen on an address that is not loopback")
	f.StringVar(&o.ToolSearch, "tool-search", "never", "offer a tool search instead of every tool: `MODE` auto (past the budget or --max-tools; the flag alone), always or never")
	f.Lookup("tool-search").NoOptDefVal = "auto"
	f.IntVar(&o.MaxTools, "max-tools", 0, "the most tools the host accepts (`N`, such as 128 for OpenAI-backed hosts): --tool-search auto searches past it")
	f.BoolVar(&o.NoToken, "insecure-no-token", false, "serve --http without the bearer token (loopback only): any local process can call the tools")
	f.StringVar(&o.TLSCert, "tls-cert", "", "serve --http over TLS with the certificate (chain) in PEM `FILE`; needs --tls-key")
	f.StringVar(&o.TLSKey, "tls-key", "", "the private key in PEM `FILE` of --tls-cert")
	f.BoolVar(&o.PlainHTTP, "insecure-plain-http", false, "let --allow-remote serve plain HTTP without TLS: the bearer token and every call cross the network in clear")
	f.DurationVar(&o.ApprovalLifetime, "approval-lifetime", later.DefaultLifetime, "hold a call no one approved for `DURATION` so that a person can approve it later (with `mcphost approve`) and the same call, retried, runs once")
	f.DurationVar(&o.ListWait, "list-wait", serve.DefaultListWait, "let tools/list wait up to `DURATION` after serve starts, while no tool is ready to offer, for servers still starting that have no pinned tools")
	f.BoolVar(&o.Web, "web", false, "serve the approval page on 127.0.0.1 too (its link is printed on standard error), where a person answers the calls of every serve")
	f.StringVar(&o.WebAddr, "web-addr", web.DefaultAddr, "with --web, the page's `ADDR` (127.0.0.1 and a port, 0 for a free one)")
	f.StringVar(&o.Store, "store", "", "keep the audit chain, the calls held for approval, the pins, remembered trust, \"always\" grants and 2026-07-28 clients' grants, taint and spent answers in the PostgreSQL database at `URL` (postgres://…), shared with every replica that names it (default: the config's \"store\", else the state directory's files)")
	f.DurationVar(&o.DrainTimeout, "drain-timeout", 0, "with --http, on a stop signal answer not ready on "+serve.ReadyPath+" and let the calls in flight finish for up to `DURATION` before cancelling the rest (0: cancel at once)")
	f.StringVar(&o.TokenFile, "token-file", "", "read the HTTP bearer token from `FILE` (default: serve-token in the state directory, created on first start)")
	f.StringVar(&o.AuthIssuer, "auth-issuer", "", "accept, instead of the bearer token, access tokens of the OAuth issuer `URL` (with --auth-audience; config: \"serve\": {\"auth\": ...})")
	f.StringVar(&o.AuthAudience, "auth-audience", "", "this server's `URL` as clients reach it, such as https://mcp.example.com/mcp: the audience tokens must be issued for")
	f.StringSliceVar(&o.AuthScopes, "auth-scope", nil, "a `SCOPE` every access token must carry (repeatable)")
	f.StringVar(&o.AuthClientID, "auth-client-id", "", "serve's client `ID` at the issuer, to introspect opaque tokens (its secret in MCPHOST_SERVE_CLIENT_SECRET)")
	return cmd
}

func runServe(ctx context.Context, g *globalOptions, o *serveOptions, s *streams) error {
	via, err := serve.ParseAskRoute(o.AskRoute)
	if err != nil {
		return usageError(err)
	}
	search, err := serve.ParseToolSearch(o.ToolSearch)
	if err != nil {
		return usageError(err)
	}
	if o.MaxTools < 0 || o.MaxTools == 1 {
		return usageError(fmt.Errorf("--max-tools %d: want 0 (no cap) or at least 2, room for the search tool and a tool found", o.MaxTools))
	}
	if o.ApprovalLifetime <= 0 {
		return usageError(fmt.Errorf("--approval-lifetime %s: want a positive duration, such as 10m", o.ApprovalLifetime))
	}
	if o.DrainTimeout < 0 {
		return usageError(fmt.Errorf("--drain-timeout %s: want 0 (cancel at once) or a positive duration, such as 20s", o.DrainTimeout))
	}
	if o.DrainTimeout > 0 && o.HTTP == "" {
		return usageError(errors.New("--drain-timeout is for --http: on standard input and output the one client is the one that stops serve"))
	}
	if o.ListWait <= 0 {
		return usageError(fmt.Errorf("--list-wait %s: want a positive duration, such as 8s", o.ListWait))
	}
	if o.MaxTools > 0 && search == host.SearchNever {
		return usageError(errors.New("--max-tools is the host's cap for --tool-search: add --tool-search (auto) to search past it"))
	}
	switch {
	case o.NoToken && o.HTTP == "":
		return usageError(errors.New("--insecure-no-token is for --http: on standard input and output there is no token to drop"))
	case o.NoToken && o.TokenFile != "":
		return usageError(errors.New("--insecure-no-token and --token-file contradict each other: drop one"))
	case (o.TLSCert != "" || o.TLSKey != "" || o.PlainHTTP) && o.HTTP == "":
		return usageError(errors.New("--tls-cert, --tls-key and --insecure-plain-http are for --http: standard input and output cross no network"))
	case (o.TLSCert == "") != (o.TLSKey == ""):
		return usageError(errors.New("--tls-cert and --tls-key go together: give the certificate and its private key"))
	case o.PlainHTTP && o.TLSCert != "":
		return usageError(errors.New("--insecure-plain-http and --tls-cert contradict each other: drop one"))
	case (o.AuthIssuer != "" || o.AuthAudience != "" || o.AuthClientID != "" || o.AuthScopes != nil) && o.HTTP == "":
		return usageError(errors.New("--auth-issuer, --auth-audience, --auth-scope and --auth-client-id are for --http: on standard input and output the host that started serve is the caller"))
	}
	// The approver socket: where `mcphost approve` answers the calls the
	// client cannot ask about. It is made first, before the configuration
	// is read and any server starts, so that an approver waiting for this
	// serve connects at once and is there for the first call. Without it
	// serve still runs, asking through the client's form or refusing.
	var approve serve.Approver
	if b, err := approver.Listen(approver.SocketPath(config.StateDir(s.Getenv("XDG_STATE_HOME"))), approver.Options{Label: serveLabel(o, s.WorkDir), Passkeys: passkeyVerifier(s)}); err != nil {
		if via == serve.AskApprover {
			return withCode(exitError, fmt.Errorf("--ask-via approver: %w", err))
		}
		fmt.Fprintf(s.Err, "mcphost: warning: %v; calls that need a person are asked through the client's form, or refused\n", err)
	} else {
		defer b.Close()
		approve = b
	}
	if o.Web {
		stop, err := startWebPage(ctx, s, o.WebAddr)
		if err != nil {
			return usageError(err)
		}
		defer stop()
	} else if o.WebAddr != web.DefaultAddr {
		return usageError(errors.New("--web-addr is for --web: add --web to serve the approval page"))
	}
	st, err := loadSetup(g, s)
	if err != nil {
		return err
	}
	if o.NoPrefix && len(st.specs) != 1 {
		return usageError(fmt.Errorf("--no-prefix needs exactly one served server, got %d: raw names of several servers can collide", len(st.specs)))
	}
	policy, err := st.policy(g, s)
	if err != nil {
		return err
	}
	if o.Store != "" {
		if err := pgstore.CheckURL(o.Store); err != nil {
			return usageError(fmt.Errorf("--store: %w", err))
		}
		st.storeURL = storeURL(o.Store, st.cfg, st.managed, s)
	}
	var held serve.Later = later.New(later.Options{Lifetime: o.ApprovalLifetime})
	var pinStore host.Store = st.store
	var sessionState func(key string) host.SessionState // nil: each replica's memory
	var requestStates serve.RequestStates               // nil: this process's key and memory
	trusted := func(name string) bool { return st.trusted[name] }
	if st.storeURL != "" {
		// A replica that cannot reach the store its team shares does not
		// serve: it would be a gate of its own.
		shared, err := openStore(ctx, st.storeURL)
		if err != nil {
			return withCode(exitError, err)
		}
		defer shared.Close() // after the log closes and the calls drain
		st.shared = shared
		held = shared.Later(later.Options{Lifetime: o.ApprovalLifetime})
		// Pins too: a definition one replica pinned is what all compare
		// with. And always grants and remembered trust, read through at
		// every decision, so a revoke through any replica ends them for all
		// (storetrust.go).
		pinStore = sharedStore(shared)
		trusted = st.sharedTrust(shared.Trust())
		st.pins = host.NewPins(pinStore)
		st.pins.KeepDefinitions(host.NewDefinitions(filepath.Join(st.stateDir, "definitions.json")))
		// And a 2026-07-28 client's grants "for this session" and taint,
		// so that it is one session to every replica.
		sessions := shared.Sessions(pgstore.SessionOptions{})
		sessionState = func(key string) host.SessionState { return sessions.For(key) }
		// And what seals its request states and spends them, so that its
		// answer may reach another replica than the question, once.
		rs, rerr := shared.RequestStates(ctx)
		if rerr != nil {
			return withCode(exitError, rerr)
		}
		requestStates = rs
	}
	opened := st.openAudit(g)
	copts := st.clientOpts
	copts.ClientVersion = version
	copts.OnListing = st.pins.Hook(trusted)
	var srv *serve.Server // set before any server starts, so before any can ask
	if headless := copts.Elicitation; headless != nil {
		copts.Elicitation = func(ctx context.Context, server string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return srv.ServerElicitation(headless)(ctx, server, req)
		}
	}
	if model := copts.Sampling; model != nil {
		copts.Sampling = func(ctx context.Context, server string, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return srv.ServerSampling(model)(ctx, server, req)
		}
	}
	// A server's roots/list: the configured roots (--root) when there are
	// any, else those of the client whose call runs there.
	configured := copts.Roots
	copts.ListRoots = func(ctx context.Context, server string) (*mcp.ListRootsResult, bool) {
		return srv.ServerRoots(configured)(ctx, server)
	}
	// A server's log messages during a call reach the client that made it.
	copts.OnLog = func(server string, p *mcp.LoggingMessageParams) { srv.RelayLog(server, p) }
	m := client.New(st.specs, copts)
	defer m.Close()
	var log host.AuditLog
	if l, err := opened.wait(); err != nil {
		fmt.Fprintf(s.Err, "mcphost: warning: %v; only read-only calls will run\n", err)
	} else {
		defer l.Close()
		log = l
	}
	// One export for the process, as the chat has one for its session:
	// flushed, bounded, when serve ends (after the last call's span).
	tel := st.startTelemetry(s) // telemetry.go
	defer func() { tel.warnOf(tel.flush())() }()
	// A team's serve (--http with an issuer) sends the calls the managed
	// policy routes to an approver group to the team page only; the link
	// of a held call is the team page's once it runs (serveHTTP).
	links := &teamLinks{local: heldLink(web.CurrentLink)}
	var route func(server, tool string, tier decide.Tier) *serve.Route
	// Read once: serveHTTP reports authErr after its checks of the address.
	var authOpts *serve.AuthOptions
	var authErr error
	if o.HTTP != "" {
		authOpts, authErr = serveAuth(st, o, s.Getenv)
		if authErr == nil && authOpts != nil {
			route = managedRoute(st.managed)
			if st.managed != nil && len(st.managed.Approvers) > 0 {
				if id, _ := teamPageClient(st, s.Getenv); id == "" {
					// A routed call is answered only on the team page: without
					// it, it could be approved by no one.
					return usageError(fmt.Errorf(`the managed policy routes approvals to groups ("approvers" in %s), which only serve's team approval page answers: set "approveClientId" in "serve"."auth" of your config`, st.managed.Where("approvers")))
				}
			}
		}
	}
	srv = serve.New(serve.Options{
		Catalog: m, Policy: policy, Trusted: trusted, MayTrust: st.mayTrust,
		Audit: log, Store: pinStore, Pins: st.pins, Observer: tel.observer(),
		Approver: approve, AskRoute: via, NoPrefix: o.NoPrefix, ToolSearch: search, MaxTools: o.MaxTools, ListWait: o.ListWait,
		Instructions: serveInstructions(st), Version: version,
		MayApprove: st.mayApprove(), Later: held, SessionState: sessionState, RequestStates: requestStates,
		Notify: desktopNotify, Link: links.link, Route: route,
	})
	defer srv.Close() // before the manager closes
	if o.HTTP != "" {
		return serveHTTP(ctx, st, o, srv, s, links, authOpts, authErr)
	}
	if s.Terminal {
		fmt.Fprintln(s.Err, "mcphost: serve speaks MCP on standard input and output: add it to a host's MCP configuration ({\"command\": \"mcphost\", \"args\": [\"serve\"]}) rather than running it here; Ctrl-C ends it")
	}
	// A signal cancels the call that runs, as in the chat, rather than
	// waiting for it; its gate records how it ended.
	halt := context.AfterFunc(ctx, srv.Halt)
	err = srv.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(s.In), Writer: nopWriteCloser{s.Out}})
	halt()
	drainCalls(srv, s)
	if err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) && !errors.Is(err, mcp.ErrConnectionClosed) {
		return err
	}
	return nil
}

// drainCalls cancels every call that still runs and waits, bounded, for
// each to record its outcome; the audit log is closed only after it (the
// defers of runServe run in that order).
func drainCalls(srv *serve.Server, s *streams) {
	ctx, cancel := context.WithTimeout(context.Background(), serve.CancelledWait)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		fmt.Fprintf(s.Err, "mcphost: warning: %v (waited %s); `mcphost audit verify` lists them as open intents\n", err, serve.CancelledWait)
	}
}

// serveInstructions tell the client what serve is and which servers wait
// for the person's consent.
func serveInstructions(st *setup) string {
	var b strings.Builder
	b.WriteString("mcphost gates these tools: each call is checked before it runs; a call that needs the person's approval is asked or refused with the reason. A refused call must not be retried unchanged.")
	for _, ps := range st.pending {
		fmt.Fprintf(&b, "\nServer %s waits for the person's consent and is not started: %s", sanitize.Name(ps.srv.Name), sanitize.Line(ps.needsConsent(false)))
	}
	return b.String()
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// serveHTTP serves streamable HTTP on o.HTTP until ctx ends. authOpts and
// authErr are what serveAuth made of the options: the OAuth resource
// server serve is (nil: none), or why the options do not make one.
func serveHTTP(ctx context.Context, st *setup, o *serveOptions, srv *serve.Server, s *streams, links *teamLinks, authOpts *serve.AuthOptions, authErr error) error {
	if err := serve.CheckListen(o.HTTP, o.AllowRemote); err != nil {
		return usageError(err)
	}
	if ms := st.managed.ServeRule(); !ms.AllowsHTTP(o.HTTP) {
		return usageError(fmt.Errorf("--http %s: the managed policy (%s) does not let mcphost serve listen there", o.HTTP, st.managed.Where("serve")))
	}
	if authErr != nil {
		return usageError(authErr)
	}
	if o.NoToken {
		if authOpts != nil {
			return usageError(errors.New("--insecure-no-token cannot be used with an OAuth issuer (--auth-issuer or \"serve\".\"auth\" in the config): the issuer's tokens are how callers get in; drop one of them"))
		}
		if err := serve.CheckNoToken(o.HTTP, o.AllowRemote); err != nil {
			return usageError(err)
		}
	}
	if err := serve.CheckPlainHTTP(o.HTTP, o.TLSCert != "", o.PlainHTTP); err != nil {
		return usageError(err)
	}
	var tlsConf *tls.Config
	if o.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey)
		if err != nil {
			return usageError(fmt.Errorf("--tls-cert %s --tls-key %s: %w", o.TLSCert, o.TLSKey, err))
		}
		tlsConf = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	var handler http.Handler
	var created bool
	var path, token string
	var oauth *serve.Auth
	switch {
	case authOpts != nil:
		var err error
		oauth, err = serve.NewAuth(ctx, *authOpts)
		if err != nil {
			return err
		}
		handler = srv.HandlerOAuth(oauth)
	case o.NoToken:
		handler = srv.HandlerWithoutToken()
	default:
		path = o.TokenFile
		if path == "" {
			path = filepath.Join(st.stateDir, "serve-token")
		}
		var err error
		token, created, err = serve.LoadToken(path)
		if err != nil {
			return usageError(err)
		}
		handler = srv.Handler(token)
	}
	ln, err := net.Listen("tcp", o.HTTP)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.HTTP, err)
	}
	scheme := "http"
	if tlsConf != nil {
		ln, scheme = tls.NewListener(ln, tlsConf), "https"
	}
	fmt.Fprintf(s.Err, "mcphost: serving MCP on %s://%s/mcp\n", scheme, ln.Addr())
	if tlsConf == nil && o.PlainHTTP && serve.CheckPlainHTTP(o.HTTP, false, false) != nil {
		fmt.Fprintln(s.Err, "mcphost: warning: --insecure-plain-http: the bearer token and every call cross the network in clear")
	}
	if o.NoToken {
		fmt.Fprintln(s.Err, "mcphost: warning: --insecure-no-token: no bearer token is asked, so any process on this machine can call these tools through the gate")
	}
	switch {
	case created && s.ErrTerminal:
		fmt.Fprintf(s.Err, "mcphost: a new bearer token was saved in %s (shown only now): %s\n", path, token)
	case created:
		// A log (a container's, a service manager's) would keep it.
		fmt.Fprintf(s.Err, "mcphost: a new bearer token was saved in %s; it is not printed, since standard error is not a terminal: give clients the file's content\n", path)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)
	if oauth != nil {
		for _, p := range oauth.MetadataPaths() {
			mux.Handle(p, oauth.Metadata())
		}
		fmt.Fprintf(s.Err, "mcphost: accepting access tokens of %s for %s; metadata at %s\n", authOpts.Issuer, authOpts.Audience, oauth.MetadataURL())
		if id, secret := teamPageClient(st, s.Getenv); id != "" {
			to := serve.TeamOptions{Issuer: authOpts.Issuer, ClientID: id, ClientSecret: secret,
				BaseURL: origin(authOpts.Audience), Secure: tlsConf != nil || strings.HasPrefix(authOpts.Audience, "https://")}
			if st.shared != nil {
				to.Store = st.shared.TeamPage() // logins and sessions every replica knows
			}
			page, err := srv.NewTeamPage(ctx, to)
			if err != nil {
				return err
			}
			links.team = page.Link
			mux.Handle(serve.TeamPath, page.Handler())
			fmt.Fprintf(s.Err, "mcphost: the team approval page is at %s%s (log in with %s)\n", origin(authOpts.Audience), serve.TeamPath, authOpts.Issuer)
		}
	}
	srv.MountHealth(mux) // /healthz and /readyz, without the token (serve/health.go)
	// The server's own complaints (a client speaking plain HTTP to TLS, say)
	// go to serve's stderr like its other warnings.
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(s.Err, "mcphost: http: ", 0)}
	srv.Start(ctx)
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	var serr error
	select {
	case serr = <-done:
	case <-ctx.Done():
		drainFirst(srv, o.DrainTimeout, s)
	}
	// Stop accepting at once; then cancel what runs and wait for every
	// outcome to be recorded; then give the answers (a cancelled call's
	// "outcome unknown") a moment to reach their clients before the
	// connections still open (a client's listening stream) are closed.
	shut := make(chan struct{})
	sctx, cancel := context.WithTimeout(context.Background(), serve.CancelledWait+serve.AnswerGrace)
	defer cancel()
	go func() {
		_ = hs.Shutdown(sctx)
		close(shut)
	}()
	drainCalls(srv, s)
	select {
	case <-shut:
	case <-time.After(2 * time.Second):
	}
	_ = hs.Close()
	if errors.Is(serr, http.ErrServerClosed) {
		serr = nil
	}
	return serr
}

// serveAuth is the OAuth resource server serve --http is, from the
// config's "serve"."auth" with the --auth-* flags over it; nil when
// neither names an issuer (the one bearer token).
func serveAuth(st *setup, o *serveOptions, getenv func(string) string) (*serve.AuthOptions, error) {
	var a serve.AuthOptions
	if st.cfg.Serve != nil && st.cfg.Serve.Auth != nil {
		c := st.cfg.Serve.Auth
		a = serve.AuthOptions{Issuer: c.Issuer, Audience: c.Audience, Scopes: c.Scopes, ClientID: c.ClientID, ClientSecret: c.ClientSecret}
	}
	if o.AuthIssuer != "" {
		a.Issuer = o.AuthIssuer
	}
	if o.AuthAudience != "" {
		a.Audience = o.AuthAudience
	}
	if o.AuthScopes != nil {
		a.Scopes = o.AuthScopes
	}
	if o.AuthClientID != "" {
		a.ClientID = o.AuthClientID
	}
	if v := getenv("MCPHOST_SERVE_CLIENT_SECRET"); v != "" {
		a.ClientSecret = v
	}
	if a.Issuer == "" && a.Audience == "" && a.ClientID == "" && len(a.Scopes) == 0 {
		return nil, nil
	}
	if a.Issuer == "" || a.Audience == "" {
		return nil, errors.New("serve as an OAuth resource server needs both --auth-issuer and --auth-audience (or \"issuer\" and \"audience\" in \"serve\".\"auth\" of the config)")
	}
	if o.TokenFile != "" {
		return nil, errors.New("--token-file cannot be used with an OAuth issuer: callers bring the issuer's access tokens, not serve's token; drop one of them")
	}
	if err := serve.CheckAuthOptions(a); err != nil {
		return nil, err
	}
	return &a, nil
}

// drainFirst, for --drain-timeout, answers not ready from now on (a load
// balancer stops sending) and lets the calls in flight finish, new
// requests still served, until none runs or timeout passes; serveHTTP then
// cancels what is left as it always does.
func drainFirst(srv *serve.Server, timeout time.Duration, s *streams) {
	if timeout <= 0 {
		return
	}
	srv.Drain()
	fmt.Fprintf(s.Err, "mcphost: draining: not ready on %s; letting the calls in flight finish (up to %s)\n", serve.ReadyPath, timeout)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if srv.Idle(ctx) != nil {
		fmt.Fprintf(s.Err, "mcphost: calls still running after --drain-timeout %s: cancelling them\n", timeout)
	}
}

// serveLabel names this serve to the approvers that connect: how it is
// reached and, on standard input and output, the directory its host
// started it in, so that an approver connected to several serves can tell
// which host asks.
func serveLabel(o *serveOptions, workDir string) string {
	if o.HTTP != "" {
		return "http " + o.HTTP
	}
	if workDir != "" {
		return "stdio in " + workDir
	}
	return "stdio"
}

// heldLink names a held call on the approval page this process serves,
// for the refusal the client and its model read: the page's address with
// the call's id, never the link's secret. The secret is the page's whole
// lock (whoever has it can answer), so it goes only where the person
// reads it (standard error, the terminal), never to the host, which may
// answer on its own. A browser that opened the printed link has the
// page's cookie and is shown the call; any other is told to open that
// link. No page (current returns ""): no link.
func heldLink(current func() string) func(approvalID string) string {
	return func(id string) string {
		u, err := url.Parse(current())
		if err != nil || u.Host == "" {
			return ""
		}
		return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/", Fragment: id}).String()
	}
}

// teamLinks names a held call's page: the team page's when serve runs one
// (set before serve accepts a request), else the loopback page's.
type teamLinks struct {
	local, team func(string) string
}

func (l *teamLinks) link(id string) string {
	if l.team != nil {
		return l.team(id)
	}
	return l.local(id)
}

// managedRoute is the managed policy's "approvers" as serve's routing of
// held calls.
func managedRoute(m *config.Managed) func(server, tool string, tier decide.Tier) *serve.Route {
	return func(server, tool string, tier decide.Tier) *serve.Route {
		if r := m.ApproverRoute(server, tool, tier.String()); r != nil {
			return &serve.Route{Group: r.Group, FourEyes: r.FourEyes}
		}
		return nil
	}
}

// teamPageClient is the team approval page's client at the issuer, from
// the config's "serve"."auth", its secret overridden by
// MCPHOST_SERVE_APPROVE_CLIENT_SECRET; "" when none is configured (no
// page).
func teamPageClient(st *setup, getenv func(string) string) (id, secret string) {
	if st.cfg.Serve == nil || st.cfg.Serve.Auth == nil {
		return "", ""
	}
	a := st.cfg.Serve.Auth
	id, secret = a.ApproveClientID, a.ApproveClientSecret
	if v := getenv("MCPHOST_SERVE_APPROVE_CLIENT_SECRET"); v != "" {
		secret = v
	}
	return id, secret
}

// origin is the scheme and host of u.
func origin(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return p.Scheme + "://" + p.Host
}

// approverLines are the managed policy's "approvers" for `mcphost policy`:
// which calls each route takes, to which group, in file order.
func approverLines(m *config.Managed) []policyLine {
	if m == nil {
		return nil
	}
	var out []policyLine
	for _, r := range m.Approvers {
		which := "every tier"
		if len(r.Tiers) > 0 {
			which = strings.Join(r.Tiers, ", ")
		}
		which += ", server " + cmp.Or(r.Server, "*") + ", tool " + cmp.Or(r.Tool, "*")
		v := which + ": a member of " + r.Group
		if r.FourEyes {
			v += ", never the caller (four eyes)"
		}
		out = append(out, policyLine{Setting: "approvers", Value: v, Source: srcManaged, At: r.At, Note: "on a team's serve --http"})
	}
	return out
}
