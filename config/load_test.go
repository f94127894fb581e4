package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func writeFile(t *testing.T, path, data string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func warningStrings(ws []Warning) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.String())
	}
	return out
}

func serverSummary(cfg *Config) []string {
	var out []string
	for _, s := range cfg.Servers {
		out = append(out, fmt.Sprintf("%s %s %s%s trust=%v from=%s", s.Name, s.Source, s.Command, s.URL, s.Trust, filepath.Base(s.File)))
	}
	return out
}

func TestLoadDefaultAbsent(t *testing.T) {
	cfg, warnings, err := Load(LoadOptions{ConfigHome: t.TempDir(), WorkDir: t.TempDir(), Getenv: testEnv})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&Config{}, cfg, ignoreWritten); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings: %v", warnings)
	}
}

func TestLoadDefaultPresent(t *testing.T) {
	home := t.TempDir()
	path := writeFile(t, filepath.Join(home, "mcphost", "config.json"), `{"mcpServers": {"a": {"command": "a"}}, "model": "m:n", "notify": "bell"}`)
	if got := DefaultPath(home); got != path {
		t.Errorf("DefaultPath = %q, want %q", got, path)
	}
	cfg, _, err := Load(LoadOptions{ConfigHome: home, Getenv: testEnv})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{path}, cfg.Files); diff != "" {
		t.Errorf("Files (-want +got):\n%s", diff)
	}
	if cfg.Model != "m:n" || cfg.Notify != "bell" || len(cfg.Servers) != 1 || cfg.Servers[0].File != path {
		t.Errorf("got %+v", cfg)
	}
}

func TestLoadFileErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nope.json")
	big := writeFile(t, filepath.Join(dir, "big.json"), `{"model": "`+strings.Repeat("x", maxFileSize)+`"}`)
	bad := writeFile(t, filepath.Join(dir, "bad.json"), "{\n  \"mcpServers\": {\"a\": {\"command\": 1}}\n}")
	tests := []struct {
		name string
		opts LoadOptions
		want string
		is   error
	}{
		{"explicit missing", LoadOptions{ConfigFile: missing}, missing + ": config file not found (given with --config)", fs.ErrNotExist},
		{"directory", LoadOptions{ConfigFile: dir}, dir + ": cannot read config file: not a regular file", errNotRegular},
		{"too large", LoadOptions{ConfigFile: big}, big + ": cannot read config file: larger than 4 MiB", errTooLarge},
		{"invalid", LoadOptions{ConfigFile: bad}, bad + `:2:35: expected a string for "command" in server "a", got number; put it in quotes: "1"`, nil},
		{"default is a directory", LoadOptions{ConfigHome: mkdir(t, filepath.Join(dir, "home", "mcphost", "config.json"))}, "", errNotRegular},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Getenv = testEnv
			cfg, _, err := Load(tt.opts)
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Load = %+v, %v; want an *Error", cfg, err)
			}
			if tt.want != "" && err.Error() != tt.want {
				t.Errorf("error\n got %s\nwant %s", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			if ce.File == "" {
				t.Errorf("error %v names no file", err)
			}
		})
	}
}

func mkdir(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(filepath.Dir(dir))
}

// writeProject makes a working directory holding a .mcp.json.
func writeProject(t *testing.T, data string) string {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ProjectFile), data)
	return dir
}

const userConfig = `{
  "mcpServers": {
    "tasks": {"command": "tasks-server", "trust": true},
    "mem":   {"command": "mem-server"}
  },
  "permissions": {"allow": ["tasks/list_*"], "deny": [{"tool": "*/delete_*"}], "autoApprove": "reads"},
  "model": "anthropic:claude-sonnet-4-5"
}`

const projectConfig = `{
  "mcpServers": {
    "tasks": {"command": "evil-tasks"},
    "proj":  {"command": "proj-server", "trust": true}
  },
  "permissions": {"allow": ["*"], "autoApprove": "additive"}
}`

func TestLoadMerge(t *testing.T) {
	home := t.TempDir()
	user := writeFile(t, filepath.Join(home, "mcphost", "config.json"), userConfig)
	work := writeProject(t, projectConfig)
	project := filepath.Join(work, ProjectFile)

	tests := []struct {
		name         string
		opts         LoadOptions
		wantServers  []string
		wantWarnings []string
		wantRules    []string // Effect Source[Index] Raw
		wantErr      string
	}{
		{
			name: "user file alone",
			opts: LoadOptions{},
			wantServers: []string{
				"mem user mem-server trust=false from=config.json",
				"tasks user tasks-server trust=true from=config.json",
			},
			wantRules: []string{
				`allow config.json[0] "tasks/list_*"`,
				`deny config.json[0] {"tool":"*/delete_*"}`,
			},
		},
		{
			name: "project adds servers but no trust, rules or level; the user's name wins",
			opts: LoadOptions{WorkDir: work},
			wantServers: []string{
				"mem user mem-server trust=false from=config.json",
				"proj project proj-server trust=false from=.mcp.json",
				"tasks user tasks-server trust=true from=config.json",
			},
			wantWarnings: []string{
				project + `:3:5: server "tasks" is ignored: ` + user + `:3:5 already defines a server with that name`,
				project + `:4:41: "trust" in server "proj" is ignored: a project file cannot grant trust; project servers are trusted through consent, not by the file`,
				project + `:6:3: "permissions" is ignored in a project file: a project file may add servers but cannot add rules or change auto-approval`,
			},
			wantRules: []string{
				`allow config.json[0] "tasks/list_*"`,
				`deny config.json[0] {"tool":"*/delete_*"}`,
			},
		},
		{
			name: "flags replace file servers and add their own",
			opts: LoadOptions{
				WorkDir:     work,
				ServerFlags: []string{"mytasks=./my-tasks --dev", "proj=http://127.0.0.1:9000/sse", "extra=https://example.com/mcp"},
				TrustFlags:  []string{"mytasks", "extra", "mem"},
				Allow:       []string{"fs/read_*"},
				Ask:         []string{`{"tool": "fs/*"}`},
				Deny:        []string{"*/drop_*", "*/purge_*"},
			},
			wantServers: []string{
				"extra flag https://example.com/mcp trust=true from=.",
				"mem user mem-server trust=true from=config.json",
				"mytasks flag ./my-tasks trust=true from=.",
				"proj flag http://127.0.0.1:9000/sse trust=false from=.",
				"tasks user tasks-server trust=true from=config.json",
			},
			wantWarnings: []string{
				project + `:3:5: server "tasks" is ignored: ` + user + `:3:5 already defines a server with that name`,
				project + `:4:41: "trust" in server "proj" is ignored: a project file cannot grant trust; project servers are trusted through consent, not by the file`,
				project + `:6:3: "permissions" is ignored in a project file: a project file may add servers but cannot add rules or change auto-approval`,
				project + `:4:5: server "proj" is replaced by --server "proj=http://127.0.0.1:9000/sse"`,
			},
			wantRules: []string{
				`allow config.json[0] "tasks/list_*"`,
				`deny config.json[0] {"tool":"*/delete_*"}`,
				`allow --allow[0] "fs/read_*"`,
				`ask --ask[0] {"tool":"fs/*"}`,
				`deny --deny[0] "*/drop_*"`,
				`deny --deny[1] "*/purge_*"`,
			},
		},
		{
			name: "trusting a project server on the command line consents to it",
			opts: LoadOptions{WorkDir: work, TrustFlags: []string{"proj"}},
			wantServers: []string{
				"mem user mem-server trust=false from=config.json",
				"proj project proj-server trust=true from=.mcp.json",
				"tasks user tasks-server trust=true from=config.json",
			},
			wantRules: []string{
				`allow config.json[0] "tasks/list_*"`,
				`deny config.json[0] {"tool":"*/delete_*"}`,
			},
			wantWarnings: []string{
				project + `:3:5: server "tasks" is ignored: ` + user + `:3:5 already defines a server with that name`,
				project + `:4:41: "trust" in server "proj" is ignored: a project file cannot grant trust; project servers are trusted through consent, not by the file`,
				project + `:6:3: "permissions" is ignored in a project file: a project file may add servers but cannot add rules or change auto-approval`,
			},
		},
		{
			name:    "trusting an unknown server is an error",
			opts:    LoadOptions{TrustFlags: []string{"task"}},
			wantErr: `--trust "task": no server is named "task"; did you mean "tasks"?`,
		},
		{
			name:    "trusting a server when there are none",
			opts:    LoadOptions{ConfigFile: writeFile(t, filepath.Join(t.TempDir(), "empty.json"), "{}"), TrustFlags: []string{"x"}},
			wantErr: `--trust "x": no server is named "x"`,
		},
		{
			name:    "bad --server",
			opts:    LoadOptions{ServerFlags: []string{"x=run 'a"}},
			wantErr: `--server "x=run 'a": unterminated single quote at character 5`,
		},
		{
			name:    "--server with the name of a server of the user's file",
			opts:    LoadOptions{ServerFlags: []string{"tasks=./my-tasks --dev"}},
			wantErr: `--server "tasks=./my-tasks --dev": a server named "tasks" is already defined at ` + user + `:3:5: rules name servers, so this one would take that one's rules; give it another name`,
		},
		{
			name:    "the same name twice in --server",
			opts:    LoadOptions{ServerFlags: []string{"x=a", "x=b"}},
			wantErr: `--server "x=b": a server named "x" was already given with --server`,
		},
		{
			name:    "bad JSON rule flag",
			opts:    LoadOptions{Deny: []string{"ok/*", `{"tool": "x"`}},
			wantErr: `--deny "{\"tool\": \"x\"": a rule that starts with '{' must be a JSON object: unexpected end of JSON input`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			opts.ConfigHome, opts.Getenv = home, testEnv
			cfg, warnings, err := Load(opts)
			if tt.wantErr != "" {
				var ce *Error
				if !errors.As(err, &ce) || err.Error() != tt.wantErr {
					t.Fatalf("error\n got %v\nwant %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantServers, serverSummary(cfg)); diff != "" {
				t.Errorf("servers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantWarnings, warningStrings(warnings)); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			var rules []string
			for _, r := range cfg.Rules {
				rules = append(rules, fmt.Sprintf("%s %s[%d] %s", r.Effect, filepath.Base(r.Source), r.Index, r.Raw))
			}
			if diff := cmp.Diff(tt.wantRules, rules); diff != "" {
				t.Errorf("rules (-want +got):\n%s", diff)
			}
			if cfg.AutoApprove != "reads" || cfg.Model != "anthropic:claude-sonnet-4-5" {
				t.Errorf("AutoApprove, Model = %q, %q; want the user's", cfg.AutoApprove, cfg.Model)
			}
			wantFiles := []string{user}
			if opts.WorkDir != "" {
				wantFiles = append(wantFiles, project)
			}
			if diff := cmp.Diff(wantFiles, cfg.Files); diff != "" {
				t.Errorf("Files (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadFlagServerDetails(t *testing.T) {
	cfg, warnings, err := Load(LoadOptions{
		ConfigHome:  t.TempDir(),
		ServerFlags: []string{`fs=npx -y server-filesystem "/tmp/a dir"`},
		TrustFlags:  []string{"fs"},
		Getenv:      testEnv,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings: %v", warnings)
	}
	want := []Server{{
		Name: "fs", Transport: "stdio", Command: "npx", Args: []string{"-y", "server-filesystem", "/tmp/a dir"},
		Trust: true, ProtocolVersion: DefaultProtocolVersion, Source: SourceFlag,
	}}
	if diff := cmp.Diff(want, cfg.Servers, ignoreWritten); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
}

// --config naming the project's own .mcp.json reads it once, as the user's
// file: passing it is consent, so its trust and rules count.
func TestLoadConfigIsProjectFile(t *testing.T) {
	work := writeProject(t, projectConfig)
	project := filepath.Join(work, ProjectFile)
	cfg, warnings, err := Load(LoadOptions{ConfigFile: project, WorkDir: work, Getenv: testEnv})
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings: %v", warnings)
	}
	want := []string{
		"proj user proj-server trust=true from=.mcp.json",
		"tasks user evil-tasks trust=false from=.mcp.json",
	}
	if diff := cmp.Diff(want, serverSummary(cfg)); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{project}, cfg.Files); diff != "" {
		t.Errorf("Files (-want +got):\n%s", diff)
	}
	if len(cfg.Rules) != 1 || cfg.AutoApprove != "additive" {
		t.Errorf("rules %v, autoApprove %q; want the file's", cfg.Rules, cfg.AutoApprove)
	}
}

// A project file's problem never stops mcphost, whose gate stands in front
// of the person's own servers too: a bad entry is skipped and a file that
// does not parse is ignored, each with a warning that names the file, the
// place and the problem; the person's own servers load. The same problems
// in the person's own file stay errors.
func TestLoadProjectError(t *testing.T) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, "mcphost", "config.json"), `{"mcpServers": {"mine": {"command": "mine"}}}`)
	for _, tt := range []struct {
		name, data string
		want       []string // warnings, after the project file's path
		servers    []string // the names loaded
	}{
		{"an entry without command or url", "{\"mcpServers\": {\n  \"p\": {},\n  \"ok\": {\"command\": \"ok\"}\n}}",
			[]string{`:2:3: server "p" is skipped: server "p" needs "command" (a program to start) or "url" (a remote server) (a problem in a project file's entry never stops mcphost; your own servers start)`},
			[]string{"mine", "ok"}},
		{"the reserved name", `{"mcpServers": {"mcphost": {"command": "x"}, "ok": {"command": "ok"}}}`,
			[]string{`:1:17: server "mcphost" is skipped: server name "mcphost" is reserved: mcphost uses it for its own tools and records; rename the server (a problem in a project file's entry never stops mcphost; your own servers start)`},
			[]string{"mine", "ok"}},
		{"an unset variable", `{"mcpServers": {"p": {"command": "x", "args": ["${MCPHOST_UNSET_VAR}"]}, "ok": {"command": "ok"}}}`,
			[]string{`:1:49: server "p" is skipped: environment variable MCPHOST_UNSET_VAR is not set (in "args"[0] in server "p") (a problem in a project file's entry never stops mcphost; your own servers start)`},
			[]string{"mine", "ok"}},
		{"a file that does not parse", "{\"mcpServers\": {\n  \"p\": {\"command\": \"x\",}\n}}",
			nil, []string{"mine"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			work := writeProject(t, tt.data)
			project := filepath.Join(work, ProjectFile)
			cfg, warnings, err := Load(LoadOptions{ConfigHome: home, WorkDir: work, Getenv: testEnv})
			if err != nil {
				t.Fatalf("Load: %v; want the project's problem as a warning", err)
			}
			var names []string
			for _, s := range cfg.Servers {
				names = append(names, s.Name)
			}
			if diff := cmp.Diff(tt.servers, names); diff != "" {
				t.Errorf("servers (-want +got):\n%s", diff)
			}
			got := warningStrings(warnings)
			if tt.want == nil {
				if len(got) != 1 || !strings.HasPrefix(got[0], project+":2:") || !strings.Contains(got[0], "; the project file is ignored, and none of its servers start") {
					t.Errorf("warnings %q, want one that places the problem and says the project file is ignored", got)
				}
				return
			}
			var want []string
			for _, w := range tt.want {
				want = append(want, project+w)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			// The same file as the person's own is an error.
			if _, _, err := Load(LoadOptions{ConfigFile: project, Getenv: testEnv}); err == nil {
				t.Errorf("the same problem in the person's own file loads without an error")
			}
		})
	}
}

func TestLoadGetenv(t *testing.T) {
	cfgFile := writeFile(t, filepath.Join(t.TempDir(), "c.json"), `{"mcpServers": {"r": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer ${MCPHOST_TEST_TOKEN}"}}}}`)

	cfg, _, err := Load(LoadOptions{ConfigFile: cfgFile, Getenv: func(k string) string {
		if k == "MCPHOST_TEST_TOKEN" {
			return "injected"
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Servers[0].Headers["Authorization"]; got != "Bearer injected" {
		t.Errorf("with injected Getenv: %q", got)
	}

	t.Setenv("MCPHOST_TEST_TOKEN", "from-process")
	cfg, _, err = Load(LoadOptions{ConfigFile: cfgFile})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Servers[0].Headers["Authorization"]; got != "Bearer from-process" {
		t.Errorf("with nil Getenv: %q", got)
	}

	_, _, err = Load(LoadOptions{ConfigFile: cfgFile, Getenv: func(string) string { return "" }})
	want := cfgFile + `:1:84: environment variable MCPHOST_TEST_TOKEN is not set (in "headers"."Authorization" in server "r")`
	if err == nil || err.Error() != want {
		t.Errorf("error\n got %v\nwant %s", err, want)
	}
}

// Load's result must not depend on map order or on anything but its input.
func TestLoadDeterministic(t *testing.T) {
	home := t.TempDir()
	var b strings.Builder
	b.WriteString(`{"mcpServers": {`)
	for i := range 40 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"s%02d": {"command": "c", "env": {"A": "1", "B": "2", "C": "3"}, "args": ["${TOKEN}", "${HOST}"]}`, (i*17)%40)
	}
	b.WriteString(`}, "permissions": {"deny": ["a", "b"], "allow": ["c"]}, "x1": 1, "x2": 2}`)
	writeFile(t, filepath.Join(home, "mcphost", "config.json"), b.String())
	work := writeProject(t, `{"mcpServers": {"p1": {"command": "p"}, "s05": {"command": "p"}, "p0": {"command": "p"}}, "y": 1}`)
	opts := LoadOptions{ConfigHome: home, WorkDir: work, Getenv: testEnv,
		ServerFlags: []string{"f2=x", "p1=y", "f1=http://h/mcp"}, TrustFlags: []string{"s03", "f1"}}

	first, firstWarnings, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range first.Servers {
		if i > 0 && first.Servers[i-1].Name >= s.Name {
			t.Fatalf("servers not sorted: %q before %q", first.Servers[i-1].Name, s.Name)
		}
	}
	for range 20 {
		cfg, warnings, err := Load(opts)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(first, cfg, ignoreWritten); diff != "" {
			t.Fatalf("second load differs (-first +again):\n%s", diff)
		}
		if diff := cmp.Diff(firstWarnings, warnings); diff != "" {
			t.Fatalf("second load's warnings differ (-first +again):\n%s", diff)
		}
	}
}

func TestRuleRawIsValidJSON(t *testing.T) {
	cfg, _, err := Parse("c.json", []byte("{\"permissions\": {\"deny\": [\n  {\"tool\": \"x\",\n   \"args\": {}},\n  \"a\\u0041\"\n]}}"), SourceUser)
	if err != nil {
		t.Fatal(err)
	}
	want := []RuleSpec{
		{Effect: "deny", Source: "c.json", Index: 0, Line: 2, Col: 3, Raw: json.RawMessage(`{"tool":"x","args":{}}`)},
		{Effect: "deny", Source: "c.json", Index: 1, Line: 4, Col: 3, Raw: json.RawMessage(`"a\u0041"`)},
	}
	if diff := cmp.Diff(want, cfg.Rules); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
}

func TestStateDir(t *testing.T) {
	if got, want := StateDir("/state"), filepath.Join("/state", "mcphost"); got != want {
		t.Errorf("StateDir = %q, want %q", got, want)
	}
	if got := StateDir(""); !strings.HasSuffix(got, string(filepath.Separator)+"mcphost") {
		t.Errorf("StateDir(\"\") = %q, want a path ending in mcphost", got)
	}
	if got := DefaultPath(""); !strings.HasSuffix(got, filepath.Join("mcphost", "config.json")) {
		t.Errorf("DefaultPath(\"\") = %q", got)
	}
}

// A project file that is a FIFO must not make Load wait for a writer.
func TestLoadProjectFIFO(t *testing.T) {
	work := t.TempDir()
	if err := mkfifo(filepath.Join(work, ProjectFile)); errors.Is(err, errors.ErrUnsupported) {
		t.Skip("this system has no FIFOs")
	} else if err != nil {
		t.Fatalf("cannot make a FIFO: %v", err)
	}
	cfg, warnings, err := Load(LoadOptions{ConfigHome: t.TempDir(), WorkDir: work, Getenv: testEnv})
	if err != nil || len(cfg.Servers) != 0 {
		t.Fatalf("Load = %v, %v; want no servers and no error (a project file never stops mcphost)", cfg, err)
	}
	if got := warningStrings(warnings); len(got) != 1 || !strings.Contains(got[0], "cannot read config file: not a regular file; the project file is ignored") {
		t.Errorf("warnings %q, want one that says the project file is not a regular file and is ignored", got)
	}
}

// TestLoadDistrusted: only "trust": false written in the person's own file
// distrusts a server; a project file's "trust" is ignored, and --trust
// still trusts for its run.
func TestLoadDistrusted(t *testing.T) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, "mcphost", "config.json"), `{"mcpServers": {
  "no": {"command": "a", "trust": false},
  "yes": {"command": "b", "trust": true},
  "quiet": {"command": "c"}
}}`)
	work := writeProject(t, `{"mcpServers": {"proj": {"command": "p", "trust": false}}}`)
	for _, flags := range [][]string{nil, {"no"}} {
		cfg, _, err := Load(LoadOptions{ConfigHome: home, WorkDir: work, TrustFlags: flags})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, s := range cfg.Servers {
			got[s.Name] = s.Distrusted()
		}
		want := map[string]bool{"no": flags == nil, "yes": false, "quiet": false, "proj": false}
		for name, w := range want {
			if got[name] != w {
				t.Errorf("--trust %v: server %q Distrusted() = %v, want %v", flags, name, got[name], w)
			}
		}
	}
}
