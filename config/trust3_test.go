package config

import (
	"strings"
	"testing"
)

// A project file may list a server but not have its tools offered in full
// past tool search: its "alwaysLoad" is dropped with a warning that says
// so; the person's own config keeps it.
func TestProjectAlwaysLoadIgnored(t *testing.T) {
	src := `{"mcpServers": {"gh": {"command": "gh-mcp", "alwaysLoad": ["create_issue"]}}}`
	cfg, warnings, err := Parse(".mcp.json", []byte(src), SourceProject)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := cfg.Server("gh"); s.AlwaysLoad != nil {
		t.Errorf("a project file's alwaysLoad: got %v, want it ignored", s.AlwaysLoad)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0].Message, `"alwaysLoad" in server "gh" is ignored: a project file cannot`) {
		t.Errorf("warnings %v, want one that says the project's alwaysLoad is ignored", warnings)
	}
	cfg, warnings, err = Parse("config.json", []byte(src), SourceUser)
	if s, _ := cfg.Server("gh"); err != nil || len(warnings) > 0 || len(s.AlwaysLoad) != 1 {
		t.Errorf("the person's own alwaysLoad: %v, warnings %v, err %v; want it kept", s.AlwaysLoad, warnings, err)
	}
}

// "mcphost" names the host's own tools and records: no server may take
// it, from a file or a flag, in any case.
func TestReservedServerName(t *testing.T) {
	for _, name := range []string{"mcphost", "MCPHost"} {
		_, _, err := Parse("config.json", []byte(`{"mcpServers": {"`+name+`": {"command": "x"}}}`), SourceUser)
		if err == nil || !strings.Contains(err.Error(), `server name "`+name+`" is reserved`) || !strings.Contains(err.Error(), "rename the server") {
			t.Errorf("config server %q: got %v, want a reserved-name error with the fix", name, err)
		}
		if _, err := ParseServerFlag(name + "=x"); err == nil || !strings.Contains(err.Error(), "is reserved") {
			t.Errorf("--server %s=x: got %v, want a reserved-name error", name, err)
		}
	}
	for _, name := range []string{"mcphost-tools", "my.mcphost"} {
		if _, err := ParseServerFlag(name + "=x"); err != nil {
			t.Errorf("--server %s=x: %v; only the host's own name is reserved", name, err)
		}
	}
}

// "samplingBudget" is read from the person's own config, defaults when
// absent, refuses what is not a whole number of tokens, and is ignored in
// a project file.
func TestSamplingBudget(t *testing.T) {
	cfg, _, err := Parse("config.json", []byte(`{"samplingBudget": 500}`), SourceUser)
	if err != nil || cfg.SamplingLimit() != 500 {
		t.Fatalf("samplingBudget 500: limit %d, err %v", cfg.SamplingLimit(), err)
	}
	cfg, _, err = Parse("config.json", []byte(`{"samplingBudget": 0}`), SourceUser)
	if err != nil || cfg.SamplingLimit() != 0 {
		t.Fatalf("samplingBudget 0: limit %d, err %v; want 0 (sampling refused)", cfg.SamplingLimit(), err)
	}
	cfg, _, _ = Parse("config.json", []byte(`{}`), SourceUser)
	if cfg.SamplingLimit() != DefaultSamplingBudget {
		t.Errorf("no samplingBudget: limit %d, want the default %d", cfg.SamplingLimit(), DefaultSamplingBudget)
	}
	for _, bad := range []string{`-1`, `"lots"`, `1.5`} {
		if _, _, err := Parse("config.json", []byte(`{"samplingBudget": `+bad+`}`), SourceUser); err == nil || !strings.Contains(err.Error(), `for "samplingBudget"`) {
			t.Errorf("samplingBudget %s: got %v, want an error naming the key", bad, err)
		}
	}
	cfg, warnings, err := Parse(".mcp.json", []byte(`{"samplingBudget": 1000000}`), SourceProject)
	if err != nil || cfg.SamplingBudget != nil || len(warnings) != 1 || !strings.Contains(warnings[0].Message, "ignored in a project file") {
		t.Errorf("a project file's samplingBudget: %v, warnings %v, err %v; want it ignored with a warning", cfg.SamplingBudget, warnings, err)
	}
}
