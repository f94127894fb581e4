package ui

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
)

// bigTranscript returns a model holding n entries: messages, markdown
// answers, tool cards and notices, with an answer still streaming at the
// bottom.
func bigTranscript(tb testing.TB, n int) *Model {
	m := NewModel(Config{Model: fakeModel{}, Now: newClock().Now, Dark: dark(true)})
	tb.Cleanup(m.Close)
	m.Update(teaSize(120, 35))
	for i := 0; len(m.tr.entries) < n-1; i++ {
		switch i % 4 {
		case 0:
			m.tr.add(&entry{kind: entryUser, text: fmt.Sprintf("Question %d: what is blocked, and why?", i)})
		case 1:
			m.tr.add(&entry{kind: entryAssistant, done: true, text: fmt.Sprintf("Task **T-%d** is blocked:\n\n- waiting for storage quota\n- owner: `ops`\n\nSee the runbook.", i)})
		case 2:
			c := &card{started: m.now()}
			c.fromEntry(&host.CallEntry{ID: fmt.Sprint(i), Server: "tasks", Tool: "get_task", Args: json.RawMessage(fmt.Sprintf(`{"id":"T-%d"}`, i)),
				Verdict: "allow", Class: "read", DecidedBy: "auto", Status: host.StatusSuccess,
				Attempts: []host.Attempt{{N: 1, Outcome: "success", Duration: 3 * time.Millisecond}},
				Result:   textResult(fmt.Sprintf(`{"id":"T-%d","title":"Move backups","blocked":true}`, i), false)})
			m.tr.add(&entry{kind: entryCard, card: c})
		case 3:
			m.notice(levelInfo, "server tasks restarted")
		}
	}
	m.current = &entry{kind: entryAssistant, text: "Streaming"}
	m.tr.add(m.current)
	return m
}

// BenchmarkTranscriptFrame measures one frame of a 10,000-entry transcript
// while an answer streams in: the case that repeats dozens of times a
// second. The budget is 16ms a frame.
func BenchmarkTranscriptFrame(b *testing.B) {
	m := bigTranscript(b, 10000)
	m.View()
	b.ReportAllocs()
	for b.Loop() {
		m.current.text += " more"
		_ = m.View()
	}
}

// BenchmarkTranscriptScroll measures frames while paging up through the
// transcript, where each page draws entries never drawn before.
func BenchmarkTranscriptScroll(b *testing.B) {
	m := bigTranscript(b, 10000)
	m.View()
	b.ReportAllocs()
	for b.Loop() {
		if m.tr.bot == 0 {
			m.tr.bottom()
			for _, e := range m.tr.entries {
				e.invalidate()
			}
		}
		m.Update(keyMsg("pgup"))
		_ = m.View()
	}
}

// TestFrameDrawsOnlyWhatIsVisible: a frame of a long transcript renders
// the entries on screen and no others.
func TestFrameDrawsOnlyWhatIsVisible(t *testing.T) {
	m := bigTranscript(t, 10000)
	m.View()
	drawn := 0
	for _, e := range m.tr.entries {
		if e.cache != nil {
			drawn++
		}
	}
	if drawn == 0 || drawn > 40 {
		t.Fatalf("a frame drew %d of %d entries, want only those on screen", drawn, len(m.tr.entries))
	}
}

// BenchmarkToolsPanel10k measures the tools panel over a catalog of 10
// in-process servers × 1,000 tools: the time from starting the model to
// having every tool listed and catalogued (list+catalog-ms), and the time
// to build the panel and draw it once (panel-ms, budget 500ms).
func BenchmarkToolsPanel10k(b *testing.B) {
	const servers, perServer = 10, 1000
	specs := catalogServers(b, servers, perServer)
	var listed, panel time.Duration
	for b.Loop() {
		start := time.Now()
		h := newHarness(b, Config{Servers: specs, Now: newClock().Now, Dark: dark(true)})
		h.until("every tool is listed", func() bool {
			return h.m.phase == phaseReady && len(h.m.mgr.Tools()) == servers*perServer
		})
		listed += time.Since(start)

		h.send(teaSize(120, 40))
		start = time.Now()
		p := newToolsPanel(h.m, "")
		h.m.panel = p
		p.resize(h.m)
		_ = h.m.View()
		panel += time.Since(start)

		b.StopTimer()
		if len(p.rows) != servers*perServer {
			b.Fatalf("panel has %d rows, want %d", len(p.rows), servers*perServer)
		}
		h.m.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(listed.Microseconds())/1000/float64(b.N), "list+catalog-ms")
	b.ReportMetric(float64(panel.Microseconds())/1000/float64(b.N), "panel-ms")
}
