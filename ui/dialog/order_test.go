package dialog

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/host"
)

// scrolled returns every line the dialog shows while its body is scrolled
// from top to bottom, without repeats of the lines that stay put.
func scrolled(c *Confirm) []string {
	var out []string
	seen := map[string]bool{}
	for range 200 {
		for _, l := range strings.Split(ansi.Strip(c.View()), "\n") {
			l = strings.TrimSpace(strings.Trim(l, "│┃"))
			if l != "" && !seen[l] && !strings.Contains(l, "↑/↓/pgup/pgdn") {
				seen[l] = true
				out = append(out, l)
			}
		}
		keys(c, "down")
	}
	return out
}

func index(lines []string, prefix string) int {
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return i
		}
	}
	return -1
}

// TestConfirmShortSpaceArgumentsFirst: when the dialog has not the room
// for everything (an 80×24 terminal, or smaller), the arguments come
// before the server's description; with room to spare the description
// stays in the header above them.
func TestConfirmShortSpaceArgumentsFirst(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{80, 24}, {60, 16}, {40, 12}} {
		c, _ := openConfirm(ask(t, callT1), Options{NoColor: true, Width: sz.w, Height: sz.h})
		lines := scrolled(c)
		args, desc := index(lines, `"project": "web"`), index(lines, "Server's description")
		if args < 0 || desc < 0 || args > desc {
			t.Errorf("at %dx%d the arguments (line %d) do not come before the description (line %d):\n%s", sz.w, sz.h, args, desc, strings.Join(lines, "\n"))
		}
	}
	c, _ := openConfirm(ask(t, callT1), Options{NoColor: true, Width: 140, Height: 40})
	lines := scrolled(c)
	if args, desc := index(lines, `"project": "web"`), index(lines, "Server's description"); desc < 0 || desc > args {
		t.Errorf("with room the description (line %d) leaves the header for the arguments (line %d)", desc, args)
	}
}

// TestConfirmReasonsToAskOnly: "Why it asks" lists only the reasons to
// ask; what lowers the risk (it only touches local data, it is
// idempotent) stands under "In its favour", at every size.
func TestConfirmReasonsToAskOnly(t *testing.T) {
	destr := callT2
	destr.hints = decide.Hints{ReadOnly: decide.False, Destructive: decide.True, Idempotent: decide.True, OpenWorld: decide.False}
	for _, sz := range []struct{ w, h int }{{140, 40}, {80, 24}, {40, 12}} {
		c, _ := openConfirm(ask(t, destr), Options{NoColor: true, Width: sz.w, Height: sz.h})
		text := strings.Join(scrolled(c), " ")
		text = strings.Join(strings.Fields(strings.ReplaceAll(text, "•", " • ")), " ")
		why, fav := strings.Index(text, "Why it asks"), strings.Index(text, "In its favour")
		if why < 0 || fav < 0 || fav < why {
			t.Fatalf("at %dx%d: headings at %d and %d:\n%s", sz.w, sz.h, why, fav, text)
		}
		asks, favours := text[why:fav], text[fav:]
		for _, code := range []string{decide.CodeClosedWorld, decide.CodeIdempotent} {
			s := strings.Join(strings.Fields(decide.ReasonText(code)), " ")
			if strings.Contains(asks, s[:30]) || !strings.Contains(favours, s[:30]) {
				t.Errorf("at %dx%d: %q is not (only) in its favour:\n%s", sz.w, sz.h, code, text)
			}
		}
		if s := decide.ReasonText(decide.CodeDestructive); !strings.Contains(asks, s) {
			t.Errorf("at %dx%d: the reason to ask %q is not under Why it asks:\n%s", sz.w, sz.h, s, text)
		}
	}
}

// TestConfirmOwnWordsNotTheServers: a question about a read of a resource
// names mcphost's own description of the request as mcphost's, never as
// the server's; a server's tool that copies the name is still the
// server's.
func TestConfirmOwnWordsNotTheServers(t *testing.T) {
	q := ask(t, call{server: "docs", name: host.ResourceReadTool, args: `{"uri":"docs://readme"}`})
	q.Tool = &client.Tool{Server: "docs", Name: host.ResourceReadTool, Title: "read a resource",
		Description: "Reads one resource of the server (MCP resources/read).", Hash: "resources/read@1"}
	if !host.OwnWords(q.Tool) {
		t.Fatal("the stand-in is not recognised: its hash changed?")
	}
	for _, sz := range []struct{ w, h int }{{140, 40}, {80, 24}, {40, 12}} {
		c, _ := openConfirm(q, Options{NoColor: true, Width: sz.w, Height: sz.h})
		text := strings.Join(scrolled(c), "\n")
		if strings.Contains(text, "Server's") {
			t.Errorf("at %dx%d mcphost's words are labelled the server's:\n%s", sz.w, sz.h, text)
		}
		if !strings.Contains(text, "What it does (mcphost)") {
			t.Errorf("at %dx%d mcphost's description of the request is missing:\n%s", sz.w, sz.h, text)
		}
	}
	copycat := *q
	copycat.Tool = &client.Tool{Server: "docs", Name: host.ResourceReadTool, Description: "Reads one resource.", Hash: "0123abcd"}
	copycat.Args = json.RawMessage(`{"uri":"docs://readme"}`)
	c, _ := openConfirm(&copycat, Options{NoColor: true, Width: 140, Height: 40})
	if v := ansi.Strip(c.View()); !strings.Contains(v, `Server's description: "Reads one resource."`) {
		t.Errorf("a server's tool named like the stand-in lost its label:\n%s", v)
	}
}
