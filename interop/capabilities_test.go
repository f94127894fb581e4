//go:build unix

package interop

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/llm"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// everythingModes starts server-everything over stdio or streamable HTTP:
// the two transports on which the server's requests to the client
// (elicitation, sampling) travel differently — on the one stream, or on the
// call's own response stream.
var everythingModes = []struct {
	mode string
	spec func(t *testing.T, n npm) client.Spec
}{
	{"stdio", func(t *testing.T, n npm) client.Spec {
		return client.Spec{Name: "everything", Command: "node", Args: []string{n.everything, "stdio"}}
	}},
	{"streamableHttp", func(t *testing.T, n npm) client.Spec {
		return client.Spec{Name: "everything", Transport: client.TransportHTTP, URL: startHTTP(t, n.everything, "streamableHttp", "/mcp").url}
	}},
}

// newManagerWith is newManager with handlers and other options set.
func newManagerWith(t *testing.T, opts client.Options, specs ...client.Spec) *client.Manager {
	t.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	opts.HTTPTransport = tr
	m := client.New(specs, opts)
	t.Cleanup(func() {
		_ = m.Close()
		tr.CloseIdleConnections()
	})
	return m
}

// toolNames lists the names of a server's tools.
func toolNames(m *client.Manager, server string) []string {
	var names []string
	for _, tool := range m.Tools() {
		if tool.Server == server {
			names = append(names, tool.Name)
		}
	}
	return names
}

// startWithTool starts m and waits until server lists tool. server-everything
// registers its conditional tools once the session is initialized and
// announces them with tools/list_changed; the Manager lists again on that
// notification, so the wait is on its events, bounded, never a sleep.
func startWithTool(t *testing.T, m *client.Manager, server, tool string) {
	t.Helper()
	events, unsubscribe := m.Subscribe()
	defer unsubscribe()
	startAll(t, m)
	timeout := time.After(time.Minute)
	for {
		if _, ok := m.Tool(server, tool); ok {
			return
		}
		select {
		case <-events:
		case <-timeout:
			t.Fatalf("%s does not list %s a minute after start; it lists %q", server, tool, toolNames(m, server))
		}
	}
}

// TestEverythingElicitation offers elicitation and answers the form of
// trigger-elicitation-request twice: with host.ElicitDefaults, which must
// decline (the required "name" has no default), then with an explicit
// accept whose values the tool must echo back.
func TestEverythingElicitation(t *testing.T) {
	n := requireServers(t)
	t.Parallel()
	for _, tc := range everythingModes {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var seen []*mcp.ElicitParams
			var servers []string
			answers := []func(*mcp.ElicitParams) *mcp.ElicitResult{
				host.ElicitDefaults,
				func(*mcp.ElicitParams) *mcp.ElicitResult {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada Lovelace", "check": true, "integer": 7}}
				},
			}
			m := newManagerWith(t, client.Options{
				Elicitation: func(ctx context.Context, server string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					defer mu.Unlock()
					i := len(seen)
					seen = append(seen, req.Params)
					servers = append(servers, server)
					if i >= len(answers) {
						return &mcp.ElicitResult{Action: "cancel"}, nil
					}
					return answers[i](req.Params), nil
				},
			}, tc.spec(t, n))
			startWithTool(t, m, "everything", "trigger-elicitation-request")
			// Only elicitation is offered: the sampling tool stays away.
			if _, ok := m.Tool("everything", "trigger-sampling-request"); ok {
				t.Errorf("trigger-sampling-request is listed although sampling is not offered")
			}

			declined := wantOutcome(t, call(t, m, "everything", "trigger-elicitation-request", `{}`), client.OutcomeSuccess)
			if want := "❌ User declined to provide the requested information."; !strings.HasPrefix(declined, want) {
				t.Errorf("after ElicitDefaults the tool returned %q, want it to start with %q", declined, want)
			}
			accepted := wantOutcome(t, call(t, m, "everything", "trigger-elicitation-request", `{}`), client.OutcomeSuccess)
			for _, want := range []string{"✅ User provided the requested information!", "- Name: Ada Lovelace", "- Agreed to terms: true", "- Favorite Integer: 7"} {
				if !strings.Contains(accepted, want) {
					t.Errorf("after an accept the tool returned %q, want it to contain %q", accepted, want)
				}
			}

			mu.Lock()
			defer mu.Unlock()
			if len(seen) != 2 {
				t.Fatalf("the handler received %d elicitations, want 2", len(seen))
			}
			for i, p := range seen {
				if servers[i] != "everything" {
					t.Errorf("elicitation %d came from server %q, want %q", i, servers[i], "everything")
				}
				if p == nil || p.Message != "Please provide inputs for the following fields:" {
					t.Fatalf("elicitation %d: params %+v, want the server's form message", i, p)
				}
				schema, err := json.Marshal(p.RequestedSchema)
				if err != nil {
					t.Fatal(err)
				}
				var s struct {
					Properties map[string]json.RawMessage `json:"properties"`
					Required   []string                   `json:"required"`
				}
				if err := json.Unmarshal(schema, &s); err != nil {
					t.Fatalf("elicitation %d: requested schema %s: %v", i, schema, err)
				}
				if _, ok := s.Properties["name"]; !ok || !slices.Equal(s.Required, []string{"name"}) {
					t.Errorf("elicitation %d: requested schema %s, want a required property name", i, schema)
				}
			}
		})
	}
}

// TestEverythingWithoutHandlers checks what a client that offers neither
// elicitation nor sampling sees: server-everything registers neither tool,
// and a call by name is answered as an unknown tool, without reaching the
// client's (absent) handlers.
func TestEverythingWithoutHandlers(t *testing.T) {
	n := requireServers(t)
	t.Parallel()
	for _, tc := range everythingModes {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			m := newManager(t, tc.spec(t, n))
			startAll(t, m)
			for _, tool := range []string{"trigger-elicitation-request", "trigger-sampling-request"} {
				if _, ok := m.Tool("everything", tool); ok {
					t.Errorf("%s is listed although the client does not offer its capability", tool)
				}
				got := wantOutcome(t, call(t, m, "everything", tool, `{}`), client.OutcomeToolError)
				if want := "MCP error -32602: Tool " + tool + " not found"; got != want {
					t.Errorf("calling %s returned %q, want %q", tool, got, want)
				}
			}
		})
	}
}

// TestEverythingSampling offers sampling answered by host.Sample with a
// scripted model: the server's request reaches the model and the scripted
// text comes back in the tool's result.
func TestEverythingSampling(t *testing.T) {
	n := requireServers(t)
	t.Parallel()
	for _, tc := range everythingModes {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			const answer = "Scripted answer: the sky is blue — “quoted” ✓"
			model := llm.NewScript([]llm.ScriptTurn{{Text: answer}})
			var mu sync.Mutex
			var seen []*mcp.CreateMessageParams
			m := newManagerWith(t, client.Options{
				Sampling: func(ctx context.Context, server string, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					mu.Lock()
					seen = append(seen, req.Params)
					mu.Unlock()
					res, _, err := host.Sample(ctx, model, req.Params)
					return res, err
				},
			}, tc.spec(t, n))
			startWithTool(t, m, "everything", "trigger-sampling-request")
			if _, ok := m.Tool("everything", "trigger-elicitation-request"); ok {
				t.Errorf("trigger-elicitation-request is listed although elicitation is not offered")
			}

			got := wantOutcome(t, call(t, m, "everything", "trigger-sampling-request", `{"prompt": "What colour is the sky?", "maxTokens": 50}`), client.OutcomeSuccess)
			const prefix = "LLM sampling result: \n"
			if !strings.HasPrefix(got, prefix) {
				t.Fatalf("trigger-sampling-request returned %q, want it to start with %q", got, prefix)
			}
			var res struct {
				Role    string `json:"role"`
				Content struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content"`
			}
			if err := json.Unmarshal([]byte(strings.TrimPrefix(got, prefix)), &res); err != nil {
				t.Fatalf("the sampling result the server returned is not JSON: %v\n%s", err, got)
			}
			if res.Role != "assistant" || res.Content.Type != "text" || res.Content.Text != answer {
				t.Errorf("the server received role %q, content %s %q; want assistant, text %q", res.Role, res.Content.Type, res.Content.Text, answer)
			}

			mu.Lock()
			defer mu.Unlock()
			if len(seen) != 1 {
				t.Fatalf("the handler received %d sampling requests, want 1", len(seen))
			}
			p := seen[0]
			if p.MaxTokens != 50 || len(p.Messages) != 1 {
				t.Fatalf("sampling request: maxTokens %d, %d messages; want 50 and 1", p.MaxTokens, len(p.Messages))
			}
			if tc, ok := p.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "Resource trigger-sampling-request context: What colour is the sky?" {
				t.Errorf("sampling request message = %+v, want the prompt in a text message", p.Messages[0].Content)
			}
		})
	}
}

// TestEverythingResourcesAndPrompts lists the static documents the server
// exposes, reads one and compares it with the file it comes from, and fills
// in args-prompt.
func TestEverythingResourcesAndPrompts(t *testing.T) {
	n := requireServers(t)
	t.Parallel()
	// The server exposes each file of its docs directory as a static
	// document; the installed package is the reference.
	docsDir := filepath.Join(filepath.Dir(n.everything), "..", "@modelcontextprotocol", "server-everything", "dist", "docs")
	entries, err := os.ReadDir(docsDir)
	if err != nil {
		t.Fatalf("server-everything's docs: %v", err)
	}
	var docs []string
	for _, e := range entries {
		if e.Type().IsRegular() {
			docs = append(docs, e.Name())
		}
	}
	if !slices.Contains(docs, "features.md") {
		t.Fatalf("server-everything's docs hold %q, want features.md among them", docs)
	}
	want, err := os.ReadFile(filepath.Join(docsDir, "features.md"))
	if err != nil {
		t.Fatal(err)
	}
	const prefix = "demo://resource/static/document/"

	for _, tc := range everythingModes {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			m := newManager(t, tc.spec(t, n))
			startAll(t, m)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()

			resources, err := m.Resources(ctx, "everything")
			if err != nil {
				t.Fatalf("Resources: %v", err)
			}
			listed := map[string]*mcp.Resource{}
			for _, r := range resources {
				if strings.HasPrefix(r.URI, prefix) {
					listed[strings.TrimPrefix(r.URI, prefix)] = r
				}
			}
			for _, d := range docs {
				if listed[d] == nil {
					t.Errorf("Resources does not list %s%s", prefix, d)
				}
			}
			if len(listed) != len(docs) {
				t.Errorf("Resources lists %d static documents, want %d (%q)", len(listed), len(docs), docs)
			}
			if r := listed["features.md"]; r != nil && r.MIMEType != "text/markdown" {
				t.Errorf("features.md has MIME type %q, want text/markdown", r.MIMEType)
			}

			read, err := m.ReadResource(ctx, "everything", prefix+"features.md")
			if err != nil {
				t.Fatalf("ReadResource: %v", err)
			}
			if len(read.Contents) != 1 || read.Contents[0].URI != prefix+"features.md" || read.Contents[0].Text != string(want) {
				t.Errorf("ReadResource(features.md) = %+v, want one text content equal to the file (%d bytes)", read.Contents, len(want))
			}

			prompts, err := m.Prompts(ctx, "everything")
			if err != nil {
				t.Fatalf("Prompts: %v", err)
			}
			i := slices.IndexFunc(prompts, func(p *mcp.Prompt) bool { return p.Name == "args-prompt" })
			if i < 0 {
				t.Fatalf("Prompts does not list args-prompt: %+v", prompts)
			}
			var args []string
			for _, a := range prompts[i].Arguments {
				args = append(args, a.Name+"="+map[bool]string{true: "required", false: "optional"}[a.Required])
			}
			if !slices.Equal(args, []string{"city=required", "state=optional"}) {
				t.Errorf("args-prompt arguments = %q, want city required and state optional", args)
			}

			got, err := m.GetPrompt(ctx, "everything", "args-prompt", map[string]string{"city": "Reykjavík", "state": "Höfuðborgarsvæðið"})
			if err != nil {
				t.Fatalf("GetPrompt: %v", err)
			}
			if len(got.Messages) != 1 {
				t.Fatalf("GetPrompt returned %d messages, want 1: %+v", len(got.Messages), got.Messages)
			}
			msg, ok := got.Messages[0].Content.(*mcp.TextContent)
			if !ok || got.Messages[0].Role != "user" || msg.Text != "What's weather in Reykjavík, Höfuðborgarsvæðið?" {
				t.Errorf("GetPrompt message = %s %+v, want the user asking about Reykjavík, Höfuðborgarsvæðið", got.Messages[0].Role, got.Messages[0].Content)
			}
		})
	}
}
