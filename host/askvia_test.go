package host

import (
	"testing"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/decide"
)

// TestAskViaPasskeyMeansAVerifiedPasskey: "passkey" lets only the page
// with a passkey that serve verified approve; "web" lets the page approve
// with or without one; neither lets the host's form approve.
func TestAskViaPasskeyMeansAVerifiedPasskey(t *testing.T) {
	onlyPasskey := AskViaPolicy(config.AskVia{"T3": {config.ChannelPasskey}})
	web := AskViaPolicy(config.AskVia{"T3": {config.ChannelWeb}})
	for _, c := range []struct {
		name string
		may  func(decide.Tier, audit.Channel) bool
		via  audit.Channel
		want bool
	}{
		{"passkey: the page with a passkey", onlyPasskey, audit.ChannelWebPasskey, true},
		{"passkey: the page without one", onlyPasskey, audit.ChannelWeb, false},
		{"passkey: mcphost approve", onlyPasskey, audit.ChannelApprove, false},
		{"passkey: the chat", onlyPasskey, audit.ChannelDialog, false},
		{"web: the page with a passkey", web, audit.ChannelWebPasskey, true},
		{"web: the page without one", web, audit.ChannelWeb, true},
		{"web: the host's form", web, audit.ChannelElicitation, false},
	} {
		if got := c.may(decide.T3, c.via); got != c.want {
			t.Errorf("%s: may approve = %v, want %v", c.name, got, c.want)
		}
	}
}
