package config

import (
	"maps"
	"slices"
)

// written keeps, for the values of an entry that read the environment with
// ${...}, those values as the file wrote them: Shown puts them back so that
// no variable's value is shown. Only values that read a variable are kept;
// a field without one is shown as it is.
type written struct {
	args    map[int]string    // by position in Args
	env     map[string]string // by variable name in Env
	headers map[string]string // by header name
	url     *string
	secret  *string // the OAuth client secret
}

// Shown returns s as it may be shown where others than the person can read
// it (serve's initialize instructions, `mcphost servers` and `mcp list`,
// headless messages, telemetry): every value that read the person's
// environment — an argument, an "env" value, the URL, a header value, the
// OAuth client secret — as the file wrote it, ${NAME} and all, so that the
// variable's value never appears. Every other field is as in s, and the
// copy shares no slice or map with s.
//
// Shown hides only what came from the environment: a URL's own query and
// user information, and header values written out in full, are for the
// caller to redact as it always has.
func (s Server) Shown() Server {
	s.Args = slices.Clone(s.Args)
	s.Env = maps.Clone(s.Env)
	s.Headers = maps.Clone(s.Headers)
	s.Vars = slices.Clone(s.Vars)
	s.AlwaysLoad = slices.Clone(s.AlwaysLoad)
	if s.OAuth != nil {
		o := *s.OAuth
		o.Scopes = slices.Clone(o.Scopes)
		s.OAuth = &o
	}
	w := s.written
	s.written = nil
	if w == nil {
		return s
	}
	for i, v := range w.args {
		if i < len(s.Args) {
			s.Args[i] = v
		}
	}
	for k, v := range w.env {
		if _, ok := s.Env[k]; ok {
			s.Env[k] = v
		}
	}
	for k, v := range w.headers {
		if _, ok := s.Headers[k]; ok {
			s.Headers[k] = v
		}
	}
	if w.url != nil {
		s.URL = *w.url
	}
	if w.secret != nil && s.OAuth != nil {
		s.OAuth.ClientSecret = *w.secret
	}
	return s
}

// keep returns s.written, made when it is nil.
func (s *Server) keep() *written {
	if s.written == nil {
		s.written = &written{}
	}
	return s.written
}
