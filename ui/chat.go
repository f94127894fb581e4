package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/mcphost/mcphost/host"
)

// onKey routes a key: Ctrl-C first, then the top dialog, the panel, the
// pager, and the main screen.
func (m *Model) onKey(k tea.KeyPressMsg) tea.Cmd {
	ck := m.keys.chat
	switch {
	case key.Matches(k, ck.Cancel):
		return m.interrupt()
	case key.Matches(k, ck.Suspend):
		return tea.Suspend
	case key.Matches(k, ck.Quit) && m.onEmptyInput():
		return m.eof()
	}
	m.quitAt, m.flash = time.Time{}, ""
	if !key.Matches(k, ck.Close) {
		m.habits.escAt, m.habits.escStopped = time.Time{}, false
	}

	switch d := m.dialogs.top(); {
	// The dialogs own their keys, Esc included: it denies a confirmation
	// and skips a server, or leaves a text field inside the dialog. During
	// the grace period they ignore every key.
	case d != nil:
		return d.update(m, k)
	case m.panel != nil:
		var cmd tea.Cmd
		m.panel, cmd = m.panel.update(m, k)
		return cmd
	case m.pager != nil:
		return m.pagerKey(k)
	case m.search != nil:
		return m.searchKey(k)
	}

	switch {
	case key.Matches(k, ck.Tools):
		return m.openPanel(newToolsPanel(m, ""))
	case key.Matches(k, ck.Help):
		return m.openPanel(newHelpPanel(m))
	case key.Matches(k, ck.Mouse):
		m.mouseOff = !m.mouseOff
		m.flash = "mouse wheel scrolls the transcript (f3: let the terminal select text)"
		if m.mouseOff {
			m.flash = "the terminal selects text; f3 scrolls with the wheel again"
		}
		return nil
	case key.Matches(k, ck.PageUp):
		m.tr.scroll(&m.rc, -max(m.transcriptHeight()-2, 1), m.width, m.transcriptHeight())
		return nil
	case key.Matches(k, ck.PageDown):
		m.tr.scroll(&m.rc, max(m.transcriptHeight()-2, 1), m.width, m.transcriptHeight())
		return nil
	case key.Matches(k, ck.Expand):
		if c := m.tr.lastCard(); c != nil {
			c.expanded = !c.expanded
			m.invalidateCard(c)
		}
		return nil
	}

	if m.focus == focusTranscript {
		return m.transcriptKey(k)
	}
	if m.menu != nil {
		if cmd, ok := m.menuKey(k); ok {
			return cmd
		}
	}
	switch {
	// Esc interrupts only here, on the main screen with the focus in the
	// input: every dialog, panel, pager and search took its keys above, so
	// esc on a confirmation still denies it and never cancels the run.
	case key.Matches(k, ck.Interrupt) && (m.run != nil || len(m.calls) > 0):
		m.cancelRuns()
		m.habits.escStopped = true // habits.go: the escs that follow do not edit
		return nil
	case key.Matches(k, ck.Focus):
		m.focus = focusTranscript
		m.input.Blur()
		if m.tr.sel < 0 {
			m.tr.selectCard(&m.rc, -1, m.width, m.transcriptHeight())
		}
		m.invalidateAll()
		return nil
	case key.Matches(k, ck.Send):
		return m.send()
	case key.Matches(k, ck.Close) && m.attach != nil:
		m.attach = nil
		m.flash = "attachment dropped"
		return nil
	}
	if cmd, ok := m.inputKey(k); ok {
		return cmd
	}
	if key.Matches(k, ck.Close) {
		return m.escPressed() // habits.go: esc esc edits the last message
	}
	if k.String() == "backspace" && m.backspaceToken() {
		return nil
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	return cmd
}

// menuKey handles the keys of the open menu and reports whether it used
// the key: esc closes it; with entries, ↑/↓ move, tab takes the highlighted
// one, and enter takes it (running a command that needs no argument).
func (m *Model) menuKey(k tea.KeyPressMsg) (tea.Cmd, bool) {
	if key.Matches(k, m.keys.chat.Close) {
		m.closeMenu()
		return nil, true
	}
	if len(m.menu.entries) == 0 {
		return nil, false
	}
	switch k.String() {
	case "up", "ctrl+p":
		m.moveMenu(-1)
	case "down", "ctrl+n":
		m.moveMenu(1)
	case "tab":
		m.takeMenu(false)
	case "enter":
		// After a command, enter runs it with what was typed; a mention
		// is taken first unless it is complete.
		if s := m.menu; s.kind == menuToolRefs || s.kind == menuServers || s.kind == menuProviders || (s.kind == menuMentions || s.kind == menuPaths) && s.entries[s.at].insert == s.word {
			m.menu = nil
			return nil, false
		}
		if m.takeMenu(true) {
			return m.send(), true
		}
	default:
		return nil, false
	}
	return nil, true
}

// onEmptyInput reports whether the main screen's input has the keys and is
// empty: nothing on top of it takes them.
func (m *Model) onEmptyInput() bool {
	return m.dialogs.top() == nil &&
		m.panel == nil && m.pager == nil && m.search == nil && m.focus == focusInput && m.input.Value() == ""
}

// eof is Ctrl-D on an empty input: like Ctrl-C there, the first press only
// says how to quit, and a second within quitWindow quits.
func (m *Model) eof() tea.Cmd {
	now := m.now()
	if !m.quitAt.IsZero() && now.Sub(m.quitAt) <= quitWindow {
		return m.quit()
	}
	m.quitAt = now
	m.flash = "press ctrl+d again to quit (or ctrl+c twice, /quit)"
	return nil
}

func (m *Model) transcriptKey(k tea.KeyPressMsg) tea.Cmd {
	tk := m.keys.transcript
	w, h := m.width, m.transcriptHeight()
	switch {
	case key.Matches(k, tk.Back):
		m.focus = focusInput
		m.tr.sel = -1
		m.invalidateAll()
		return m.input.Focus()
	case key.Matches(k, tk.Prev):
		if !m.tr.selectCard(&m.rc, -1, w, h) {
			m.tr.scroll(&m.rc, -1, w, h)
		}
	case key.Matches(k, tk.Next):
		if !m.tr.selectCard(&m.rc, 1, w, h) {
			m.tr.scroll(&m.rc, 1, w, h)
		}
	case key.Matches(k, tk.Toggle):
		if c := m.tr.lastCard(); c != nil {
			c.expanded = !c.expanded
			m.invalidateCard(c)
			m.tr.reveal(&m.rc, m.tr.sel, w, h)
		}
	case key.Matches(k, tk.Open):
		m.openPager()
	case key.Matches(k, tk.Top):
		m.tr.top(&m.rc, w, h)
	case key.Matches(k, tk.Bottom):
		m.tr.bottom()
	}
	return nil
}

func (m *Model) invalidateAll() {
	for _, e := range m.tr.entries {
		e.invalidate()
	}
}

func (m *Model) onPaste(p tea.PasteMsg) tea.Cmd {
	var cmd tea.Cmd
	switch d := m.dialogs.top(); {
	case d != nil:
		return d.update(m, p) // a server's question takes no paste
	case m.panel != nil:
		m.panel, cmd = m.panel.update(m, p)
		return cmd
	case m.focus == focusInput && m.pasteLong(string(p.Content)):
		return nil
	}
	m.input, cmd = m.input.Update(p)
	return cmd
}

// interrupt is Ctrl-C. It cancels the question on screen, else what runs,
// else clears a non-empty input (keeping it in the history); only on an
// empty input, pressed twice within quitWindow, does it quit.
func (m *Model) interrupt() tea.Cmd {
	now := m.now()
	armed := !m.quitAt.IsZero() && now.Sub(m.quitAt) <= quitWindow
	m.quitAt = time.Time{}
	if d := m.dialogs.top(); d != nil {
		if cmd, ok := d.cancel(m); ok {
			return m.questionCancelled(cmd)
		}
	}
	switch {
	case m.pager != nil:
		m.pager = nil
		return nil
	case m.search != nil:
		m.search = nil
		m.setInput("")
		return nil
	case m.run != nil || len(m.calls) > 0:
		m.cancelRuns()
		return nil
	case m.panel == nil && m.dialogs.top() == nil && m.input.Value() != "":
		m.remember(m.inputText())
		m.resetInput()
		m.flash = "input cleared (↑ brings it back)"
		return nil
	case armed:
		return m.quit()
	}
	m.quitAt = now
	m.flash = "press ctrl+c again to quit (or ctrl+d, /quit)"
	return nil
}

// cancelRuns cancels the model's run and every call from the call form;
// the status says so until they have ended.
func (m *Model) cancelRuns() {
	if m.run != nil {
		m.run.cancel()
	}
	for _, c := range m.calls {
		c.cancel()
	}
	m.cancelling = true
}

// questionCancelled follows Ctrl-C on a dialog, which answered its
// question with a refusal (the card says it was cancelled): once no
// question is left, what asked is cancelled too.
func (m *Model) questionCancelled(cmd tea.Cmd) tea.Cmd {
	if len(m.asks) == 0 && (m.run != nil || len(m.calls) > 0) {
		m.cancelRuns()
	}
	m.flash = "question cancelled"
	return cmd
}

func (m *Model) quit() tea.Cmd {
	m.stop()
	return tea.Quit
}

// send handles Enter: a command, or a message to the model, queued while
// the model works.
func (m *Model) send() tea.Cmd {
	text := strings.TrimSpace(m.inputText())
	if text == "" {
		return nil
	}
	// Whatever is sent, its answer appears at the bottom: a person who
	// scrolled up to read is brought back there.
	m.tr.bottom()
	if strings.HasPrefix(text, "/") && !strings.HasPrefix(text, "//") {
		m.remember(text)
		m.resetInput()
		return m.command(text)
	}
	if m.cfg.Model != nil && (m.run != nil || m.pending != "") {
		return m.queueMessage(text)
	}
	m.remember(text)
	m.resetInput()
	return m.sendText(text)
}

// sendText sends a message to the model, or says why there is no model.
func (m *Model) sendText(text string) tea.Cmd {
	text = strings.TrimPrefix(text, "/")
	if m.cfg.Model == nil {
		m.tr.add(&entry{kind: entryUser, text: text})
		m.notice(levelWarn, noModelShort)
		return nil
	}
	// Mentions are found in the person's words only, before any file or
	// resource text joins them: neither can make mcphost read another.
	mentions := m.findMentions(text) // resources.go
	said := text
	if files := findFiles(text); len(files) > 0 {
		var ok bool
		if text, ok = m.attachFiles(text, files); !ok { // habits.go
			m.setInput(said)
			return nil
		}
	}
	m.tr.bottom()
	m.tr.add(&entry{kind: entryUser, text: said})
	if a := m.attach; a != nil {
		m.attach = nil
		m.notice(levelInfo, fmt.Sprintf("attached %s from %s (%d bytes, sent as data)", cleanLine(a.uri), cleanLine(a.server), len(a.text)))
		text = a.wrap(text)
	}
	if m.phase != phaseReady {
		m.pending, m.pendingMentions = text, mentions
		return nil
	}
	return m.startRun(text, mentions)
}

// startRun runs the model loop on text in a goroutine; its events come
// back through the inbox, in order, ending with runDoneMsg. The mentioned
// resources are read through the gate first and attached to text; if one
// cannot be, nothing is sent.
func (m *Model) startRun(text string, mentions []mention) tea.Cmd {
	if m.loop == nil {
		history, past := m.rec.takeHistory() // session.go
		m.loop = host.NewLoop(host.LoopOptions{
			Model: m.metered(m.cfg.Model), Gate: m.gate, Tools: m.mgr.Tools(),
			System: m.cfg.System, Briefing: m.briefing, MaxSteps: m.cfg.MaxSteps, // habits.go
			History: history, Past: past, OnMessage: m.rec.message, OnResult: m.rec.result, // session.go
			ToolSearch: m.cfg.Context.ToolSearch, AlwaysLoad: m.cfg.Context.AlwaysLoad, ContextWindow: m.cfg.Context.ContextWindow,
			OnEvent: func(ev host.LoopEvent) {
				if ev.Call != nil {
					c := *ev.Call // the loop goes on writing to its own entry
					ev.Call = &c
				}
				m.rec.event(ev) // session.go
				m.post(loopEventMsg{run: int(m.loopRun.Load()), ev: ev})
			},
		})
	}
	m.syncLoopTools()
	m.cancelling = false
	m.runSeq++
	id := m.runSeq
	m.loopRun.Store(int64(id))
	ctx, cancel := context.WithCancel(m.ctx)
	m.run = &activeRun{id: id, cancel: cancel}
	loop := m.loop
	return tea.Batch(m.job(func() {
		defer cancel()
		text, err := m.attachMentions(ctx, text, mentions) // resources.go
		if err != nil {
			m.post(runDoneMsg{run: id, err: err})
			return
		}
		out, err := loop.Run(ctx, text)
		m.post(runDoneMsg{run: id, out: out, err: err})
	}), m.spin())
}

func (m *Model) onLoopEvent(msg loopEventMsg) tea.Cmd {
	ev := msg.ev
	m.onContextEvent(ev)
	switch ev.Kind {
	case host.EvTurnStart:
		m.finishText()
	case host.EvTextDelta:
		if m.current == nil {
			m.current = &entry{kind: entryAssistant}
			m.tr.add(m.current)
		}
		m.current.text += ev.Text
	case host.EvToolCall:
		m.finishText()
		c := &card{id: fmt.Sprintf("%d/%s", msg.run, ev.Call.ID), started: m.now()}
		c.fromEntry(ev.Call)
		if !c.done {
			if d, _, err := m.explain(c.server, c.tool, c.args); err == nil {
				c.preview = &d
			}
		}
		m.cards[c.id] = c
		m.tr.add(&entry{kind: entryCard, card: c})
	case host.EvDecision, host.EvResult, host.EvBlocked:
		if ev.Call == nil {
			break
		}
		if c := m.cards[fmt.Sprintf("%d/%s", msg.run, ev.Call.ID)]; c != nil {
			c.fromEntry(ev.Call)
			if ev.Call.ApprovalID != "" {
				c.held = m.heldWords(ev.Call.ApprovalID, c.tier)
			}
			m.invalidateCard(c)
		}
	case host.EvTask:
		if ev.Call == nil {
			break
		}
		if c := m.cards[fmt.Sprintf("%d/%s", msg.run, ev.Call.ID)]; c != nil && c.onTask(ev.Task) {
			m.invalidateCard(c)
		}
	case host.EvProgress:
		if ev.Call == nil {
			break
		}
		if c := m.cards[fmt.Sprintf("%d/%s", msg.run, ev.Call.ID)]; c != nil && c.onProgress(ev.Progress) {
			m.invalidateCard(c)
		}
	case host.EvWarning:
		// From the model's provider: a tool not offered, a description cut.
		m.finishText()
		m.notice(levelWarn, clean(ev.Text))
	case host.EvThinking:
		// Thinking is shown folded: one line for each stretch of it, never
		// its text, which is the model's scratch work and not an answer.
		if l := m.tr.last(); l == nil || l.kind != entryNotice || l.text != thinkingNote {
			m.finishText()
			m.notice(levelInfo, thinkingNote)
		}
	case host.EvDone:
		m.finishText()
		switch ev.Status {
		case host.RunCancelled:
			m.notice(levelWarn, "cancelled")
		case host.RunStepLimit:
			m.notice(levelWarn, "the model was still calling tools when the step limit was reached")
		}
	}
	return nil
}

// thinkingNote stands in the transcript for a stretch of the model's
// thinking.
const thinkingNote = "(the model thought; its thinking is folded)"

// finishText ends the streamed message: from now on it is markdown.
func (m *Model) finishText() {
	if m.current != nil {
		m.current.done = true
		m.current.invalidate()
		m.current = nil
	}
}

func (m *Model) onRunDone(msg runDoneMsg) tea.Cmd {
	if m.run == nil || m.run.id != msg.run {
		return nil
	}
	m.run = nil
	cancelled := m.cancelling
	if !m.busy() {
		m.cancelling = false
	}
	m.finishText()
	for _, c := range m.cards {
		if !c.done && !c.manual {
			// The loop ended without an outcome for it (cancelled at once).
			c.done, c.status, c.message = true, host.StatusError, "not run: the session was stopped"
			m.invalidateCard(c)
		}
	}
	if msg.err != nil && !errors.Is(msg.err, context.Canceled) && !errors.Is(msg.err, errNotAttached) {
		m.notice(levelError, "model: "+cleanLine(msg.err.Error()))
	}
	if cancelled && len(m.queue) > 0 {
		// After a cancel the person decides again: what they queued comes
		// back to the input instead of going to the model.
		text := strings.Join(append(m.queue, m.input.Value()), "\n\n")
		m.queue = nil
		m.setInput(strings.TrimSpace(text))
		m.flash = "cancelled: your queued messages are back in the input"
		return nil
	}
	return m.sendQueued()
}

// command runs a slash command.
func (m *Model) command(line string) tea.Cmd {
	name, rest, _ := strings.Cut(line, " ")
	rest = strings.TrimSpace(rest)
	switch name {
	case "/tools":
		return m.openPanel(newToolsPanel(m, rest))
	case "/servers":
		return m.openPanel(newServersPanel(m))
	case "/resources":
		return m.openResources(rest)
	case "/prompts":
		return m.openPrompts(rest)
	case "/detach":
		if m.attach == nil {
			m.notice(levelInfo, "no resource is attached")
		} else {
			m.notice(levelInfo, "dropped the attached resource "+cleanLine(m.attach.uri))
			m.attach = nil
		}
	case "/grants":
		return m.openPanel(newGrantsPanel(m))
	case "/compact":
		return m.compactCommand()
	case "/help", "/?":
		return m.openPanel(newHelpPanel(m))
	case "/explain":
		m.explainCommand(rest)
	case "/trust":
		if arg, ok := strings.CutPrefix(strings.TrimSpace(rest), "revoke"); ok && (arg == "" || arg[0] == ' ') {
			m.untrustCommand("/trust revoke", arg)
			break
		}
		m.trustCommand(rest)
	case "/untrust":
		m.untrustCommand("/untrust", rest)
	case "/clear":
		if m.run != nil {
			m.flash = "the model is working: ctrl+c first"
			return nil
		}
		m.tr.clear()
		m.cards = map[string]*card{}
		m.loop = nil
		m.usage.last = 0
		m.rec.cleared() // session.go
		m.notice(levelInfo, "transcript cleared; the next message starts a new conversation (session grants stay)")
	case "/export":
		m.exportCommand(rest) // export.go
	case "/model":
		if rest == "" && m.modelPicker() { // habits.go
			return nil
		}
		m.modelCommand(rest) // switchmodel.go
	case "/resume":
		return m.resumeCommand(rest) // habits.go
	case "/instructions":
		m.instructionsCommand(rest) // habits.go
	case "/copy":
		return m.copyCommand(rest) // copy.go
	case "/quit", "/exit":
		return m.quit()
	default:
		m.notice(levelWarn, unknownCommand(name)) // suggest.go
	}
	return nil
}

func (m *Model) explainCommand(arg string) {
	ref, raw, _ := strings.Cut(arg, " ")
	server, tool, ok := strings.Cut(ref, "/")
	if !ok || server == "" || tool == "" {
		m.notice(levelWarn, "usage: /explain SERVER/TOOL [ARGS as a JSON object]")
		return
	}
	var args json.RawMessage
	if raw = strings.TrimSpace(raw); raw != "" {
		if err := checkObject(raw); err != nil {
			m.notice(levelWarn, "/explain: "+cleanLine(err.Error()))
			return
		}
		args = json.RawMessage(raw)
	}
	d, t, err := m.explain(server, tool, args)
	if err != nil {
		m.notice(levelWarn, "/explain: "+cleanLine(err.Error()))
		return
	}
	m.notice(levelInfo, strings.Join(m.explainLines(t, d, max(m.width-2, 20)), "\n"))
}
