package ui

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcphost/mcphost/chatlog"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/llm"
	"github.com/mcphost/mcphost/sanitize"
	"github.com/mcphost/mcphost/ui/notify"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCompactedCardSaysTheModelHasItNoMore: once /compact replaced an old
// result by a marker, its card stops saying the model got all of it and
// says the model got it once; the newest result, kept whole, still says
// the model got it.
func TestCompactedCardSaysTheModelHasItNoMore(t *testing.T) {
	spec, _ := fixtureSpec(t, "hostile", fixtures.Options{Hostile: fixtures.HostileOversized, OversizeBytes: 4000})
	model := llm.NewScript([]llm.ScriptTurn{
		{ToolCalls: []llm.ScriptCall{{Name: "hostile__dump_logs"}}},
		{Text: "The logs are long."},
		{ToolCalls: []llm.ScriptCall{{Name: "hostile__dump_logs"}}},
		{Text: "Still long."},
		{Text: "Summary: logs were read twice."},
	})
	h := newHarness(t, Config{
		Servers: []client.Spec{spec}, Model: model,
		Gate: host.GateOptions{Policy: policy(t), Trusted: trusted("hostile"), Audit: &memAudit{}},
		Now:  newClock().Now, Dark: dark(true),
	})
	h.ready()
	for _, msg := range []string{"dump the logs", "and again"} {
		h.typeText(msg)
		h.key("enter")
		h.until("the run ends", func() bool { return h.m.run == nil && h.m.loop != nil })
	}
	cards := h.cardsInOrder()
	if len(cards) != 2 {
		t.Fatalf("%d cards, want 2", len(cards))
	}
	for _, c := range cards {
		if got := c.bodyTitle(); !strings.HasSuffix(got, "the model got all of it") {
			t.Fatalf("before /compact a card says %q", got)
		}
	}
	h.typeText("/compact")
	h.key("enter")
	h.until("the compaction ends", func() bool { return h.m.run == nil && strings.Contains(h.screen(), "context compacted") })
	old, kept := cards[0].bodyTitle(), cards[1].bodyTitle()
	if !strings.Contains(old, "the model got all of it once; the conversation was compacted since, and later requests carry a short note in its place") {
		t.Errorf("the elided result's card says %q", old)
	}
	if !strings.HasSuffix(kept, "the model got all of it") {
		t.Errorf("the result kept whole says %q", kept)
	}
	if got := cards[0].sizeNote(); !strings.Contains(got, "out of the model's context since") {
		t.Errorf("the folded card's size note is %q", got)
	}
	h.send(teaSize(100, 60))
	if s := h.screen(); !strings.Contains(s, "out of the model's context since") {
		t.Errorf("the screen does not show the elided card's note:\n%s", s)
	}
}

// A summary that takes a result with its turn says so, and wins over a
// marker; a call of the tools panel is never marked.
func TestSummarisedCardWording(t *testing.T) {
	m := NewModel(Config{Dark: dark(true)})
	defer m.Close()
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}}
	a := &card{callID: "a", done: true, status: host.StatusSuccess, result: res, resultBytes: 1}
	b := &card{callID: "b", done: true, status: host.StatusSuccess, result: res, resultBytes: 1, truncated: true}
	manual := &card{callID: "a", manual: true, done: true, status: host.StatusSuccess, result: res, resultBytes: 1}
	m.cards = map[string]*card{"1/a": a, "1/b": b, "m": manual}
	m.compacted(&host.Compaction{ElidedCalls: []string{"a", "b"}})
	m.compacted(&host.Compaction{SummarisedCalls: []string{"b"}})
	m.compacted(&host.Compaction{ElidedCalls: []string{"b"}}) // a marker never undoes a summary
	if got := a.modelGot(); !strings.Contains(got, "a short note in its place") {
		t.Errorf("elided: %q", got)
	}
	if got := b.modelGot(); got != "the model got only its beginning (cut to the result limit) once; the conversation was compacted since, and later requests carry only the model's summary of that part" {
		t.Errorf("summarised: %q", got)
	}
	if got := a.sizeNote(); got != "(1 B, 1 line, out of the model's context since)" {
		t.Errorf("a short compacted result's size note is %q, want it to say so on the folded card", got)
	}
	if got := manual.modelGot(); !strings.Contains(got, "did not get it") {
		t.Errorf("manual: %q", got)
	}
}

// cardsInOrder returns the transcript's cards, oldest first.
func (h *harness) cardsInOrder() []*card {
	var out []*card
	for _, e := range h.m.tr.entries {
		if e.kind == entryCard {
			out = append(out, e.card)
		}
	}
	return out
}

// osc52 decodes the clipboard writes in what the model wrote: each
// OSC 52 sequence's text, in order.
func osc52(t *testing.T, raw []string) []string {
	t.Helper()
	var out []string
	for _, r := range raw {
		for {
			i := strings.Index(r, "\x1b]52;c;")
			if i < 0 {
				break
			}
			r = r[i+len("\x1b]52;c;"):]
			j := strings.IndexByte(r, '\a')
			if j < 0 {
				t.Fatalf("an OSC 52 sequence does not end: %q", r)
			}
			b, err := base64.StdEncoding.DecodeString(r[:j])
			if err != nil {
				t.Fatalf("OSC 52 payload: %v", err)
			}
			out = append(out, string(b))
			r = r[j:]
		}
	}
	return out
}

// TestCopyCommand: /copy writes the last answer's Markdown source to the
// clipboard with OSC 52, /copy result the newest card's result; the
// control characters of a hostile result are left out and counted, and the
// transcript says what the terminal must allow.
func TestCopyCommand(t *testing.T) {
	spec, _ := fixtureSpec(t, "hostile", fixtures.Options{Hostile: fixtures.HostileEscapes})
	model := llm.NewScript([]llm.ScriptTurn{
		{ToolCalls: []llm.ScriptCall{{Name: "hostile__show_banner"}}},
		{Text: "# Notes\n\n- **one**\n- `two`\n"},
	})
	h := newHarness(t, Config{
		Servers: []client.Spec{spec}, Model: model,
		Gate: host.GateOptions{Policy: policy(t), Trusted: trusted("hostile"), Audit: &memAudit{}},
		Now:  newClock().Now, Dark: dark(true),
	})
	h.ready()
	h.typeText("/copy")
	h.key("enter")
	if len(h.raw) != 0 || !strings.Contains(h.m.flash, "nothing to copy") {
		t.Fatalf("/copy before any answer wrote %q, flash %q", h.raw, h.m.flash)
	}
	h.typeText("go")
	h.key("enter")
	h.until("the run ends", func() bool { return h.m.run == nil && h.m.loop != nil })

	h.typeText("/copy")
	h.key("enter")
	h.until("the sequence is written", func() bool { return len(h.raw) > 0 })
	got := osc52(t, h.raw)
	if len(got) != 1 || got[0] != "# Notes\n\n- **one**\n- `two`\n" {
		t.Fatalf("/copy put %q on the clipboard, want the answer's Markdown source", got)
	}
	if s := h.screen(); !strings.Contains(s, "copied the last answer (4 lines") || !strings.Contains(s, "set-clipboard on") {
		t.Errorf("the transcript does not say what was copied and what the terminal must allow:\n%s", s)
	}

	h.raw = nil
	h.typeText("/copy result")
	h.key("enter")
	h.until("the sequence is written", func() bool { return len(h.raw) > 0 })
	got = osc52(t, h.raw)
	card := h.cardsInOrder()[0]
	want, left := sanitize.Strip(host.ResultText(card.result))
	if left == 0 {
		t.Fatalf("the fixture's result has no control character to strip: %q", host.ResultText(card.result))
	}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("/copy result put %q, want %q", got, want)
	}
	for _, r := range got[0] {
		if r != '\n' && r != '\t' && (r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0)) {
			t.Fatalf("the copied result keeps the control character %U: %q", r, got[0])
		}
	}
	if s := h.screen(); !strings.Contains(s, "control character") {
		t.Errorf("the notice does not count what was left out:\n%s", s)
	}
}

// TestCopyInTmuxAndLimits: inside tmux the sequence goes as it is and
// wrapped for passthrough; past the limit only the beginning goes, on a
// rune boundary, and the notice says so; a dumb terminal gets nothing.
func TestCopyInTmuxAndLimits(t *testing.T) {
	long := strings.Repeat("日本語のテキスト\n", copyLimit/20)
	model := llm.NewScript([]llm.ScriptTurn{{Text: long}})
	h := newHarness(t, Config{Model: model, Now: newClock().Now, Dark: dark(true),
		Notify: notify.New(notify.Both, notify.Terminal{Tmux: true})})
	h.ready()
	h.typeText("hi")
	h.key("enter")
	h.until("the run ends", func() bool { return h.m.run == nil && h.m.loop != nil })
	h.typeText("/copy")
	h.key("enter")
	h.until("the sequence is written", func() bool { return len(h.raw) > 0 })
	if len(h.raw) != 1 {
		t.Fatalf("wrote %d sequences, want 1", len(h.raw))
	}
	plain, wrapped, ok := strings.Cut(h.raw[0], "\x1bPtmux;")
	if !ok || !strings.HasPrefix(plain, "\x1b]52;c;") || wrapped != strings.ReplaceAll(plain, "\x1b", "\x1b\x1b")+"\x1b\\" {
		t.Fatalf("in tmux wrote %.80q…, want the sequence and its passthrough", h.raw[0])
	}
	got := osc52(t, []string{plain})[0]
	if len(got) > copyLimit || len(got) < copyLimit-3 || !strings.HasPrefix(long, got) || !utf8.ValidString(got) {
		t.Errorf("copied %d bytes of %d, want the first %d on a rune boundary", len(got), len(long), copyLimit)
	}
	if s := h.screen(); !strings.Contains(s, "only its first") {
		t.Errorf("the notice does not say the text was cut:\n%s", s)
	}

	d := newHarness(t, Config{Model: model, Now: newClock().Now, Dark: dark(true), Notify: notify.New(notify.Both, notify.Terminal{Dumb: true})})
	d.m.tr.add(&entry{kind: entryAssistant, text: "x", done: true})
	d.typeText("/copy")
	d.key("enter")
	if len(d.raw) != 0 || !strings.Contains(d.m.flash, "nothing copied") {
		t.Errorf("a dumb terminal got %q, flash %q", d.raw, d.m.flash)
	}
}

// TestModelCommand: /model alone names the model; /model with a spec the
// switcher refuses keeps the model and says why; a good one is used from
// the next message on, with the conversation, and the session notes it.
func TestModelCommand(t *testing.T) {
	first := llm.NewScript([]llm.ScriptTurn{{Text: "From the first."}})
	second := &named{Model: llm.NewScript([]llm.ScriptTurn{
		{ExpectHistory: &llm.ResultExpectation{Contains: "From the first."}, Text: "From the second."},
	}), name: "openai:gpt-test"}
	var asked []string
	dir := t.TempDir()
	log, err := chatlog.New(dir, chatlog.Header{ID: "m1", Model: first.Name()}, newClock().Now)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Config{Model: first, Now: newClock().Now, Dark: dark(true), Session: log,
		SwitchModel: func(spec string) (ModelChoice, error) {
			asked = append(asked, spec)
			if spec != "openai:gpt-test" {
				return ModelChoice{}, errors.New(`model "` + spec + `": unknown provider`)
			}
			return ModelChoice{Model: second, ContextWindow: 64000}, nil
		}})
	h.ready()
	h.typeText("hello")
	h.key("enter")
	h.until("the first run ends", func() bool { return h.m.run == nil && h.m.loop != nil })

	h.typeText("/model")
	h.key("enter")
	if s := h.screen(); !strings.Contains(s, "the model is "+first.Name()) || !strings.Contains(s, "/model PROVIDER:MODEL") {
		t.Errorf("/model alone does not name the model and how to switch:\n%s", s)
	}
	h.typeText("/model nope:x")
	h.key("enter")
	if s := h.screen(); h.m.cfg.Model != first || !strings.Contains(s, "unknown provider") || !strings.Contains(s, "still "+first.Name()) {
		t.Errorf("a refused spec: model %s, screen:\n%s", h.m.cfg.Model.Name(), s)
	}
	h.typeText("/model openai:gpt-test")
	h.key("enter")
	if h.m.cfg.Model != second || h.m.contextWindow() != 64000 {
		t.Fatalf("after /model the model is %s with window %d", h.m.cfg.Model.Name(), h.m.contextWindow())
	}
	if s := h.screen(); !strings.Contains(s, "the model is now openai:gpt-test") || !strings.Contains(s, "model openai:gpt-test") {
		t.Errorf("the switch is not shown:\n%s", s)
	}
	h.typeText("next")
	h.key("enter")
	h.until("the second run ends", func() bool { return h.m.run == nil && strings.Contains(h.screen(), "From the second.") })
	msgs := second.last.Messages
	if len(msgs) != 3 || msgs[0].Text != "hello" || msgs[1].Text != "From the first." {
		t.Errorf("the second model was sent %+v, want the conversation so far", msgs)
	}
	if want := []string{"nope:x", "openai:gpt-test"}; strings.Join(asked, ",") != strings.Join(want, ",") {
		t.Errorf("the switcher was asked for %v, want %v", asked, want)
	}
	log.Close()
	s, err := chatlog.Load(dir, "m1")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Ran().Model; got != "openai:gpt-test" {
		t.Errorf("a resume would use %q, want the switched model", got)
	}
}

// named is a model under another name, which keeps its last request.
type named struct {
	llm.Model
	name string
	last llm.Request
}

func (n *named) Name() string { return n.name }

func (n *named) Stream(ctx context.Context, req *llm.Request, emit func(llm.Event)) error {
	n.last = *req
	n.last.Messages = append([]llm.Message(nil), req.Messages...)
	return n.Model.Stream(ctx, req, emit)
}

// After /model the menu offers the providers; tab takes one with its colon.
func TestModelCompletesProviders(t *testing.T) {
	h := newHarness(t, Config{Model: llm.NewScript(nil), Now: newClock().Now, Dark: dark(true)})
	h.ready()
	h.typeText("/model an")
	if h.m.menu == nil || h.m.menu.kind != menuProviders || len(h.m.menu.entries) != 1 || h.m.menu.entries[0].insert != "anthropic:" {
		t.Fatalf("the menu after /model an is %+v", h.m.menu)
	}
	h.key("tab")
	if got := h.m.input.Value(); got != "/model anthropic:" {
		t.Errorf("tab made the input %q, want /model anthropic:", got)
	}
	if h.m.menu != nil {
		t.Errorf("the menu stays open once the provider is typed: %+v", h.m.menu)
	}
}
