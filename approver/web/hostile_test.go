package web

import (
	"encoding/json"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/mcphost/mcphost/approver"
	"github.com/mcphost/mcphost/decide"
)

// hostile is a call whose every string tries to become markup, to turn the
// text around (bidi), or to hide in a megabyte.
func hostile() *approver.Question {
	big := strings.Repeat("</pre><script>alert(6)</script>\u202e", 1<<20/40)
	args, err := json.Marshal(map[string]any{
		"</script><script>alert(5)</script>": "x",
		"path":                               "/home/\u202eexe.txt",
		"blob":                               big,
	})
	if err != nil {
		panic(err)
	}
	return &approver.Question{Type: approver.TypeQuestion, ID: `q"><script>alert(0)</script>`,
		Server:      "evil<script>alert(1)</script>",
		Tool:        "wipe\u202efdp.exe<img src=x onerror=alert(2)>",
		Title:       "<b>bold</b>\u202e\x1b[2J",
		Description: "<script>alert(3)</script>\x1b]52;c;Y3VybA==\x07\n<iframe src=//evil.example></iframe>",
		Tier:        decide.T3, Class: decide.Unknown, Changed: true,
		ChangedFields: []string{"description<script>alert(7)</script>"},
		Client:        "<svg onload=alert(4)>",
		Reasons:       []approver.Reason{{Code: "rule:<i>x</i>", Text: "<i>italic</i>\u2066"}},
		Arguments:     string(args), Scopes: []decide.Scope{decide.ScopeOnce},
	}
}

// TestHostileQuestionRendersAsText: a call whose names, description,
// client and arguments hold script tags, bidi controls, terminal escapes
// and a megabyte renders as text: the page holds no element or attribute
// the server sent, no raw control character, and the whole of every
// string as visible text.
func TestHostileQuestionRendersAsText(t *testing.T) {
	h := start(t, Options{})
	q := hostile()
	h.p.Apply(q)
	h.login()
	for _, path := range []string{"/", "/cards"} {
		_, body := h.get(path, nil)
		doc, err := html.Parse(strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var text strings.Builder
		scripts := 0
		var walk func(n *html.Node)
		walk = func(n *html.Node) {
			switch n.Type {
			case html.ElementNode:
				switch n.Data {
				case "script":
					scripts++
					if attr(n, "src") != "/static/page.js" || n.FirstChild != nil {
						t.Errorf("%s: a script that is not the page's: %v", path, n.Attr)
					}
				case "img", "iframe", "svg", "b", "i", "object", "embed", "base", "style":
					t.Errorf("%s: a <%s> element from the server's text", path, n.Data)
				}
				for _, a := range n.Attr {
					if strings.HasPrefix(a.Key, "on") || strings.Contains(a.Val, "javascript:") {
						t.Errorf("%s: attribute %s=%q", path, a.Key, a.Val)
					}
				}
			case html.TextNode:
				text.WriteString(n.Data)
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c)
			}
		}
		walk(doc)
		if want := map[string]int{"/": 1, "/cards": 0}[path]; scripts != want {
			t.Errorf("%s: %d scripts, want %d", path, scripts, want)
		}
		s := text.String()
		for _, r := range []string{"\u202e", "\u2066", "\x1b", "\x07"} {
			if strings.Contains(s, r) {
				t.Errorf("%s: the text holds %+q raw", path, r)
			}
		}
		for _, want := range []string{
			`evil<script>alert(1)</script>`,                   // the server, as text
			`wipe\u202efdp.exe<img src=x onerror=alert(2)>`,   // the raw tool name, bidi shown
			`<b>bold</b>\u202e\x1b[2J`,                        // the title
			`<script>alert(3)</script>\x1b]52;c;Y3VybA==\x07`, // the description
			`description<script>alert(7)</script>`,            // what changed
			`<svg onload=alert(4)> through mcphost serve`,     // the client
			`<i>italic</i>\u2066`, `rule:<i>x</i>`,            // a reason and its code
			`</script><script>alert(5)</script>`, // an argument's name
			`"/home/\u202eexe.txt"`,              // a short value, whole
			`Tier 3: to allow, type approve`,     // a name no one can type
		} {
			if !strings.Contains(s, want) {
				t.Errorf("%s: the text lacks %q", path, want)
			}
		}
		// The megabyte is there, every byte of it, behind "show all".
		if n := strings.Count(s, `</pre><script>alert(6)</script>\u202e`); n <= 1<<20/40 {
			t.Errorf("%s: the long value shows %d of its %d parts; want the cut and the whole", path, n, 1<<20/40)
		}
		if !strings.Contains(s, "show all") {
			t.Errorf("%s: the long value is not one click away", path)
		}
		// The short values come first.
		if i, j := strings.Index(s, `/home/`), strings.Index(s, `alert(6)`); i < 0 || j < i {
			t.Errorf("%s: the short value (at %d) does not come before the long one (at %d)", path, i, j)
		}
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// TestCardShowsTheDialogsFacts: a card says what the dialog says.
func TestCardShowsTheDialogsFacts(t *testing.T) {
	q := question("q1")
	q.Trusted, q.Changed, q.ChangedFields = false, true, []string{"description", "inputSchema"}
	q.From = &approver.Hello{Label: "stdio in /p", PID: 42}
	c := cardOf(q)
	if c.Name != "tasks/delete_task" || c.Class != "destructive" || c.Tier != "T2" || !c.Danger || !c.Untrusted ||
		c.Client != "some-client 1.0" || c.Serve != "mcphost serve (stdio in /p), pid 42" ||
		strings.Join(c.ChangedFields, ",") != "description,inputSchema" {
		t.Errorf("card %+v", c)
	}
	if len(c.Ask) != 1 || c.Ask[0].Code != "destructive" || len(c.Favour) != 1 || c.Favour[0].Code != "closed-world" || c.Favour[0].Text == "" {
		t.Errorf("reasons: ask %+v, favour %+v; want the destructive reason to ask, closed-world in its favour with its sentence", c.Ask, c.Favour)
	}
	var scopes []string
	for _, s := range c.Scopes {
		scopes = append(scopes, s.Value)
	}
	if strings.Join(scopes, ",") != "once,args,session" {
		t.Errorf("offered %v, want once,args,session (never always)", scopes)
	}
	if len(c.Args) != 2 || c.Args[0].Path != "id" || c.Args[0].Full != "" || c.Args[1].Path != "note" || c.Args[1].Full == "" {
		t.Errorf("arguments %+v: want id whole, then note cut with the whole behind", c.Args)
	}
	if c.Typed != "" {
		t.Errorf("a T2 card asks to type %q", c.Typed)
	}
}
