package llm

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcphost/mcphost/internal/netcheck"
)

// anthropicMaxTokens is the output limit sent to Anthropic models when
// neither the request nor the config sets one, by model name prefix; the
// first match wins. Thinking counts toward the limit, so it is set well
// above what an answer needs, but not at each model's maximum: the
// provider reserves rate-limit room for it.
var anthropicMaxTokens = []struct {
	prefix string
	tokens int
}{
	{"claude-3-5-", 8192},
	{"claude-3-7-", 32000},
	{"claude-3-", 4096},
	{"claude-", 32000},
}

// MaxTokensFor returns the output limit sent to an Anthropic model when
// nothing else sets one: from a table of model name prefixes, or
// [DefaultMaxTokens] for a name it does not know.
func MaxTokensFor(model string) int {
	for _, e := range anthropicMaxTokens {
		if strings.HasPrefix(model, e.prefix) {
			return e.tokens
		}
	}
	return DefaultMaxTokens
}

// efforts are the Thinking values that name an effort.
var efforts = []string{"minimal", "low", "medium", "high", "xhigh", "max"}

// thinking is a parsed Options.Thinking.
type thinking struct {
	mode   string // "", "off", "adaptive", "effort", "budget"
	effort string // for "effort"
	budget int    // for "budget"
}

func parseThinking(provider, s string) (thinking, error) {
	switch s {
	case "":
		return thinking{}, nil
	case "off", "adaptive":
		return thinking{mode: s}, nil
	}
	for _, e := range efforts {
		if s != e {
			continue
		}
		// The two APIs name their efforts differently at the ends.
		switch {
		case provider == "anthropic" && s == "minimal":
			return thinking{}, configErrorf("anthropic: thinking %q: Anthropic's efforts are low, medium, high, xhigh and max", s)
		case provider == "openai" && s == "max":
			return thinking{}, configErrorf("openai: thinking %q: OpenAI's efforts are minimal, low, medium, high and xhigh", s)
		}
		return thinking{mode: "effort", effort: s}, nil
	}
	if n, err := strconv.Atoi(s); err == nil && n > 0 {
		if provider != "anthropic" {
			return thinking{}, configErrorf("%s: thinking %q: a token budget is an Anthropic setting; use an effort (%s) or \"off\"", provider, s, strings.Join(efforts, ", "))
		}
		if n < 1024 {
			return thinking{}, configErrorf("anthropic: thinking %q: the budget must be at least 1024 tokens", s)
		}
		return thinking{mode: "budget", budget: n}, nil
	}
	return thinking{}, configErrorf("%s: thinking %q: want \"off\", \"adaptive\", an effort (%s) or a token budget", provider, s, strings.Join(efforts, ", "))
}

// checkKeyTransport refuses a key on its way over plain http to a host that
// is not this machine: anyone on the path could read it. Loopback is fine
// (a local llama.cpp or Ollama), and so is a person who said so.
func checkKeyTransport(provider, base, keyName, key string, o Options) error {
	if key == "" || o.AllowPlainHTTP {
		return nil
	}
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "http" || netcheck.IsLoopbackHost(u.Hostname()) {
		return nil
	}
	unset := ""
	if provider == "openai-compatible" && keyName == "OPENAI_API_KEY" {
		unset = ", or unset OPENAI_API_KEY if the server needs no key"
	}
	return configErrorf("%s: refusing to send %s over plain http to %s, which is not this machine: use an https URL, or pass --allow-plain-http if the network is yours%s", provider, keyName, clean(u.Host), unset)
}

// ToolLimits are what a provider accepts in a request's tools. Zero means
// no limit.
type ToolLimits struct {
	MaxTools       int // tools in one request
	MaxDescription int // characters of one tool's description
}

// ToolLimiter is implemented by models whose provider limits the tools of a
// request. A host that offers more tools than MaxTools must choose which
// to offer (tool search) or say which servers to turn off.
type ToolLimiter interface {
	ToolLimits() ToolLimits
}

// openaiToolLimits are OpenAI's documented limits on function tools.
var openaiToolLimits = ToolLimits{MaxTools: 128, MaxDescription: 1024}

// ToolLimits returns OpenAI's limits for the openai provider and none for
// compatible servers, whose limits differ and are not published.
func (m *openaiModel) ToolLimits() ToolLimits {
	if m.provider == "openai" {
		return openaiToolLimits
	}
	return ToolLimits{}
}

// ToolLimits: the Messages API publishes no limit on tools or
// descriptions.
func (m *anthropicModel) ToolLimits() ToolLimits { return ToolLimits{} }

// TooManyToolsError is returned by Stream, before anything is sent, for a
// request with more tools than the provider accepts.
type TooManyToolsError struct {
	Provider string
	Max, Got int
}

func (e *TooManyToolsError) Error() string {
	return fmt.Sprintf("%s accepts at most %d tools in a request; %d are offered", e.Provider, e.Max, e.Got)
}

// Is makes the error match [ErrConfig]: it is fixed in the configuration,
// not by trying again.
func (e *TooManyToolsError) Is(target error) bool { return target == ErrConfig }

// cutMarker ends a description cut to a provider's limit. The full text
// stays with the host, for the person and for tool search.
const cutMarker = " […description cut by mcphost]"

// cutDescription returns d cut to at most limit characters, the marker
// included, on a rune boundary; d itself when it fits or limit is 0.
func cutDescription(d string, limit int) (string, bool) {
	if limit <= 0 || utf8.RuneCountInString(d) <= limit {
		return d, false
	}
	keep := limit - utf8.RuneCountInString(cutMarker)
	i, n := 0, 0
	for i < len(d) && n < keep {
		_, size := utf8.DecodeRuneInString(d[i:])
		i += size
		n++
	}
	return strings.TrimRight(d[:i], " \t\r\n") + cutMarker, true
}
