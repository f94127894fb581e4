package audit

// Channel is the way a decision reached the gate: the dialog a person
// answered in, the rule that decided, the grant that covered the call. It
// is set by the code that took the answer, never by the words of the
// answer, so "approve" means the answer came through mcphost approve's
// socket whatever its sender claimed. Make one with the constants; a
// decision with no known channel is ChannelUnknown, never a guess.
type Channel string

const (
	// ChannelUnknown: a person answered, but the asker did not say how.
	ChannelUnknown Channel = "unknown"
	// ChannelDialog: the chat's dialog, in the terminal mcphost runs in.
	ChannelDialog Channel = "dialog"
	// ChannelApprove: mcphost approve, through the approver socket.
	ChannelApprove Channel = "approve"
	// ChannelWeb: the loopback web approval page, without a passkey.
	ChannelWeb Channel = "web"
	// ChannelWebPasskey: the web approval page, with a passkey assertion
	// bound to the call and verified.
	ChannelWebPasskey Channel = "web+passkey"
	// ChannelElicitation: the MCP client's form (elicitation through
	// mcphost serve), which the client's host may answer on its own.
	ChannelElicitation Channel = "elicitation"
	// ChannelURLElicitation: a URL elicitation the client opened.
	ChannelURLElicitation Channel = "url-elicitation"
	// ChannelRule: a rule of the configuration (DecidedBy names which).
	ChannelRule Channel = "rule"
	// ChannelGrant: a grant given earlier (Record.Grant names which).
	ChannelGrant Channel = "grant"
	// ChannelYes: --yes on the command line (mcphost call).
	ChannelYes Channel = "yes"
	// ChannelHeadless: no one could be asked, so the call was refused.
	ChannelHeadless Channel = "headless"
	// ChannelScript: a scripted asker, in tests.
	ChannelScript Channel = "script"
)

var channels = []Channel{ChannelUnknown, ChannelDialog, ChannelApprove, ChannelWeb, ChannelWebPasskey,
	ChannelElicitation, ChannelURLElicitation, ChannelRule, ChannelGrant, ChannelYes, ChannelHeadless, ChannelScript}

// Known reports whether c is one of the channels above.
func (c Channel) Known() bool {
	for _, k := range channels {
		if c == k {
			return true
		}
	}
	return false
}

// Person reports whether c is a way a person answers (as opposed to a
// rule, a grant, headless, or unknown).
func (c Channel) Person() bool {
	switch c {
	case ChannelDialog, ChannelApprove, ChannelWeb, ChannelWebPasskey, ChannelElicitation, ChannelURLElicitation, ChannelYes, ChannelScript:
		return true
	}
	return false
}

// String is the log's text for c.
func (c Channel) String() string { return string(c) }

// Words says c for a person: "in the dialog", "in mcphost approve".
func (c Channel) Words() string {
	switch c {
	case ChannelDialog:
		return "in the dialog"
	case ChannelApprove:
		return "in mcphost approve"
	case ChannelWeb:
		return "on the web page"
	case ChannelWebPasskey:
		return "on the web page with a passkey"
	case ChannelElicitation:
		return "in the client's form"
	case ChannelURLElicitation:
		return "on a page the client opened"
	case ChannelRule:
		return "by a rule"
	case ChannelGrant:
		return "by a grant"
	case ChannelYes:
		return "with --yes"
	case ChannelHeadless:
		return "with no one to ask"
	case ChannelScript:
		return "by a script"
	}
	return "through an unknown channel"
}

// GrantRef names the grant that let a call run (Record.Grant): its scope,
// the channel of the answer that gave it, and the call that answer was
// about (in the same session; "" for an always grant from an earlier one).
type GrantRef struct {
	Scope  string  `json:"scope"`
	Via    Channel `json:"via"`
	CallID string  `json:"callId,omitempty"`
}
