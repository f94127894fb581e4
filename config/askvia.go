package config

import (
	"slices"
	"strings"
)

// The channels a person's answer can come through, as "askVia" names them:
// mcphost's chat dialog, `mcphost approve`, mcphost's web approval page
// ("web", with or without a passkey; "passkey": only with a passkey
// assertion that serve verified), the host's own form (elicitation), and a
// page the host opens for mcphost (URL elicitation).
const (
	ChannelChat           = "chat"
	ChannelApprove        = "approve"
	ChannelWeb            = "web"
	ChannelPasskey        = "passkey"
	ChannelElicitation    = "elicitation"
	ChannelURLElicitation = "url-elicitation"
)

// AskChannels are the channels "askVia" may name; AskTiers the tiers it
// sets (T0 never asks).
var (
	AskChannels = []string{ChannelChat, ChannelApprove, ChannelWeb, ChannelPasskey, ChannelElicitation, ChannelURLElicitation}
	AskTiers    = []string{"T1", "T2", "T3"}
)

// AskVia says, per tier ("T1" … "T3"), which channels' answers approve a
// call of that tier. A tier it does not name takes DefaultAskVia's
// channels.
type AskVia map[string][]string

// DefaultAskVia is the channel policy when neither the user nor the
// managed policy sets one: a host's form may approve tiers 1 and 2; tier 3
// needs a channel the host cannot answer itself — the chat, `mcphost
// approve`, the web page. A host can fill in its own forms (an autopilot,
// a hook), so the form proves no person at the tier that matters most.
func DefaultAskVia() AskVia {
	all := slices.Clone(AskChannels)
	return AskVia{"T1": all, "T2": slices.Clone(all), "T3": slices.Clone(defaultAskVia["T3"])}
}

// defaultAskVia is DefaultAskVia, read (never changed) where a tier takes
// the default on every approval.
var defaultAskVia = AskVia{"T1": AskChannels, "T2": AskChannels, "T3": {ChannelChat, ChannelApprove, ChannelWeb, ChannelPasskey}}

// Channels returns the channels that may approve a call of tier; a tier
// a does not name takes the default's. The result is not to be changed.
func (a AskVia) Channels(tier string) []string {
	if c, ok := a[tier]; ok {
		return c
	}
	return defaultAskVia[tier]
}

// Allows reports whether an answer through channel may approve a call of
// tier.
func (a AskVia) Allows(tier, channel string) bool {
	return slices.Contains(a.Channels(tier), channel)
}

// askVia reads "askVia": an object from tier to a list of channels.
func (p *parser) askVia(m member) (AskVia, error) {
	const where = `in "askVia"`
	if m.val.kind != kindObject {
		return nil, p.errorf(m.val.start, `expected an object for "askVia", got %s; write {"T3": ["chat", "approve", "web"]}`, m.val.kind)
	}
	out := AskVia{}
	for _, t := range p.uniq(m.val, where) {
		if !slices.Contains(AskTiers, t.key) {
			return nil, p.errorf(t.keyOff, `unknown tier %q %s; expected one of %s (T0 never asks)`, short(t.key), where, strings.Join(AskTiers, ", "))
		}
		list, err := p.strList(t.val, quote(t.key), where)
		if err != nil {
			return nil, err
		}
		chans := []string{}
		for _, c := range list {
			if !slices.Contains(AskChannels, c) {
				return nil, p.errorf(t.val.start, `unknown channel %q for %s %s; expected some of %s`, short(c), t.key, where, strings.Join(AskChannels, ", "))
			}
			if !slices.Contains(chans, c) {
				chans = append(chans, c)
			}
		}
		out[t.key] = chans
	}
	return out, nil
}

// EffectiveAskVia is the channel policy that applies: the user's (or the
// default's) for each tier, narrowed to the managed policy's where it sets
// that tier — a managed file can only take channels away. Source says,
// per tier, where its channels come from: "default", "user", or
// "managed" when the managed file narrowed them (Managed.Where("askVia")
// says where).
func EffectiveAskVia(user AskVia, m *Managed) (eff AskVia, source map[string]string) {
	eff, source = AskVia{}, map[string]string{}
	for _, tier := range AskTiers {
		chans, src := slices.Clone(user.Channels(tier)), "default"
		if _, ok := user[tier]; ok {
			src = "user"
		}
		if m != nil {
			if mc, ok := m.AskVia[tier]; ok {
				narrowed := slices.DeleteFunc(slices.Clone(chans), func(c string) bool { return !slices.Contains(mc, c) })
				if len(narrowed) != len(chans) {
					src = "managed"
				}
				chans = narrowed
			}
		}
		eff[tier], source[tier] = chans, src
	}
	return eff, source
}
