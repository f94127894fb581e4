package client

import (
	"strings"
	"testing"
	"time"
)

func TestStartTimeoutDefaults(t *testing.T) {
	const d, long = DefaultStartTimeout, DefaultLauncherStartTimeout
	cases := []struct {
		name     string
		spec     Spec
		opts     Options
		launcher string
		want     time.Duration
	}{
		{"npx", Spec{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/tmp"}}, Options{}, "npx", long},
		{"npx by path", Spec{Command: "/usr/local/bin/npx"}, Options{}, "npx", long},
		{"npx on windows", Spec{Command: `NPX.CMD`}, Options{}, "npx", long},
		{"uvx", Spec{Command: "uvx", Args: []string{"mcp-server-git"}}, Options{}, "uvx", long},
		{"bunx", Spec{Command: "bunx"}, Options{}, "bunx", long},
		{"pipx run", Spec{Command: "pipx", Args: []string{"run", "mcp-server-fetch"}}, Options{}, "pipx run", long},
		{"pipx list", Spec{Command: "pipx", Args: []string{"list"}}, Options{}, "", d},
		{"docker run", Spec{Command: "docker", Args: []string{"run", "-i", "--rm", "mcp/git"}}, Options{}, "docker run", long},
		{"docker exec", Spec{Command: "docker", Args: []string{"exec", "-i", "box", "srv"}}, Options{}, "", d},
		{"uv run", Spec{Command: "uv", Args: []string{"run", "--with", "mcp", "srv.py"}}, Options{}, "uv run", long},
		{"node running a file named npx", Spec{Command: "node", Args: []string{"npx"}}, Options{}, "", d},
		{"installed program", Spec{Command: "./server"}, Options{}, "", d},
		{"http", Spec{Transport: TransportHTTP, URL: "http://127.0.0.1:1/mcp"}, Options{}, "", d},
		{"the host's default wins over the launcher's", Spec{Command: "npx"}, Options{StartTimeout: 5 * time.Minute}, "npx", 5 * time.Minute},
		{"the host's default applies to any command", Spec{Command: "./server"}, Options{StartTimeout: 5 * time.Second}, "", 5 * time.Second},
		{"the server's own wins over the host's", Spec{Command: "npx", StartTimeout: 10 * time.Second}, Options{StartTimeout: 5 * time.Minute}, "npx", 10 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.spec.Name = "s"
			if got := c.spec.Launcher(); got != c.launcher {
				t.Errorf("Launcher() = %q, want %q", got, c.launcher)
			}
			m := New([]Spec{c.spec}, c.opts)
			defer m.Close()
			if got := m.StartTimeout("s"); got != c.want {
				t.Errorf("StartTimeout = %s, want %s", got, c.want)
			}
		})
	}
}

// TestStartTimeoutStopsGently: a server that does not answer within its
// start timeout is sent SIGTERM before anything kills it, so that a
// launcher still downloading its package can clean up (npx killed mid-way
// leaves its cache broken). The error names the setting that raises the
// limit and carries the server's stderr, including what it wrote while it
// stopped.
func TestStartTimeoutStopsGently(t *testing.T) {
	spec := procSpec(t, "slow", procFetch)
	// Long enough for the process to set up its SIGTERM handler, which it
	// does before it writes fetchMessage.
	spec.StartTimeout = 2 * time.Second
	spec.StartTimeoutSetting = `"startTimeout" in mcp.json`
	m := startManager(t, []Spec{spec}, Options{})
	st := m.Servers()[0]
	if st.State != StateFailed {
		t.Fatalf("state %s, want failed", st.State)
	}
	for _, want := range []string{
		`no answer within 2s (start timeout; raise it with "startTimeout" in mcp.json)`,
		"stderr:\n" + fetchMessage,
		cleanedMessage, // only a process that got SIGTERM writes this
	} {
		if !strings.Contains(st.LastError, want) {
			t.Errorf("the error does not contain %q:\n%s", want, st.LastError)
		}
	}
	m.Close()
	checkNoChildren(t)
}
