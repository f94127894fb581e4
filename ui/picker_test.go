package ui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/mcphost/mcphost/chatlog"
)

func pickerList(t0 time.Time) []chatlog.Summary {
	sum := func(id, dir, first, model string, ago time.Duration) chatlog.Summary {
		return chatlog.Summary{Header: chatlog.Header{ID: id, Dir: dir, Model: model}, First: first, Updated: t0.Add(-ago)}
	}
	return []chatlog.Summary{ // newest first, as chatlog.List gives them
		sum("20261201-120000-cccccc", "/home/someone/src/elsewhere/project", "other project", "openai:gpt-5", 5*time.Minute),
		sum("20261201-110000-bbbbbb", "/here", "second question here", "anthropic:claude-sonnet-4-5", 3*time.Hour),
		{Header: chatlog.Header{ID: "20261201-105000-dddddd"}, Err: &chatlog.CorruptError{Path: "x", Why: "damaged"}},
		sum("20261201-100000-aaaaaa", "/here", "first question\x1b[31m here\nand more", "script:demo", 50*time.Hour),
	}
}

func pickerScreen(p *Picker) string { return stripped(p.View().Content) }

func pickKey(s string) tea.KeyPressMsg {
	switch s {
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	}
	return tea.KeyPressMsg{Code: rune(s[0]), Text: s}
}

// TestPickerOrderAndRows: this directory's chats come first, a damaged
// file is left out, and each row shows the first prompt on one line
// (sanitized), the directory, the age and the model, cut to the width.
func TestPickerOrderAndRows(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 5, 0, 0, time.UTC)
	p := NewPicker(pickerList(t0), "/here", t0)
	p.Update(tea.WindowSizeMsg{Width: 100, Height: 10})
	if p.Len() != 3 {
		t.Fatalf("Len = %d, want 3 (the damaged file left out)", p.Len())
	}
	lines := strings.Split(pickerScreen(p), "\n")
	if len(lines) != 5 {
		t.Fatalf("the picker has %d lines, want 5:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	for i, want := range []string{"› second question here", "  first question\\x1b[31m here\\nand", "  other project"} {
		if !strings.HasPrefix(lines[i+2], want) {
			t.Errorf("row %d = %q, want it to start with %q", i, lines[i+2], want)
		}
	}
	for _, want := range []string{"· /here", "3h ago", "anthropic:claude-sonn", "2d ago", "…meone/src/elsewhere/project", "5m ago"} {
		if !strings.Contains(strings.Join(lines, "\n"), want) {
			t.Errorf("the picker lacks %q:\n%s", want, strings.Join(lines, "\n"))
		}
	}
	for i, l := range lines {
		if w := len([]rune(l)); w > 100 {
			t.Errorf("line %d is %d cells wide, over 100: %q", i, w, l)
		}
		if strings.ContainsRune(l, 0x1b) {
			t.Errorf("line %d holds an escape: %q", i, l)
		}
	}
}

// TestPickerKeys: the arrows move the selection and stop at the ends,
// Enter picks the selected chat, Esc leaves with none.
func TestPickerKeys(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 5, 0, 0, time.UTC)
	p := NewPicker(pickerList(t0), "/here", t0)
	for _, k := range []string{"up", "down", "down", "down", "down", "up"} {
		p.Update(pickKey(k))
	}
	if !strings.Contains(pickerScreen(p), "› first question") {
		t.Fatalf("after ↑↓↓↓↓↑ the selection is not on the second row:\n%s", pickerScreen(p))
	}
	if _, ok := p.Chosen(); ok {
		t.Fatal("a chat is chosen before Enter")
	}
	_, cmd := p.Update(pickKey("enter"))
	if cmd == nil {
		t.Fatal("Enter does not quit the picker")
	}
	if s, ok := p.Chosen(); !ok || s.ID != "20261201-100000-aaaaaa" {
		t.Fatalf("Enter chose %q, %v; want 20261201-100000-aaaaaa", s.ID, ok)
	}

	p = NewPicker(pickerList(t0), "/here", t0)
	p.Update(pickKey("down"))
	if _, cmd := p.Update(pickKey("esc")); cmd == nil {
		t.Fatal("Esc does not quit the picker")
	}
	if s, ok := p.Chosen(); ok {
		t.Fatalf("Esc chose %s", s.ID)
	}
}

// TestPickerScrolls: on a short terminal the selection stays on screen.
func TestPickerScrolls(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 5, 0, 0, time.UTC)
	var list []chatlog.Summary
	for i := range 30 {
		list = append(list, chatlog.Summary{Header: chatlog.Header{ID: "s" + string(rune('a'+i%26)), Dir: "/here"}, First: "prompt " + string(rune('A'+i%26)) + strings.Repeat("x", i/26), Updated: t0})
	}
	p := NewPicker(list, "/here", t0)
	p.Update(tea.WindowSizeMsg{Width: 60, Height: 8})
	for range 12 {
		p.Update(pickKey("down"))
	}
	s := pickerScreen(p)
	if !strings.Contains(s, "› prompt M") || strings.Contains(s, "prompt A ") || strings.Count(s, "\n") != 6 {
		t.Fatalf("after 12 × ↓ on 8 lines:\n%s", s)
	}
}

// TestPickerSanitizes: a saved chat's prompt, directory and model come
// from a file anyone may have written: an escape in any of them is shown,
// never sent to the terminal.
func TestPickerSanitizes(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 5, 0, 0, time.UTC)
	list := []chatlog.Summary{{Header: chatlog.Header{ID: "x", Dir: "/p\x1b[2J", Model: "m\x1b]0;t\x07"}, First: "hi\x1b[31m", Updated: t0}}
	p := NewPicker(list, "/elsewhere", t0)
	p.Update(tea.WindowSizeMsg{Width: 100, Height: 10})
	raw := p.View().Content
	for _, want := range []string{`hi\x1b[31m`, `/p\x1b[2J`, `m\x1b]0;t\x07`} {
		if !strings.Contains(raw, want) {
			t.Errorf("the picker does not show %q escaped:\n%s", want, stripped(raw))
		}
	}
	for _, bad := range []string{"\x1b[31m", "\x1b[2J", "\x1b]0;"} {
		if strings.Contains(raw, bad) {
			t.Errorf("the picker sends %q to the terminal", bad)
		}
	}
}
