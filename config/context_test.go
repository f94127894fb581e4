package config

import (
	"slices"
	"strings"
	"testing"
)

// "toolSearch", a server's "alwaysLoad" and a model's "contextWindow" are
// read, and bad values are refused with the fix.
func TestParseContextSettings(t *testing.T) {
	src := `{"toolSearch": "always",
  "models": {"openai-compatible:local": {"contextWindow": 32768}},
  "mcpServers": {"gh": {"command": "gh-mcp", "alwaysLoad": ["create_issue", "search_issues"]}}}`
	cfg, warnings, err := Parse("config.json", []byte(src), SourceUser)
	if err != nil || len(warnings) > 0 {
		t.Fatalf("Parse: %v, warnings %v", err, warnings)
	}
	if cfg.ToolSearch != "always" || cfg.Models["openai-compatible:local"].ContextWindow != 32768 {
		t.Errorf("toolSearch %q, models %+v", cfg.ToolSearch, cfg.Models)
	}
	if s, _ := cfg.Server("gh"); !slices.Equal(s.AlwaysLoad, []string{"create_issue", "search_issues"}) {
		t.Errorf("alwaysLoad %v", s.AlwaysLoad)
	}
	for src, want := range map[string]string{
		`{"toolSearch": "sometimes"}`:                                           `invalid "toolSearch" "sometimes"; expected one of auto, always, never`,
		`{"toolSearch": true}`:                                                  `"toolSearch"`,
		`{"models": {"openai:x": {"contextWindow": 10}}}`:                       `at least 1024, for "contextWindow"`,
		`{"mcpServers": {"gh": {"command": "gh-mcp", "alwaysLoad": "create"}}}`: `"alwaysLoad"`,
	} {
		_, _, err := Parse("config.json", []byte(src), SourceUser)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got error %v, want one containing %q", src, err, want)
		}
	}
	cfg, warnings, err = Parse(".mcp.json", []byte(`{"toolSearch": "never"}`), SourceProject)
	if err != nil || cfg.ToolSearch != "" || len(warnings) != 1 {
		t.Errorf("a project file's toolSearch: %q, %v, %v; want it ignored with a warning", cfg.ToolSearch, warnings, err)
	}
}

// "notify" is read from the person's own config, checked, and ignored in a
// project file.
func TestParseNotify(t *testing.T) {
	for _, v := range NotifyModes {
		cfg, warnings, err := Parse("config.json", []byte(`{"notify": "`+v+`"}`), SourceUser)
		if err != nil || len(warnings) > 0 || cfg.Notify != v {
			t.Errorf("notify %q: got %q, %v, %v", v, cfg.Notify, warnings, err)
		}
	}
	cfg, _, err := Parse("config.json", []byte(`{"notify": null}`), SourceUser)
	if err != nil || cfg.Notify != "" {
		t.Errorf("notify null: got %q, %v; want the default", cfg.Notify, err)
	}
	for src, want := range map[string]string{
		`{"notify": "loud"}`: `config.json:1:12: invalid "notify" "loud"; expected one of bell, desktop, off`,
		`{"notify": false}`:  `"notify"`,
	} {
		_, _, err := Parse("config.json", []byte(src), SourceUser)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got error %v, want one containing %q", src, err, want)
		}
	}
	cfg, warnings, err := Parse(".mcp.json", []byte(`{"notify": "off"}`), SourceProject)
	if err != nil || cfg.Notify != "" || len(warnings) != 1 || !strings.Contains(warnings[0].Message, "only your own config") {
		t.Errorf("a project file's notify: %q, %v, %v; want it ignored with a warning", cfg.Notify, warnings, err)
	}
}
