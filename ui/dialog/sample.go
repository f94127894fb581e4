package dialog

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/mcphost/mcphost/sanitize"
)

// SampleRequest is a server's request to use the person's model
// (sampling/createMessage). Server and Model are mcphost's words; System
// and Messages are the server's.
type SampleRequest struct {
	Server    string // the server's config name
	Model     string // the model that would answer
	MaxTokens int64
	System    string
	Messages  []SampleMessage
}

// SampleMessage is one message of a sampling request. Text is empty for
// content that is not text; NotText then names its kind.
type SampleMessage struct {
	Role    string
	Text    string
	NotText string
}

// SampleKeyMap is the sampling dialog's keymap.
type SampleKeyMap struct {
	Approve, Deny              key.Binding
	Up, Down, PageUp, PageDown key.Binding // scroll the request
}

// DefaultSampleKeyMap returns the sampling dialog's default keys.
func DefaultSampleKeyMap() SampleKeyMap {
	return SampleKeyMap{
		Approve:  key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "allow once")),
		Deny:     key.NewBinding(key.WithKeys("n", "esc"), key.WithHelp("n/esc", "deny")),
		Up:       key.NewBinding(key.WithKeys("up"), key.WithHelp("↑/↓/pgup/pgdn", "scroll")),
		Down:     key.NewBinding(key.WithKeys("down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup")),
		PageDown: key.NewBinding(key.WithKeys("pgdown")),
	}
}

// Sample asks a person whether a server may use their model once. y
// approves, n or Esc denies; the request scrolls. Keys are ignored during
// the grace period and pastes always.
type Sample struct {
	r    SampleRequest
	o    Options
	st   Styles
	keys SampleKeyMap
	wait grace

	vp     viewport.Model
	vpW    int
	header []string
	footer []string

	approved, done bool
}

// NewSample returns the dialog for r.
func NewSample(r SampleRequest, o Options) *Sample {
	o = o.withDefaults()
	s := &Sample{r: r, o: o, st: NewStyles(o.Dark, o.NoColor), keys: DefaultSampleKeyMap(), wait: newGrace(o)}
	s.vp = viewport.New()
	s.vp.KeyMap = viewport.KeyMap{} // the dialog scrolls it itself
	s.relayout()
	return s
}

// Request returns what the dialog asks.
func (s *Sample) Request() SampleRequest { return s.r }

// Result reports whether the person approved, and true once they decided.
func (s *Sample) Result() (approved, done bool) { return s.approved, s.done }

// SetSize sets the size of the whole box, border included.
func (s *Sample) SetSize(width, height int) {
	s.o.Width, s.o.Height = max(width, minWidth), max(height, minHeight)
	s.relayout()
}

// Update handles a message. Once the person has decided, everything is
// ignored.
func (s *Sample) Update(msg tea.Msg) (*Sample, tea.Cmd) {
	km, ok := msg.(tea.KeyPressMsg)
	if s.done || !ok || s.wait.holds() {
		return s, nil
	}
	k := s.keys
	switch {
	case key.Matches(km, k.Up):
		s.vp.ScrollUp(1)
	case key.Matches(km, k.Down):
		s.vp.ScrollDown(1)
	case key.Matches(km, k.PageUp):
		s.vp.PageUp()
	case key.Matches(km, k.PageDown):
		s.vp.PageDown()
	case km.IsRepeat:
		// a held key is not an answer
	case key.Matches(km, k.Approve):
		s.approved, s.done = true, true
	case key.Matches(km, k.Deny):
		s.done = true
	}
	return s, nil
}

// relayout lays out the header, the footer and the scrolling request
// between them.
func (s *Sample) relayout() {
	st, r := s.st, s.r
	w, h := s.o.Width-4, s.o.Height-2

	head := spread(st.Heading.Render("A server asks to use your model"), st.Muted.Render(position(s.o)), w)
	head = append(head, hardWrap(st.Heading.Render(sanitize.Line(r.Server)), w)...)
	head = append(head, styled(st.Muted, wrapText("wants your model to answer the messages below. The answer goes to the server, not to your chat.", w))...)
	model := r.Model
	if model == "" {
		model = "(none)"
	}
	head = append(head, clip(st.Label.Render("Model: ")+sanitize.Line(model), w))
	limit := "the server set none"
	if r.MaxTokens > 0 {
		limit = strconv.FormatInt(r.MaxTokens, 10)
	}
	head = append(head, clip(st.Label.Render("Max tokens: ")+limit, w))

	var body []string
	if strings.TrimSpace(r.System) != "" {
		body = append(body, st.Label.Render("System prompt (the server's words):"))
		body = append(body, prose(r.System, w)...)
		body = append(body, "")
	}
	for i, m := range r.Messages {
		label := "Message " + strconv.Itoa(i+1) + "/" + strconv.Itoa(len(r.Messages)) + " · " + sanitize.Line(m.Role) + " · the server's words:"
		body = append(body, styled(st.Label, wrapText(label, w))...)
		if m.NotText != "" {
			body = append(body, styled(st.Warn, hanging("! ", "not text ("+sanitize.Line(m.NotText)+"); mcphost sends text only, so the request will fail", w))...)
		} else {
			body = append(body, prose(m.Text, w)...)
		}
		body = append(body, "")
	}
	if len(r.Messages) == 0 {
		body = append(body, st.Muted.Render("(no messages)"))
	}
	for len(body) > 0 && body[len(body)-1] == "" {
		body = body[:len(body)-1]
	}

	k := s.keys
	foot := []string{""}
	foot = append(foot, helpLines(st, w, k.Approve, k.Deny, k.Up)...)
	room := h - len(head) - len(foot) - 2 // a blank line and the body's label
	if room < 1 {
		head = head[:max(2, len(head)-(1-room))]
		room = 1
	}
	s.header, s.footer = head, foot
	s.vp.SetWidth(w)
	s.vp.SetHeight(room)
	if s.vpW != w {
		s.vp.SetContent(strings.Join(body, "\n"))
		s.vpW = w
	}
}

// prose renders a server's text: escaped, tabs expanded, wrapped, lines
// kept.
func prose(text string, w int) []string {
	t := expandTabs(sanitize.Text(text))
	if strings.TrimSpace(t) == "" {
		return []string{"(empty)"}
	}
	return wrapText(t, w)
}

// View renders the dialog as a box of exactly Width×Height cells.
func (s *Sample) View() string {
	st := s.st
	w := s.o.Width - 4
	lines := append([]string{}, s.header...)
	lines = append(lines, "")
	lines = append(lines, spread(st.Label.Render("The request"), st.Muted.Render(scrollState(s.vp, true)), w)[0])
	lines = append(lines, strings.Split(s.vp.View(), "\n")...)
	lines = append(lines, s.footer...)
	return box(st.Frame, s.o.Width, s.o.Height, lines)
}
