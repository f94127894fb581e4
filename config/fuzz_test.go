package config

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

// FuzzParse checks that Parse never panics, that every error is an *Error
// positioned at a real line and column, and that what it accepts is
// well-formed: sorted valid names, a usable transport, valid rule JSON, and
// nothing a project file may not grant.
func FuzzParse(f *testing.F) {
	for _, s := range []string{exampleConfig, userConfig, projectConfig} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	for _, tt := range parseErrorTests {
		f.Add([]byte(tt.data), false)
	}
	for _, tt := range parseWarningTests {
		f.Add([]byte(tt.data), tt.src == SourceProject)
	}
	for _, tt := range syntaxErrorTests {
		f.Add([]byte(tt.data), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, project bool) {
		src := SourceUser
		if project {
			src = SourceProject
		}
		r, err := parse("f.json", data, src, testEnv)
		for _, w := range r.warnings {
			if w.File != "f.json" || w.Line < 1 || w.Col < 1 {
				t.Errorf("warning without a position: %#v", w)
			}
		}
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is %T, want *Error", err, err)
			}
			if ce.File != "f.json" || ce.Line < 1 || ce.Col < 1 || ce.Msg == "" {
				t.Fatalf("error without a position: %#v", ce)
			}
			if r.cfg != nil {
				t.Fatalf("config returned with error %v", err)
			}
			return
		}
		cfg := r.cfg
		for i, s := range cfg.Servers {
			if i > 0 && cfg.Servers[i-1].Name >= s.Name {
				t.Errorf("servers not sorted and unique: %q, %q", cfg.Servers[i-1].Name, s.Name)
			}
			if !ValidName(s.Name) {
				t.Errorf("invalid name %q accepted", s.Name)
			}
			switch s.Transport {
			case TransportStdio:
				if strings.TrimSpace(s.Command) == "" || s.URL != "" {
					t.Errorf("stdio server %q: command %q, url %q", s.Name, s.Command, s.URL)
				}
			case TransportHTTP, TransportSSE:
				if s.Command != "" {
					t.Errorf("%s server %q has a command", s.Transport, s.Name)
				}
				if why := checkURL(s.URL); why != "" && !(s.Disabled && strings.Contains(s.URL, "${")) {
					t.Errorf("server %q: bad URL %q accepted: %s", s.Name, s.URL, why)
				}
			default:
				t.Errorf("server %q: transport %q", s.Name, s.Transport)
			}
			if s.StartTimeout < 0 || s.CallTimeout < 0 {
				t.Errorf("server %q: timeouts %v, %v", s.Name, s.StartTimeout, s.CallTimeout)
			}
			if !slices.IsSorted(s.Vars) {
				t.Errorf("server %q: Vars not sorted: %q", s.Name, s.Vars)
			}
			if project && (s.Trust || s.Source != SourceProject) {
				t.Errorf("project server %q: trust %v, source %v", s.Name, s.Trust, s.Source)
			}
		}
		for _, rule := range cfg.Rules {
			if !json.Valid(rule.Raw) || rule.Line < 1 || rule.Col < 1 {
				t.Errorf("bad rule %+v", rule)
			}
		}
		if project && (len(cfg.Rules) > 0 || cfg.AutoApprove != "" || cfg.Model != "") {
			t.Errorf("project file granted rules %v, autoApprove %q, model %q", cfg.Rules, cfg.AutoApprove, cfg.Model)
		}
	})
}

// FuzzSplitWords checks that SplitWords never panics and that words it
// returns, written back in single quotes, split into the same words.
func FuzzSplitWords(f *testing.F) {
	for _, tt := range splitWordsTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := SplitWords(s)
		if err != nil {
			return
		}
		var quoted []string
		for _, w := range words {
			quoted = append(quoted, "'"+strings.ReplaceAll(w, "'", `'\''`)+"'")
		}
		again, err := SplitWords(strings.Join(quoted, " "))
		if err != nil {
			t.Fatalf("re-splitting %q: %v", quoted, err)
		}
		if !slices.Equal(words, again) {
			t.Fatalf("SplitWords(%q) = %q, but the quoted form splits into %q", s, words, again)
		}
	})
}
