package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/pgstore"
	"github.com/mcphost/mcphost/state"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// setup is a loaded configuration, ready to start.
type setup struct {
	cfg *config.Config
	// later, if set, adds holding calls for a later approval to the gate
	// withGate makes (`mcphost run`: holdLater).
	later func(o *host.GateOptions)
	store *host.StateStore // pins, always grants, recorded trust and consents
	// pins pins every listed tool on first sight (trusted servers' in the
	// store), shared by the listing hook and the gate.
	pins     *host.Pins
	stateDir string
	specs    []client.Spec
	trusted  map[string]bool
	// held are servers that are configured but not started, with the
	// reason: disabled, or from a project file and not yet consented.
	held []client.Status
	// pending are the held project servers that wait for consent, with
	// the key and hash a consent to them is recorded under.
	pending []pendingServer
	demo    bool
	// clientOpts holds how servers' own requests are answered.
	clientOpts client.Options
	sampler    *sampler // nil unless --allow-sampling
	// sampling counts and bounds what servers spend of the model through
	// sampling, headless (sampler) and in the TUI alike.
	sampling *host.SampleMeter
	// slow tells which servers are still starting after a while (the
	// commands' start; the TUI shows states itself).
	slow *slowStart
	// warnings are the configuration's, printed by loadSetup; the TUI
	// shows them again on its screen.
	warnings []string
	// managed is the administrator's policy (managed.go); nil when there
	// is none.
	managed *config.Managed
	// untrusted are the servers whose trust the managed policy dropped.
	untrusted map[string]bool
	// overridden are the servers mcphost remembers trust for that the
	// person's own config marks "trust": false: the config wins.
	overridden map[string]bool
	// storeURL is the PostgreSQL store of the audit chain and held calls
	// (store.go), "" for the files; shared is that store once opened by
	// the command (serve), for the sessions' logs to append through.
	storeURL string
	shared   *pgstore.Store
}

// States of servers that are configured but not started.
const (
	stateDisabled     client.State = "disabled"
	stateNeedsConsent client.State = "needs-consent"
)

// loadSetup reads the configuration from every source, prints its warnings,
// and falls back to the demo servers when nothing is configured at all.
func loadSetup(g *globalOptions, s *streams) (*setup, error) {
	// The state file is read while the configuration loads: neither needs
	// the other, and both come before any server can start.
	// The managed policy comes first: when it cannot be read, nothing
	// else is worth loading, and no server may start.
	managed, err := loadManaged(s)
	if err != nil {
		return nil, err
	}
	applyManagedAudit(managed, g, s)
	stateDir := config.StateDir(s.Getenv("XDG_STATE_HOME"))
	var store *host.StateStore
	var storeErr error
	var wg sync.WaitGroup
	wg.Go(func() { store, storeErr = host.OpenStateStore(filepath.Join(stateDir, "state.json"), nil) })
	cfg, warnings, err := loadConfig(g, s)
	wg.Wait()
	for _, w := range warnings {
		fmt.Fprintf(s.Err, "mcphost: warning: %s\n", w)
	}
	if err != nil {
		return nil, err
	}
	meter := host.NewSampleMeter(cfg.SamplingLimit())
	copts, smp, err := serverRequestOptions(g, s, meter)
	if err != nil {
		return nil, err
	}
	if copts.Trace, err = openTrace(g, s); err != nil {
		return nil, err
	}
	if err := storeErr; err != nil {
		return nil, usageError(fmt.Errorf("%w\nmcphost keeps pins, grants and consents there and will not overwrite a file it cannot read", err))
	}
	if copts.CallCeiling <= 0 {
		copts.CallCeiling = callCeiling
	}
	if g.StartTimeout < 0 {
		return nil, usageError(fmt.Errorf("--start-timeout must be positive, got %s", g.StartTimeout))
	}
	copts.StartTimeout = g.StartTimeout
	st := &setup{cfg: cfg, store: store, pins: host.NewPins(store), stateDir: stateDir, trusted: map[string]bool{}, clientOpts: copts, sampler: smp, sampling: meter,
		slow: &slowStart{w: s.Err, after: slowStartAfter, timer: time.After}, managed: managed}
	if g.Audit == "" { // --audit FILE asks for a file log
		st.storeURL = storeURL("", cfg, managed, s)
	}
	// The definitions the state file's pins are of, for serve to offer
	// while a server starts.
	st.pins.KeepDefinitions(host.NewDefinitions(filepath.Join(stateDir, "definitions.json")))
	for _, w := range warnings {
		st.warnings = append(st.warnings, w.String())
	}
	if g.Demo || len(cfg.Servers) == 0 && len(cfg.Files) == 0 {
		st.demo = true
		st.specs = demoSpecs()
		st.trusted["tasks"] = true // in-process code of this program: its hints are honest by construction
		if err := st.trustDemo(g.Trust); err != nil {
			return nil, err
		}
		st.managedDemo(s)
		return st, nil
	}
	for _, srv := range cfg.Servers {
		if st.managedServerHeld(srv, s) {
			continue // from any source: the user's file, --server or the project file
		}
		if srv.Disabled {
			st.held = append(st.held, client.Status{Name: srv.Name, Transport: srv.Transport, State: stateDisabled})
			continue
		}
		spec := specFromConfig(srv)
		if srv.Source == config.SourceProject {
			spec.CallTimeout = projectCallTimeout(srv, copts.CallCeiling, s)
		}
		if srv.Source == config.SourceProject && !srv.Consented {
			ps := pendingServer{srv: srv, spec: spec, key: consentKey(srv), hash: consentHash(srv)}
			c, ok := store.State().Consent(ps.key, ps.hash)
			if !ok || c.Choice == state.ChoiceSkipped {
				st.held = append(st.held, client.Status{Name: srv.Name, Transport: srv.Transport, State: stateNeedsConsent,
					LastError: ps.needsConsent(c.Hash != "" && !ok)})
				st.pending = append(st.pending, ps)
				continue
			}
			st.specs = append(st.specs, spec)
			st.trusted[srv.Name] = c.Choice == state.ChoiceTrusted
			continue
		}
		st.specs = append(st.specs, spec)
		remembered := store.State().Trusted(spec.Identity())
		switch {
		case srv.Trust:
			st.trusted[srv.Name] = true
		case remembered && srv.Distrusted():
			// "trust": false in the person's own file is a choice written
			// down; /trust remembered earlier does not outvote it.
			if st.overridden == nil {
				st.overridden = map[string]bool{}
			}
			st.overridden[srv.Name] = true
		case remembered:
			st.trusted[srv.Name] = true
		}
	}
	st.clampTrust(s)
	st.attachOAuth()
	return st, nil
}

// loadOptions is how every command finds its configuration.
func loadOptions(g *globalOptions, s *streams) config.LoadOptions {
	return config.LoadOptions{
		ConfigFile:  g.ConfigFile,
		ServerFlags: g.Servers,
		TrustFlags:  g.Trust,
		Allow:       g.Allow, Ask: g.Ask, Deny: g.Deny,
		WorkDir:    s.WorkDir,
		ConfigHome: s.Getenv("XDG_CONFIG_HOME"),
		Getenv:     s.Getenv,
	}
}

func specFromConfig(srv config.Server) client.Spec {
	return client.Spec{
		Name: srv.Name, Transport: srv.Transport,
		Command: srv.Command, Args: srv.Args, Env: srv.Env, Cwd: srv.Cwd,
		URL: srv.URL, ShownURL: shownURL(srv), Headers: srv.Headers,
		ProtocolVersion: srv.ProtocolVersion, StartTimeout: srv.StartTimeout, CallTimeout: srv.CallTimeout,
		StartTimeoutSetting: startTimeoutSetting(srv),
		Tasks:               srv.Tasks,
	}
}

// shownURL is srv's URL as it may be shown, when it read values from the
// environment; "" when it is shown as it is.
func shownURL(srv config.Server) string {
	if u := srv.Shown().URL; u != srv.URL {
		return u
	}
	return ""
}

// startTimeoutSetting is how a person raises srv's start timeout: the
// entry's own "startTimeout" where it sets one, else --start-timeout.
func startTimeoutSetting(srv config.Server) string {
	if srv.StartTimeout > 0 && srv.File != "" {
		return fmt.Sprintf(`"startTimeout" of server %q in %s`, srv.Name, srv.File)
	}
	return "--start-timeout"
}

// demoSpecs are the in-process demo servers: an honest task tracker and the
// same kind of tools with no annotations at all.
func demoSpecs() []client.Spec {
	var specs []client.Spec
	for _, name := range []string{"tasks", "bare"} {
		specs = append(specs, client.Spec{Name: name, Dial: func(ctx context.Context) (mcp.Transport, error) {
			f, err := fixtures.New(name, fixtures.Options{})
			if err != nil {
				return nil, err
			}
			return f.InMemory(ctx)
		}})
	}
	return specs
}

// start starts every server and returns the running manager; the caller
// closes it. Each server's start timeout bounds its start; a server still
// starting after a while is named on stderr (see slowStart).
func (st *setup) start(ctx context.Context) *client.Manager {
	opts := st.clientOpts
	opts.ClientVersion = version
	opts.OnListing = st.pins.Hook(func(name string) bool { return st.trusted[name] })
	m := client.New(st.specs, opts)
	stop := st.slow.watch(m)
	m.Start(ctx)
	stop()
	return m
}

// startChecked starts every server, like start, and fails when one needs
// a login that cannot happen here. The caller closes the manager.
func (st *setup) startChecked(ctx context.Context) (*client.Manager, error) {
	m := st.start(ctx)
	if err := st.loginNeeded(m); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// statuses are the started servers' states followed by the held ones,
// sorted by name.
func (st *setup) statuses(m *client.Manager) []client.Status {
	out := append(m.Servers(), st.held...)
	sortStatuses(out)
	return out
}
