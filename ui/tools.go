package ui

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/sanitize"
)

// toolsPanel lists every tool with its badges, filtered by what the person
// types; a tool opens into its explanation, and from there into the call
// form.
type toolsPanel struct {
	base
	filterList[toolRow]
	detail *toolDetail
}

type toolRow struct {
	t    *client.Tool
	d    decide.Decision
	find string // lower-case text the filter searches
}

func (r toolRow) filterText() string { return r.find }

func newToolsPanel(m *Model, filter string) *toolsPanel {
	p := &toolsPanel{filterList: newFilterList[toolRow]("type to filter by server, tool or title", filter)}
	p.refresh(m)
	return p
}

func (p *toolsPanel) refresh(m *Model) {
	rows := p.rows[:0]
	if m.mgr != nil {
		for _, t := range m.mgr.Tools() {
			d, _, err := m.explain(t.Server, t.Name, nil)
			if err != nil {
				continue
			}
			rows = append(rows, toolRow{t: t, d: d, find: strings.ToLower(t.Server + "/" + t.Name + " " + t.Title)})
		}
	}
	p.setRows(rows, nil)
	if p.detail != nil {
		p.detail.refresh(m)
	}
}

func (p *toolsPanel) resize(m *Model) {
	p.fitFilter(m)
	if p.detail != nil {
		p.detail.resize(m)
	}
}

func (p *toolsPanel) update(m *Model, msg tea.Msg) (panel, tea.Cmd) {
	if p.detail != nil {
		var cmd tea.Cmd
		p.detail, cmd = p.detail.update(m, msg)
		if p.detail == nil {
			p.refresh(m)
		}
		return p, cmd
	}
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(k, m.keys.list.Back):
			return nil, nil
		case key.Matches(k, m.keys.chat.Tools):
			return nil, nil
		case p.move(m, k):
			return p, nil
		case key.Matches(k, m.keys.list.Open):
			if r, ok := p.selected(); ok {
				p.detail = newToolDetail(m, r.t)
			}
			return p, nil
		}
	}
	return p, p.updateFilter(msg)
}

func (p *toolsPanel) view(m *Model, w, h int) ([]string, *tea.Cursor) {
	if p.detail != nil {
		return p.detail.view(m, w, h)
	}
	st := m.st
	out := p.head(m, "Tools", w, h)
	if len(p.rows) == 0 {
		out = append(out, st.Muted.Render("no tools: no server is ready (/servers says why)"))
	}
	out = append(out, p.rowsView(m, func(out []string, r toolRow, mark string, selected bool) []string {
		line := mark + st.Bold.Render(sanitize.Name(r.t.Ref())) + " " + m.rc.badge(r.d.Class, r.d.Tier) + " " + verdictShort(r.d)
		if flags := decide.PoisonFlags(r.t.Description); flags != nil {
			line += " " + st.Warn.Render("! poisoned description: "+strings.Join(flags, ", "))
		}
		if r.t.Title != "" {
			line += st.Muted.Render("  " + cleanLine(truncBytes(r.t.Title, 60)))
		}
		if selected {
			line = trunc(line, w)
		}
		return append(out, line)
	})...)
	return p.foot(m, out, h, "explain and call")
}

func verdictShort(d decide.Decision) string {
	switch d.Verdict {
	case decide.Allow:
		return "allow"
	case decide.Ask:
		return "ask"
	default:
		return "deny"
	}
}

// toolDetail explains one tool: description, schema, hints, decision and
// reasons; Enter opens the call form.
type toolDetail struct {
	t     *client.Tool
	d     decide.Decision
	sc    scroller
	h     int
	lines []string
	w     int
	form  *callForm
}

func newToolDetail(m *Model, t *client.Tool) *toolDetail {
	td := &toolDetail{t: t}
	td.refresh(m)
	return td
}

func (td *toolDetail) refresh(m *Model) {
	if m.mgr != nil {
		if t, ok := m.mgr.Tool(td.t.Server, td.t.Name); ok {
			td.t = t
		}
	}
	d, _, err := m.explain(td.t.Server, td.t.Name, nil)
	if err == nil {
		td.d = d
	}
	td.lines = nil
	if td.form != nil {
		td.form.d = td.d
	}
}

func (td *toolDetail) resize(m *Model) {
	td.lines = nil
	if td.form != nil {
		td.form.resize(m)
	}
}

func (td *toolDetail) body(m *Model, w int) []string {
	if td.lines != nil && td.w == w {
		return td.lines
	}
	st := m.st
	var out []string
	out = append(out, m.explainLines(td.t, td.d, w)...)
	section := func(title, text string) {
		out = append(out, "", st.Title.Render(title))
		for _, l := range strings.Split(clean(text), "\n") {
			for _, x := range wrap(l, max(w-2, 1)) {
				out = append(out, "  "+x)
			}
		}
	}
	desc := td.t.Description
	if desc == "" {
		desc = "(no description)"
	}
	if td.t.DescriptionCut > 0 {
		desc += fmt.Sprintf("\n[mcphost cut %d bytes from this description]", td.t.DescriptionCut)
	}
	section("Description (the server's words)", desc)
	section("Input schema", indentJSON(string(td.t.InputSchema)))
	if len(td.t.OutputSchema) > 0 {
		section("Output schema", indentJSON(string(td.t.OutputSchema)))
	}
	td.lines, td.w = out, w
	return out
}

func (td *toolDetail) update(m *Model, msg tea.Msg) (*toolDetail, tea.Cmd) {
	if td.form != nil {
		var cmd tea.Cmd
		td.form, cmd = td.form.update(m, msg)
		return td, cmd
	}
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return td, nil
	}
	switch {
	case key.Matches(k, m.keys.list.Back):
		return nil, nil
	case key.Matches(k, m.keys.list.Open):
		td.form = newCallForm(m, td.t, td.d)
		return td, nil
	}
	td.sc.scrollKey(k, td.h)
	return td, nil
}

func (td *toolDetail) view(m *Model, w, h int) ([]string, *tea.Cursor) {
	if td.form != nil {
		return td.form.view(m, w, h)
	}
	td.h = h - 1
	out := td.sc.window(td.body(m, w), h-1)
	out = append([]string(nil), out...)
	for len(out) < h-1 {
		out = append(out, "")
	}
	return append(out, m.hints(hint("enter", "open the call form"), hint("↑↓", "scroll"), m.keys.list.Back)), nil
}

// callForm is a JSON editor for a tool's arguments: pre-filled from the
// input schema, checked before it is sent, and sent through the gate.
type callForm struct {
	t      *client.Tool
	d      decide.Decision
	editor textarea.Model
	check  validator
	err    string
	sent   int // the manual call in flight or last sent
	result *card
	// sc scrolls the result; resultH is the room it had.
	sc      scroller
	resultH int
}

func newCallForm(m *Model, t *client.Tool, d decide.Decision) *callForm {
	ed := textarea.New()
	ed.Prompt = ""
	ed.ShowLineNumbers = true
	ed.SetVirtualCursor(false)
	ed.CharLimit = 0
	km := textarea.DefaultKeyMap()
	km.TransposeCharacterBackward.SetEnabled(false)
	km.SelectAll.SetEnabled(false)
	ed.KeyMap = km
	s := textarea.DefaultStyles(m.st.dark)
	if m.st.noColor {
		s = textarea.Styles{}
	}
	ed.SetStyles(s)
	ed.SetValue(skeleton(t.InputSchema))
	ed.Focus()
	f := &callForm{t: t, d: d, editor: ed, check: newValidator(t.InputSchema)}
	f.resize(m)
	return f
}

func (f *callForm) resize(m *Model) {
	iw, ih := panelInner(m.width, m.height-1)
	f.editor.SetWidth(iw)
	f.editor.SetHeight(max(ih/3, 3))
}

func (f *callForm) update(m *Model, msg tea.Msg) (*callForm, tea.Cmd) {
	fk := m.keys.form
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case f.result != nil && (k.String() == "pgup" || k.String() == "pgdown"):
			f.sc.scrollKey(k, f.resultH)
			return f, nil
		case key.Matches(k, fk.Back):
			return nil, nil
		case key.Matches(k, fk.Reset):
			f.editor.SetValue(skeleton(f.t.InputSchema))
			f.err = ""
			return f, nil
		case key.Matches(k, fk.Send):
			args, err := f.check.check(f.editor.Value())
			if err != nil {
				f.err = cleanLine(err.Error())
				return f, nil
			}
			f.err = ""
			if mc := m.calls[f.sent]; mc != nil {
				f.err = "the last call is still running"
				return f, nil
			}
			id, c, cmd := m.sendCall(f.t.Server, f.t.Name, args)
			f.sent, f.result, f.sc = id, c, scroller{}
			return f, cmd
		}
	}
	var cmd tea.Cmd
	f.editor, cmd = f.editor.Update(msg)
	return f, cmd
}

func (f *callForm) view(m *Model, w, h int) ([]string, *tea.Cursor) {
	st := m.st
	out := []string{
		st.Title.Render("Call ") + st.Bold.Render(sanitize.Name(f.t.Ref())) + " " + m.rc.badge(f.d.Class, f.d.Tier) + " " + st.Muted.Render(verdictWords(f.d)),
		st.Muted.Render("arguments (JSON), checked against the input schema before sending:"),
	}
	edTop := len(out)
	out = append(out, strings.Split(f.editor.View(), "\n")...)
	switch {
	case f.err != "":
		out = append(out, trunc(st.Bad.Render("✗ "+f.err), w))
	case f.check.why != "":
		out = append(out, trunc(st.Warn.Render("! "+f.check.why), w))
	default:
		out = append(out, "")
	}
	if f.result != nil {
		rc := m.rc
		out = append(out, f.result.header(&rc, w, false)...)
		if f.result.done {
			var body []string
			if f.result.status == host.StatusSuccess || f.result.status == host.StatusToolError {
				body = append(body, st.Muted.Render("  "+f.result.bodyTitle()))
			}
			for _, l := range strings.Split(clean(indentJSON(f.result.body())), "\n") {
				for _, x := range wrap(l, max(w-4, 1)) {
					body = append(body, "    "+x)
				}
			}
			room := max(h-1-len(out), 1)
			f.resultH = room
			shown := f.sc.window(body, room)
			if f.sc.off+len(shown) < len(body) && len(shown) > 0 {
				more := len(body) - f.sc.off - len(shown) + 1
				shown[len(shown)-1] = st.Muted.Render(fmt.Sprintf("    … %d more line%s (pgdown)", more, plural(more)))
			}
			out = append(out, shown...)
		}
	}
	if len(out) > h-1 {
		out = out[:h-1]
	}
	for len(out) < h-1 {
		out = append(out, "")
	}
	out = append(out, m.hints(m.keys.form.Send, m.keys.form.Reset, m.keys.form.Back))
	var cur *tea.Cursor
	if c := f.editor.Cursor(); c != nil {
		c.Position.Y += edTop
		cur = c
	}
	return out, cur
}

// sendCall runs one call from the call form through the gate, and puts its
// card in the transcript too.
func (m *Model) sendCall(server, tool string, args json.RawMessage) (int, *card, tea.Cmd) {
	if m.gate == nil {
		return 0, nil, nil
	}
	m.callSeq++
	id := m.callSeq
	c := &card{id: fmt.Sprintf("call/%d", id), server: server, tool: tool, args: args, manual: true, started: m.now()}
	if d, _, err := m.explain(server, tool, args); err == nil {
		c.preview = &d
	}
	m.tr.add(&entry{kind: entryCard, card: c})
	ctx, cancel := newCallContext(m)
	mc := &manualCall{id: id, cancel: cancel, card: c, started: m.now()}
	m.calls[id] = mc
	gate := m.gate
	return id, c, tea.Batch(m.job(func() {
		defer cancel()
		r := gate.Call(ctx, host.Call{Server: server, Tool: tool, Args: args})
		m.post(callDoneMsg{id: id, r: r})
	}), m.spin())
}

func (m *Model) onCallDone(msg callDoneMsg) tea.Cmd {
	mc := m.calls[msg.id]
	if mc == nil {
		return nil
	}
	delete(m.calls, msg.id)
	took := m.now().Sub(mc.started)
	if took < 0 {
		took = time.Duration(0)
	}
	mc.card.fromResult(msg.r, took)
	if msg.r.HeldNote() != "" {
		mc.card.held = m.heldWords(msg.r.Held.ID, mc.card.tier)
	}
	m.rec.manual(mc.card)
	m.invalidateCard(mc.card)
	if p, ok := m.panel.(*toolsPanel); ok {
		p.refresh(m) // taint and grants may have changed the decisions
	}
	return nil
}
