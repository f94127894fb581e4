package approver

import (
	"testing"

	"github.com/mcphost/mcphost/internal/termtest"
)

// TestApproveEndToEnd runs scripts/tui-e2e-approve.sh: the real mcphost
// approve in a tmux terminal, answering calls that a gate over a real
// fixture server asks about through the approver socket (the stand-in for
// serve is this test binary; see harnessEnv). It needs tmux and jq; the
// script installs them when it can, and the test fails, saying so, when it
// cannot.
func TestApproveEndToEnd(t *testing.T) {
	termtest.RunScript(t, "..", "tui-e2e-approve.sh")
}
