package audit

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Redacted replaces what Redact removes.
const Redacted = "[REDACTED]"

// Redact returns raw with secrets replaced by the string "[REDACTED]", for
// storing arguments or results the user asked to keep (Options.RecordData).
// Everything else is copied byte for byte: member order, whitespace and
// number spelling are kept.
//
// It replaces, at any depth of objects and arrays:
//   - the whole value (object, array, string, number …) of every member
//     whose key looks secret. Keys are split into words at punctuation and
//     camelCase boundaries; a key looks secret when one of its words is
//     token, secret, password, passwd, passphrase, pass, pwd, pin, otp,
//     authorization, auth, apikey, key, cookie, session, credential(s),
//     creds, private, privatekey, bearer or jwt, or when the key, with
//     punctuation removed, contains token, secret, passw, authoriz, apikey,
//     accesskey, privatekey, credential, cookie, sessionid or bearer. So
//     "api_key", "apiKey", "X-Api-Key", "sortKey" and "max_tokens" are
//     replaced; "keyword", "author" and "monkey" are not;
//   - inside every other string, each part that looks like a credential:
//     "Bearer …" and "Basic …" headers, PEM private keys, JWTs, URLs with a
//     password, and tokens with well-known prefixes (sk-, ghp_, github_pat_,
//     glpat-, xox?-, AKIA…, AIza…, npm_, hf_, sk_live_ …);
//   - inside a string that itself holds a JSON object or array (a tool
//     result's text is often JSON), the same, recursively.
//
// Text that is not valid JSON cannot be walked and is replaced as a whole
// by the JSON string "[REDACTED: not valid JSON]". Redact(nil) is nil.
// Redaction is a safety net for data the user chose to record, not a
// guarantee: a secret under an innocent key in free text can get through.
func Redact(raw json.RawMessage) json.RawMessage { return redact(raw, nil) }

// redact is Redact that also hides the given exact values inside strings.
func redact(raw json.RawMessage, secrets []string) json.RawMessage {
	if raw == nil {
		return nil
	}
	if !json.Valid(raw) {
		return json.RawMessage(`"[REDACTED: not valid JSON]"`)
	}
	r := redactor{in: raw, out: make([]byte, 0, len(raw)), secrets: secrets}
	i := r.space(0)
	i = r.value(i)
	r.space(i)
	return r.out
}

// secretPatterns match the parts of a string that look like credentials.
// Each runs only on strings that contain its needle (compared in lower
// case): most strings contain none, and this keeps scrubbing cheap.
//
// The expressions are compiled the first time a needle is found, not at
// start-up and not on the first record: most runs never redact.
var secretPatterns = [...]secretPattern{
	{"bearer", `(?i:\bbearer[ \t]+)[A-Za-z0-9._~+/=-]{12,}`},
	{"basic", `(?i:\bbasic[ \t]+)[A-Za-z0-9._~+/=-]{12,}`},
	{"private key-----", `-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)`},
	{"eyj", `\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`},
	{"://", `\b[A-Za-z][A-Za-z0-9+.-]*://[^/?#@\s:]*:[^/?#@\s]+@`},
	{"sk-", `\bsk-[A-Za-z0-9_-]{20,}`},
	{"k_live_", `\b[sr]k_live_[A-Za-z0-9]{16,}`},
	{"k_test_", `\b[sr]k_test_[A-Za-z0-9]{16,}`},
	{"gh", `\bgh[pousr]_[A-Za-z0-9]{30,}`},
	{"github_pat_", `\bgithub_pat_[A-Za-z0-9_]{30,}`},
	{"glpat-", `\bglpat-[A-Za-z0-9_-]{20,}`},
	{"xox", `\bxox[abprs]-[A-Za-z0-9-]{10,}`},
	{"akia", `\bAKIA[A-Z0-9]{16}\b`},
	{"asia", `\bASIA[A-Z0-9]{16}\b`},
	{"aiza", `\bAIza[A-Za-z0-9_-]{35}`},
	{"npm_", `\bnpm_[A-Za-z0-9]{36}`},
	{"hf_", `\bhf_[A-Za-z0-9]{30,}`},
}

type secretPattern struct {
	needle string
	expr   string
}

// secretRegexps are secretPatterns' expressions, compiled, in their order.
var secretRegexps = sync.OnceValue(func() []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(secretPatterns))
	for i, p := range secretPatterns {
		out[i] = regexp.MustCompile(p.expr)
	}
	return out
})

// hide replaces every occurrence in s of the secrets (Options.Secrets).
func hide(s string, secrets []string) string {
	for _, v := range secrets {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, Redacted)
		}
	}
	return s
}

// scrub replaces the credential-looking parts of s.
func scrub(s string) string {
	if s == "" {
		return s
	}
	lower := strings.ToLower(s)
	for i, p := range secretPatterns {
		if strings.Contains(lower, p.needle) {
			s = secretRegexps()[i].ReplaceAllLiteralString(s, Redacted)
		}
	}
	return s
}

var secretWords = map[string]bool{
	"token": true, "secret": true, "password": true, "passwd": true, "passphrase": true,
	"pass": true, "pwd": true, "pin": true, "otp": true, "authorization": true, "auth": true,
	"apikey": true, "key": true, "cookie": true, "session": true, "credential": true,
	"credentials": true, "creds": true, "private": true, "privatekey": true, "bearer": true,
	"jwt": true,
}

var secretParts = []string{
	"token", "secret", "passw", "authoriz", "apikey", "accesskey", "privatekey",
	"credential", "cookie", "sessionid", "bearer",
}

// secretKey reports whether an object key looks like it names a secret.
func secretKey(k string) bool {
	var joined strings.Builder
	for _, w := range keyWords(k) {
		if secretWords[w] {
			return true
		}
		joined.WriteString(w)
	}
	j := joined.String()
	for _, p := range secretParts {
		if strings.Contains(j, p) {
			return true
		}
	}
	return false
}

// keyWords splits a key into lower-case words at anything that is not a
// letter or digit and at camelCase boundaries ("X-APIKey" → x, api, key).
func keyWords(k string) []string {
	var words []string
	rs := []rune(k)
	start := -1
	for i, c := range rs {
		alnum := unicode.IsLetter(c) || unicode.IsDigit(c)
		if !alnum {
			if start >= 0 {
				words = append(words, strings.ToLower(string(rs[start:i])))
				start = -1
			}
			continue
		}
		if start >= 0 && unicode.IsUpper(c) {
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				words = append(words, strings.ToLower(string(rs[start:i])))
				start = i
			}
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		words = append(words, strings.ToLower(string(rs[start:])))
	}
	return words
}

// redactor copies valid JSON from in to out, replacing secrets.
type redactor struct {
	in, out []byte
	secrets []string
}

var redactedJSON = []byte(`"` + Redacted + `"`)

func (r *redactor) space(i int) int {
	j := i
	for j < len(r.in) && isSpace(r.in[j]) {
		j++
	}
	r.out = append(r.out, r.in[i:j]...)
	return j
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// value copies the value starting at i and returns where it ends.
func (r *redactor) value(i int) int {
	switch r.in[i] {
	case '{':
		r.out = append(r.out, '{')
		i = r.space(i + 1)
		if r.in[i] == '}' {
			r.out = append(r.out, '}')
			return i + 1
		}
		for {
			end := stringEnd(r.in, i)
			key := decodeString(r.in[i:end])
			r.out = append(r.out, r.in[i:end]...)
			i = r.space(end)
			r.out = append(r.out, ':')
			i = r.space(i + 1)
			if secretKey(key) {
				i = skipValue(r.in, i)
				r.out = append(r.out, redactedJSON...)
			} else {
				i = r.value(i)
			}
			i = r.space(i)
			r.out = append(r.out, r.in[i])
			if r.in[i] == '}' {
				return i + 1
			}
			i = r.space(i + 1)
		}
	case '[':
		r.out = append(r.out, '[')
		i = r.space(i + 1)
		if r.in[i] == ']' {
			r.out = append(r.out, ']')
			return i + 1
		}
		for {
			i = r.value(i)
			i = r.space(i)
			r.out = append(r.out, r.in[i])
			if r.in[i] == ']' {
				return i + 1
			}
			i = r.space(i + 1)
		}
	case '"':
		end := stringEnd(r.in, i)
		r.out = r.appendString(r.in[i:end])
		return end
	default:
		end := skipValue(r.in, i)
		r.out = append(r.out, r.in[i:end]...)
		return end
	}
}

// appendString appends the JSON string lit, scrubbed.
func (r *redactor) appendString(lit []byte) []byte {
	s := decodeString(lit)
	t := hide(scrub(s), r.secrets)
	if t == s {
		if u := strings.TrimSpace(s); len(u) > 1 && (u[0] == '{' || u[0] == '[') && json.Valid([]byte(u)) {
			if inner := redact(json.RawMessage(s), r.secrets); !bytes.Equal(inner, []byte(s)) {
				t = string(inner)
			}
		}
	}
	if t == s {
		return append(r.out, lit...)
	}
	b, err := json.Marshal(t)
	if err != nil { // cannot happen for a string
		return append(r.out, redactedJSON...)
	}
	return append(r.out, b...)
}

// decodeString returns the text of the JSON string literal lit.
func decodeString(lit []byte) string {
	body := lit[1 : len(lit)-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return string(body)
	}
	var s string
	if err := json.Unmarshal(lit, &s); err != nil {
		return string(body)
	}
	return s
}

// stringEnd returns the index just after the string literal starting at i.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// skipValue returns the index just after the value starting at i.
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = stringEnd(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	default:
		j := i
		for j < len(b) && !isSpace(b[j]) && b[j] != ',' && b[j] != '}' && b[j] != ']' {
			j++
		}
		return j
	}
}
