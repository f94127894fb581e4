package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// ErrScriptExhausted is matched by the error Stream returns when a scripted
// model is asked for a turn after its last one.
var ErrScriptExhausted = errors.New("the script has no turns left")

// ErrScriptExpectation is matched by the error Stream returns when a turn's
// expectResult or expectError does not hold for the tool results it was sent.
var ErrScriptExpectation = errors.New("script expectation failed")

// ScriptTurn is one scripted assistant turn; the JSON names are those of the
// script file format described in the package documentation.
type ScriptTurn struct {
	Text         string             `json:"text,omitempty"`
	ToolCalls    []ScriptCall       `json:"toolCalls,omitempty"`
	ExpectResult *ResultExpectation `json:"expectResult,omitempty"`
	ExpectError  *bool              `json:"expectError,omitempty"`
	ExpectTools  *ToolsExpectation  `json:"expectTools,omitempty"`
	// ExpectHistory must occur in the text of a message of the request
	// other than its last: what a continued conversation carries over.
	ExpectHistory *ResultExpectation `json:"expectHistory,omitempty"`
	Usage         *Usage             `json:"usage,omitempty"`
	Stop          string             `json:"stop,omitempty"`
	Error         string             `json:"error,omitempty"`

	// Line is where the turn starts in its file, for messages; 0 for turns
	// built in code.
	Line int `json:"-"`
}

// ScriptCall is one tool call of a scripted turn. An empty ID becomes
// "call_<turn>_<n>", both counted from 1; absent Args become {}.
type ScriptCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

// ToolsExpectation is checked against the tools a turn's request offers,
// by name: every one of Offered is offered, none of NotOffered is.
type ToolsExpectation struct {
	Offered    []string `json:"offered,omitempty"`
	NotOffered []string `json:"notOffered,omitempty"`
}

// ResultExpectation is checked against the tool results sent with a turn's
// request.
type ResultExpectation struct {
	// Contains must occur in the content of at least one result.
	Contains string `json:"contains"`
}

type scriptModel struct {
	name  string
	turns []ScriptTurn

	mu   sync.Mutex
	next int
}

// NewScript returns a model that answers each call of Stream with the next
// of turns. A turn that is not valid (see the script format) makes its
// Stream fail.
func NewScript(turns []ScriptTurn) Model {
	return &scriptModel{name: "script:inline", turns: turns}
}

// LoadScript reads a script file (the "script:<file>" spec). Its errors match
// [ErrConfig] and name the line at fault.
func LoadScript(path string) (Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, configErrorf("script: %w", err)
	}
	defer f.Close()
	turns, err := ParseScript(f, path)
	if err != nil {
		return nil, configErrorf("script %w", err)
	}
	return &scriptModel{name: "script:" + path, turns: turns}, nil
}

// maxScriptLine bounds one line of a script file.
const maxScriptLine = 1 << 20

// ParseScript reads the JSON Lines script format. name is used in error
// messages, which have the form "name:line: problem".
func ParseScript(r io.Reader, name string) ([]ScriptTurn, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, maxScriptLine)
	var turns []ScriptTurn
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 || text[0] == '#' {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		var t ScriptTurn
		if err := dec.Decode(&t); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("%s:%d: more than one JSON value on the line", name, line)
		}
		t.Line = line
		if err := t.validate(len(turns) + 1); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		turns = append(turns, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %v", name, line+1, err)
	}
	if len(turns) == 0 {
		return nil, fmt.Errorf("%s: the script has no turns", name)
	}
	return turns, nil
}

// validate checks a turn and fills in call IDs and empty arguments. n is the
// turn's number, counted from 1.
func (t *ScriptTurn) validate(n int) error {
	if t.Text == "" && len(t.ToolCalls) == 0 && t.Error == "" {
		return errors.New(`a turn needs "text", "toolCalls" or "error"`)
	}
	if t.Error != "" && (t.Text != "" || len(t.ToolCalls) > 0 || t.Stop != "") {
		return errors.New(`a turn with "error" fails, so it cannot also have "text", "toolCalls" or "stop"`)
	}
	ids := map[string]bool{}
	for i := range t.ToolCalls {
		c := &t.ToolCalls[i]
		if !validToolName(c.Name) {
			return fmt.Errorf("toolCalls[%d]: name %q must match [A-Za-z0-9_-]{1,64}", i, c.Name)
		}
		if string(bytes.TrimSpace(c.Args)) == "null" {
			c.Args = nil
		}
		c.Args = argsOrEmpty(c.Args)
		if !isJSONObject(c.Args) {
			return fmt.Errorf("toolCalls[%d] (%s): args must be a JSON object", i, c.Name)
		}
		if c.ID == "" {
			c.ID = "call_" + strconv.Itoa(n) + "_" + strconv.Itoa(i+1)
		}
		if ids[c.ID] {
			return fmt.Errorf("toolCalls[%d]: id %q is used twice in the turn", i, c.ID)
		}
		ids[c.ID] = true
	}
	if t.ExpectResult != nil && t.ExpectResult.Contains == "" {
		return errors.New(`expectResult needs a non-empty "contains"`)
	}
	if t.ExpectHistory != nil && t.ExpectHistory.Contains == "" {
		return errors.New(`expectHistory needs a non-empty "contains"`)
	}
	return nil
}

// checkHistory checks the turn's expectHistory against the request's
// messages before its last.
func (t *ScriptTurn) checkHistory(msgs []Message) error {
	e := t.ExpectHistory
	if e == nil {
		return nil
	}
	for i := 0; i < len(msgs)-1; i++ {
		if strings.Contains(msgs[i].Text, e.Contains) {
			return nil
		}
	}
	return fmt.Errorf("%w: expectHistory: no earlier message of the %d sent contains %q", ErrScriptExpectation, len(msgs), e.Contains)
}

func (s *scriptModel) Name() string { return s.name }

func (s *scriptModel) Stream(ctx context.Context, req *Request, emit func(Event)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := req.check(); err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	s.mu.Lock()
	i := s.next
	if i < len(s.turns) {
		s.next++
	}
	s.mu.Unlock()
	if i >= len(s.turns) {
		turns := "turns"
		if len(s.turns) == 1 {
			turns = "turn"
		}
		return fmt.Errorf("%s: %w after %d %s", s.name, ErrScriptExhausted, len(s.turns), turns)
	}

	turn := s.turns[i]
	turn.ToolCalls = slices.Clone(turn.ToolCalls) // validate fills in; keep s.turns as given
	where := fmt.Sprintf("%s: turn %d", s.name, i+1)
	if turn.Line > 0 {
		where += fmt.Sprintf(" (line %d)", turn.Line)
	}
	if err := turn.validate(i + 1); err != nil {
		return fmt.Errorf("%s: %v", where, err)
	}
	if err := turn.checkTools(req.Tools); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if err := turn.checkHistory(req.Messages); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if err := turn.check(lastResults(req.Messages)); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if turn.Error != "" {
		return fmt.Errorf("%s: %s", where, turn.Error)
	}

	for _, piece := range splitText(turn.Text, 3) {
		if err := ctx.Err(); err != nil {
			return err
		}
		emit(Event{Kind: EventTextDelta, Text: piece})
	}
	for _, c := range turn.ToolCalls {
		if err := ctx.Err(); err != nil {
			return err
		}
		emit(Event{Kind: EventToolCall, Call: &ToolCall{ID: c.ID, Name: c.Name, Args: c.Args}})
	}
	stop := turn.Stop
	if stop == "" {
		stop = StopEndTurn
		if len(turn.ToolCalls) > 0 {
			stop = StopToolUse
		}
	}
	var usage Usage
	if turn.Usage != nil {
		usage = *turn.Usage
	}
	emit(Event{Kind: EventUsage, Usage: usage})
	emit(Event{Kind: EventDone, StopReason: stop})
	return nil
}

// lastResults returns the tool results sent since the last assistant message:
// the answers to the previous turn's calls.
func lastResults(msgs []Message) []ToolResult {
	var out []ToolResult
	for i := len(msgs) - 1; i >= 0 && msgs[i].Role != RoleAssistant; i-- {
		if msgs[i].Role == RoleTool {
			out = append(slices.Clone(msgs[i].ToolResults), out...)
		}
	}
	return out
}

// checkTools checks the turn's expectTools against the tools offered.
func (t *ScriptTurn) checkTools(tools []Tool) error {
	e := t.ExpectTools
	if e == nil {
		return nil
	}
	offered := make([]string, len(tools))
	for i, tl := range tools {
		offered[i] = tl.Name
	}
	for _, name := range e.Offered {
		if !slices.Contains(offered, name) {
			return fmt.Errorf("%w: expectTools: %q is not offered; offered: %s", ErrScriptExpectation, name, strings.Join(offered, ", "))
		}
	}
	for _, name := range e.NotOffered {
		if slices.Contains(offered, name) {
			return fmt.Errorf("%w: expectTools: %q is offered and should not be; offered: %s", ErrScriptExpectation, name, strings.Join(offered, ", "))
		}
	}
	return nil
}

func (t *ScriptTurn) check(results []ToolResult) error {
	if t.ExpectResult == nil && t.ExpectError == nil {
		return nil
	}
	if len(results) == 0 {
		return fmt.Errorf("%w: the turn expects tool results and the request has none", ErrScriptExpectation)
	}
	if e := t.ExpectResult; e != nil {
		found := false
		for _, r := range results {
			found = found || strings.Contains(r.Content, e.Contains)
		}
		if !found {
			return fmt.Errorf("%w: expectResult: no tool result contains %q; got %s", ErrScriptExpectation, e.Contains, describe(results))
		}
	}
	if t.ExpectError != nil {
		failed := false
		for _, r := range results {
			failed = failed || r.IsError
		}
		if failed != *t.ExpectError {
			want := "at least one tool result to be an error"
			if !*t.ExpectError {
				want = "no tool result to be an error"
			}
			return fmt.Errorf("%w: expectError: want %s; got %s", ErrScriptExpectation, want, describe(results))
		}
	}
	return nil
}

// describe lists results briefly for an expectation failure.
func describe(results []ToolResult) string {
	parts := make([]string, len(results))
	for i, r := range results {
		kind := "result"
		if r.IsError {
			kind = "error"
		}
		parts[i] = fmt.Sprintf("%s %s %q", r.CallID, kind, clean(r.Content))
	}
	return "[" + strings.Join(parts, "; ") + "]"
}

// splitText cuts s after spaces into at most n pieces of about equal word
// counts, so that a scripted reply streams like a real one.
func splitText(s string, n int) []string {
	if s == "" {
		return nil
	}
	words := strings.SplitAfter(s, " ")
	per := (len(words) + n - 1) / n
	var out []string
	for i := 0; i < len(words); i += per {
		out = append(out, strings.Join(words[i:min(i+per, len(words))], ""))
	}
	return out
}
