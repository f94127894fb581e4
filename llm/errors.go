package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// ErrConfig is matched (with errors.Is) by every error [New] returns: an
// unknown provider, a missing key or base URL, an unreadable script. The
// command line reports these as configuration errors.
var ErrConfig = errors.New("model configuration error")

type configError struct{ err error }

func (e *configError) Error() string        { return e.err.Error() }
func (e *configError) Unwrap() error        { return e.err }
func (e *configError) Is(target error) bool { return target == ErrConfig }

// configErrorf is fmt.Errorf (%w works) for an error that matches ErrConfig.
func configErrorf(format string, args ...any) error {
	return &configError{err: fmt.Errorf(format, args...)}
}

// APIError is an error response from a provider, either an HTTP status of
// 400 or more or an error event inside an open stream.
type APIError struct {
	// Provider is the provider part of the model spec ("anthropic",
	// "openai", "ollama", "openai-compatible").
	Provider string
	// StatusCode is the HTTP status, or 0 for an error event that arrived
	// inside a stream that had started with 200.
	StatusCode int
	// Type is the provider's error type or code, when it sent one
	// ("rate_limit_error", "invalid_api_key").
	Type string
	// Message is the provider's explanation, with control characters removed
	// and cut to a few hundred characters.
	Message string
	// RequestID is the provider's id for the request (its request-id or
	// x-request-id header), which its support asks for.
	RequestID string
	// RetryAfter is the wait the provider asked for when it was longer
	// than mcphost waits (maxRetryWait), so the error was not retried.
	RetryAfter time.Duration

	hint string // what to check, for authentication failures
}

// RateLimited reports whether the provider refused the request because of a
// rate limit or quota.
func (e *APIError) RateLimited() bool {
	return (e.StatusCode == http.StatusTooManyRequests || e.Type == "rate_limit_error") && !e.QuotaExhausted()
}

// QuotaExhausted reports whether the provider refused the request because
// the account has no quota or credit left: waiting does not help.
func (e *APIError) QuotaExhausted() bool {
	return e.Type == "insufficient_quota"
}

func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString(e.Provider)
	b.WriteString(": ")
	switch {
	case e.RateLimited():
		b.WriteString("rate limited by the provider")
	case e.QuotaExhausted():
		b.WriteString("the account's quota is used up")
	case e.StatusCode == 0:
		b.WriteString("error in the response stream")
	default:
		b.WriteString("API error")
	}
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, " (HTTP %d %s", e.StatusCode, http.StatusText(e.StatusCode))
		if e.Type != "" {
			b.WriteString(", " + e.Type)
		}
		b.WriteString(")")
	} else if e.Type != "" {
		b.WriteString(" (" + e.Type + ")")
	}
	if e.Message != "" {
		b.WriteString(": " + strings.TrimRight(e.Message, ". "))
	}
	if e.RequestID != "" {
		b.WriteString(" (request id " + e.RequestID + ")")
	}
	switch {
	case e.RetryAfter > 0:
		fmt.Fprintf(&b, "; the provider asked to wait %v before trying again, longer than mcphost waits within a turn (%v): try again later", e.RetryAfter.Round(time.Second), maxRetryWait)
	case e.RateLimited():
		b.WriteString("; wait a moment and try again")
	case e.QuotaExhausted():
		b.WriteString("; check the account's plan and billing")
	case e.hint != "" && (e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden):
		b.WriteString("; " + e.hint)
	}
	return b.String()
}

// maxRetryWait is the longest a provider may ask us to wait before a retry
// (Retry-After). A longer wait is not a retry but an outage: the error is
// reported at once instead, saying how long the provider asked for. The
// Anthropic SDK waits as long as it is told and the OpenAI SDK at most 8
// seconds; a minute keeps a person at the prompt informed instead of
// staring at a silent turn.
const maxRetryWait = 60 * time.Second

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 64 << 10

// retryAfter reads the wait a server asks for before a retry: Retry-After-Ms
// (milliseconds, a header some providers add) before Retry-After (seconds or
// an HTTP date). The wait is negative for a date in the past.
func retryAfter(h http.Header) (time.Duration, bool) {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil {
			return asWait(ms, time.Millisecond)
		}
	}
	if v := h.Get("Retry-After"); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil {
			return asWait(s, time.Second)
		}
		if t, err := http.ParseTime(v); err == nil {
			return time.Until(t), true
		}
	}
	return 0, false
}

// asWait converts n units to a wait without overflowing: a number over a
// day (or infinite) is a day, longer than maxRetryWait either way, and NaN
// is no answer at all.
func asWait(n float64, unit time.Duration) (time.Duration, bool) {
	switch {
	case math.IsNaN(n):
		return 0, false
	case n*float64(unit) > float64(24*time.Hour):
		return 24 * time.Hour, true
	}
	return time.Duration(n * float64(unit)), true
}

// parseErrorBody finds the error type and message in the error formats seen
// in practice: Anthropic and OpenAI ({"error": {"type", "code", "message"}}),
// Ollama ({"error": "text"}), FastAPI-based servers ({"detail": …}), and
// {"message": …}. Anything else is reported as text.
func parseErrorBody(body []byte) (typ, msg string) {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
		Type    json.RawMessage `json:"type"`
	}
	if json.Unmarshal(body, &v) != nil {
		return "", clean(string(body))
	}
	var nested struct {
		Type    json.RawMessage `json:"type"`
		Code    json.RawMessage `json:"code"`
		Message json.RawMessage `json:"message"`
	}
	if json.Unmarshal(v.Error, &nested) == nil {
		typ = firstText(nested.Code, nested.Type) // OpenAI's code is the more precise
		msg = firstText(nested.Message)
	}
	if msg == "" {
		msg = firstText(v.Error, v.Message, v.Detail)
	}
	if typ == "" {
		if t := firstText(v.Type); t != "error" {
			typ = t
		}
	}
	if msg == "" && typ == "" {
		msg = string(body)
	}
	return clean(typ), clean(msg)
}

// firstText returns the first value that is a JSON string, or else the first
// that is any other JSON value, as text.
func firstText(raws ...json.RawMessage) string {
	for _, r := range raws {
		var s string
		if json.Unmarshal(r, &s) == nil && s != "" {
			return s
		}
	}
	for _, r := range raws {
		if t := strings.TrimSpace(string(r)); t != "" && t != "null" {
			return t
		}
	}
	return ""
}

// clean makes provider text safe to print on a terminal: control and format
// characters (escape sequences, bidirectional overrides) become spaces, runs of space collapse, and the text is cut to 300 runes.
func clean(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == unicode.ReplacementChar {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	return s
}
