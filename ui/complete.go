package ui

import (
	"context"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"
)

// Argument completions (completion/complete) for the prompt and template
// forms, and the form that fills a resource template.

// completeMsg carries a server's completions for one field of a form, for
// the value the field had when they were asked for.
type completeMsg struct {
	f      *promptForm
	at     int
	value  string
	values []string
	err    error
}

// maxShownSuggestions bounds the suggestions listed under a field.
const maxShownSuggestions = 8

// complete asks the server for completions of the focused field's value,
// when the server offers them.
func (f *promptForm) complete(m *Model) tea.Cmd {
	if !f.canComplete || m.mgr == nil || len(f.fields) == 0 {
		return nil
	}
	at, value := f.at, f.fields[f.at].Value()
	name := f.args[at].Name
	others := map[string]string{}
	for i, a := range f.args {
		if v := f.fields[i].Value(); i != at && v != "" {
			others[a.Name] = v
		}
	}
	mgr, server, ref := m.mgr, f.server, f.ref
	return m.fetch(func(ctx context.Context) tea.Msg {
		vals, err := mgr.Complete(ctx, server, ref, name, value, others)
		return completeMsg{f: f, at: at, value: value, values: vals, err: err}
	})
}

// completed keeps the suggestions if the field still holds the value they
// complete. Each is cleaned: what is shown is what is put in the field.
func (f *promptForm) completed(msg completeMsg) {
	if msg.at != f.at || msg.at >= len(f.fields) || f.fields[msg.at].Value() != msg.value {
		return
	}
	f.sugg, f.suggAt, f.suggErr = nil, msg.at, ""
	if msg.err != nil {
		f.suggErr = "no suggestions: " + cleanLine(firstSentence(msg.err.Error()))
		return
	}
	seen := map[string]bool{}
	for _, v := range msg.values {
		v = cleanLine(truncBytes(v, 200))
		if v != "" && !seen[v] {
			seen[v] = true
			f.sugg = append(f.sugg, v)
		}
	}
}

// takeSuggestion fills the focused field with the next suggestion and
// reports whether there was one.
func (f *promptForm) takeSuggestion() bool {
	if len(f.sugg) == 0 || f.suggAt != f.at {
		return false
	}
	next := f.sugg[0]
	cur := f.fields[f.at].Value()
	for i, s := range f.sugg {
		if s == cur {
			next = f.sugg[(i+1)%len(f.sugg)]
		}
	}
	f.fields[f.at].SetValue(next)
	f.fields[f.at].CursorEnd()
	return true
}

// suggestionLine lists the focused field's suggestions.
func (f *promptForm) suggestionLine(m *Model, i, w int) string {
	switch {
	case i != f.suggAt || i != f.at:
		return ""
	case f.suggErr != "":
		return trunc(m.st.Muted.Render("  "+f.suggErr), w)
	case len(f.sugg) == 0:
		return ""
	}
	shown := f.sugg[:min(len(f.sugg), maxShownSuggestions)]
	line := "  tab: " + strings.Join(shown, " · ")
	if len(f.sugg) > len(shown) {
		line += " …"
	}
	return trunc(m.st.Muted.Render(line), w)
}

// newTemplateForm asks for the variables of a resource template.
func newTemplateForm(m *Model, r resRow, w int) (*promptForm, error) {
	t, err := uritemplate.New(r.t.URITemplate)
	if err != nil {
		return nil, err
	}
	f := &promptForm{heading: "Template ", name: r.server + " " + r.t.URITemplate, server: r.server,
		ref: &mcp.CompleteReference{Type: "ref/resource", URI: r.t.URITemplate}, tmpl: t, tmplRow: r}
	for _, v := range t.Varnames() {
		f.addField(&mcp.PromptArgument{Name: v})
	}
	f.canComplete = m.mgr != nil && m.mgr.CanComplete(r.server)
	f.resize(w)
	f.focus(0)
	return f, nil
}

// expand fills the template with the form's values.
func (f *promptForm) expand(args map[string]string) string {
	vals := uritemplate.Values{}
	for k, v := range args {
		vals.Set(k, uritemplate.String(v))
	}
	uri, err := f.tmpl.Expand(vals)
	if err != nil {
		return ""
	}
	return uri
}

// templateRow is a resource template as the resources panel lists it.
func templateRow(server string, t *mcp.ResourceTemplate) resRow {
	return resRow{server: server, t: t, find: strings.ToLower(server + " " + t.URITemplate + " " + t.Name + " " + t.Title + " template")}
}
