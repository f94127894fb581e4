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
	"crypto/sha256"
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
	Usage           llm.Usage
}

func run(w io.Writer, messages int) error {
	fmt.Fprintf(w, "OpenAI-compatible (automatic prefix cache), %d messages:\n\n", messages)
	fmt.Fprintln(w, "| servers | tools | toolSearch | first request | est. tokens | turns | tokens sent | of them a prefix cache serves | uncached |")
	fmt.Fprintln(w, "|---:|---:|---|---:|---:|---:|---:|---:|---:|")
	for _, n := range []int{1, 10, 50} {
		for _, search := range []string{host.SearchNever, host.SearchAuto} {
			f, err := session("openai", n, search, messages)
			if err != nil {
				return fmt.Errorf("%d servers, toolSearch %s: %w", n, search, err)
			}
			fmt.Fprintf(w, "| %d | %d | %s | %s | %d | %d (+%d) | %d | %d (%.0f%%) | %d |\n",
				f.Servers, f.Tools, f.Search, kb(f.FirstBytes), f.FirstTokens, f.Turns, f.ExtraTurns,
				f.SentTokens, f.CacheableTokens, pct(f.CacheableTokens, f.SentTokens), f.SentTokens-f.CacheableTokens)
		}
	}
	fmt.Fprintf(w, "\nAnthropic Messages with mcphost's cache breakpoints (cache simulated by the endpoint), %d messages:\n\n", messages)
	fmt.Fprintln(w, "| servers | toolSearch | first request | turns | input tokens | read from cache | written to cache | uncached |")
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---:|---:|")
	for _, n := range []int{1, 10, 50} {
		for _, search := range []string{host.SearchNever, host.SearchAuto} {
			f, err := session("anthropic", n, search, messages)
			if err != nil {
				return fmt.Errorf("anthropic, %d servers, toolSearch %s: %w", n, search, err)
			}
			u := f.Usage
			fmt.Fprintf(w, "| %d | %s | %s | %d | %d | %d (%.0f%%) | %d | %d |\n", f.Servers, f.Search, kb(f.FirstBytes), f.Turns,
				u.InputTokens, u.CacheReadTokens, pct(u.CacheReadTokens, u.InputTokens), u.CacheWriteTokens, u.InputTokens-u.CacheReadTokens-u.CacheWriteTokens)
		}
	}
	return nil
}

func pct(a, b int) float64 { return 100 * float64(a) / float64(max(b, 1)) }

func kb(n int) string { return fmt.Sprintf("%.1f KB", float64(n)/1024) }

// session runs one configuration and measures it.
func session(provider string, n int, search string, messages int) (*figures, error) {
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

	fake := &fakeModel{anthropic: provider == "anthropic", cache: map[[32]byte]bool{}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	spec, base, key := "openai-compatible:bench", srv.URL+"/v1", ""
	if fake.anthropic {
		spec, base, key = "anthropic:claude-bench", srv.URL, "bench"
	}
	model, err := llm.New(spec, llm.Options{BaseURL: base, APIKey: key, Getenv: func(string) string { return "" }, MaxRetries: -1})
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
	f := &figures{Servers: n, Tools: len(m.Tools()), Search: search, Usage: loop.Usage}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	f.FirstBytes = len(fake.bodies[0])
	f.FirstTokens = f.FirstBytes / 4
	f.Turns = len(fake.bodies)
	f.ExtraTurns = f.Turns - 2*messages
	for i, b := range fake.bodies {
		f.SentTokens += len(b) / 4
		if i > 0 && !fake.anthropic {
			f.CacheableTokens += sharedPrefix(fake.rendered[i-1], fake.rendered[i]) / 4
		}
	}
	return f, nil
}

// fakeModel is the model: an OpenAI-compatible or Anthropic endpoint with
// fixed turns.
type fakeModel struct {
	anthropic bool
	mu        sync.Mutex
	bodies    [][]byte
	rendered  [][]byte // tools then messages, as a server renders a prompt
	// cache holds the prefixes written at earlier breakpoints (Anthropic).
	cache map[[32]byte]bool
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
	if f.anthropic {
		f.serveMessages(w, body)
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

// messagesBody is the part of a Messages request the fake reads.
type messagesBody struct {
	System   []json.RawMessage `json:"system"`
	Messages []struct {
		Role    string            `json:"role"`
		Content []json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []json.RawMessage `json:"tools"`
}

// serveMessages answers a Messages request, simulating the prompt cache:
// the prompt is the tools, the system blocks and the messages' blocks, in
// that order; a breakpoint writes the prefix that ends at its block, and a
// request reads the longest prefix written before that ends at a block at
// most 20 blocks before one of its breakpoints.
func (f *fakeModel) serveMessages(w http.ResponseWriter, body []byte) {
	var req messagesBody
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	var blocks []json.RawMessage
	blocks = append(blocks, req.Tools...)
	blocks = append(blocks, req.System...)
	for _, m := range req.Messages {
		for _, b := range m.Content {
			blocks = append(blocks, append(json.RawMessage(m.Role+":"), b...))
		}
	}
	hashes := make([][32]byte, len(blocks))
	sizes := make([]int, len(blocks))
	var breaks []int
	h := sha256.New()
	total := 0
	for i, b := range blocks {
		var obj map[string]json.RawMessage
		raw := []byte(b)
		if j := bytes.IndexByte(raw, '{'); j >= 0 && json.Unmarshal(raw[j:], &obj) == nil {
			if _, ok := obj["cache_control"]; ok {
				breaks = append(breaks, i)
				delete(obj, "cache_control")
			}
			clean, _ := json.Marshal(obj)
			raw = append(raw[:j:j], clean...)
		}
		h.Write(raw)
		total += len(raw)
		copy(hashes[i][:], h.Sum(nil))
		sizes[i] = total
	}
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	read := 0
	for _, b := range breaks {
		for i := b; i >= 0 && i > b-20; i-- {
			if f.cache[hashes[i]] {
				read = max(read, sizes[i])
				break
			}
		}
	}
	written := 0
	for _, b := range breaks {
		if !f.cache[hashes[b]] {
			f.cache[hashes[b]] = true
			written = max(written, sizes[b]-read)
		}
	}
	turn := len(f.bodies)
	f.mu.Unlock()

	offered := map[string]bool{}
	for _, t := range req.Tools {
		var tool struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(t, &tool)
		offered[tool.Name] = true
	}
	last := req.Messages[len(req.Messages)-1]
	var lastBlock struct {
		Type    string `json:"type"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	_ = json.Unmarshal(last.Content[len(last.Content)-1], &lastBlock)
	result := ""
	for _, c := range lastBlock.Content {
		result += c.Text
	}
	const target = "tasks1__list_tasks"
	var call, args string
	switch {
	case lastBlock.Type == "tool_result" && strings.Contains(result, "[mcphost:") && strings.Contains(result, "found"):
		call, args = target, `{}`
	case lastBlock.Type == "tool_result":
	case offered[target]:
		call, args = target, `{}`
	case offered[host.SearchToolName]:
		call, args = host.SearchToolName, `{"query":"list tasks tasks1","limit":3}`
	}
	in, rd, wr := total/4, read/4, written/4
	usage := fmt.Sprintf(`{"input_tokens":%d,"cache_read_input_tokens":%d,"cache_creation_input_tokens":%d,"output_tokens":1}`, in-rd-wr, rd, wr)
	var b bytes.Buffer
	event := func(name, data string) { fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", name, data) }
	event("message_start", `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"claude-bench","stop_reason":null,"usage":`+usage+`}}`)
	stop := "end_turn"
	if call != "" {
		stop = "tool_use"
		event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_%d","name":%q,"input":{}}}`, turn, call))
		a, _ := json.Marshal(args)
		event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":`+string(a)+`}}`)
	} else {
		event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Here are the tasks."}}`)
	}
	event("content_block_stop", `{"type":"content_block_stop","index":0}`)
	event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"`+stop+`"},"usage":{"output_tokens":10}}`)
	event("message_stop", `{"type":"message_stop"}`)
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = w.Write(b.Bytes())
}
