package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseModels(t *testing.T) {
	src := `{"models": {
  "anthropic:claude-sonnet-4-5": {"maxTokens": 32000, "thinking": 8000},
  "openai:gpt-5": {"thinking": "low", "temprature": 1}
}}`
	cfg, warnings, err := Parse("config.json", []byte(src), SourceUser)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]ModelSettings{
		"anthropic:claude-sonnet-4-5": {MaxTokens: 32000, Thinking: "8000"},
		"openai:gpt-5":                {Thinking: "low"},
	}
	if diff := cmp.Diff(want, cfg.Models); diff != "" {
		t.Errorf("Models (-want +got):\n%s", diff)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0].Message, `unknown key "temprature"`) {
		t.Errorf("warnings = %v, want one about the unknown key", warnings)
	}
}

func TestParseModelsErrors(t *testing.T) {
	for src, want := range map[string]string{
		`{"models": []}`:                               `expected an object for "models"`,
		`{"models": {"openai:x": 5}}`:                  `expected an object for model "openai:x"`,
		`{"models": {"openai:x": {"maxTokens": 0}}}`:   `positive whole number of tokens for "maxTokens"`,
		`{"models": {"openai:x": {"maxTokens": 1.5}}}`: `positive whole number of tokens for "maxTokens"`,
		`{"models": {"openai:x": {"thinking": true}}}`: `"thinking" in model "openai:x"`,
	} {
		_, _, err := Parse("config.json", []byte(src), SourceUser)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got error %v, want one containing %q", src, err, want)
		}
	}
}

// A project file cannot set model limits: they are the user's.
func TestParseModelsProjectIgnored(t *testing.T) {
	cfg, warnings, err := Parse(".mcp.json", []byte(`{"models": {"openai:x": {"maxTokens": 5}}}`), SourceProject)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Models != nil || len(warnings) != 1 {
		t.Errorf("Models = %v, warnings = %v; want none and one warning", cfg.Models, warnings)
	}
}
