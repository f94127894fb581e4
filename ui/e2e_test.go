package ui

import (
	"testing"

	"github.com/mcphost/mcphost/internal/termtest"
)

// TestTUIEndToEnd runs scripts/tui-e2e.sh, tui-e2e-sessions.sh, tui-e2e-keys.sh
// tui-e2e-habits.sh, tui-e2e-dialogs.sh and tui-e2e-trust.sh:
// the real mcphost binary in a tmux terminal, driven by keys, checked on the
// screen and in the audit log and the saved sessions. They need tmux and
// jq; the scripts install them when they can, and the test fails, saying
// so, when they cannot.
func TestTUIEndToEnd(t *testing.T) {
	for _, name := range []string{"tui-e2e.sh", "tui-e2e-sessions.sh", "tui-e2e-keys.sh", "tui-e2e-habits.sh", "tui-e2e-dialogs.sh", "tui-e2e-trust.sh"} {
		t.Run(name, func(t *testing.T) { termtest.RunScript(t, "..", name) })
	}
}
