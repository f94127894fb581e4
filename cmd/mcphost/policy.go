package main

import (
	"fmt"
	"path/filepath"

	"github.com/adrg/xdg"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
)

// policy compiles the managed policy's rules and then the user's, with the
// user's auto-approve level lowered to the managed ceiling. Managed rules
// come first so that within each effect they are the first to match, and
// decide lets no allow rule or grant lift a deny or ask rule. The host's own
// config, state, tokens, cache, audit log, project file and managed policy
// are protected: a call whose arguments lead there asks at T3, whatever it
// is.
func (st *setup) policy(g *globalOptions, s *streams) (*decide.Policy, error) {
	level, _ := st.managed.ClampAutoApprove(st.cfg.AutoApprove)
	auto, err := decide.ParseAutoApprove(level)
	if err != nil {
		return nil, usageError(err)
	}
	var rules []config.RuleSpec
	if st.managed != nil {
		rules = append(rules, st.managed.Rules...)
	}
	rules = append(rules, st.cfg.Rules...)
	specs := make([]decide.RuleSpec, 0, len(rules))
	managedRules := len(rules) - len(st.cfg.Rules)
	for i, r := range rules {
		var effect decide.Verdict
		if err := effect.UnmarshalText([]byte(r.Effect)); err != nil {
			return nil, usageError(fmt.Errorf("%s: %v", r.Source, err))
		}
		src := r.Source
		if r.Line > 0 {
			src = fmt.Sprintf("%s:%d:%d", r.Source, r.Line, r.Col)
		}
		prefix := ""
		if i < managedRules {
			src, prefix = "the managed policy "+src, managedRulePrefix
		}
		specs = append(specs, decide.RuleSpec{Effect: effect, Source: src, Index: r.Index, Raw: r.Raw, Prefix: prefix})
	}
	stateDir := config.StateDir(s.Getenv("XDG_STATE_HOME"))
	protected := []string{
		filepath.Dir(config.DefaultPath(s.Getenv("XDG_CONFIG_HOME"))),
		stateDir,
		tokenStore(stateDir).Dir(),
		cacheDir(s.Getenv("XDG_CACHE_HOME")),
	}
	// The managed policy, even where there is none yet: a tool must not
	// be able to write one without a person seeing it.
	protected = append(protected, managedPath)
	if s.WorkDir != "" {
		// The project file, even before there is one: a server planted
		// there is offered at the next start.
		protected = append(protected, filepath.Join(s.WorkDir, config.ProjectFile))
	}
	for _, f := range st.cfg.Files {
		if abs, err := filepath.Abs(f); err == nil {
			protected = append(protected, abs)
		}
	}
	if g.Audit != "" {
		if abs, err := filepath.Abs(g.Audit); err == nil {
			protected = append(protected, abs)
		}
	}
	for _, p := range protected {
		// Also where symbolic links lead, since arguments are compared
		// once their own links are followed.
		if r := host.RealPath(p); r != p {
			protected = append(protected, r)
		}
	}
	p, err := decide.Compile(specs, decide.Options{AutoApprove: auto, ProtectedPaths: protected, Home: s.Getenv("HOME")})
	if err != nil {
		return nil, usageError(err)
	}
	return p, nil
}

// decideDefault is the decision for a call with no arguments, in a fresh
// session: what a tool gets before anyone has approved anything.
func (st *setup) decideDefault(p *decide.Policy, m *client.Manager, t *client.Tool, mode decide.Mode) decide.Decision {
	return p.Decide(st.input(m, t, nil, mode))
}

func (st *setup) input(m *client.Manager, t *client.Tool, args []byte, mode decide.Mode) decide.Input {
	spec, _ := m.Spec(t.Server)
	pinned, _ := st.store.Pin(spec.Identity(), t.Name)
	in := decide.Input{
		Server: host.DecideServer(&spec, st.trusted[t.Server]),
		Tool:   host.DecideTool(t, pinned),
		Args:   args,
		Mode:   mode,
	}
	if len(args) > 0 {
		in.Bases, in.Paths = host.ArgPlaces(&spec, m.RootDirs(), "", args) // as the gate does
	}
	return in
}

// cacheDir is mcphost's directory under the XDG cache home (cacheHome, or
// the default when it is ""). mcphost keeps nothing there today; it is
// protected so that nothing can be planted for a later version to read.
func cacheDir(cacheHome string) string {
	if cacheHome == "" {
		cacheHome = xdg.CacheHome
	}
	return filepath.Join(cacheHome, "mcphost")
}

// decisionJSON is the stable --json shape of a decision.
type decisionJSON struct {
	Verdict   string       `json:"verdict"`
	Tier      int          `json:"tier"`
	Class     string       `json:"class"`
	Retry     bool         `json:"retry"`
	Reasons   []string     `json:"reasons"`
	Rule      string       `json:"rule,omitempty"`
	Effective *hintsJSON   `json:"effective,omitempty"`
	Explained []reasonJSON `json:"explained,omitempty"`
}

type hintsJSON struct {
	ReadOnly    bool `json:"readOnlyHint"`
	Destructive bool `json:"destructiveHint"`
	Idempotent  bool `json:"idempotentHint"`
	OpenWorld   bool `json:"openWorldHint"`
}

type reasonJSON struct {
	Code string `json:"code"`
	Text string `json:"text"`
	// InFavour: a fact that lowers the risk (decide.Decision.InFavour),
	// not a reason to ask.
	InFavour bool `json:"inFavour,omitempty"`
}

func reasonCodes(d decide.Decision) []string {
	out := make([]string, len(d.Reasons))
	for i, r := range d.Reasons {
		out[i] = r.Code
	}
	return out
}
