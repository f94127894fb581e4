package host

import (
	"strings"
	"testing"

	"github.com/mcphost/mcphost/config"
)

// The host's own tools are named as a server called config.HostName would
// name them, which is why the configuration refuses that server name: a
// server cannot list a tool that passes for mcphost's own.
func TestHostToolsUseTheReservedName(t *testing.T) {
	if !strings.HasPrefix(SearchToolName, config.HostName+"__") {
		t.Errorf("the search tool %q is not named under the reserved server name %q", SearchToolName, config.HostName)
	}
	if _, err := config.ParseServerFlag(config.HostName + "=x"); err == nil {
		t.Errorf("a server named %q is accepted", config.HostName)
	}
}
