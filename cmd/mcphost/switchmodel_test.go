package main

import (
	"io"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/config"
)

// TestSwitcher: /model builds a model as --model does: a missing key is an
// error; the chat's base URL applies to the models of its provider only,
// also after a switch to another, so another provider's requests never go
// to that endpoint; the config's contextWindow for the new model comes
// with it.
func TestSwitcher(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "k"}
	s := &streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard, Getenv: func(k string) string { return env[k] }}
	st := &setup{cfg: &config.Config{Models: map[string]config.ModelSettings{"openai:gpt-test": {ContextWindow: 64000}}}}
	sw := st.switcher(&globalOptions{}, s, "openai-compatible:local", "http://user:pw@127.0.0.1:9/v1")

	if _, err := sw("anthropic:claude-test"); err == nil || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("anthropic without a key: %v, want an error naming ANTHROPIC_API_KEY", err)
	}
	ch, err := sw("openai-compatible:other")
	if err != nil {
		t.Fatal(err)
	}
	if ch.BaseURL != "http://127.0.0.1:9/v1" || ch.Model.Name() != "openai-compatible:other" {
		t.Errorf("same provider: base %q (want the chat's, without its password), model %s", ch.BaseURL, ch.Model.Name())
	}
	ch, err = sw("openai:gpt-test")
	if err != nil {
		t.Fatal(err)
	}
	if ch.BaseURL != "" || ch.ContextWindow != 64000 {
		t.Errorf("another provider: base %q, want the provider's own; window %d, want the config's", ch.BaseURL, ch.ContextWindow)
	}
	if ch, err = sw("openai-compatible:back"); err != nil || ch.BaseURL != "http://127.0.0.1:9/v1" {
		t.Errorf("back to openai-compatible: %v, base %q, want the chat's", err, ch.BaseURL)
	}
	none := (&setup{cfg: &config.Config{}}).switcher(&globalOptions{}, s, "", "")
	if _, err := none("openai-compatible:x"); err == nil || !strings.Contains(err.Error(), "base") {
		t.Errorf("openai-compatible in a chat started without a model: %v, want the base URL asked for", err)
	}
}
