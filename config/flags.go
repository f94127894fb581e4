package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// ParseServerFlag parses the value of a --server flag:
//
//	NAME=COMMAND [ARG...]   a stdio server; the rest is split by SplitWords
//	NAME=URL                an http:// or https:// URL: a streamable HTTP
//	                        server, or an SSE server when the URL's path
//	                        ends in "/sse"
//
// The server has Source SourceFlag (passing the flag is consent), Trust
// false (see --trust) and the default timeouts and protocol version.
// Nothing is expanded: the shell that ran mcphost already did that.
func ParseServerFlag(s string) (Server, error) {
	name, rest, ok := strings.Cut(s, "=")
	if !ok {
		return Server{}, errors.New("expected NAME=COMMAND or NAME=URL")
	}
	if why := NameProblem(name); why != "" {
		return Server{}, errors.New(why)
	}
	if why := reservedName(name); why != "" {
		return Server{}, errors.New(why)
	}
	words, err := SplitWords(rest)
	if err != nil {
		return Server{}, err
	}
	if len(words) == 0 {
		return Server{}, fmt.Errorf(`nothing after "%s="; give a command or an http(s) URL`, name)
	}
	srv := Server{
		Name:            name,
		ProtocolVersion: DefaultProtocolVersion,
		Source:          SourceFlag,
	}
	if looksLikeURL(words[0]) {
		if len(words) > 1 {
			return Server{}, errors.New("a URL server takes no arguments")
		}
		if why := checkURL(words[0]); why != "" {
			return Server{}, fmt.Errorf("invalid URL: %s", why)
		}
		srv.URL = words[0]
		srv.Transport = TransportHTTP
		if u, _ := url.Parse(srv.URL); strings.HasSuffix(u.Path, "/sse") {
			srv.Transport = TransportSSE
		}
		if what := credentialsInClear(srv); what != "" {
			return Server{}, fmt.Errorf(`the server would get %s over plain http to %s, which is not this machine: anyone on the path could read them; use an https URL, or define the server in your config with "allowInsecureHTTP": true if the network is yours`, what, shownHost(srv))
		}
		return srv, nil
	}
	srv.Transport = TransportStdio
	srv.Command = words[0]
	if len(words) > 1 {
		srv.Args = words[1:]
	}
	return srv, nil
}

func looksLikeURL(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// SplitWords splits s into words the way a POSIX shell splits a simple
// command line, without being one: blanks separate words; single quotes keep
// everything up to the next single quote; double quotes keep everything up
// to the next unescaped double quote, where a backslash escapes only \, ",
// $, ` and a newline; elsewhere a backslash keeps the next character, and a
// backslash-newline joins lines. Empty quotes make an empty word. There is no
// expansion of any kind: $VAR, ~, globs, $(...) and backquotes stay as
// written, and |, ;, & and > are ordinary characters. An unterminated quote
// or a trailing backslash is an error.
func SplitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	pos := func(i int) int { return utf8.RuneCountInString(s[:i]) + 1 }
	for i := 0; i < len(s); {
		switch c := s[i]; c {
		case ' ', '\t', '\n', '\r':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
			i++
		case '\\':
			if i+1 == len(s) {
				return nil, errors.New(`trailing backslash; write \\ for a backslash`)
			}
			if s[i+1] == '\n' {
				i += 2
				continue
			}
			_, size := utf8.DecodeRuneInString(s[i+1:])
			cur.WriteString(s[i+1 : i+1+size])
			inWord = true
			i += 1 + size
		case '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unterminated single quote at character %d", pos(i))
			}
			cur.WriteString(s[i+1 : i+1+end])
			inWord = true
			i += end + 2
		case '"':
			start := i
			inWord = true
			closed := false
			for i++; i < len(s); {
				c := s[i]
				if c == '"' {
					closed = true
					i++
					break
				}
				if c == '\\' && i+1 < len(s) && strings.IndexByte("\\\"$`\n", s[i+1]) >= 0 {
					if s[i+1] != '\n' {
						cur.WriteByte(s[i+1])
					}
					i += 2
					continue
				}
				cur.WriteByte(c)
				i++
			}
			if !closed {
				return nil, fmt.Errorf("unterminated double quote at character %d", pos(start))
			}
		default:
			cur.WriteByte(c)
			inWord = true
			i++
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// flagRule turns the value of an --allow, --ask or --deny flag into a rule:
// a JSON object when it starts with '{', a glob string otherwise.
func flagRule(flag string, index int, value string) (RuleSpec, error) {
	v := strings.TrimSpace(value)
	rule := RuleSpec{Effect: strings.TrimPrefix(flag, "--"), Source: flag, Index: index}
	if v == "" {
		return rule, &Error{Msg: fmt.Sprintf("%s %q: empty rule", flag, value)}
	}
	var raw bytes.Buffer
	if strings.HasPrefix(v, "{") {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(v), &obj); err != nil {
			return rule, &Error{Msg: fmt.Sprintf("%s %q: a rule that starts with '{' must be a JSON object: %v", flag, value, err), Err: err}
		}
		if err := json.Compact(&raw, []byte(v)); err != nil {
			return rule, &Error{Msg: fmt.Sprintf("%s %q: %v", flag, value, err), Err: err}
		}
	} else {
		enc := json.NewEncoder(&raw)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return rule, &Error{Msg: fmt.Sprintf("%s %q: %v", flag, value, err), Err: err}
		}
	}
	rule.Raw = json.RawMessage(bytes.TrimSuffix(raw.Bytes(), []byte("\n")))
	return rule, nil
}
