//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// modelServer is the smallest model mcphost can run against: an
// OpenAI-compatible Chat Completions endpoint that streams. Its first turn
// asks for one read call and its second answers with text. It serves one
// mcphost run at a time, checking what the host sent against the current
// expectation.
type modelServer struct {
	url string
	srv *http.Server

	mu        sync.Mutex
	perServer map[string]int // tools each server must offer on the first turn
	call      string         // the model name of the tool to call
	turns     int
	problems  []string
}

func startModelServer() (*modelServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m := &modelServer{url: "http://" + ln.Addr().String() + "/v1"}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", m.serveChat)
	m.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = m.srv.Serve(ln) }()
	return m, nil
}

func (m *modelServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = m.srv.Shutdown(ctx)
}

// expect sets what the next run must send.
func (m *modelServer) expect(perServer map[string]int, call string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.perServer, m.call, m.turns, m.problems = perServer, call, 0, nil
}

// finish returns how many turns the run asked for and what was wrong.
func (m *modelServer) finish() (turns int, problems []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.turns, m.problems
}

// chatRequest is the part of a Chat Completions request that is checked.
type chatRequest struct {
	Stream   bool `json:"stream"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

const benchCallID = "call_bench_1"

func (m *modelServer) serveChat(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<20)).Decode(&req); err != nil {
		m.reject(w, "decoding the request: "+err.Error())
		return
	}
	m.mu.Lock()
	m.turns++
	turn, perServer, call := m.turns, m.perServer, m.call
	m.mu.Unlock()

	if !req.Stream {
		m.reject(w, "the request does not ask for a stream")
		return
	}
	switch turn {
	case 1:
		if problem := checkOffered(req, perServer, call); problem != "" {
			m.reject(w, "first turn: "+problem)
			return
		}
		streamTurn(w, func(send func(chunkDelta, *string)) {
			send(chunkDelta{Role: "assistant", ToolCalls: []chunkToolCall{{
				Index: 0, ID: benchCallID, Type: "function",
				Function: chunkFunction{Name: call},
			}}}, nil)
			send(chunkDelta{ToolCalls: []chunkToolCall{{Index: 0, Function: chunkFunction{Arguments: "{}"}}}}, nil)
			send(chunkDelta{}, ptr("tool_calls"))
		})
	case 2:
		if problem := checkResult(req); problem != "" {
			m.reject(w, "second turn: "+problem)
			return
		}
		streamTurn(w, func(send func(chunkDelta, *string)) {
			words := strings.SplitAfter(finalAnswer, " ")
			send(chunkDelta{Role: "assistant", Content: ptr(words[0])}, nil)
			for _, word := range words[1:] {
				send(chunkDelta{Content: ptr(word)}, nil)
			}
			send(chunkDelta{}, ptr("stop"))
		})
	default:
		m.reject(w, fmt.Sprintf("turn %d: the script has two turns", turn))
	}
}

// checkOffered reports what is wrong with the tools of the first turn: a
// host that asks the model before all its servers are listed is wrong, not
// fast.
func checkOffered(req chatRequest, perServer map[string]int, call string) string {
	got := map[string]int{}
	total, want := 0, 0
	hasCall := false
	for _, t := range req.Tools {
		server, _, _ := strings.Cut(t.Function.Name, "__")
		got[server]++
		total++
		hasCall = hasCall || t.Function.Name == call
	}
	var wrong []string
	for server, n := range perServer {
		want += n
		if got[server] != n {
			wrong = append(wrong, fmt.Sprintf("%s %d, want %d", server, got[server], n))
		}
	}
	if len(wrong) > 0 || total != want {
		slices.Sort(wrong)
		return fmt.Sprintf("got %d tools, want %d: every tool of the %d servers (%s)", total, want, len(perServer), strings.Join(wrong, "; "))
	}
	if !hasCall {
		return "tool " + call + " is not offered"
	}
	return ""
}

// checkResult reports what is wrong with the tool result of the second
// turn.
func checkResult(req chatRequest) string {
	for _, msg := range req.Messages {
		if msg.Role != "tool" {
			continue
		}
		if msg.ToolCallID != benchCallID {
			return fmt.Sprintf("tool result for %q, want %q", msg.ToolCallID, benchCallID)
		}
		// Content is a string or an array of parts; either must hold something.
		var text string
		var parts []json.RawMessage
		if json.Unmarshal(msg.Content, &text) == nil && text != "" || json.Unmarshal(msg.Content, &parts) == nil && len(parts) > 0 {
			return ""
		}
		return "the tool result is empty"
	}
	return "no tool result"
}

func (m *modelServer) reject(w http.ResponseWriter, problem string) {
	m.mu.Lock()
	m.problems = append(m.problems, problem)
	m.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"error": map[string]string{"type": "invalid_request_error", "message": "bench model: " + problem},
	})
}

// The Chat Completions streaming wire format: one chat.completion.chunk
// object per "data:" line, a last chunk with usage and no choices, then
// "data: [DONE]".
type (
	chunk struct {
		ID      string        `json:"id"`
		Object  string        `json:"object"`
		Created int64         `json:"created"`
		Model   string        `json:"model"`
		Choices []chunkChoice `json:"choices"`
		Usage   *chunkUsage   `json:"usage,omitempty"`
	}
	chunkChoice struct {
		Index        int        `json:"index"`
		Delta        chunkDelta `json:"delta"`
		FinishReason *string    `json:"finish_reason"`
	}
	chunkDelta struct {
		Role      string          `json:"role,omitempty"`
		Content   *string         `json:"content,omitempty"`
		ToolCalls []chunkToolCall `json:"tool_calls,omitempty"`
	}
	chunkToolCall struct {
		Index    int           `json:"index"`
		ID       string        `json:"id,omitempty"`
		Type     string        `json:"type,omitempty"`
		Function chunkFunction `json:"function"`
	}
	chunkFunction struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	}
	chunkUsage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	}
)

func ptr(s string) *string { return &s }

// streamTurn writes one streamed assistant turn: the chunks body sends,
// then usage, then the end marker.
func streamTurn(w http.ResponseWriter, body func(send func(chunkDelta, *string))) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	created := time.Now().Unix()
	write := func(c chunk) {
		c.ID, c.Object, c.Created, c.Model = "chatcmpl-bench", "chat.completion.chunk", created, "bench"
		b, _ := json.Marshal(c)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	body(func(d chunkDelta, finish *string) {
		write(chunk{Choices: []chunkChoice{{Delta: d, FinishReason: finish}}})
	})
	write(chunk{Choices: []chunkChoice{}, Usage: &chunkUsage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110}})
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}
