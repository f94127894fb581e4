package ui

import (
	"encoding/json"
	"github.com/mcphost/mcphost/internal/termtest"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
)

// FuzzTranscriptRender draws a transcript whose every string is random:
// a user message, a model's answer (as markdown), and a tool card with a
// random server, tool, arguments, result and message, collapsed and
// expanded, at several widths. Nothing but text and colour may come out.
func FuzzTranscriptRender(f *testing.F) {
	f.Add("tasks", "list_tasks", `{"id":"T-1"}`, "ok", "hi **there**", "a", 0)
	f.Add("h\x1b]0;x\x07", "\x1b[2Jsafe", "{\"a\":\"\x1b[31m\"}", "Welcome\x1b]52;c;eA==\x07\u202e", "[x](javascript:\x1b[2J)", "\x9b2J", 1)
	f.Add("s", "t", "{}", "👩\u200d👧", "fam 👩\u200d👩\u200d👧 a\u200db\n\n- x\n\n```\n👩\u200d", "\u200d", 3)
	f.Add("", "", "not json", "\r\x08\x7f\u200b", "# T\n\n```\n\x1b[1A\n```\n| a | b |\n|---|---|\n| \x1b | \u2066 |", "\t\x00", 2)
	f.Fuzz(func(t *testing.T, server, tool, args, result, text, user string, status int) {
		m := NewModel(Config{Model: fakeModel{}, Now: newClock().Now, Dark: dark(status%2 == 0)})
		defer m.Close()
		statuses := []host.Status{host.StatusSuccess, host.StatusToolError, host.StatusDenied, host.StatusBlocked, host.StatusUnknown, host.StatusError, ""}
		st := statuses[(status%len(statuses)+len(statuses))%len(statuses)]
		m.tr.add(&entry{kind: entryUser, text: user})
		m.tr.add(&entry{kind: entryAssistant, text: text, done: true})
		m.tr.add(&entry{kind: entryAssistant, text: text})
		m.tr.add(&entry{kind: entryAssistant, text: text[:len(text)/2]}) // a stream cut anywhere
		ce := &host.CallEntry{ID: "1", Server: server, Tool: tool, ModelName: tool, Args: json.RawMessage(args),
			Verdict: "ask", Class: "destructive", Tier: 2, DecidedBy: host.DecidedBy("user:" + server), Status: st, Message: result,
			Reasons: []string{tool}, Attempts: []host.Attempt{{N: 1, Outcome: "unknown", Detail: result, Duration: time.Second}},
			Result: textResult(result, st == host.StatusToolError)}
		for _, expanded := range []bool{false, true} {
			c := &card{started: m.now(), expanded: expanded}
			c.fromEntry(ce)
			m.tr.add(&entry{kind: entryCard, card: c})
		}
		m.notice(levelError, cleanLine(result))
		for _, w := range []int{20, 80, 131} {
			m.Update(teaSize(w, 30))
			out := m.View().Content
			if bad := termtest.Unsafe(out); bad != "" {
				t.Fatalf("width %d: %s", w, bad)
			}
			if cl := noStrayJoiner(out); cl != "" {
				t.Fatalf("width %d: a joiner outside an emoji reached the screen: %q", w, cl)
			}
		}
	})
}
