package dialog

import (
	"image/color"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/mcphost/mcphost/decide"
)

// Styles are the looks of both dialogs. Build them with NewStyles; the zero
// value draws everything without colour or attributes.
type Styles struct {
	// Frame is the box of a T1 confirmation and of the consent dialog;
	// Danger the box of a T2 or T3 confirmation. Danger has a different
	// border shape as well as a colour, so it still stands out without
	// colour.
	Frame, Danger lipgloss.Style

	Heading lipgloss.Style // the server/tool headline
	Label   lipgloss.Style // section labels ("Arguments", "Why it asks")
	Muted   lipgloss.Style // secondary text: the server's words, scroll position
	Warn    lipgloss.Style // untrusted server, changed definition
	Error   lipgloss.Style // invalid JSON, a mismatched confirmation

	// Badges render the class and tier badge, indexed by tier.
	Badges [4]lipgloss.Style

	// Button is an unfocused button; Focused the focused one, and
	// FocusedDanger the focused button of a T2 or T3 dialog. Focus is also
	// shown with brackets, whatever the colours.
	Button, Focused, FocusedDanger lipgloss.Style

	HelpKey, HelpDesc lipgloss.Style

	// Plain reports styles without colour; Badge then brackets the badge
	// text so it still reads as one.
	Plain bool
}

// NewStyles returns the styles for a dark or light background. With noColor
// nothing is coloured and no attribute is set: the dialogs rely on text and
// border shapes alone, and their View contains no escape sequences.
func NewStyles(dark, noColor bool) Styles {
	frame := lipgloss.NewStyle().Border(lipgloss.RoundedBorder())
	danger := lipgloss.NewStyle().Border(lipgloss.ThickBorder())
	if noColor {
		return Styles{Frame: frame, Danger: danger, Plain: true}
	}
	ld := lipgloss.LightDark(dark)
	var (
		red    = ld(lipgloss.Color("#C00000"), lipgloss.Color("#FF5F5F"))
		amber  = ld(lipgloss.Color("#9A5B00"), lipgloss.Color("#FFAF00"))
		muted  = ld(lipgloss.Color("#6C6C6C"), lipgloss.Color("#9E9E9E"))
		accent = ld(lipgloss.Color("#1F5FBF"), lipgloss.Color("#7AA2F7"))
		text   = ld(lipgloss.Color("#1A1A1A"), lipgloss.Color("#EEEEEE"))
		onFill = ld(lipgloss.Color("#FFFFFF"), lipgloss.Color("#111111"))
		plain  = ld(lipgloss.Color("#DADADA"), lipgloss.Color("#3A3A3A"))
	)
	badge := func(bg, fg color.Color) lipgloss.Style {
		return lipgloss.NewStyle().Bold(true).Background(bg).Foreground(fg)
	}
	return Styles{
		Frame:   frame.BorderForeground(accent),
		Danger:  danger.BorderForeground(red),
		Heading: lipgloss.NewStyle().Bold(true).Foreground(text),
		Label:   lipgloss.NewStyle().Bold(true).Foreground(accent),
		Muted:   lipgloss.NewStyle().Foreground(muted),
		Warn:    lipgloss.NewStyle().Bold(true).Foreground(amber),
		Error:   lipgloss.NewStyle().Bold(true).Foreground(red),
		Badges: [4]lipgloss.Style{
			badge(plain, text),
			badge(accent, onFill),
			badge(red, onFill),
			badge(red, onFill).Underline(true),
		},
		Button:        lipgloss.NewStyle().Foreground(text),
		Focused:       lipgloss.NewStyle().Bold(true).Background(accent).Foreground(onFill),
		FocusedDanger: lipgloss.NewStyle().Bold(true).Background(red).Foreground(onFill),
		HelpKey:       lipgloss.NewStyle().Bold(true).Foreground(muted),
		HelpDesc:      lipgloss.NewStyle().Foreground(muted),
	}
}

// Badge renders a call's class and tier as text, "DESTRUCTIVE · T2", so
// that colour is never the only signal. With plain styles it is bracketed:
// "[DESTRUCTIVE · T2]".
func Badge(class decide.Class, tier decide.Tier, st Styles) string {
	text := strings.ToUpper(class.String()) + " · " + tier.String()
	if st.Plain {
		return "[" + text + "]"
	}
	return st.Badges[min(int(tier), len(st.Badges)-1)].Render(" " + text + " ")
}
