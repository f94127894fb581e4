package ui

import (
	"fmt"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/mcphost/mcphost/llm"
)

// TestChatViewsGolden draws the chat's newer views at both sizes: the
// transcript focus with a long result's card, the pager, a history
// search, and queued messages with the token count in the status line.
func TestChatViewsGolden(t *testing.T) {
	views := []struct {
		name string
		play func(h *harness)
	}{
		{"focus", func(h *harness) {
			addLongCard(h.m, longResult(120), true)
			h.key("f2")
		}},
		{"pager", func(h *harness) {
			addLongCard(h.m, longResult(120), false)
			h.key("f2")
			h.key("o")
			h.key("/")
			h.typeText("line 3")
			h.key("enter")
		}},
		{"search", func(h *harness) {
			for _, s := range []string{"deploy staging", "list files"} {
				h.typeText(s)
				h.key("enter")
			}
			h.key("ctrl+r")
			h.typeText("depl")
		}},
		{"queued", func(h *harness) {
			h.m.usage.add(llm.Usage{InputTokens: 41000, OutputTokens: 1200}, false)
			h.m.run = &activeRun{id: 9, cancel: func() {}}
			for _, s := range []string{"first queued", "second queued"} {
				h.typeText(s)
				h.key("enter")
			}
		}},
	}
	for _, v := range views {
		for _, sz := range sizes {
			t.Run(fmt.Sprintf("%s_%dx%d", v.name, sz.w, sz.h), func(t *testing.T) {
				cfg := Config{Model: fakeModel{}, ContextWindow: 200000, Now: newClock().Now, Dark: dark(true)}
				if v.name == "search" {
					cfg.Model = nil // the messages stay in the transcript
				}
				h := newHarness(t, cfg)
				h.ready()
				h.send(tea.WindowSizeMsg{Width: sz.w, Height: sz.h})
				v.play(h)
				s := h.screen()
				checkFrame(t, s, sz.w, sz.h)
				golden.RequireEqual(t, []byte(s))
			})
		}
	}
}
