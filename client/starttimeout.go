package client

import (
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Default start timeouts, used for a server whose Spec and Options set
// none. A server started through a package launcher (npx, uvx, …) may first
// download its package, and on a first run that takes longer than starting
// an installed program; cutting the download short also leaves some
// launchers' caches half-written. So launched servers get longer. A server
// that hangs for good still fails within its limit, and the host can say
// meanwhile that it is still starting.
const (
	DefaultStartTimeout         = 30 * time.Second
	DefaultLauncherStartTimeout = 2 * time.Minute
)

// launchers are the programs that fetch a package before they run it,
// with the subcommand that does so ("" when the program always does).
var launchers = map[string][]string{
	"npx": {""}, "pnpx": {""}, "bunx": {""}, "uvx": {""},
	"pipx":   {"run"},
	"npm":    {"exec"},
	"pnpm":   {"dlx", "exec"},
	"yarn":   {"dlx"},
	"bun":    {"x"},
	"uv":     {"run", "tool"},
	"deno":   {"run"},
	"docker": {"run"},
	"podman": {"run"},
}

// Launcher names the package launcher that starts the server ("npx",
// "uvx", "docker run", …), or returns "" when its command is not one. Only
// the command and its first argument are looked at.
func (s *Spec) Launcher() string {
	if s.Command == "" {
		return ""
	}
	base := strings.ToLower(filepath.Base(s.Command))
	for _, ext := range []string{".exe", ".cmd", ".bat"} {
		base = strings.TrimSuffix(base, ext)
	}
	subs, ok := launchers[base]
	switch {
	case !ok:
		return ""
	case slices.Contains(subs, ""):
		return base
	case len(s.Args) > 0 && slices.Contains(subs, s.Args[0]):
		return base + " " + s.Args[0]
	}
	return ""
}

// defaultStartTimeout is the start timeout of a server whose Spec and
// Options set none.
func defaultStartTimeout(spec *Spec) time.Duration {
	if spec.Launcher() != "" {
		return DefaultLauncherStartTimeout
	}
	return DefaultStartTimeout
}

// StartTimeout returns the named server's start timeout: its Spec's, or
// else the Manager's Options', or else the default for its command. It is
// 0 for a name the Manager does not have.
func (m *Manager) StartTimeout(name string) time.Duration {
	s := m.byName[name]
	if s == nil {
		return 0
	}
	return s.startTimeout()
}

// raiseWith is the hint a start timeout error gives after "start timeout".
func raiseWith(setting string) string {
	if setting == "" {
		return ""
	}
	return "; raise it with " + setting
}

// terminate asks the server's process group to end (SIGTERM), leaving it
// time to clean up before anything kills it. It is safe on a nil receiver,
// before the process started, and after it ended.
func (p *procTransport) terminate() {
	if p == nil {
		return
	}
	if pid := p.pid.Load(); pid > 0 {
		termProcessGroup(int(pid))
	}
}
