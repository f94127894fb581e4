package ui

import "github.com/mcphost/mcphost/markdown"

// answerMarkdown draws the model's answers with package markdown in the
// transcript's look. The renderer for the current style is built on first
// use and kept.
type answerMarkdown struct {
	style string
	r     *markdown.Renderer
}

// mdMinWidth is the narrowest transcript drawn as markdown; below it the
// caller shows the text plain.
const mdMinWidth = 10

// renderer returns the renderer for style, "dark", "light" or "notty" (no
// colour; bold, italic and faint remain).
func (md *answerMarkdown) renderer(style string) *markdown.Renderer {
	if md.r == nil || md.style != style {
		st := newStyles(style != "light", style == "notty")
		md.r = markdown.New(markdown.Options{
			Style: markdown.Style{
				Heading: st.Model.GetForeground(),
				Code:    st.Warn.GetForeground(),
				Link:    st.Info.GetForeground(),
				Quiet:   st.Muted.GetForeground(),
				Syntax: markdown.Syntax{
					Keyword: st.Model.GetForeground(),
					String:  st.OK.GetForeground(),
					Comment: st.Muted.GetForeground(),
					Number:  st.Warn.GetForeground(),
					Type:    st.Info.GetForeground(),
				},
				NoColor: st.noColor,
			},
			// A two-cell margin, as for every other entry in the transcript.
			Indent:  "  ",
			Prepare: cleanModelMarkdown,
			Clean:   cleanModel,
		})
		md.style = style
	}
	return md.r
}

// render returns the model's text as styled lines of at most width cells,
// or nil if it is too narrow to render (the caller then shows it as plain
// text).
func (md *answerMarkdown) render(text, style string, width int) []string {
	if width < mdMinWidth {
		return nil
	}
	return md.renderer(style).Render(text, width)
}
