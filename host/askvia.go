package host

import (
	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/decide"
)

// AskViaPolicy is a channel policy ("askVia", as config.EffectiveAskVia
// gives it) in the form GateOptions.MayApprove takes.
func AskViaPolicy(eff config.AskVia) func(decide.Tier, audit.Channel) bool {
	return func(t decide.Tier, via audit.Channel) bool {
		if via == audit.ChannelWebPasskey && eff.Allows(t.String(), config.ChannelPasskey) {
			return true // "passkey" names the page with a verified passkey only
		}
		return eff.Allows(t.String(), askWord(via))
	}
}

// askWord is the "askVia" word for the channel an answer came through:
// the chat's dialog is "chat" there, and so is `mcphost call --yes`, the
// person's own command line (a tier that the chat may not approve, --yes
// may not either); the web page counts as "web" with or without a
// passkey; the others are spelled alike.
func askWord(c audit.Channel) string {
	switch c {
	case audit.ChannelDialog, audit.ChannelYes:
		return config.ChannelChat
	case audit.ChannelWebPasskey:
		return config.ChannelWeb
	}
	return string(c)
}

// ApproveElsewhere names the ways a person may approve a held call of tier
// outside the chat, as may (GateOptions.MayApprove; nil: every channel)
// allows: `mcphost approve`, and the approval page.
func ApproveElsewhere(may func(decide.Tier, audit.Channel) bool, tier decide.Tier) []string {
	var ways []string
	if may == nil || may(tier, audit.ChannelApprove) {
		ways = append(ways, "with `mcphost approve`")
	}
	if may == nil || may(tier, audit.ChannelWeb) {
		ways = append(ways, "on the approval page (`mcphost approve --web`)")
	}
	return ways
}

// HeldWays is ApproveElsewhere for the words that tell a person where to
// approve a call held for them: never empty, it names askVia when no way
// outside the chat may approve tier.
func HeldWays(may func(decide.Tier, audit.Channel) bool, tier decide.Tier) []string {
	if ways := ApproveElsewhere(may, tier); len(ways) > 0 {
		return ways
	}
	return []string{"where askVia lets a person approve it"}
}
