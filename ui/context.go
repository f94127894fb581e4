package ui

import (
	"context"

	tea "charm.land/bubbletea/v2"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/llm"
)

// contextView is what the status line says of the model's context: the
// tokens of the conversation so far and how many of them a prompt cache
// served.
type contextView struct {
	usage llm.Usage
}

// onContextEvent notes the usage at the end of a run and shows a
// compaction on the transcript.
func (m *Model) onContextEvent(ev host.LoopEvent) {
	switch ev.Kind {
	case host.EvDone:
		if ev.Usage != nil {
			m.ctxView.usage = *ev.Usage
		}
	case host.EvCompaction:
		m.finishText()
		m.notice(levelInfo, cleanLine(ev.Text))
	}
}

// compactCommand runs /compact: the conversation is compacted now, as a
// run of its own that the person can stop with ctrl+c.
func (m *Model) compactCommand() tea.Cmd {
	switch {
	case m.run != nil:
		m.flash = "the model is working: ctrl+c first"
		return nil
	case m.loop == nil:
		m.notice(levelInfo, "nothing to compact yet")
		return nil
	}
	m.runSeq++
	id := m.runSeq
	m.loopRun.Store(int64(id))
	ctx, cancel := context.WithCancel(m.ctx)
	m.run = &activeRun{id: id, cancel: cancel}
	loop := m.loop
	return tea.Batch(m.job(func() {
		defer cancel()
		c, err := loop.Compact(ctx)
		if err == nil && c.Elided == 0 && c.Summarised == 0 {
			m.post(noticeMsg{l: levelInfo, text: "nothing to compact: " + c.String()})
		}
		m.post(runDoneMsg{run: id, err: err})
	}), m.spin())
}
