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
		if ev.Compaction != nil {
			m.compacted(ev.Compaction)
		}
	}
}

// compacted tells the cards whose results the compaction took out of the
// model's history that the model no longer has them.
func (m *Model) compacted(c *host.Compaction) {
	if len(c.ElidedCalls)+len(c.SummarisedCalls) == 0 {
		return
	}
	gone := make(map[string]compacted, len(c.ElidedCalls)+len(c.SummarisedCalls))
	for _, id := range c.ElidedCalls {
		gone[id] = markerOnly
	}
	for _, id := range c.SummarisedCalls {
		gone[id] = summarised // a summary replaces the marker too
	}
	for _, cd := range m.cards {
		if cd.manual || cd.callID == "" {
			continue
		}
		if g, ok := gone[cd.callID]; ok && g > cd.later {
			cd.later = g
			m.invalidateCard(cd)
		}
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
