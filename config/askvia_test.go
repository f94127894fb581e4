package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAskViaDefaultT3NeedsAChannelTheHostCannotAnswer(t *testing.T) {
	var none AskVia
	for _, c := range []struct {
		tier, channel string
		want          bool
	}{
		{"T1", ChannelElicitation, true},
		{"T2", ChannelElicitation, true},
		{"T2", ChannelURLElicitation, true},
		{"T3", ChannelElicitation, false},
		{"T3", ChannelURLElicitation, false},
		{"T3", ChannelChat, true},
		{"T3", ChannelApprove, true},
		{"T3", ChannelWeb, true},
		{"T3", "yes", false},
	} {
		if got := none.Allows(c.tier, c.channel); got != c.want {
			t.Errorf("default Allows(%s, %s) = %v, want %v", c.tier, c.channel, got, c.want)
		}
	}
}

func TestParseAskVia(t *testing.T) {
	cfg, _, err := Parse("c.json", []byte(`{"askVia": {"T2": ["chat", "approve", "approve"], "T3": ["chat", "elicitation"]}}`), SourceUser)
	if err != nil {
		t.Fatal(err)
	}
	want := AskVia{"T2": {"chat", "approve"}, "T3": {"chat", "elicitation"}}
	if d := cmp.Diff(want, cfg.AskVia); d != "" {
		t.Errorf("askVia (-want +got):\n%s", d)
	}
	if !cfg.AskVia.Allows("T1", ChannelElicitation) {
		t.Error("a tier the user does not name lost its default channels")
	}
	for data, want := range map[string]string{
		`{"askVia": {"T0": ["chat"]}}`:        `unknown tier "T0"`,
		`{"askVia": {"T3": ["browser"]}}`:     `unknown channel "browser"`,
		`{"askVia": ["chat"]}`:                `expected an object for "askVia"`,
		`{"askVia": {"T3": "chat"}}`:          `array of strings`,
		`{"askVia": {"t3": ["chat", "web"]}}`: `expected one of T1, T2, T3`,
	} {
		if _, _, err := Parse("c.json", []byte(data), SourceUser); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s) = %v, want an error saying %s", data, err, want)
		}
	}
	cfg, warns, err := Parse("/p/.mcp.json", []byte(`{"askVia": {"T3": ["elicitation"]}}`), SourceProject)
	if err != nil || cfg.AskVia != nil || len(warns) != 1 {
		t.Errorf("askVia in a project file: %v, %v, %v; want it ignored with a warning", cfg.AskVia, warns, err)
	}
}

func TestManagedAskViaOnlyNarrows(t *testing.T) {
	m, err := ParseManaged("/m/managed.json", []byte(`{"askVia": {"T2": ["chat", "approve", "web"], "T3": ["approve", "web"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	user := AskVia{"T3": {"chat", "elicitation", "web"}, "T1": {"chat"}}
	eff, src := EffectiveAskVia(user, m)
	want := AskVia{"T1": {"chat"}, "T2": {"chat", "approve", "web"}, "T3": {"web"}}
	if d := cmp.Diff(want, eff); d != "" {
		t.Errorf("effective askVia (-want +got):\n%s", d)
	}
	if src["T1"] != "user" || src["T2"] != "managed" || src["T3"] != "managed" || !strings.HasPrefix(m.Where("askVia"), "/m/managed.json:") {
		t.Errorf("sources %v, want T1 user, T2 and T3 managed with the place", src)
	}
	// A managed channel the user did not allow is not added.
	m2, err := ParseManaged("/m/managed.json", []byte(`{"askVia": {"T3": ["chat", "elicitation"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	eff, src = EffectiveAskVia(nil, m2)
	if d := cmp.Diff([]string{"chat"}, eff["T3"]); d != "" || src["T3"] != "managed" {
		t.Errorf("managed T3 over the default: %v from %s, want just chat, narrowed by the managed file", eff["T3"], src["T3"])
	}
	if eff, src = EffectiveAskVia(nil, nil); eff.Allows("T3", ChannelElicitation) || src["T3"] != "default" {
		t.Errorf("no settings: T3 %v from %s, want the default without the form", eff["T3"], src["T3"])
	}
}

func TestLoadKeepsTheUsersAskVia(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, []byte(`{"askVia": {"T3": ["web"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := Load(LoadOptions{ConfigFile: path, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(AskVia{"T3": {"web"}}, cfg.AskVia); d != "" {
		t.Errorf("loaded askVia (-want +got):\n%s", d)
	}
}
