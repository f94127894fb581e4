package llm

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

func TestNewErrors(t *testing.T) {
	script := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(script, []byte("{\"text\": \"hi\"}\n{\"txet\": \"typo\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		spec string
		opts Options
		want string
	}{
		{"claude", Options{}, `model "claude": want provider:model; known providers: anthropic, openai, ollama, openai-compatible, script`},
		{"gemini:pro", Options{}, `model "gemini:pro": unknown provider "gemini"; known providers: anthropic, openai, ollama, openai-compatible, script`},
		{"anthropic:", Options{}, `model "anthropic:": the model name after "anthropic:" is missing`},
		{"anthropic:claude-test", Options{}, "anthropic: ANTHROPIC_API_KEY is not set; export it or choose another --model"},
		{"openai:gpt-test", Options{}, "openai: OPENAI_API_KEY is not set; export it or choose another --model"},
		{"openai-compatible:qwen", Options{}, "openai-compatible: --base-url is required (for example http://localhost:8080/v1 for llama.cpp)"},
		{"openai-compatible:qwen", Options{BaseURL: "localhost:8080"}, `openai-compatible: base URL "localhost:8080" is not an http or https URL`},
		{"anthropic:claude-test", Options{APIKey: "k", BaseURL: "ftp://example.test"}, `anthropic: base URL "ftp://example.test" is not an http or https URL`},
		{"script:" + script, Options{}, script + `:2: json: unknown field "txet"`},
		{"script:" + filepath.Join(t.TempDir(), "missing.jsonl"), Options{}, "no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			tt.opts.Getenv = noEnv
			m, err := New(tt.spec, tt.opts)
			if err == nil {
				t.Fatalf("New(%q) = %v, want an error", tt.spec, m.Name())
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New(%q) error:\n got %q\nwant %q", tt.spec, err, tt.want)
			}
			if !errors.Is(err, ErrConfig) {
				t.Errorf("New(%q) error %q does not match ErrConfig", tt.spec, err)
			}
		})
	}
}

func TestNewNames(t *testing.T) {
	env := envOf(map[string]string{"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"})
	for _, spec := range []string{"anthropic:claude-test", "openai:gpt-test", "ollama:llama3.2", "openai-compatible:qwen:7b"} {
		m, err := New(spec, Options{Getenv: env, BaseURL: "http://127.0.0.1:1/v1"})
		if err != nil {
			t.Fatalf("New(%q): %v", spec, err)
		}
		if m.Name() != spec {
			t.Errorf("Name() = %q, want %q", m.Name(), spec)
		}
	}
}

// The process environment can neither redirect requests nor choose the
// credential: Options win, and nothing reads the process environment itself.
func TestProcessEnvironmentIgnored(t *testing.T) {
	trap := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("request reached the base URL from the process environment: %s", r.URL)
		w.WriteHeader(http.StatusTeapot)
	})
	t.Setenv("ANTHROPIC_BASE_URL", trap.URL())
	t.Setenv("OPENAI_BASE_URL", trap.URL()+"/v1")
	t.Setenv("ANTHROPIC_API_KEY", "from-process")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "from-process")
	t.Setenv("OPENAI_API_KEY", "from-process")
	t.Setenv("OPENAI_ORG_ID", "org-from-process")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-From-Process: 1")
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-From-Process: 1")

	tests := []struct {
		name, spec, file, wantAuth string
		opts                       Options
	}{
		{"anthropic options", "anthropic:claude-test", "anthropic/max_tokens.sse", "Bearer injected", Options{APIKey: "injected"}},
		{"openai options", "openai:gpt-test", "openai/max_tokens.sse", "Bearer injected", Options{APIKey: "injected"}},
		// Injected environment: its key is used, its base URL is not.
		{"anthropic getenv", "anthropic:claude-test", "anthropic/max_tokens.sse", "Bearer from-getenv", Options{Getenv: envOf(map[string]string{"ANTHROPIC_API_KEY": "from-getenv"})}},
		{"openai getenv", "openai:gpt-test", "openai/max_tokens.sse", "Bearer from-getenv", Options{Getenv: envOf(map[string]string{"OPENAI_API_KEY": "from-getenv"})}},
		// Ollama never sends OPENAI_API_KEY to the local server.
		{"ollama", "ollama:llama-test", "openai/max_tokens.sse", "", Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeAPI(t, replay(t, tt.file))
			opts := tt.opts
			opts.BaseURL = f.URL()
			if opts.Getenv != nil {
				env := opts.Getenv
				opts.Getenv = func(k string) string {
					if k == "ANTHROPIC_BASE_URL" || k == "OPENAI_BASE_URL" {
						return trap.URL()
					}
					return env(k)
				}
			}
			m, err := New(tt.spec, opts)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := collect(context.Background(), m, hello()); err != nil {
				t.Fatalf("Stream: %v", err)
			}
			reqs := f.requests()
			if len(reqs) != 1 {
				t.Fatalf("got %d requests, want 1", len(reqs))
			}
			h := reqs[0].Header
			if got := h.Get("Authorization"); got != tt.wantAuth {
				t.Errorf("Authorization = %q, want %q", got, tt.wantAuth)
			}
			for _, k := range []string{"X-Api-Key", "Openai-Organization", "X-From-Process"} {
				if v := h.Get(k); v != "" {
					t.Errorf("header %s = %q came from the process environment", k, v)
				}
			}
		})
	}
}

// Retries are bounded: DefaultMaxRetries, immediately when the server
// says Retry-After-Ms: 0, and none when the server asks for a long wait.
func TestRetriesBounded(t *testing.T) {
	for _, spec := range []string{"anthropic:claude-test", "openai:gpt-test"} {
		body := `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`
		tests := []struct {
			name      string
			header    map[string]string
			retries   int
			wantCalls int
		}{
			{"default", map[string]string{"Retry-After-Ms": "0"}, 0, 1 + DefaultMaxRetries},
			{"one", map[string]string{"Retry-After-Ms": "0"}, 1, 2},
			{"disabled", map[string]string{"Retry-After-Ms": "0"}, -1, 1},
			{"long wait", map[string]string{"Retry-After": "3600"}, 0, 1},
		}
		for _, tt := range tests {
			t.Run(spec+" "+tt.name, func(t *testing.T) {
				f := newFakeAPI(t, errorReply(http.StatusTooManyRequests, body, tt.header))
				m, err := New(spec, Options{BaseURL: f.URL(), APIKey: "k", Getenv: noEnv, MaxRetries: tt.retries})
				if err != nil {
					t.Fatal(err)
				}
				_, err = collect(context.Background(), m, hello())
				var apiErr *APIError
				if !errors.As(err, &apiErr) || !apiErr.RateLimited() {
					t.Fatalf("got error %v, want a rate limit *APIError", err)
				}
				if n := len(f.requests()); n != tt.wantCalls {
					t.Errorf("got %d requests, want %d", n, tt.wantCalls)
				}
			})
		}
	}
}

// A retry that succeeds leaves no trace of the failure before it.
func TestRetryThenSuccess(t *testing.T) {
	for spec, file := range map[string]string{"anthropic:claude-test": "anthropic/max_tokens.sse", "openai:gpt-test": "openai/max_tokens.sse"} {
		t.Run(spec, func(t *testing.T) {
			var calls atomic.Int32
			fail := errorReply(http.StatusInternalServerError, `{"error":{"type":"api_error","message":"boom"}}`, map[string]string{"Retry-After-Ms": "0"})
			ok := replay(t, file)
			f := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request) {
				if calls.Add(1) == 1 {
					fail(w, r)
					return
				}
				ok(w, r)
			})
			m, err := New(spec, Options{BaseURL: f.URL(), APIKey: "k", Getenv: noEnv})
			if err != nil {
				t.Fatal(err)
			}
			events, err := collect(context.Background(), m, hello())
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if last := events[len(events)-1]; last.Kind != EventDone || last.StopReason != StopMaxTokens {
				t.Errorf("last event %+v, want done with max_tokens", last)
			}
			if n := len(f.requests()); n != 2 {
				t.Errorf("got %d requests, want 2", n)
			}
		})
	}
}

// A request no provider would take is refused before anything is sent.
func TestRequestRefusedBeforeSending(t *testing.T) {
	big := `{"type":"object","description":"` + strings.Repeat("x", MaxSchemaBytes) + `"}`
	tests := []struct {
		name string
		req  *Request
		want string
	}{
		{"schema too big", &Request{Messages: hello().Messages, Tools: []Tool{{Name: "files_read", InputSchema: json.RawMessage(big)}}},
			`tool "files_read": input schema is 65570 bytes; the limit is 65536`},
		{"schema not an object", &Request{Messages: hello().Messages, Tools: []Tool{{Name: "files_read", InputSchema: json.RawMessage(`["type"]`)}}},
			`tool "files_read": input schema is not a JSON object`},
		{"unsafe name", &Request{Messages: hello().Messages, Tools: []Tool{{Name: "files/read"}}},
			`tool "files/read": the name must match [A-Za-z0-9_-]{1,64}`},
		{"duplicate name", &Request{Messages: hello().Messages, Tools: []Tool{{Name: "a"}, {Name: "a"}}},
			`tool "a": offered twice`},
		{"no messages", &Request{}, "the request has no messages"},
		{"tool message without results", &Request{Messages: []Message{{Role: RoleTool, Text: "x"}}},
			"message 0: a tool message without tool results"},
		{"bad args", &Request{Messages: []Message{{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c", Name: "a", Args: json.RawMessage(`[1]`)}}}}},
			`message 0: tool call "c": arguments are not a JSON object`},
	}
	for _, spec := range []string{"anthropic:claude-test", "openai:gpt-test", "script"} {
		for _, tt := range tests {
			t.Run(spec+" "+tt.name, func(t *testing.T) {
				f := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request) { t.Error("a request was sent") })
				var m Model = NewScript([]ScriptTurn{{Text: "unused"}})
				if spec != "script" {
					var err error
					if m, err = New(spec, Options{BaseURL: f.URL(), APIKey: "k", Getenv: noEnv}); err != nil {
						t.Fatal(err)
					}
				}
				_, err := collect(context.Background(), m, tt.req)
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("got error %v, want one containing %q", err, tt.want)
				}
			})
		}
	}
}

func TestIsJSONObject(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want bool
	}{
		{`{}`, true},
		{` {"type":"object"} `, true},
		{"\n{\"a\":[1,{\"b\":null}]}", true},
		{``, false},
		{`null`, false},
		{`[]`, false},
		{`"{}"`, false},
		{`{"a":1} {"b":2}`, false},
		{`{"a":1`, false},
		{`{"a":1}}`, false},
		{`{'a':1}`, false},
	} {
		if got := isJSONObject([]byte(tt.in)); got != tt.want {
			t.Errorf("isJSONObject(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// Without Options.BaseURL a model goes to its provider's own endpoint, even
// when the environment it is given names another.
func TestBaseURLNotFromEnvironment(t *testing.T) {
	env := envOf(map[string]string{
		"OPENAI_API_KEY": "k1", "ANTHROPIC_API_KEY": "k2",
		"OPENAI_BASE_URL": "http://elsewhere.invalid/v1", "ANTHROPIC_BASE_URL": "http://elsewhere.invalid",
	})
	for spec, host := range map[string]string{"openai:gpt-test": "api.openai.com", "anthropic:claude-test": "api.anthropic.com"} {
		var asked []string
		hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			asked = append(asked, r.URL.Host)
			return nil, errors.New("no network in this test")
		})}
		m, err := New(spec, Options{Getenv: env, HTTPClient: hc, MaxRetries: -1})
		if err != nil {
			t.Fatal(err)
		}
		_, _ = collect(context.Background(), m, hello())
		if len(asked) != 1 || asked[0] != host {
			t.Errorf("%s: the request went to %v, want %s only", spec, asked, host)
		}
	}
}
