package ui

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/mcphost/mcphost/sanitize"
)

// quitWindow is how close together two Ctrl-C on an empty input must be to
// quit.
const quitWindow = time.Second

// maxQueued bounds the messages waiting for the model.
const maxQueued = 20

// inputKey handles the keys of the input that are not the textarea's own:
// completion, history, the queue and leaving. It reports whether it used
// the key.
func (m *Model) inputKey(k tea.KeyPressMsg) (tea.Cmd, bool) {
	ck := m.keys.chat
	switch {
	case key.Matches(k, ck.Complete):
		m.complete()
		return nil, true
	case key.Matches(k, ck.Search):
		m.search = &histSearch{from: len(m.hist.entries), saved: m.input.Value()}
		m.searchUpdate()
		return nil, true
	case key.Matches(k, ck.Editor):
		return m.openEditor(), true
	case key.Matches(k, ck.Close) && m.input.Value() == "" && m.attach == nil && len(m.queue) > 0:
		m.queue = m.queue[:len(m.queue)-1]
		m.flash = "dropped the last queued message"
		return nil, true
	case key.Matches(k, ck.Prev) && m.firstLine():
		if m.input.Value() == "" && len(m.queue) > 0 && !m.hist.browsing() {
			// The newest queued message comes back to be edited; enter
			// queues it again.
			m.setInput(m.queue[len(m.queue)-1])
			m.queue = m.queue[:len(m.queue)-1]
			m.flash = "editing a queued message: enter queues it again"
			return nil, true
		}
		if s, ok := m.hist.prev(m.input.Value()); ok {
			m.setInput(s)
		}
		return nil, true
	case key.Matches(k, ck.Next) && m.lastLine() && m.hist.browsing():
		if s, ok := m.hist.next(); ok {
			m.setInput(s)
		}
		return nil, true
	}
	return nil, false
}

// firstLine reports whether the cursor is on the input's first screen row.
func (m *Model) firstLine() bool {
	return m.input.Line() == 0 && m.input.LineInfo().RowOffset == 0
}

// lastLine reports whether the cursor is on the input's last screen row.
func (m *Model) lastLine() bool {
	li := m.input.LineInfo()
	return m.input.Line() == m.input.LineCount()-1 && li.RowOffset >= li.Height-1
}

func (m *Model) setInput(s string) {
	m.input.SetValue(s)
	m.input.MoveToEnd()
}

// remember adds text to the history, saying so if the file cannot be
// written (once: the history then lasts for the session).
func (m *Model) remember(text string) {
	if err := m.hist.add(text); err != nil && !m.histWarned {
		m.histWarned = true
		m.notice(levelWarn, cleanLine(err.Error())+"; the history lasts for this session only")
	}
}

// histSearch is Ctrl-R: the input shows the newest entry that contains the
// query; Ctrl-R again looks further back.
type histSearch struct {
	query string
	from  int    // entries before this index are searched
	at    int    // the match shown, or -1
	saved string // the input before the search, for esc
}

func (m *Model) searchKey(k tea.KeyPressMsg) tea.Cmd {
	s := m.search
	switch {
	case key.Matches(k, m.keys.chat.Search):
		if s.at >= 0 {
			s.from = s.at
		}
		m.searchUpdate()
	case k.String() == "esc" || k.String() == "ctrl+g":
		m.search = nil
		m.setInput(s.saved)
	case k.String() == "backspace":
		if r := []rune(s.query); len(r) > 0 {
			s.query = string(r[:len(r)-1])
		}
		s.from = len(m.hist.entries)
		m.searchUpdate()
	case k.Text != "" && k.Mod&^tea.ModShift == 0:
		s.query += k.Text
		s.from = len(m.hist.entries)
		m.searchUpdate()
	default:
		// Any other key (enter, arrows, tab) keeps the match in the input
		// for editing; enter does not send it.
		m.search = nil
		m.hist.reset()
	}
	return nil
}

func (m *Model) searchUpdate() {
	s := m.search
	text, at := m.hist.search(s.query, s.from)
	if at < 0 && s.at >= 0 && s.from == s.at {
		m.flash = "no older match"
		return
	}
	s.at = at
	if at >= 0 {
		m.setInput(text)
	} else {
		m.setInput("")
	}
}

// searchRule is the line above the input during a history search.
func (m *Model) searchRule(w int) string {
	s := m.search
	label := " history search: " + cleanLine(s.query) + "▏"
	if s.at < 0 && s.query != "" {
		label += " (no match)"
	}
	label += " · ctrl+r older · enter keeps it · esc cancels "
	line := trunc(m.st.Rule.Render("──")+m.st.Info.Render(label), w)
	return line + m.st.Rule.Render(strings.Repeat("─", max(w-ansi.StringWidth(line), 0)))
}

// complete is Tab: it completes a slash command or its argument in place.
// It never moves the focus and never drops what was typed.
func (m *Model) complete() {
	v := m.input.Value()
	if !strings.HasPrefix(v, "/") || strings.Contains(v, "\n") {
		m.flash = "tab completes /commands · f2 moves to the transcript"
		return
	}
	name, arg, hasArg := strings.Cut(v, " ")
	var cands []string
	word := name
	if !hasArg {
		for _, c := range commandHelp {
			cmd, _, _ := strings.Cut(c[0], " ")
			cands = append(cands, cmd)
		}
	} else {
		word = arg
		switch name {
		case "/explain":
			cands = m.toolRefs()
		case "/trust", "/untrust":
			for _, s := range m.servers {
				cands = append(cands, s.Name)
			}
		default:
			m.flash = "nothing to complete after " + cleanLine(name)
			return
		}
	}
	var match []string
	for _, c := range cands {
		if strings.HasPrefix(c, word) && completable(c) {
			match = append(match, c)
		}
	}
	sort.Strings(match)
	match = dedup(match)
	switch len(match) {
	case 0:
		m.flash = "no completion for " + cleanLine(word)
		return
	case 1:
		word = match[0] + " "
	default:
		word = commonPrefix(match)
		shown := match
		if len(shown) > 8 {
			shown = shown[:8]
		}
		m.flash = fmt.Sprintf("%d matches: %s", len(match), strings.Join(shown, "  "))
		if len(match) > len(shown) {
			m.flash += " …"
		}
	}
	if hasArg {
		m.setInput(name + " " + word)
	} else {
		m.setInput(word)
	}
}

// toolRefs are SERVER/TOOL for every listed tool.
func (m *Model) toolRefs() []string {
	if m.mgr == nil {
		return nil
	}
	var out []string
	for _, t := range m.mgr.Tools() {
		out = append(out, t.Server+"/"+t.Name)
	}
	return out
}

// completable reports whether a name may be typed into the input for the
// person: a server's tool name is untrusted, and only a plain one is.
func completable(s string) bool {
	return s != "" && sanitize.Line(s) == s && !strings.ContainsAny(s, " \t")
}

func dedup(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

func commonPrefix(s []string) string {
	p := s[0]
	for _, v := range s[1:] {
		for !strings.HasPrefix(v, p) {
			p = p[:len(p)-1]
		}
	}
	return p
}

// queueMessage keeps a message written while the model works; it is sent
// when the turn ends.
func (m *Model) queueMessage(text string) tea.Cmd {
	if len(m.queue) >= maxQueued {
		m.flash = fmt.Sprintf("%d messages wait already: edit one (↑) or wait", maxQueued)
		return nil
	}
	m.remember(text)
	m.resetInput()
	m.queue = append(m.queue, text)
	return nil
}

// sendQueued sends the oldest queued message once nothing runs.
func (m *Model) sendQueued() tea.Cmd {
	if len(m.queue) == 0 || m.run != nil || m.phase != phaseReady {
		return nil
	}
	text := m.queue[0]
	m.queue = m.queue[1:]
	return m.sendText(text)
}

// queueLines shows the queued messages above the input.
func (m *Model) queueLines(w int) []string {
	if len(m.queue) == 0 {
		return nil
	}
	var out []string
	shown := m.queue
	if len(shown) > 3 {
		shown = shown[len(shown)-3:]
		out = append(out, fit(m.st.Muted.Render(fmt.Sprintf("  … %d more queued", len(m.queue)-3)), w))
	}
	for _, q := range shown {
		first, _ := firstLine(q)
		out = append(out, fit(m.st.Info.Render("  ⏸ queued ")+cleanLine(first), w))
	}
	out = append(out, fit(m.st.Muted.Render("  sent when the model is done · ↑ (empty input) edits the last · esc interrupts"), w))
	return out
}

// pasteLines is the most lines a paste shows in the input as it is; a
// longer one shows as one "[pasted N lines]" token and is sent whole.
const pasteLines = 10

// pasteBlock is a long paste the input shows as its token.
type pasteBlock struct {
	token, text string
}

// pasteLong puts a paste of more than pasteLines lines into the input as
// a token, and reports whether it did. Each token is unique in the input,
// so that each expands to its own paste.
func (m *Model) pasteLong(text string) bool {
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	n := strings.Count(strings.TrimRight(text, "\n"), "\n") + 1
	if n <= pasteLines {
		return false
	}
	token := fmt.Sprintf("[pasted %d lines]", n)
	for i := 2; strings.Contains(m.input.Value(), token) || m.pasteToken(token) >= 0; i++ {
		token = fmt.Sprintf("[pasted %d lines #%d]", n, i)
	}
	m.pastes = append(m.pastes, pasteBlock{token: token, text: text})
	m.input.InsertString(token)
	return true
}

func (m *Model) pasteToken(token string) int {
	for i, p := range m.pastes {
		if p.token == token {
			return i
		}
	}
	return -1
}

// inputText is what the input holds, with each paste token replaced by
// its paste. A token the person edited no longer stands for its paste.
func (m *Model) inputText() string {
	v := m.input.Value()
	for _, p := range m.pastes {
		v = strings.Replace(v, p.token, p.text, 1)
	}
	return v
}

// resetInput empties the input and forgets its pastes.
func (m *Model) resetInput() {
	m.input.Reset()
	m.pastes = nil
}

// backspaceToken deletes a whole paste token when the cursor stands right
// after one, and reports whether it did.
func (m *Model) backspaceToken() bool {
	if len(m.pastes) == 0 {
		return false
	}
	lines := strings.Split(m.input.Value(), "\n")
	row, col := m.input.Line(), m.input.Column()
	if row >= len(lines) {
		return false
	}
	line := []rune(lines[row])
	before := string(line[:min(col, len(line))])
	for i, p := range m.pastes {
		if strings.HasSuffix(before, p.token) {
			bs := tea.KeyPressMsg{Code: tea.KeyBackspace}
			for range []rune(p.token) {
				m.input, _ = m.input.Update(bs)
			}
			m.pastes = append(m.pastes[:i], m.pastes[i+1:]...)
			m.flash = "paste removed"
			return true
		}
	}
	return false
}

// maxEdited bounds what is read back from the editor.
const maxEdited = 1 << 20

// editorDoneMsg says the editor exited; path holds the edited message.
type editorDoneMsg struct {
	path string
	err  error
}

// openEditor is Ctrl-G: the message, pastes expanded, is written to a
// temporary file and opened in $VISUAL or $EDITOR (a command line split on
// spaces, run without a shell); when the editor exits, the file replaces
// the input.
func (m *Model) openEditor() tea.Cmd {
	ed := strings.TrimSpace(m.getenv("VISUAL"))
	if ed == "" {
		ed = strings.TrimSpace(m.getenv("EDITOR"))
	}
	if ed == "" {
		m.flash = "no editor: set $VISUAL or $EDITOR (for example export EDITOR=nano) and press ctrl+g again"
		return nil
	}
	f, err := os.CreateTemp("", "mcphost-message-*.md")
	if err != nil {
		m.flash = "cannot open the editor: " + cleanLine(err.Error())
		return nil
	}
	_, werr := f.WriteString(m.inputText())
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(f.Name())
		m.flash = "cannot open the editor: " + cleanLine(werr.Error())
		return nil
	}
	argv := strings.Fields(ed)
	cmd := exec.Command(argv[0], append(argv[1:], f.Name())...)
	path := f.Name()
	return m.execProcess(cmd, func(err error) tea.Msg { return editorDoneMsg{path: path, err: err} })
}

// editorDone puts the edited message into the input; an editor that failed
// leaves the input as it was.
func (m *Model) editorDone(msg editorDoneMsg) tea.Cmd {
	defer os.Remove(msg.path)
	if msg.err != nil {
		m.flash = "the editor failed (" + cleanLine(msg.err.Error()) + "); the input is unchanged"
		return nil
	}
	f, err := os.Open(msg.path)
	if err != nil {
		m.flash = "cannot read what the editor saved: " + cleanLine(err.Error())
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxEdited+1))
	if err != nil {
		m.flash = "cannot read what the editor saved: " + cleanLine(err.Error())
		return nil
	}
	if len(b) > maxEdited {
		m.flash = fmt.Sprintf("the edited message is over %d bytes; the input is unchanged", maxEdited)
		return nil
	}
	m.pastes = nil
	m.setInput(strings.TrimRight(string(b), "\n"))
	m.flash = "message edited"
	return m.input.Focus()
}
