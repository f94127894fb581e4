package llm

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// host plays the part of the tool loop: it sends the conversation, appends
// the assistant's turn, and answers each call with results[name].
type host struct {
	t        *testing.T
	m        Model
	msgs     []Message
	results  map[string]ToolResult
	lastText string
}

func (h *host) turn() ([]Event, error) {
	h.t.Helper()
	events, err := collect(context.Background(), h.m, &Request{Messages: h.msgs})
	if err != nil {
		return events, err
	}
	var text strings.Builder
	var calls []ToolCall
	for _, e := range events {
		switch e.Kind {
		case EventTextDelta:
			text.WriteString(e.Text)
		case EventToolCall:
			calls = append(calls, *e.Call)
		}
	}
	h.lastText = text.String()
	h.msgs = append(h.msgs, Message{Role: RoleAssistant, Text: text.String(), ToolCalls: calls})
	if len(calls) > 0 {
		var results []ToolResult
		for _, c := range calls {
			r := h.results[c.Name]
			r.CallID = c.ID
			results = append(results, r)
		}
		h.msgs = append(h.msgs, Message{Role: RoleTool, ToolResults: results})
	}
	return events, nil
}

func TestScriptReplay(t *testing.T) {
	m, err := New("script:"+filepath.Join("testdata", "script", "demo.jsonl"), Options{Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	h := &host{t: t, m: m, msgs: []Message{{Role: RoleUser, Text: "Add a line to my notes."}}, results: map[string]ToolResult{
		"files_read":  {Content: "buy milk"},
		"files_write": {Content: "denied: writes need approval", IsError: true},
	}}

	events, err := h.turn()
	if err != nil {
		t.Fatalf("turn 1: %v", err)
	}
	want := []Event{
		{Kind: EventTextDelta, Text: "Let me "},
		{Kind: EventTextDelta, Text: "read the "},
		{Kind: EventTextDelta, Text: "notes."},
		{Kind: EventToolCall, Call: &ToolCall{ID: "call_1_1", Name: "files_read", Args: json.RawMessage(`{"path": "notes.txt"}`)}},
		{Kind: EventUsage},
		{Kind: EventDone, StopReason: StopToolUse},
	}
	if diff := cmp.Diff(want, events); diff != "" {
		t.Errorf("turn 1 events (-want +got):\n%s", diff)
	}

	events, err = h.turn()
	if err != nil {
		t.Fatalf("turn 2: %v", err)
	}
	if c := events[len(events)-3].Call; c == nil || c.ID != "call_2_1" || c.Name != "files_write" {
		t.Errorf("turn 2 call = %+v, want call_2_1 files_write", c)
	}

	events, err = h.turn()
	if err != nil {
		t.Fatalf("turn 3: %v", err)
	}
	if h.lastText != "The write was refused, so the notes are unchanged." {
		t.Errorf("turn 3 text = %q", h.lastText)
	}
	if last := events[len(events)-1]; last.StopReason != StopEndTurn {
		t.Errorf("turn 3 stop = %q, want %q", last.StopReason, StopEndTurn)
	}

	_, err = h.turn()
	if !errors.Is(err, ErrScriptExhausted) {
		t.Fatalf("turn 4: got %v, want ErrScriptExhausted", err)
	}
	if want := "script:testdata/script/demo.jsonl: the script has no turns left after 3 turns"; err.Error() != want {
		t.Errorf("turn 4 error:\n got %q\nwant %q", err, want)
	}
}

func TestScriptExpectations(t *testing.T) {
	tests := []struct {
		name    string
		script  string
		results map[string]ToolResult
		want    string // "" when the run must succeed
	}{
		{"contains holds", `{"toolCalls": [{"name": "a"}, {"name": "b"}]}
{"expectResult": {"contains": "42"}, "expectError": false, "text": "ok"}`,
			map[string]ToolResult{"a": {Content: "nothing"}, "b": {Content: "the answer is 42"}}, ""},
		{"contains fails", `{"toolCalls": [{"name": "a"}]}
{"expectResult": {"contains": "42"}, "text": "ok"}`,
			map[string]ToolResult{"a": {Content: "nothing here"}},
			`script:inline: turn 2 (line 2): script expectation failed: expectResult: no tool result contains "42"; got [call_1_1 result "nothing here"]`},
		{"error expected", `{"toolCalls": [{"name": "a"}]}
{"expectError": true, "text": "ok"}`,
			map[string]ToolResult{"a": {Content: "fine"}},
			`turn 2 (line 2): script expectation failed: expectError: want at least one tool result to be an error; got [call_1_1 result "fine"]`},
		{"no error expected", `{"toolCalls": [{"name": "a", "id": "x"}]}
# comment

{"expectError": false, "text": "ok"}`,
			map[string]ToolResult{"a": {Content: "denied", IsError: true}},
			`turn 2 (line 4): script expectation failed: expectError: want no tool result to be an error; got [x error "denied"]`},
		{"no results at all", `{"text": "hi"}
{"expectResult": {"contains": "x"}, "text": "ok"}`,
			nil, "turn 2 (line 2): script expectation failed: the turn expects tool results and the request has none"},
		{"scripted failure", `{"error": "provider went away"}`,
			nil, "script:inline: turn 1 (line 1): provider went away"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turns, err := ParseScript(strings.NewReader(tt.script), "t.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			h := &host{t: t, m: NewScript(turns), msgs: []Message{{Role: RoleUser, Text: "go"}}, results: tt.results}
			for range turns {
				if _, err = h.turn(); err != nil {
					break
				}
			}
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("got %v, want success", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("got error %v, want one containing %q", err, tt.want)
			case strings.Contains(tt.want, "expectation") && !errors.Is(err, ErrScriptExpectation):
				t.Errorf("error %v does not match ErrScriptExpectation", err)
			}
		})
	}
}

func TestParseScriptErrors(t *testing.T) {
	tests := []struct {
		name, script, want string
	}{
		{"bad JSON", "{\"text\": \"a\"}\n{\"text\": \n", "t.jsonl:2: unexpected EOF"},
		{"unknown field", "\n{\"text\": \"a\", \"expect_result\": {}}", `t.jsonl:2: json: unknown field "expect_result"`},
		{"wrong type", `{"text": 3}`, "t.jsonl:1: json: cannot unmarshal number into Go struct field ScriptTurn.text of type string"},
		{"two values", `{"text": "a"} {"text": "b"}`, "t.jsonl:1: more than one JSON value on the line"},
		{"empty turn", "# only a comment\n{}", `t.jsonl:2: a turn needs "text", "toolCalls" or "error"`},
		{"error and text", `{"error": "x", "text": "y"}`, `t.jsonl:1: a turn with "error" fails, so it cannot also have "text", "toolCalls" or "stop"`},
		{"bad tool name", `{"toolCalls": [{"name": "files/read"}]}`, `t.jsonl:1: toolCalls[0]: name "files/read" must match [A-Za-z0-9_-]{1,64}`},
		{"args not object", `{"toolCalls": [{"name": "a", "args": [1]}]}`, "t.jsonl:1: toolCalls[0] (a): args must be a JSON object"},
		{"duplicate id", `{"toolCalls": [{"name": "a", "id": "x"}, {"name": "b", "id": "x"}]}`, `t.jsonl:1: toolCalls[1]: id "x" is used twice in the turn`},
		{"empty contains", `{"text": "a", "expectResult": {}}`, `t.jsonl:1: expectResult needs a non-empty "contains"`},
		{"no turns", "# nothing\n\n", "t.jsonl: the script has no turns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseScript(strings.NewReader(tt.script), "t.jsonl")
			if err == nil || err.Error() != tt.want {
				t.Errorf("got error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestScriptTurnsInCode(t *testing.T) {
	m := NewScript([]ScriptTurn{
		{Text: "one", Stop: "max_tokens"},
		{ToolCalls: []ScriptCall{{Name: "bad name"}}},
	})
	if m.Name() != "script:inline" {
		t.Errorf("Name() = %q", m.Name())
	}
	events, err := collect(context.Background(), m, hello())
	if err != nil {
		t.Fatal(err)
	}
	want := []Event{{Kind: EventTextDelta, Text: "one"}, {Kind: EventUsage}, {Kind: EventDone, StopReason: StopMaxTokens}}
	if diff := cmp.Diff(want, events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	_, err = collect(context.Background(), m, hello())
	if want := `script:inline: turn 2: toolCalls[0]: name "bad name" must match`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got error %v, want one containing %q", err, want)
	}
}

func TestScriptCancelled(t *testing.T) {
	m := NewScript([]ScriptTurn{{Text: "a b c d e f"}})
	ctx, cancel := context.WithCancel(context.Background())
	var events []Event
	err := m.Stream(ctx, hello(), func(e Event) {
		events = append(events, e)
		cancel()
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if len(events) != 1 {
		t.Errorf("got %d events after cancelling in the first, want 1", len(events))
	}
}

func TestSplitText(t *testing.T) {
	for _, s := range []string{"", "word", "two words", "a b c d e f g", "  spaced  out  ", "ünïcode wörds here and there"} {
		pieces := splitText(s, 3)
		if got := strings.Join(pieces, ""); got != s {
			t.Errorf("splitText(%q) joins to %q", s, got)
		}
		if len(pieces) > 3 {
			t.Errorf("splitText(%q) = %d pieces, want at most 3", s, len(pieces))
		}
	}
}

// expectTools fails a turn whose request offers the wrong tools; usage is
// reported as written.
func TestScriptExpectToolsAndUsage(t *testing.T) {
	m := NewScript([]ScriptTurn{
		{Text: "a", ExpectTools: &ToolsExpectation{Offered: []string{"x"}, NotOffered: []string{"y"}}, Usage: &Usage{InputTokens: 7, OutputTokens: 3}},
		{Text: "b", ExpectTools: &ToolsExpectation{NotOffered: []string{"y"}}},
		{Text: "c", ExpectTools: &ToolsExpectation{Offered: []string{"z"}}},
	})
	events, err := collect(context.Background(), m, &Request{Messages: []Message{{Role: RoleUser, Text: "hi"}}, Tools: []Tool{{Name: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	var got Usage
	for _, e := range events {
		if e.Kind == EventUsage {
			got = e.Usage
		}
	}
	if got != (Usage{InputTokens: 7, OutputTokens: 3}) {
		t.Errorf("usage %+v, want 7 in and 3 out", got)
	}
	_, err = collect(context.Background(), m, &Request{Messages: []Message{{Role: RoleUser, Text: "hi"}}, Tools: []Tool{{Name: "y"}}})
	if !errors.Is(err, ErrScriptExpectation) || !strings.Contains(err.Error(), `"y" is offered`) {
		t.Errorf("an offered tool that should not be: got %v", err)
	}
	_, err = collect(context.Background(), m, &Request{Messages: []Message{{Role: RoleUser, Text: "hi"}}})
	if !errors.Is(err, ErrScriptExpectation) || !strings.Contains(err.Error(), `"z" is not offered`) {
		t.Errorf("a tool that is not offered: got %v", err)
	}
}
