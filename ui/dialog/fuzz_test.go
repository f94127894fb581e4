package dialog

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
)

// FuzzView renders both dialogs from hostile strings, without colour, and
// checks that nothing a terminal would act on, or that hides or reorders
// text, reaches the view, and that the box keeps its size.
func FuzzView(f *testing.F) {
	seeds := [][5]string{
		{"srv", "delete_all", "Harmless", "Reads.", `{"a":"b"}`},
		{"s\x1b[2J", "x\x1b]8;;http://evil\x07y", "\u202eevil\u202c", "line\r\nnext\tTab\x7f", `{"k":"\u001b[31m"}`},
		{"\u200bzw", "name\u2066iso\u2069", "\x9b31m C1 CSI \x9d OSC", "\ufeffbom \u061c \U000e0041 tag", "{\"raw\":\"\u202e\u0085\u2028\"}"},
		{"", "", "", "", ``},
		{"a", "b", strings.Repeat("long title ", 40), strings.Repeat("long description\n", 40), `not json \x1b`},
		{"é", "日本語ツール", "混合 title", "wide 字 chars", `{"字":"\ud83d\ude00 emoji", "n": 1e400}`},
		{"x", "\xff\xfeinvalid", "\xc3(", "\xed\xa0\x80", "{\"a\":\"\xff\"}"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2], s[3], s[4], uint8(3), "reason \x1b text")
	}
	f.Fuzz(func(t *testing.T, server, name, title, desc, args string, tier uint8, reason string) {
		d := decide.Decision{
			Verdict: decide.Ask,
			Tier:    decide.Tier(tier % 4),
			Class:   decide.Class(tier / 4 % 4),
			Reasons: []decide.Reason{
				{Code: decide.CodeUntrustedServer},
				{Code: "rule:" + name},
				{Code: reason, Text: reason},
				{Code: reason},
			},
		}
		q := &host.Question{
			Server:        server,
			Trusted:       tier&1 == 0,
			Tool:          &client.Tool{Server: server, Name: name, Title: title, Description: desc},
			Args:          json.RawMessage(args),
			Decision:      d,
			Scopes:        []decide.Scope{decide.ScopeOnce, decide.ScopeArgs, decide.ScopeSession, decide.ScopeAlways},
			Changed:       tier&2 != 0,
			ChangedFields: []string{desc, "inputSchema"},
		}
		for _, sz := range sizes {
			o := Options{NoColor: true, Width: sz.w, Height: sz.h, Position: 2, Of: 3}
			c, _ := openConfirm(q, o)
			view := c.View()
			checkTerminalSafe(t, view)
			checkSize(t, view, sz.w, sz.h)
			// the T3 name field, with a letter typed, and the editor show server text too
			keys(c, "y")
			checkTerminalSafe(t, c.View())
			c, _ = openConfirm(q, o)
			keys(c, "e", "ctrl+e") // e opens the editor below T3, ctrl+e at T3
			// only the editor's cursor may be styled
			checkTerminalSafe(t, stripCursor(c.View()))

			r := ConsentRequest{Server: server, Transport: name, Command: title, Args: []string{desc, args, reason},
				Env: map[string]string{name: desc, reason: args}, Cwd: desc, URL: title,
				Headers: map[string]string{title: "secret"}, File: args, Changed: tier&1 == 1, Vars: []string{name, reason}}
			cv, _ := openConsent(r, o)
			view = cv.View()
			checkTerminalSafe(t, view)
			checkSize(t, view, sz.w, sz.h)
			if strings.Contains(view, "secret") && !strings.Contains(title+desc+args+reason+name+server, "secret") {
				t.Fatalf("a header value is shown:\n%s", view)
			}
		}

		// the arguments shown are the same JSON value as those sent
		if json.Valid([]byte(args)) {
			text, ok := prettyArgs(json.RawMessage(args))
			if !ok {
				t.Fatalf("valid JSON %q shown as invalid", args)
			}
			var want, got any
			if json.Unmarshal([]byte(args), &want) == nil {
				if err := json.Unmarshal([]byte(text), &got); err != nil {
					t.Fatalf("shown arguments %q are not JSON: %v", text, err)
				}
				if !reflect.DeepEqual(want, got) {
					t.Fatalf("shown arguments mean %#v, sent %#v", got, want)
				}
			}
		}
	})
}

// stripCursor removes the SGR sequences a focused text field draws its
// cursor with; anything else escaped stays and fails the check.
func stripCursor(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';') {
				j++
			}
			if j < len(s) && s[j] == 'm' {
				i = j
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
