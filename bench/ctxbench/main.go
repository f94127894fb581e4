// Command ctxbench measures what mcphost sends a model: the size of the
// first request with 1, 10 and 50 servers, with tool search off and on
// ("auto"), and the tokens sent over a 20-turn session, with how many of
// them a prefix cache could serve.
//
//	go run ./bench/ctxbench
//
// The servers are copies of the tasks fixture (27 tools each), run in
// process; the model is an OpenAI-compatible endpoint on 127.0.0.1 served by
// this program. Its turns are fixed: for each person's message it calls
// tasks1's list_tasks (searching for it first when it is not offered) and
// then answers. Tokens are estimated at four bytes each, as mcphost's budget
// does. The cache figure is the part of each request that repeats the
// previous request's rendered prompt (tools, then messages) byte for byte:
// what automatic prefix caching can serve, and what Anthropic's breakpoints
// are placed to serve. It is a measurement, not a test: it never fails on a
// figure, only when a session does not run.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/decide"
	"github.com/mcphost/mcphost/fixtures"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/llm"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	messages := flag.Int("messages", 10, "person's messages in the session (two model turns each, three when a search is needed)")
	flag.Parse()
	if err := run(os.Stdout, *messages); err != nil {
		fmt.Fprintln(os.Stderr, "ctxbench:", err)
		os.Exit(1)
	}
}

// figures are one configuration's measurements.
type figures struct {
	Servers, Tools  int
	Search          string
	FirstBytes      int // the first request's body
	FirstTokens     int // its estimate
	Turns           int // model turns over the session
	ExtraTurns      int // turns beyond two per message
	SentTokens      int // estimated prompt tokens over the session
	CacheableTokens int // of them, repeated from the previous request
}

func run(w io.Writer, messages int) error {
	fmt.Fprintf(w, "| servers | tools | toolSearch | first request | est. tokens | turns | tokens sent (%d messages) | of them a prefix cache serves | uncached |\n", messages)
	fmt.Fprintln(w, "|---:|---:|---|---:|---:|---:|---:|---:|---:|")
	for _, n := range []int{1, 10, 50} {
		for _, search := range []string{host.SearchNever, host.SearchAuto} {
			f, err := session(n, search, messages)
			if err != nil {
				return fmt.Errorf("%d servers, toolSearch %s: %w", n, search, err)
			}
			fmt.Fprintf(w, "| %d | %d | %s | %s | %d | %d (+%d) | %d | %d (%.0f%%) | %d |\n",
				f.Servers, f.Tools, f.Search, kb(f.FirstBytes), f.FirstTokens, f.Turns, f.ExtraTurns,
				f.SentTokens, f.CacheableTokens, 100*float64(f.CacheableTokens)/float64(max(f.SentTokens, 1)), f.SentTokens-f.CacheableTokens)
		}
	}
	return nil
}

func kb(n int) string { return fmt.Sprintf("%.1f KB", float64(n)/1024) }

// session runs one configuration and measures it.
func session(n int, search string, messages int) (*figures, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var specs []client.Spec
	for i := 1; i <= n; i++ {
		specs = append(specs, client.Spec{Name: fmt.Sprintf("tasks%d", i), Dial: func(ctx context.Context) (mcp.Transport, error) {
			f, err := fixtures.New("tasks", fixtures.Options{})
			if err != nil {
				return nil, err
			}
			return f.InMemory(ctx)
		}})
	}
	m := client.New(specs, client.Options{})
	defer m.Close()
	m.Start(ctx)
	for _, s := range m.Servers() {
		if s.State != client.StateReady {
			return nil, fmt.Errorf("server %s is %s: %s", s.Name, s.State, s.LastError)
		}
	}
	policy, err := decide.Compile(nil, decide.Options{AutoApprove: decide.ApproveAdditive})
	if err != nil {
		return nil, err
	}
	gate := host.NewGate(host.GateOptions{Catalog: m, Policy: policy, Trusted: func(string) bool { return true },
		Asker: host.HeadlessAsker{}, Mode: decide.Headless})

	fake := &fakeModel{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	model, err := llm.New("openai-compatible:bench", llm.Options{BaseURL: srv.URL + "/v1", Getenv: func(string) string { return "" }, MaxRetries: -1})
	if err != nil {
		return nil, err
	}
	loop := host.NewLoop(host.LoopOptions{Model: model, Gate: gate, Tools: m.Tools(), ToolSearch: search,
		System: "You are mcphost's benchmark assistant."})
	for i := range messages {
		out, err := loop.Run(ctx, fmt.Sprintf("Message %d: list the tasks of tasks1.", i+1))
		if err != nil {
			return nil, err
		}
		if len(out.Calls) == 0 || out.Calls[len(out.Calls)-1].Status != host.StatusSuccess {
			return nil, fmt.Errorf("message %d: the list_tasks call did not succeed: %+v", i+1, out.Calls)
		}
	}
	f := &figures{Servers: n, Tools: len(m.Tools()), Search: search}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	f.FirstBytes = len(fake.bodies[0])
	f.FirstTokens = f.FirstBytes / 4
	f.Turns = len(fake.bodies)
	f.ExtraTurns = f.Turns - 2*messages
	for i, b := range fake.bodies {
		f.SentTokens += len(b) / 4
		if i > 0 {
			f.CacheableTokens += sharedPrefix(fake.rendered[i-1], fake.rendered[i]) / 4
		}
	}
	return f, nil
}

// fakeModel is the model: an OpenAI-compatible endpoint with fixed turns.
type fakeModel struct {
	mu       sync.Mutex
	bodies   [][]byte
	rendered [][]byte // tools then messages, as a server renders a prompt
}

type chatRequest struct {
	Messages []json.RawMessage `json:"messages"`
	Tools    []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

func (f *fakeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req chatRequest
	var parts struct {
		Messages json.RawMessage `json:"messages"`
		Tools    json.RawMessage `json:"tools"`
	}
	if json.Unmarshal(body, &req) != nil || json.Unmarshal(body, &parts) != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	f.rendered = append(f.rendered, append(append([]byte{}, parts.Tools...), parts.Messages...))
	f.mu.Unlock()

	offered := map[string]bool{}
	for _, t := range req.Tools {
		offered[t.Function.Name] = true
	}
	var last struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	_ = json.Unmarshal(req.Messages[len(req.Messages)-1], &last)
	const target = "tasks1__list_tasks"
	var call, args string
	switch {
	case last.Role == "tool" && strings.Contains(last.Content, "[mcphost:") && strings.Contains(last.Content, "found"):
		call, args = target, `{}`
	case last.Role == "tool":
	case offered[target]:
		call, args = target, `{}`
	case offered[host.SearchToolName]:
		call, args = host.SearchToolName, `{"query":"list tasks tasks1","limit":3}`
	}
	w.Header().Set("Content-Type", "text/event-stream")
	var b bytes.Buffer
	if call != "" {
		chunk(&b, map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"index": 0, "id": fmt.Sprintf("call_%d", len(f.bodies)), "type": "function",
			"function": map[string]any{"name": call, "arguments": args}}}}, "tool_calls", len(body))
	} else {
		chunk(&b, map[string]any{"role": "assistant", "content": "Here are the tasks."}, "stop", len(body))
	}
	b.WriteString("data: [DONE]\n\n")
	_, _ = w.Write(b.Bytes())
}

func chunk(b *bytes.Buffer, delta map[string]any, finish string, bodyBytes int) {
	c := map[string]any{"id": "c", "object": "chat.completion.chunk", "choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		"usage": map[string]any{"prompt_tokens": bodyBytes / 4, "completion_tokens": 10}}
	j, _ := json.Marshal(c)
	b.WriteString("data: ")
	b.Write(j)
	b.WriteString("\n\n")
}

// sharedPrefix is the length of the longest common prefix of a and b.
func sharedPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
