package dialog

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/google/go-cmp/cmp"
)

var elicitForm = ElicitRequest{
	Server:  "tickets",
	Message: "Which project should the ticket go to?\x1b]0;pwned\x07",
	Schema: json.RawMessage(`{"type":"object","properties":{
		"project":{"type":"string","title":"Project","description":"The project key\u202e","default":"OPS"},
		"priority":{"type":"string","enum":["low","high"],"default":"low"},
		"estimate":{"type":"integer","minimum":1,"maximum":10},
		"notify":{"type":"boolean","default":true},
		"summary":{"type":"string"}
	},"required":["project","estimate"]}`),
}

func openElicit(r ElicitRequest, o Options) (*Elicit, *clock) {
	clk := &clock{t: epoch}
	o.Now = clk.Now
	e := NewElicit(r, o)
	clk.advance(DefaultGrace)
	return e, clk
}

func elicitKeys(e *Elicit, ks ...string) {
	for _, k := range ks {
		e.Update(press(k))
	}
}

func TestElicitGolden(t *testing.T) {
	cases := []struct {
		name string
		r    ElicitRequest
		keys []string
	}{
		{"form", elicitForm, nil},
		{"form_invalid", elicitForm, []string{"shift+tab", "shift+tab", "shift+tab", "enter"}},
		{"url", ElicitRequest{Server: "auth", Message: "Sign in", URL: "https://example.com/login?x=1"}, nil},
		{"url_refused", ElicitRequest{Server: "auth", URL: "javascript:alert(1)"}, nil},
		{"url_plain_http", ElicitRequest{Server: "auth", URL: "http://example.com/login"}, nil},
		{"url_lookalike", ElicitRequest{Server: "auth", Message: "Sign in", URL: "https://аpple.com/login"}, nil},
		{"unsupported", ElicitRequest{Server: "x", Schema: json.RawMessage(`{"properties":{"a":{"type":"object"}}}`)}, nil},
	}
	for _, tc := range cases {
		for _, sz := range []struct{ w, h int }{{80, 24}, {50, 16}} {
			t.Run(fmt.Sprintf("%s_%dx%d", tc.name, sz.w, sz.h), func(t *testing.T) {
				e, _ := openElicit(tc.r, Options{Dark: true, Width: sz.w, Height: sz.h})
				elicitKeys(e, tc.keys...)
				plain := ansi.Strip(e.View())
				checkSize(t, plain, sz.w, sz.h)
				checkTerminalSafe(t, plain)
				golden.RequireEqual(t, []byte(plain))
			})
		}
	}
}

func TestElicitAcceptValidates(t *testing.T) {
	e, _ := openElicit(elicitForm, Options{NoColor: true})
	// Fields in name order: estimate, notify, priority, project, summary.
	accept := func() {
		e.setFocus(len(e.fields)) // the Accept button
		elicitKeys(e, "enter")
	}
	accept()
	if _, done := e.Result(); done {
		t.Fatal("accepted with the required estimate empty")
	}
	if e.focus != 0 || !strings.Contains(e.View(), "required") {
		t.Errorf("focus %d, want the estimate field, with the error shown:\n%s", e.focus, e.View())
	}
	elicitKeys(e, "4", "2")
	accept()
	if _, done := e.Result(); done || !strings.Contains(e.View(), "at most 10") {
		t.Fatalf("accepted 42 for a maximum of 10:\n%s", e.View())
	}
	elicitKeys(e, "backspace", "backspace", "7", "tab", "space", "tab", "right")
	accept()
	got, done := e.Result()
	if !done || got.Action != ElicitAccept {
		t.Fatalf("result %+v %v, want accepted", got, done)
	}
	want := map[string]any{"estimate": int64(7), "notify": false, "priority": "high", "project": "OPS"}
	if d := cmp.Diff(want, got.Content); d != "" {
		t.Errorf("content (-want +got):\n%s", d)
	}
}

func TestElicitDeclineCancelAndEarlyKeys(t *testing.T) {
	clk := &clock{t: epoch}
	e := NewElicit(elicitForm, Options{Now: clk.Now})
	e.Update(press("esc")) // typed before the dialog could be read
	if _, done := e.Result(); done {
		t.Fatal("a key inside the grace period answered")
	}
	clk.advance(DefaultGrace)
	e.Update(tea.PasteMsg{Content: "esc"})
	e.Update(press("esc"))
	if r, done := e.Result(); !done || r.Action != ElicitCancel || r.Content != nil {
		t.Errorf("esc: %+v %v, want cancel", r, done)
	}

	e, _ = openElicit(elicitForm, Options{})
	e.setFocus(len(e.fields) + 1)
	elicitKeys(e, "enter")
	if r, done := e.Result(); !done || r.Action != ElicitDecline {
		t.Errorf("decline: %+v %v", r, done)
	}
}

func TestElicitPasteIntoFieldIgnored(t *testing.T) {
	e, _ := openElicit(elicitForm, Options{})
	e.Update(tea.PasteMsg{Content: "99"})
	e.Update(tea.KeyPressMsg{Code: 'x', Text: "123"})
	if v := e.fields[0].input.Value(); v != "" {
		t.Errorf("estimate = %q after pastes, want empty", v)
	}
}

func TestElicitURLOnlyHTTP(t *testing.T) {
	for _, tc := range []struct {
		url  string
		open bool
	}{
		{"https://example.com/a", true},
		{"http://localhost:8080/cb", true},
		{"javascript:alert(1)", false},
		{"file:///etc/passwd", false},
		{"data:text/html,hi", false},
		{"https://", false},
		{"http://example.com/login", false},
		{"HTTP://example.com/login", false},
		{"http://10.0.0.1/login", false},
		{"http://127.0.0.1:9/cb", true},
		{"http://[::1]:9/cb", true},
	} {
		e, _ := openElicit(ElicitRequest{Server: "s", URL: tc.url}, Options{NoColor: true, Width: 100})
		if got := e.buttons[0] == ElicitAccept; got != tc.open {
			t.Errorf("%s: offers opening = %v, want %v", tc.url, got, tc.open)
		}
		elicitKeys(e, "enter")
		r, _ := e.Result()
		if want := map[bool]ElicitAction{true: ElicitAccept, false: ElicitDecline}[tc.open]; r.Action != want {
			t.Errorf("%s: enter gives %s, want %s", tc.url, r.Action, want)
		}
	}
}

// TestElicitURLShowsLookAlikeHostInASCII: a URL whose host is not ASCII
// shows the host's ASCII (punycode) form, as auth login does.
func TestElicitURLShowsLookAlikeHostInASCII(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"https://\u0430pple.com/login", "xn--pple-43d.com in ASCII"}, // Cyrillic а
		{"https://\uff45xample.com/", "example.com in ASCII"},         // fullwidth ｅ
		{"https://apple.com/login", ""},
	} {
		e, _ := openElicit(ElicitRequest{Server: "s", URL: tc.url}, Options{NoColor: true, Width: 100, Height: 30})
		v := ansi.Strip(e.View())
		if tc.want == "" {
			if strings.Contains(v, "in ASCII") {
				t.Errorf("%s: a note for an ASCII host:\n%s", tc.url, v)
			}
			continue
		}
		if !strings.Contains(v, tc.want) {
			t.Errorf("%s: view lacks %q:\n%s", tc.url, tc.want, v)
		}
	}
}

var _ = time.Second
