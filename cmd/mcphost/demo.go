package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcphost/mcphost/config"
)

// demoServers are the names of the built-in demo servers (demoSpecs).
var demoServers = []string{"tasks", "bare"}

// loadConfig loads the configuration for g. With --demo, or when nothing is
// configured at all, the demo servers run instead, and --trust names them:
// the configuration's own servers are not checked against it.
//
// --demo with --server is refused rather than run side by side: the demo is
// a sandbox whose tasks server is trusted by construction, and a real
// server beside it would make a demo session act on the world while the
// person believes it is a rehearsal.
func loadConfig(g *globalOptions, s *streams) (*config.Config, []config.Warning, error) {
	lo := loadOptions(g, s)
	if g.Demo {
		if len(g.Servers) > 0 {
			return nil, nil, usageError(fmt.Errorf("--demo runs only the built-in demo servers (%s), so --server %q would not run: drop --demo to use your servers, or --server to try the demo",
				strings.Join(demoServers, ", "), g.Servers[0]))
		}
		lo.TrustFlags = nil
		return config.Load(lo)
	}
	cfg, warnings, err := config.Load(lo)
	var cerr *config.Error
	if err != nil && len(lo.TrustFlags) > 0 && errors.As(err, &cerr) {
		// --trust may name a demo server when nothing is configured.
		trust := lo.TrustFlags
		lo.TrustFlags = nil
		if c, w, err2 := config.Load(lo); err2 == nil && len(c.Servers) == 0 && len(c.Files) == 0 {
			return c, w, nil
		}
		for _, name := range trust {
			if slices.Contains(demoServers, name) && strings.HasPrefix(cerr.Msg, fmt.Sprintf("--trust %q: no server is named", name)) {
				return nil, nil, fmt.Errorf("%w\n%s", err, demoNeedsFlag(name))
			}
		}
	}
	return cfg, warnings, err
}

// demoNeedsFlag says that name is a demo server's, and that with servers
// of the person's own configured the demo servers run only with --demo.
func demoNeedsFlag(name string) string {
	return fmt.Sprintf("%s is a built-in demo server: with servers of your own configured, the demo servers run only with --demo (mcphost --demo ...)", name)
}

// trustDemo applies --trust to the demo servers.
func (st *setup) trustDemo(names []string) error {
	for _, name := range names {
		if !slices.Contains(demoServers, name) {
			msg := fmt.Sprintf("--trust %q: no demo server is named %q (they are %s)", name, name, strings.Join(demoServers, " and "))
			if near := nearNames(name, demoServers); len(near) > 0 {
				msg += fmt.Sprintf("; did you mean %q?", near[0])
			}
			return usageError(errors.New(msg))
		}
		st.trusted[name] = true
	}
	return nil
}

// noServerNamed is the usage error for a server name nothing configured
// has: it lists what is configured, suggests a near name, and for a demo
// server's name, run while servers of the person's own are configured,
// says that the demo servers need --demo.
func (st *setup) noServerNamed(name string, configured []string) error {
	msg := fmt.Sprintf("no server named %q; configured: %s", name, strings.Join(configured, ", "))
	if len(configured) == 0 {
		msg = fmt.Sprintf("no server named %q; none is configured", name)
	}
	switch {
	case !st.demo && slices.Contains(demoServers, name):
		msg += "\n" + demoNeedsFlag(name)
	default:
		if near := nearNames(name, configured); len(near) > 0 {
			msg += fmt.Sprintf("\ndid you mean %q?", near[0])
		}
	}
	return usageError(errors.New(msg))
}
