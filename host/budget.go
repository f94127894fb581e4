package host

import (
	"strings"

	"github.com/mcphost/mcphost/client"
)

// bytesPerToken is the estimate of request bytes a token stands for. It is
// a rough mean for English and JSON; a tokenizer per provider would be
// exact and is not worth the dependency for a budget with a margin.
const bytesPerToken = 4

// DefaultContextWindow is the window assumed for a model the table does not
// know and the config does not set.
const DefaultContextWindow = 128000

// contextWindows are the windows of common models, by model name prefix
// (after "provider:"); the first match wins.
var contextWindows = []struct {
	prefix string
	tokens int
}{
	{"claude-", 200000},
	{"gpt-4.1", 1047576},
	{"gpt-5", 400000},
	{"gpt-4o", 128000},
	{"gpt-4-turbo", 128000},
	{"gpt-4", 8192},
	{"gpt-3.5", 16385},
	{"o1", 200000},
	{"o3", 200000},
	{"o4", 200000},
	{"gemini-", 1048576},
	{"llama3.1", 128000},
	{"llama3.2", 128000},
	{"llama3", 8192},
	{"qwen3", 40960},
	{"qwen2.5", 32768},
	{"mistral", 32768},
	{"deepseek", 128000},
}

// ContextWindowFor returns the window of the model named by spec
// ("provider:model") from a table of common models, or
// DefaultContextWindow.
func ContextWindowFor(spec string) int {
	_, model, ok := strings.Cut(spec, ":")
	if !ok {
		model = spec
	}
	model = strings.ToLower(model)
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	for _, e := range contextWindows {
		if strings.HasPrefix(model, e.prefix) {
			return e.tokens
		}
	}
	return DefaultContextWindow
}

// window is the model's context window in tokens.
func (l *Loop) window() int {
	if l.o.ContextWindow > 0 {
		return l.o.ContextWindow
	}
	if l.o.Model == nil {
		return DefaultContextWindow
	}
	return ContextWindowFor(l.o.Model.Name())
}

// ContextSettings are the configured parts of a Loop's context budget, as
// a front end passes them on to LoopOptions.
type ContextSettings struct {
	ToolSearch    string                    // "toolSearch"
	AlwaysLoad    func(t *client.Tool) bool // the servers' "alwaysLoad"
	ContextWindow int                       // the model's "contextWindow"
}
