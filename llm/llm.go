package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// Role says who wrote a [Message].
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	// RoleTool carries the results of the previous assistant message's tool
	// calls back to the model.
	RoleTool Role = "tool"
)

// Message is one entry of a conversation. Text is what a person or the model
// wrote; ToolCalls is set only on assistant messages, ToolResults only on tool
// messages.
//
// Raw and RawFrom keep an assistant message as its provider sent it, thinking
// and reasoning included (see the EventDone event). A model whose RawFrom
// they are sends Raw back unchanged instead of rebuilding the message from
// Text and ToolCalls; every other model ignores them. A caller that changes
// Text or ToolCalls of such a message must clear Raw.
type Message struct {
	Role        Role
	Text        string
	ToolCalls   []ToolCall
	ToolResults []ToolResult
	Raw         json.RawMessage
	RawFrom     string
}

// ToolCall is one complete call the model asked for. Args is a JSON object.
type ToolCall struct {
	ID   string
	Name string
	Args json.RawMessage
}

// ToolResult answers the ToolCall whose ID is CallID.
type ToolResult struct {
	CallID  string
	Content string
	IsError bool
}

// Tool is a tool offered to the model. Name must already be provider-safe
// ([A-Za-z0-9_-]{1,64}); InputSchema is a JSON Schema object, sent as given.
type Tool struct {
	Name        string
	Description string
	InputSchema json.RawMessage
}

// Request is everything one turn needs. MaxTokens of 0 means
// Options.MaxTokens, and when that is 0 too the model's own limit from a
// table for providers that require one (Anthropic; see [MaxTokensFor]) and
// the server's default for the others.
type Request struct {
	System    string
	Messages  []Message
	Tools     []Tool
	MaxTokens int
}

// Usage counts the tokens of one turn. InputTokens includes tokens read from
// or written to a prompt cache, so the number means the same for every
// provider; CacheReadTokens and CacheWriteTokens say how many of them were
// (Anthropic's cache_read_input_tokens and cache_creation_input_tokens,
// OpenAI's prompt_tokens_details.cached_tokens, which has no write count).
type Usage struct {
	InputTokens      int `json:"inputTokens"`
	OutputTokens     int `json:"outputTokens"`
	CacheReadTokens  int `json:"cacheReadTokens"`
	CacheWriteTokens int `json:"cacheWriteTokens"`
}

// Add adds u's counts to the receiver's.
func (t *Usage) Add(u Usage) {
	t.InputTokens += u.InputTokens
	t.OutputTokens += u.OutputTokens
	t.CacheReadTokens += u.CacheReadTokens
	t.CacheWriteTokens += u.CacheWriteTokens
}

// EventKind says what an [Event] carries.
type EventKind string

const (
	// EventTextDelta carries the next piece of the assistant's text in Text.
	EventTextDelta EventKind = "text_delta"
	// EventToolCall carries one complete tool call in Call, its arguments
	// assembled from every fragment the provider streamed.
	EventToolCall EventKind = "tool_call"
	// EventThinking carries the next piece of the model's visible thinking
	// or reasoning in Text, for display only: it is not part of the answer.
	EventThinking EventKind = "thinking"
	// EventWarning carries something the person should know about the turn
	// in Text: a tool that could not be offered, a description that was
	// cut, a prompt the server seems to have cut off.
	EventWarning EventKind = "warning"
	// EventUsage carries the turn's token counts in Usage.
	EventUsage EventKind = "usage"
	// EventDone ends the turn; StopReason says why, Text carries the
	// provider's explanation when it gave one (a refusal's), and Raw and
	// RawFrom the assistant message as received, for [Message].
	EventDone EventKind = "done"
)

// Normalised stop reasons. A reason a provider sends that has no equivalent
// here is passed through as the provider spelled it.
const (
	StopEndTurn   = "end_turn"
	StopToolUse   = "tool_use"
	StopMaxTokens = "max_tokens"
	StopSequence  = "stop_sequence"
	StopRefusal   = "refusal"
	// StopPauseTurn: the provider paused a long turn; send the assistant
	// message back as it is, with no new message, to let it continue.
	StopPauseTurn = "pause_turn"
	// StopContextFull: the conversation filled the model's context window;
	// like StopMaxTokens the answer is cut off.
	StopContextFull = "model_context_window_exceeded"
)

// Truncated reports whether a turn that stopped for reason was cut off
// before the model finished: its text is partial and its tool calls must
// not run.
func Truncated(reason string) bool {
	return reason == StopMaxTokens || reason == StopContextFull
}

// Event is one step of a streamed turn. A successful turn emits any number of
// EventTextDelta and EventToolCall events, then exactly one EventUsage and
// exactly one EventDone, in that order.
type Event struct {
	Kind       EventKind
	Text       string
	Call       *ToolCall
	Usage      Usage
	StopReason string
	Raw        json.RawMessage
	RawFrom    string
}

// Model is a language model behind one provider. Models are safe for
// concurrent use.
type Model interface {
	// Name returns the spec the model was made from, "provider:model".
	Name() string
	// Stream runs one turn and calls emit, from the calling goroutine, for each
	// event. It returns nil after emitting EventDone. When ctx is cancelled it
	// closes the HTTP stream and returns ctx.Err() promptly, possibly after
	// some events. Any other failure is returned as an error (an [*APIError]
	// when the provider answered with one); events emitted before it belong to
	// a turn that did not finish.
	Stream(ctx context.Context, req *Request, emit func(Event)) error
}

// Options configures [New]. The zero value reads keys from the process
// environment and uses each provider's default endpoint.
type Options struct {
	// BaseURL replaces the provider's endpoint (the --base-url flag). It is
	// the only way to move one: ANTHROPIC_BASE_URL and OPENAI_BASE_URL are
	// not read.
	BaseURL string
	// APIKey wins over the provider's key variable.
	APIKey string
	// Getenv reads environment variables; nil means os.Getenv. It is the
	// only way the environment reaches a model.
	Getenv func(string) string
	// HTTPClient sends the requests; nil means http.DefaultClient. A client
	// with a Timeout cuts off long turns: streams last as long as the model
	// writes.
	HTTPClient *http.Client
	// MaxRetries bounds how often a request that failed before any output
	// arrived (connection error, 408, 409, 429, 5xx) is sent again. 0 means
	// DefaultMaxRetries; a negative value disables retries.
	MaxRetries int
	// MaxTokens is the model's output limit ("maxTokens" in the config);
	// 0 means the table of [MaxTokensFor] for Anthropic and the server's
	// default for the others.
	MaxTokens int
	// Thinking sets how much the model thinks before it answers, where
	// the provider lets a caller choose ("thinking" in the config): "" for
	// the provider's default, "off", "adaptive", an effort ("minimal",
	// "low", "medium", "high", "xhigh", "max") or a number of tokens
	// (Anthropic only). See the package documentation for what each
	// provider is sent.
	Thinking string
	// AllowPlainHTTP lets a key travel over plain http to a host that is
	// not loopback (the --allow-plain-http flag). Without it [New] refuses.
	AllowPlainHTTP bool
}

const (
	// DefaultMaxTokens is the output limit sent to a model the table of
	// [MaxTokensFor] does not know, when the provider requires one.
	DefaultMaxTokens = 8192
	// DefaultMaxRetries is the number of retries when Options.MaxRetries is
	// 0. It is the default of the providers' own SDKs, so that leaving them
	// changed nothing.
	DefaultMaxRetries = 2
	// MaxSchemaBytes is the largest tool input schema Stream accepts.
	MaxSchemaBytes = 64 << 10
)

func (o Options) getenv(name string) string {
	if o.Getenv != nil {
		return o.Getenv(name)
	}
	return os.Getenv(name)
}

func (o Options) retries() int {
	switch {
	case o.MaxRetries < 0:
		return 0
	case o.MaxRetries == 0:
		return DefaultMaxRetries
	}
	return o.MaxRetries
}

var providers = []string{"anthropic", "openai", "ollama", "openai-compatible", "script"}

// Providers returns the provider names [New] accepts, in the order the help
// text lists them.
func Providers() []string { return append([]string(nil), providers...) }

// New returns the model named by spec, "provider:model". Every error it
// returns matches [ErrConfig] and says how to fix the spec or the
// environment. New makes no network request; a bad key shows up on the first
// Stream.
func New(spec string, opts Options) (Model, error) {
	provider, model, ok := strings.Cut(spec, ":")
	if !ok {
		return nil, configErrorf("model %q: want provider:model; known providers: %s", spec, strings.Join(providers, ", "))
	}
	if model == "" {
		return nil, configErrorf("model %q: the model name after %q is missing", spec, provider+":")
	}
	switch provider {
	case "anthropic":
		return newAnthropic(spec, model, opts)
	case "openai":
		return newOpenAI(spec, model, opts)
	case "ollama":
		return newOllama(spec, model, opts)
	case "openai-compatible":
		return newOpenAICompatible(spec, model, opts)
	case "script":
		return LoadScript(model)
	}
	return nil, configErrorf("model %q: unknown provider %q; known providers: %s", spec, provider, strings.Join(providers, ", "))
}

// baseURL picks the first non-empty candidate and checks that it is an
// absolute http or https URL.
func baseURL(provider string, candidates ...string) (string, error) {
	for _, c := range candidates {
		if c == "" {
			continue
		}
		u, err := url.Parse(c)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", configErrorf("%s: base URL %q is not an http or https URL", provider, c)
		}
		return c, nil
	}
	return "", nil
}

// validToolName reports whether name matches [A-Za-z0-9_-]{1,64}, the names
// every provider accepts. It is written out rather than a regexp so that the
// package has nothing to compile when the program starts.
func validToolName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// check refuses a request that no provider would accept, before anything is
// sent, with an error that names the part at fault.
func (r *Request) check() error {
	if err := r.checkMessages(); err != nil {
		return err
	}
	return checkTools(r.Tools)
}

// checkTools refuses tools no provider would accept: a name outside
// [A-Za-z0-9_-]{1,64}, a name offered twice, a schema over MaxSchemaBytes or
// not a JSON object.
func checkTools(tools []Tool) error {
	seen := make(map[string]bool, len(tools))
	for _, t := range tools {
		if !validToolName(t.Name) {
			return fmt.Errorf("tool %q: the name must match [A-Za-z0-9_-]{1,64}", t.Name)
		}
		if seen[t.Name] {
			return fmt.Errorf("tool %q: offered twice", t.Name)
		}
		seen[t.Name] = true
		if len(t.InputSchema) > MaxSchemaBytes {
			return fmt.Errorf("tool %q: input schema is %d bytes; the limit is %d", t.Name, len(t.InputSchema), MaxSchemaBytes)
		}
		if len(t.InputSchema) > 0 && !isJSONObject(t.InputSchema) {
			return fmt.Errorf("tool %q: input schema is not a JSON object", t.Name)
		}
	}
	return nil
}

// checkMessages is check without the tools.
func (r *Request) checkMessages() error {
	if r == nil {
		return fmt.Errorf("nil request")
	}
	if len(r.Messages) == 0 {
		return fmt.Errorf("the request has no messages")
	}
	for i, m := range r.Messages {
		switch m.Role {
		case RoleUser, RoleAssistant:
		case RoleTool:
			if len(m.ToolResults) == 0 {
				return fmt.Errorf("message %d: a tool message without tool results", i)
			}
		default:
			return fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
		for _, c := range m.ToolCalls {
			if len(c.Args) > 0 && !isJSONObject(c.Args) {
				return fmt.Errorf("message %d: tool call %q: arguments are not a JSON object", i, c.ID)
			}
		}
	}
	return nil
}

// schemaOrEmpty returns the schema to send for t: as given, or an object
// schema without properties when the tool declared none.
func schemaOrEmpty(s json.RawMessage) json.RawMessage {
	if len(s) == 0 {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return s
}

// argsOrEmpty returns args, or an empty object when the model sent no
// arguments at all.
func argsOrEmpty(args json.RawMessage) json.RawMessage {
	if len(strings.TrimSpace(string(args))) == 0 {
		return json.RawMessage(`{}`)
	}
	return args
}

// isJSONObject reports whether b is one valid JSON object. It runs for every
// tool schema of every turn, so it validates without decoding: no map, no
// allocation.
func isJSONObject(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}
