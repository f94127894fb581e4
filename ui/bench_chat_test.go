package ui

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
)

// streamChunk is the i-th piece of a long markdown answer: words with
// inline styling, a paragraph break every 20 pieces, a list and a fenced
// code block now and then.
func streamChunk(i int) string {
	switch {
	case i%200 == 199:
		return "\n```\n\n"
	case i%200 >= 180:
		return fmt.Sprintf("x := compute(%d) // step\n", i)
	case i%200 == 179:
		return "\n\n```go\n"
	case i%20 == 19:
		return "\n\n- an item with `code`\n- another item\n\n"
	}
	return fmt.Sprintf("word%d **bold** and *more* text, ", i)
}

// BenchmarkKeyWhileStreaming measures key-to-screen latency over a
// 10,000-entry transcript while an answer streams at 200 chunks a second:
// at 60 frames a second that is 3 to 4 chunks between two frames. One
// iteration is one frame: the chunks that arrived, one key typed into the
// input, and the view drawn. It reports the mean and the worst frame and
// the 99th percentile (the goal: every frame under 16ms), in wall time and
// in the CPU time of the frame's thread, which a busy machine does not
// inflate. The clock is the real one, so the streaming throttle behaves as
// it does in use.
func BenchmarkKeyWhileStreaming(b *testing.B) {
	m := bigTranscript(b, 10000)
	m.now, m.rc.now = time.Now, time.Now
	m.current = nil
	m.tr.entries = m.tr.entries[:len(m.tr.entries)-1]
	m.View()
	var frames, cpu []time.Duration
	chunk := 0
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	for b.Loop() {
		start, startCPU := time.Now(), threadCPU()
		n := 3 + chunk%3/2 // 3, 3, 4: 200 a second at 60 frames a second
		for range n {
			if chunk%4000 == 0 {
				m.Update(inboxMsg{loopEventMsg{run: 1, ev: host.LoopEvent{Kind: host.EvTurnStart}}})
			}
			m.Update(inboxMsg{loopEventMsg{run: 1, ev: host.LoopEvent{Kind: host.EvTextDelta, Text: streamChunk(chunk)}}})
			chunk++
		}
		m.Update(keyMsg("a"))
		_ = m.View()
		frames = append(frames, time.Since(start))
		cpu = append(cpu, threadCPU()-startCPU)
		if m.input.Length() > 200 {
			m.input.Reset()
		}
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	report := func(ds []time.Duration, unit string) {
		slices.Sort(ds)
		var sum time.Duration
		for _, d := range ds {
			sum += d
		}
		b.ReportMetric(ms(sum/time.Duration(len(ds))), "mean-"+unit)
		b.ReportMetric(ms(ds[len(ds)*99/100]), "p99-"+unit)
		b.ReportMetric(ms(ds[len(ds)-1]), "max-"+unit)
	}
	report(frames, "frame-ms")
	report(cpu, "cpu-ms") // the thread's CPU time: without waiting for a core
}

// BenchmarkTranscriptMemory reports the live heap of a 10,000-entry
// session: after one frame (only the screen is drawn), and after every
// entry has been drawn once (all line caches filled, the worst case).
func BenchmarkTranscriptMemory(b *testing.B) {
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	var frame, all float64
	for b.Loop() {
		base := heap()
		m := bigTranscript(b, 10000)
		m.View()
		frame += float64(heap()-base) / (1 << 20)
		m.scrollbackLines(m.width)
		all += float64(heap()-base) / (1 << 20)
		runtime.KeepAlive(m)
		m.Close()
	}
	b.ReportMetric(frame/float64(b.N), "heap-MB-one-frame")
	b.ReportMetric(all/float64(b.N), "heap-MB-all-drawn")
}
