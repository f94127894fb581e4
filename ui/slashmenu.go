package ui

import (
	"sort"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/charmbracelet/x/ansi"
)

// The menu above the input: the slash commands while a command name is
// typed, SERVER/TOOL after /explain, server names after /trust, providers
// after /model, and the servers' resources while an @server:uri mention is
// typed.
// It filters as the person types; ↑/↓ move, tab or enter take the
// highlighted entry, esc closes it until the input stops asking for it.

// menuRows is how many entries the menu shows at once.
const menuRows = 8

// menuEntry is one choice: what goes into the input, and one line of help.
// Both are clean: a resource's URI is only offered when it is plain
// (completable), its name is sanitized.
type menuEntry struct {
	insert string // the text that replaces the word being typed
	label  string // what the entry shows (the command with its arguments)
	help   string
	// run says enter runs the command at once: it needs no argument.
	run bool
}

// menuKind is what the menu completes.
type menuKind uint8

const (
	menuCommands  menuKind = iota
	menuMentions           // @server:uri
	menuToolRefs           // SERVER/TOOL, after /explain
	menuServers            // a server name, after /trust
	menuProviders          // a provider, after /model
	menuPaths              // @path, a local file (habits.go)
)

// slashMenu is the open menu.
type slashMenu struct {
	word    string // the word it completes, as typed
	start   int    // the byte offset of word in the input
	kind    menuKind
	entries []menuEntry
	at      int
	top     int
}

// commandEntries are the slash commands, in commandHelp's order.
func commandEntries() []menuEntry {
	out := make([]menuEntry, 0, len(commandHelp))
	for _, c := range commandHelp {
		name, args, _ := strings.Cut(c[0], " ")
		e := menuEntry{insert: name, label: c[0], help: c[1]}
		// Optional arguments are shown in brackets; a required one means
		// enter only fills the name in.
		e.run = args == "" || strings.HasPrefix(args, "[")
		out = append(out, e)
	}
	return out
}

// menuWord finds what the input asks the menu for: a command name being
// typed (the input is "/" and letters, nothing else), the first argument of
// /explain or /trust, or an @mention being typed at the end of the input.
func menuWord(v string) (word string, start int, kind menuKind, ok bool) {
	if strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "//") && !strings.ContainsAny(v, "\t\n") {
		name, arg, has := strings.Cut(v, " ")
		switch {
		case !has:
			return v, 0, menuCommands, true
		case strings.Contains(arg, " "):
		case name == "/explain":
			return arg, len(name) + 1, menuToolRefs, true
		case name == "/trust" || name == "/untrust":
			return arg, len(name) + 1, menuServers, true
		case name == "/model" && !strings.Contains(arg, ":"):
			return arg, len(name) + 1, menuProviders, true
		}
	}
	i := strings.LastIndexAny(v, " \t\n")
	w := v[i+1:]
	if strings.HasPrefix(w, "@") && !strings.HasPrefix(w, "@@") {
		if isPathWord(w[1:]) { // habits.go
			return w, i + 1, menuPaths, true
		}
		return w, i + 1, menuMentions, true
	}
	return "", 0, 0, false
}

// syncMenu opens, filters or closes the menu after the input changed. It
// costs nothing while the input asks for no menu. The command it returns
// lists the servers' resources, when a mention needs them.
func (m *Model) syncMenu() tea.Cmd {
	if m.menu == nil && m.menuShut == "" && !strings.ContainsAny(m.input.Value(), "/@") {
		return nil // the common case, on every key while the model streams
	}
	v := m.input.Value()
	word, start, kind, ok := menuWord(v)
	if !ok || m.focus != focusInput || m.search != nil {
		m.menu, m.menuShut = nil, ""
		return nil
	}
	if m.menuShut != "" && strings.HasPrefix(word, m.menuShut) {
		m.menu = nil // closed with esc: it stays closed while this word grows
		return nil
	}
	m.menuShut = ""
	if m.menu != nil && m.menu.word == word && m.menu.start == start && m.menu.kind == kind {
		return nil
	}
	var all []menuEntry
	var cmd tea.Cmd
	needle, sigil := strings.ToLower(word), 1 // "/" or "@" is not matched inside a name
	switch kind {
	case menuMentions:
		all, cmd = m.mentionEntries() // resources.go
	case menuToolRefs:
		all, sigil = m.toolRefEntries(), 0
	case menuServers:
		all, sigil = m.serverEntries(), 0
	case menuProviders:
		all, sigil = providerEntries(), 0 // switchmodel.go
	case menuPaths:
		all = m.pathEntries(word) // habits.go
	default:
		all = commandEntries()
	}
	var prefix, inside []menuEntry
	for _, e := range all {
		switch l := strings.ToLower(e.insert); {
		case strings.HasPrefix(l, needle):
			prefix = append(prefix, e)
		case len(needle) > sigil+1 && strings.Contains(l, needle[sigil:]):
			inside = append(inside, e)
		}
	}
	entries := append(prefix, inside...)
	if len(entries) == 0 && kind != menuMentions && kind != menuPaths {
		m.menu = nil
		return nil
	}
	keep := ""
	if m.menu != nil && m.menu.at < len(m.menu.entries) {
		keep = m.menu.entries[m.menu.at].insert
	}
	m.menu = &slashMenu{word: word, start: start, kind: kind, entries: entries}
	for i, e := range entries {
		if e.insert == keep {
			m.menu.at = i
		}
	}
	m.menu.reveal()
	return cmd
}

// menuEnter says what enter does in each kind of menu.
var menuEnter = [...]string{menuCommands: "enter runs it", menuMentions: "enter takes it", menuToolRefs: "enter runs the command", menuServers: "enter runs the command", menuProviders: "tab takes it", menuPaths: "enter takes it"}

// menuHeight is the number of rows menuLines draws.
func (m *Model) menuHeight() int {
	switch {
	case m.menu == nil:
		return 0
	case len(m.menu.entries) == 0:
		return 1
	}
	return min(len(m.menu.entries), menuRows) + 1
}

func (s *slashMenu) reveal() {
	if s.at < s.top {
		s.top = s.at
	}
	if s.at >= s.top+menuRows {
		s.top = s.at - menuRows + 1
	}
}

// moveMenu moves the highlight by d, wrapping around.
func (m *Model) moveMenu(d int) {
	s := m.menu
	if len(s.entries) == 0 {
		return
	}
	s.at = (s.at + d + len(s.entries)) % len(s.entries)
	s.reveal()
}

// closeMenu is esc on the menu: it stays closed while the word grows.
func (m *Model) closeMenu() {
	if m.menu != nil {
		m.menuShut = m.menu.word
	}
	m.menu = nil
}

// takeMenu puts the highlighted entry into the input. For enter on a
// command that needs no argument it reports run, and the command is sent.
func (m *Model) takeMenu(enter bool) (run bool) {
	s := m.menu
	if len(s.entries) == 0 {
		return false
	}
	e := s.entries[s.at]
	v := m.input.Value()
	text := v[:s.start] + e.insert
	if !strings.HasSuffix(e.insert, "/") && !strings.HasSuffix(e.insert, ":") {
		text += " "
	}
	m.setInput(text)
	m.menu = nil
	if s.kind == menuCommands && enter && e.run {
		return true
	}
	return false
}

// menuLines draws the menu, above the input.
func (m *Model) menuLines(w int) []string {
	s := m.menu
	if s == nil {
		return nil
	}
	st := m.st
	if len(s.entries) == 0 {
		msg := "  no resource matches " + cleanLine(s.word)
		if s.kind == menuPaths {
			msg = "  no file matches " + cleanLine(s.word)
		} else if m.mentions == nil || m.mentions.loading {
			msg = "  listing the servers' resources…"
		}
		return []string{fit(st.Muted.Render(msg), w)}
	}
	lw := 0
	end := min(s.top+menuRows, len(s.entries))
	for _, e := range s.entries[s.top:end] {
		lw = max(lw, ansi.StringWidth(e.label))
	}
	lw = min(lw, max(w/2, 10))
	var out []string
	for i := s.top; i < end; i++ {
		e := s.entries[i]
		label := trunc(e.label, lw)
		pad := strings.Repeat(" ", max(lw-ansi.StringWidth(label), 0))
		line := "  " + label + pad + "  " + st.Muted.Render(e.help)
		if i == s.at {
			line = st.Selected.Render("› "+label+pad) + "  " + e.help
		}
		out = append(out, trunc(line, w))
	}
	more := ""
	if len(s.entries) > menuRows {
		more = " · " + strconv.Itoa(s.at+1) + " of " + strconv.Itoa(len(s.entries))
	}
	out = append(out, trunc(st.Muted.Render("  ↑↓ choose · tab takes it · "+menuEnter[s.kind]+" · esc closes"+more), w))
	return out
}

// toolRefEntries are SERVER/TOOL of every listed tool that can be typed
// back as shown, with the tool's title (the server's words, cleaned).
func (m *Model) toolRefEntries() []menuEntry {
	if m.mgr == nil {
		return nil
	}
	var out []menuEntry
	for _, t := range m.mgr.Tools() {
		if ref := t.Server + "/" + t.Name; completable(ref) {
			out = append(out, menuEntry{insert: ref, label: ref, help: cleanLine(truncBytes(t.Title, 80))})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].insert < out[j].insert })
	return out
}

// serverEntries are the servers' names, with their state.
func (m *Model) serverEntries() []menuEntry {
	var out []menuEntry
	for _, s := range m.servers {
		if completable(s.Name) {
			out = append(out, menuEntry{insert: s.Name, label: s.Name, help: string(s.State)})
		}
	}
	return out
}
