package dialog

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/mcphost/mcphost/sanitize"
)

// ConsentChoice is what a person decided about a server from a project
// file. The zero value skips it: a consent never given starts nothing.
type ConsentChoice uint8

const (
	ConsentSkipped   ConsentChoice = iota // do not start the server
	ConsentTrusted                        // start it and believe its annotations
	ConsentUntrusted                      // start it; its tools count as the riskiest kind
)

// String returns "skipped", "trusted" or "untrusted".
func (c ConsentChoice) String() string {
	switch c {
	case ConsentTrusted:
		return "trusted"
	case ConsentUntrusted:
		return "untrusted"
	}
	return "skipped"
}

// ConsentRequest describes a server entry from a project file, exactly as
// it would be started. Every field comes from that file and is shown
// sanitized.
type ConsentRequest struct {
	Server    string // the entry's name
	Transport string // stdio, http, sse
	Command   string
	Args      []string
	Env       map[string]string // shown with their values
	Cwd       string
	URL       string
	Headers   map[string]string // names shown, values masked
	File      string            // the project file that defines the server
	// CommandLine, when set, is the command line shown instead of Command
	// and Args: the same words with relative paths resolved against Cwd.
	// Command and Args are then shown as written only where they differ.
	CommandLine []string
	// Changed reports that the entry (any of its fields) differs from the
	// one the person last consented to in this project file.
	Changed bool
	// Vars name the ${VAR}s of the person's environment the entry reads.
	Vars []string
	// Fields are the rest of the entry: every field the consent covers
	// that the sections above do not show (tool search, tasks, protocol
	// version, timeouts, OAuth, ...), named and written by the caller, so
	// that nothing the person consents to is hidden. Shown sanitized.
	Fields []Field
}

// Field is one named field of a server entry as a person reads it.
type Field struct {
	Name, Value string
}

// Consent asks a person whether to start a server defined in a project
// file. It shows the exact command line, environment and working directory
// (or URL and header names), and offers to start the server trusting its
// annotations, to start it untrusted, or to skip it.
type Consent struct {
	r    ConsentRequest
	o    Options
	st   Styles
	keys ConsentKeyMap
	wait grace

	buttons []ConsentChoice
	focus   int
	vp      viewport.Model
	vpKey   string
	header  []string
	footer  []string

	choice ConsentChoice
	done   bool
}

// NewConsent returns a consent dialog for r. Focus starts on Skip.
func NewConsent(r ConsentRequest, o Options) *Consent {
	o = o.withDefaults()
	c := &Consent{
		r:       r,
		o:       o,
		st:      NewStyles(o.Dark, o.NoColor),
		keys:    DefaultConsentKeyMap(),
		wait:    newGrace(o),
		buttons: []ConsentChoice{ConsentTrusted, ConsentUntrusted, ConsentSkipped},
	}
	c.focus = len(c.buttons) - 1
	c.vp = viewport.New()
	c.vp.KeyMap = viewport.KeyMap{}
	c.relayout()
	return c
}

// KeyMap returns the dialog's keymap.
func (c *Consent) KeyMap() ConsentKeyMap { return c.keys }

// Request returns what the dialog asks about.
func (c *Consent) Request() ConsentRequest { return c.r }

// Result returns the person's choice, and true once they have chosen.
func (c *Consent) Result() (ConsentChoice, bool) { return c.choice, c.done }

// SetSize sets the size of the whole box, border included.
func (c *Consent) SetSize(width, height int) {
	c.o.Width, c.o.Height = max(width, minWidth), max(height, minHeight)
	c.relayout()
}

// Update handles a message. Keys are ignored during the grace period and
// pastes always; once the person has chosen, everything is ignored.
func (c *Consent) Update(msg tea.Msg) (*Consent, tea.Cmd) {
	if c.done {
		return c, nil
	}
	km, ok := msg.(tea.KeyPressMsg)
	if !ok || c.wait.holds() {
		return c, nil
	}
	k := c.keys
	if km.IsRepeat && !key.Matches(km, k.Up, k.Down, k.PageUp, k.PageDown) {
		return c, nil // a held key is not an answer
	}
	switch {
	case key.Matches(km, k.Trust):
		c.finish(ConsentTrusted)
	case key.Matches(km, k.Untrusted):
		c.finish(ConsentUntrusted)
	case key.Matches(km, k.Skip):
		c.finish(ConsentSkipped)
	case key.Matches(km, k.Next):
		c.focus = (c.focus + 1) % len(c.buttons)
	case key.Matches(km, k.Prev):
		c.focus = (c.focus + len(c.buttons) - 1) % len(c.buttons)
	case key.Matches(km, k.Choose):
		c.finish(c.buttons[c.focus])
	case key.Matches(km, k.Up):
		c.vp.ScrollUp(1)
	case key.Matches(km, k.Down):
		c.vp.ScrollDown(1)
	case key.Matches(km, k.PageUp):
		c.vp.PageUp()
	case key.Matches(km, k.PageDown):
		c.vp.PageDown()
	}
	c.relayout()
	return c, nil
}

func (c *Consent) finish(ch ConsentChoice) { c.choice, c.done = ch, true }

// details renders everything the server would be started with.
func (c *Consent) details(w int) []string {
	st, r := c.st, c.r
	var out []string
	section := func(label string, lines ...string) {
		if len(out) > 0 {
			out = append(out, "")
		}
		out = append(out, st.Label.Render(label))
		for _, l := range lines {
			out = append(out, hardWrap(l, w)...)
		}
	}
	if r.Command != "" || len(r.Args) > 0 {
		written := append([]string{r.Command}, r.Args...)
		words := quoteArgs(written)
		if len(r.CommandLine) > 0 && !slices.Equal(r.CommandLine, written) {
			section("Command line, relative paths resolved (each argument quoted; no shell is involved)", flow(quoteArgs(r.CommandLine), " ", w)...)
			section("As written in the project file", flow(words, " ", w)...)
		} else {
			section("Command line (each argument quoted; no shell is involved)", flow(words, " ", w)...)
		}
	}
	if r.Command != "" || r.Cwd != "" {
		cwd := "(mcphost's own working directory)"
		if r.Cwd != "" {
			cwd = quoteArg(r.Cwd)
		}
		section("Working directory", cwd)
	}
	if r.Command != "" || len(r.Env) > 0 {
		var env []string
		for _, k := range sortedKeys(r.Env) {
			env = append(env, envName(k)+"="+quoteArg(r.Env[k]))
		}
		if len(env) == 0 {
			env = []string{"(nothing added to your environment)"}
		}
		section("Environment it adds to yours", env...)
	}
	if r.URL != "" {
		section("URL", quoteArg(r.URL))
	}
	if len(r.Headers) > 0 {
		var hs []string
		for _, k := range sortedKeys(r.Headers) {
			hs = append(hs, envName(k)+": ••••••")
		}
		section("Headers (values hidden)", hs...)
	}
	if len(r.Vars) > 0 {
		vars := make([]string, len(r.Vars))
		for i, v := range r.Vars {
			vars[i] = "${" + sanitize.Line(v) + "}"
		}
		section("Values it takes from your environment", flow(vars, "  ", w)...)
	}
	if len(r.Fields) > 0 {
		var fs []string
		for _, f := range r.Fields {
			fs = append(fs, hanging(sanitize.Line(f.Name)+": ", sanitize.Line(f.Value), w)...)
		}
		section("The rest of the entry (your consent covers all of it)", fs...)
	}
	return out
}

func (c *Consent) relayout() {
	st, r := c.st, c.r
	w, h := c.o.Width-4, c.o.Height-2

	var head []string
	head = append(head, spread(st.Heading.Render("Start a server from a project file?"), st.Muted.Render(position(c.o)), w)...)
	name := st.Heading.Render(sanitize.Line(r.Server))
	if r.Transport != "" {
		name += st.Muted.Render(" (" + sanitize.Line(r.Transport) + ")")
	}
	head = append(head, hardWrap(name, w)...)
	if r.File != "" {
		head = append(head, quotedLine(st, "Defined in ", sanitize.Line(r.File), w))
	}
	if r.Changed {
		head = append(head, styled(st.Warn, hanging("! ", "Its entry changed since you last consented to it in this project file.", w))...)
	}

	foot := []string{""}
	items := make([]string, len(c.buttons))
	for i, b := range c.buttons {
		label := map[ConsentChoice]string{
			ConsentTrusted: "Start and trust", ConsentUntrusted: "Start untrusted", ConsentSkipped: "Skip",
		}[b]
		if i == c.focus {
			items[i] = st.Focused.Render("[ " + label + " ]")
		} else {
			items[i] = st.Button.Render("  " + label + "  ")
		}
	}
	foot = append(foot, flow(items, " ", w)...)
	foot = append(foot, styled(st.Muted, wrapText("Trusting believes what the server says about its tools; untrusted, every tool counts as the riskiest kind.", w))...)
	foot = append(foot, helpLines(st, w, c.keys.Trust, c.keys.Untrusted, c.keys.Skip, c.keys.Next, c.keys.Choose)...)

	room := h - len(head) - len(foot) - 1
	if room < 1 {
		head = head[:max(2, len(head)-(1-room))]
		room = 1
	}
	c.header, c.footer = head, foot
	c.vp.SetWidth(w)
	c.vp.SetHeight(room)
	if k := fmt.Sprint(w); k != c.vpKey {
		c.vp.SetContent(strings.Join(c.details(w), "\n"))
		c.vpKey = k
	}
}

// View renders the dialog as a box of exactly Width×Height cells.
func (c *Consent) View() string {
	w := c.o.Width - 4
	lines := append([]string{}, c.header...)
	lines = append(lines, spread("", c.st.Muted.Render(scrollState(c.vp, true)), w)[0])
	lines = append(lines, strings.Split(c.vp.View(), "\n")...)
	lines = append(lines, c.footer...)
	return box(c.st.Frame, c.o.Width, c.o.Height, lines)
}

func quoteArgs(words []string) []string {
	out := make([]string, len(words))
	for i, a := range words {
		out[i] = quoteArg(a)
	}
	return out
}

// envName shows a variable or header name bare when it is an ordinary
// name, quoted otherwise.
func envName(k string) string {
	for i := 0; i < len(k); i++ {
		ch := k[i]
		if !(ch == '_' || ch == '-' || ch == '.' || '0' <= ch && ch <= '9' || 'a' <= ch && ch <= 'z' || 'A' <= ch && ch <= 'Z') {
			return quoteArg(k)
		}
	}
	if k == "" {
		return `""`
	}
	return k
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
