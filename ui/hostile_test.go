package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcphost/mcphost/internal/termtest"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/llm"
)

// hostileModel calls every tool it is offered, then repeats a hostile
// string in its answer, as a model that read the results might.
type hostileModel struct{ turn int }

func (*hostileModel) Name() string { return "script:hostile" }

func (m *hostileModel) Stream(ctx context.Context, req *llm.Request, emit func(llm.Event)) error {
	m.turn++
	switch m.turn {
	case 1:
		for i, t := range req.Tools {
			emit(llm.Event{Kind: llm.EventToolCall, Call: &llm.ToolCall{ID: fmt.Sprint("c", i), Name: t.Name, Args: json.RawMessage(`{"name":"a\u001b[2Jb"}`)}})
		}
		emit(llm.Event{Kind: llm.EventUsage})
		emit(llm.Event{Kind: llm.EventDone, StopReason: llm.StopToolUse})
	case 2:
		emit(llm.Event{Kind: llm.EventTextDelta, Text: "The banner said **Welcome!**\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07 and [click here](https://example.invalid/\x1b]8;;x) \u202etxt.exe\u200b\u009b2J"})
		emit(llm.Event{Kind: llm.EventUsage})
		emit(llm.Event{Kind: llm.EventDone, StopReason: llm.StopEndTurn})
	default:
		return errors.New("no more turns")
	}
	return nil
}

// TestHostileStringsNeverReachTheTerminal runs the hostile fixture's
// escape-laden tools through the whole UI: the tools panel, a tool's
// explanation, the servers panel, and the transcript with every call's
// card expanded. No frame may contain a control sequence from the server.
func TestHostileStringsNeverReachTheTerminal(t *testing.T) {
	spec, _ := fixtureSpec(t, "hostile", fixtures.Options{Hostile: fixtures.HostileEscapes})
	h := newHarness(t, Config{
		Servers: []client.Spec{spec}, Model: &hostileModel{},
		Gate: host.GateOptions{Policy: policy(t, "hostile/*"), Audit: &memAudit{}},
		Now:  newClock().Now, Dark: dark(true),
	})
	h.ready()
	frames := 0
	check := func(what string) {
		t.Helper()
		frames++
		out := h.m.View().Content
		if bad := termtest.Unsafe(out); bad != "" {
			t.Errorf("%s: the frame carries %s", what, bad)
		}
	}

	h.key("ctrl+t")
	check("tools panel")
	if s := h.screen(); !strings.Contains(s, `\x1b[2J\x1b[Hsafe_tool`) || !strings.Contains(s, `invoice_\u202efdp.exe`) {
		t.Errorf("the escaped names are not shown visibly:\n%s", s)
	}
	for i := 0; i < 8; i++ {
		h.key("enter")
		check(fmt.Sprintf("tool %d explained", i))
		h.key("enter")
		check(fmt.Sprintf("tool %d call form", i))
		h.key("esc")
		h.key("esc")
		h.key("down")
	}
	h.key("esc")

	h.typeText("show me everything")
	h.key("enter")
	h.until("the run ends", func() bool { return h.m.run == nil && h.m.pending == "" })
	check("transcript")
	for i := range h.m.tr.entries {
		if c := h.m.tr.entries[i].card; c != nil {
			c.expanded = true
			h.m.invalidateCard(c)
		}
	}
	for range 40 {
		check("transcript, expanded")
		h.key("pgup")
	}
	s := h.screen()
	if !strings.Contains(s, `Welcome!\x1b[2J`) && !strings.Contains(h.m.tr.entries[len(h.m.tr.entries)-1].text, "Welcome") {
		t.Errorf("the results are not shown:\n%s", s)
	}
	h.m.command("/servers")
	check("servers panel")
	if frames < 20 {
		t.Fatalf("only %d frames checked", frames)
	}
}

// TestUnsafeOutputCatches proves the check can fail.
func TestUnsafeOutputCatches(t *testing.T) {
	for _, s := range []string{"a\x1b[2Jb", "a\x1b]52;c;eA==\x07", "\x9b2J", "a\u202eb", "a\rb", "a\x1b]8;;http://x\x1b\\y"} {
		if termtest.Unsafe(s) == "" {
			t.Errorf("termtest.Unsafe(%q) found nothing", s)
		}
	}
	if bad := termtest.Unsafe("\x1b[1;38;2;10;20;30mok\x1b[m\n"); bad != "" {
		t.Errorf("SGR flagged: %s", bad)
	}
}
