//go:build unix

package interop

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/ui/dialog"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// everythingOrder is the order in which server-everything writes its
// form's fields.
var everythingOrder = []string{"name", "check", "firstLine", "email", "homepage", "birthdate", "integer", "number",
	"untitledSingleSelectEnum", "untitledMultipleSelectEnum", "titledSingleSelectEnum", "titledMultipleSelectEnum", "legacyTitledEnum"}

func keyPress(k string) tea.KeyPressMsg {
	switch k {
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	}
	return tea.KeyPressMsg{Code: []rune(k)[0], Text: k}
}

// focusOn tabs through the form until the line of label has the focus
// marker, and reports whether it got there. It runs in the Elicitation
// handler, off the test's goroutine: it must not stop the test.
func focusOn(e *dialog.Elicit, label string) bool {
	for range 40 {
		for _, l := range strings.Split(ansi.Strip(e.View()), "\n") {
			if strings.Contains(l, "› "+label+" ") || strings.Contains(l, "[ "+label+" ]") {
				return true
			}
		}
		e.Update(keyPress("tab"))
	}
	return false
}

// TestEverythingElicitationForm answers server-everything's form through
// the TUI's dialog, as a person does, multi-select fields included: the
// server accepts the answer and echoes the values chosen.
func TestEverythingElicitationForm(t *testing.T) {
	n := requireServers(t)
	t.Parallel()
	for _, tc := range everythingModes {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var order []string
			var shown string
			m := newManagerWith(t, client.Options{
				Elicitation: func(ctx context.Context, server string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					schema, err := json.Marshal(req.Params.RequestedSchema)
					if err != nil {
						return nil, err
					}
					r := dialog.ElicitRequest{Server: server, Message: req.Params.Message, Schema: schema, Order: client.FormOrder(req)}
					e := dialog.NewElicit(r, dialog.Options{Grace: -1, NoColor: true, Width: 100, Height: 60})
					steps := []struct {
						label string
						keys  []string
					}{
						{"name *", strings.Split("Ada Lovelace", "")},
						{"untitledMultipleSelectEnum", []string{"right", "space"}},        // Piano, beside the default Guitar
						{"titledMultipleSelectEnum", []string{"space", "right", "space"}}, // Tuna off, Salmon on
						{"Accept", nil},
					}
					for _, st := range steps {
						if !focusOn(e, st.label) {
							t.Errorf("%s never had the focus:\n%s", st.label, ansi.Strip(e.View()))
							return &mcp.ElicitResult{Action: "cancel"}, nil
						}
						if st.label == "Accept" {
							mu.Lock()
							order, shown = r.Order, ansi.Strip(e.View())
							mu.Unlock()
							e.Update(keyPress("enter"))
						}
						for _, k := range st.keys {
							e.Update(keyPress(k))
						}
					}
					ans, done := e.Result()
					if !done || ans.Action != dialog.ElicitAccept {
						t.Errorf("the form was not accepted:\n%s", ansi.Strip(e.View()))
						return &mcp.ElicitResult{Action: "cancel"}, nil
					}
					return &mcp.ElicitResult{Action: "accept", Content: ans.Content}, nil
				},
			}, tc.spec(t, n))
			startWithTool(t, m, "everything", "trigger-elicitation-request")
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			r := m.Call(ctx, "everything", "trigger-elicitation-request", json.RawMessage(`{}`), client.CallOptions{})
			out := wantOutcome(t, r, client.OutcomeSuccess)
			if !strings.Contains(out, "✅ User provided the requested information!") || !strings.Contains(out, "- Name: Ada Lovelace") {
				t.Fatalf("the server did not take the answer: %q", out)
			}
			_, raw, ok := strings.Cut(out, "Raw result: ")
			if !ok {
				t.Fatalf("no raw result in %q", out)
			}
			var echoed struct {
				Action  string         `json:"action"`
				Content map[string]any `json:"content"`
			}
			if err := json.Unmarshal([]byte(strings.TrimSpace(raw)), &echoed); err != nil {
				t.Fatalf("raw result %q: %v", raw, err)
			}
			want := map[string]any{
				"name": "Ada Lovelace", "check": false, "firstLine": "It was a dark and stormy night.",
				"integer": float64(42), "number": 3.14, "untitledSingleSelectEnum": "Monica",
				"untitledMultipleSelectEnum": []any{"Guitar", "Piano"}, "titledSingleSelectEnum": "hero-1",
				"titledMultipleSelectEnum": []any{"fish-2"}, "legacyTitledEnum": "pet-1",
			}
			if diff := cmp.Diff(want, echoed.Content); diff != "" || echoed.Action != "accept" {
				t.Errorf("the server received %s (-want +got):\n%s", echoed.Action, diff)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, label := range []string{"(Superman)", "Cats", "[x] Guitar", "[x] Piano", "email (email address)"} {
				if !strings.Contains(shown, label) {
					t.Errorf("the form lacks %q:\n%s", label, shown)
				}
			}
			if tc.mode == "stdio" { // streamable HTTP: the SDK's map loses the order
				if diff := cmp.Diff(everythingOrder, order); diff != "" {
					t.Errorf("field order (-want +got):\n%s", diff)
				}
			}
		})
	}
}
