package ui

import (
	"image/color"

	"charm.land/lipgloss/v2"
)

// styles are the looks of the whole screen. Colour only reinforces what the
// text already says: every state also has a word or a symbol, so the screen
// reads the same with NO_COLOR.
type styles struct {
	dark, noColor bool

	Muted    lipgloss.Style
	Bold     lipgloss.Style
	User     lipgloss.Style // the "you" label
	Model    lipgloss.Style // the model's label
	OK       lipgloss.Style
	Warn     lipgloss.Style
	Bad      lipgloss.Style
	Info     lipgloss.Style
	Selected lipgloss.Style
	Rule     lipgloss.Style
	Status   lipgloss.Style
	Taint    lipgloss.Style
	Panel    lipgloss.Style // a panel's frame
	Title    lipgloss.Style
	Key      lipgloss.Style // a key in hints
}

func newStyles(dark, noColor bool) styles {
	ld := lipgloss.LightDark(dark)
	c := func(light, dk string) color.Color {
		if noColor {
			return lipgloss.NoColor{}
		}
		return ld(lipgloss.Color(light), lipgloss.Color(dk))
	}
	muted := c("#6b6b6b", "#8a8a8a")
	green := c("#1f7a1f", "#5fd75f")
	yellow := c("#8a6100", "#e5c07b")
	red := c("#b00020", "#ff6b6b")
	blue := c("#005f87", "#61afef")
	accent := c("#6f42c1", "#c678dd")
	s := styles{dark: dark, noColor: noColor}
	s.Muted = lipgloss.NewStyle().Foreground(muted)
	s.Bold = lipgloss.NewStyle().Bold(true)
	s.User = lipgloss.NewStyle().Bold(true).Foreground(blue)
	s.Model = lipgloss.NewStyle().Bold(true).Foreground(accent)
	s.OK = lipgloss.NewStyle().Foreground(green)
	s.Warn = lipgloss.NewStyle().Foreground(yellow)
	s.Bad = lipgloss.NewStyle().Foreground(red)
	s.Info = lipgloss.NewStyle().Foreground(blue)
	s.Selected = lipgloss.NewStyle().Reverse(true)
	s.Rule = lipgloss.NewStyle().Foreground(muted)
	s.Status = lipgloss.NewStyle().Foreground(muted)
	s.Taint = lipgloss.NewStyle().Bold(true).Foreground(red)
	s.Panel = lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(accent).Padding(0, 1)
	s.Title = lipgloss.NewStyle().Bold(true)
	s.Key = lipgloss.NewStyle().Bold(true)
	return s
}

// markdownStyle names the markdown look for the background.
func (s styles) markdownStyle() string {
	switch {
	case s.noColor:
		return "notty"
	case s.dark:
		return "dark"
	default:
		return "light"
	}
}
