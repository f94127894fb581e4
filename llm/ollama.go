package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// Ollama runs a model with a context length of its own choosing (4,096
// tokens on smaller machines) and silently cuts a longer prompt, system
// prompt and tool definitions first. Its OpenAI-compatible endpoint has no
// way to set num_ctx per request, and changing it per request would reload
// the model anyway; the context is the server's to set. What mcphost can do
// is notice: after a turn whose request is larger than a context could
// hold, it asks the server (GET /api/ps) with what context length it runs
// the model, and warns once when the request does not fit.

// ollamaCheck remembers what was learned about one Ollama model.
type ollamaCheck struct {
	mu      sync.Mutex
	asked   bool // the server was asked once
	context int  // what it said; 0 when it did not say
	warned  bool
}

// minOllamaContext is the smallest context Ollama gives a model; a request
// estimated below it is not checked.
const minOllamaContext = 2048

// check warns, through emit, when a request of bodyBytes does not fit the
// context length the server runs model with. It asks the server only for
// requests that could overflow what it said last, never again when it did
// not say, and warns at most once per model.
func (c *ollamaCheck) check(ctx context.Context, e *endpoint, model string, bodyBytes int, emit func(Event)) {
	estimate := bodyBytes / 4 // JSON and prose run at three to four bytes a token: this underestimates
	if estimate < minOllamaContext {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.warned || c.asked && estimate <= c.context || c.asked && c.context == 0 {
		return
	}
	c.asked, c.context = true, ollamaContextLength(ctx, e, model)
	n := c.context
	if n <= 0 || estimate <= n {
		return
	}
	c.warned = true
	emit(Event{Kind: EventWarning, Text: fmt.Sprintf("ollama runs %s with a context of %d tokens, but the request is about %d tokens: Ollama cuts the prompt silently, system prompt and tool definitions first; start Ollama with OLLAMA_CONTEXT_LENGTH=%d or more, or create a model with PARAMETER num_ctx", clean(model), n, estimate, roundContext(estimate*2))})
}

// roundContext rounds n up to a power of two, the sizes Ollama's docs use.
func roundContext(n int) int {
	c := minOllamaContext
	for c < n {
		c *= 2
	}
	return c
}

// ollamaContextLength asks the server at e's origin which context length
// it runs model with; 0 when it does not say (not running, an older
// Ollama, not Ollama at all).
func ollamaContextLength(ctx context.Context, e *endpoint, model string) int {
	u, err := url.Parse(e.url)
	if err != nil {
		return 0
	}
	u.Path, u.RawPath, u.RawQuery = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/chat/completions"), "/v1")+"/api/ps", "", ""
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0
	}
	req.Header = e.header.Clone()
	res, err := e.client.Do(req)
	if err != nil {
		return 0
	}
	defer discard(res)
	if res.StatusCode != http.StatusOK {
		return 0
	}
	var ps struct {
		Models []struct {
			Name          string `json:"name"`
			Model         string `json:"model"`
			ContextLength int    `json:"context_length"`
		} `json:"models"`
	}
	if json.NewDecoder(io.LimitReader(res.Body, maxErrorBody)).Decode(&ps) != nil {
		return 0
	}
	for _, m := range ps.Models {
		if m.Name == model || m.Model == model || m.Name == model+":latest" || m.Model == model+":latest" {
			return m.ContextLength
		}
	}
	return 0
}
