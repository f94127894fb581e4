package ui

import (
	"context"
	"fmt"
	"github.com/mcphost/mcphost/internal/termtest"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/host"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// wikiSpec is an in-process server with a resource template and a prompt,
// both of whose arguments it completes; one completion is hostile.
func wikiSpec(t testing.TB) client.Spec {
	t.Helper()
	words := map[string][]string{
		"section": {"guide", "glossary", "\x1b[2Jgrief"},
		"page":    {"intro", "index"},
		"path":    {"README.md", "RELEASE.md"},
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "wiki", Version: "1"}, &mcp.ServerOptions{
		CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			var out []string
			for _, w := range words[req.Params.Argument.Name] {
				if strings.HasPrefix(strings.TrimPrefix(w, "\x1b[2J"), req.Params.Argument.Value) {
					out = append(out, w)
				}
			}
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: out}}, nil
		},
	})
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "wiki://{section}/{page}", Name: "Wiki page"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "page at " + req.Params.URI}}}, nil
		})
	srv.AddPrompt(&mcp.Prompt{Name: "review", Arguments: []*mcp.PromptArgument{{Name: "path", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Review " + req.Params.Arguments["path"]}}}}, nil
		})
	return client.Spec{Name: "wiki", Dial: func(context.Context) (mcp.Transport, error) {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(context.Background(), st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}}
}

func wikiHarness(t *testing.T) *harness {
	h := newHarness(t, Config{Servers: []client.Spec{wikiSpec(t)}, Gate: host.GateOptions{Policy: policy(t), Trusted: trusted("wiki")}, Now: newClock().Now, Dark: dark(true)})
	h.ready()
	return h
}

// TestTemplateFilledWithCompletions: the resources panel lists a template;
// its form offers the server's completions (cleaned), tab takes and cycles
// them, and the filled template is read.
func TestTemplateFilledWithCompletions(t *testing.T) {
	h := wikiHarness(t)
	p := h.openResources()
	if s := h.screen(); !strings.Contains(s, "wiki wiki://{section}/{page}  template Wiki page") {
		t.Fatalf("no template row:\n%s", s)
	}
	h.key("enter")
	if p.form == nil {
		t.Fatalf("enter on the template opened no form:\n%s", h.screen())
	}
	h.typeText("g")
	h.until("suggestions arrive", func() bool { return len(p.form.sugg) == 3 })
	s := h.screen()
	if !strings.Contains(s, "tab: guide · glossary · \\x1b[2Jgrief") {
		t.Errorf("suggestions not shown, or not cleaned:\n%s", s)
	}
	if u := termtest.Unsafe(h.m.View().Content); u != "" {
		t.Fatalf("unsafe output: %s", u)
	}
	for _, sz := range []struct{ w, h int }{{80, 24}, {140, 40}} {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			h.send(teaSize(sz.w, sz.h))
			golden.RequireEqual(t, []byte(h.screen()))
		})
	}
	h.key("tab")
	h.key("tab")
	if v := p.form.fields[0].Value(); v != "glossary" {
		t.Errorf("two tabs give %q, want the second suggestion", v)
	}
	h.key("down")
	h.typeText("in")
	h.until("page suggestions arrive", func() bool { return p.form != nil && p.form.suggAt == 1 && len(p.form.sugg) == 2 })
	h.key("tab")
	h.key("enter")
	h.until("the page is read", func() bool { return p.detail != nil && !p.detail.loading })
	if got := p.detail.text; got != "page at wiki://glossary/intro" {
		t.Errorf("read %q", got)
	}
}

// TestPromptArgumentCompletion: the prompt form completes an argument from
// the server, and the completed value is what the prompt gets.
func TestPromptArgumentCompletion(t *testing.T) {
	h := wikiHarness(t)
	h.command("/prompts")
	pp := func() *promptsPanel { p, _ := h.m.panel.(*promptsPanel); return p }
	h.until("the prompts are listed", func() bool { return pp() != nil && !pp().loading })
	h.key("enter")
	f := pp().form
	h.until("suggestions for the empty field", func() bool { return len(f.sugg) == 2 })
	h.typeText("REL")
	h.until("narrowed suggestions", func() bool { return len(f.sugg) == 1 })
	h.key("tab")
	h.key("enter")
	h.until("the prompt is in the input", func() bool { return h.m.panel == nil })
	if got := h.m.input.Value(); got != "Review RELEASE.md" {
		t.Errorf("input %q", got)
	}
}
