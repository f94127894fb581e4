package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func noEnv(string) string { return "" }

var tasksEntry = NamedEntry{Name: "tasks", Entry: Entry{Command: "tasks-server", Args: []string{"--db", "x.db"}, Env: map[string]string{"B": "2", "A": "1"}}}

// TestAddServersKeepsTheFile: every byte outside the new member stays as it
// was, and the new member is indented like its neighbours.
func TestAddServersKeepsTheFile(t *testing.T) {
	for _, tc := range []struct {
		name, before, after string
	}{{
		name:   "new file",
		before: "",
		after: `{
  "mcpServers": {
    "tasks": {
      "command": "tasks-server",
      "args": [
        "--db",
        "x.db"
      ],
      "env": {
        "A": "1",
        "B": "2"
      }
    }
  }
}
`,
	}, {
		name:   "after other servers, four spaces, other keys kept in order",
		before: "{\n    \"model\": \"anthropic:x\",\n    \"mcpServers\": {\n        \"a\": {\"command\": \"a\"}\n    },\n    \"permissions\": {\"deny\": [\"*/delete_*\"]}\n}\n",
		after:  "{\n    \"model\": \"anthropic:x\",\n    \"mcpServers\": {\n        \"a\": {\"command\": \"a\"},\n        \"tasks\": {\n            \"command\": \"tasks-server\",\n            \"args\": [\n                \"--db\",\n                \"x.db\"\n            ],\n            \"env\": {\n                \"A\": \"1\",\n                \"B\": \"2\"\n            }\n        }\n    },\n    \"permissions\": {\"deny\": [\"*/delete_*\"]}\n}\n",
	}, {
		name:   "tabs",
		before: "{\n\t\"mcpServers\": {\n\t\t\"a\": {\"command\": \"a\"}\n\t}\n}",
		after:  "{\n\t\"mcpServers\": {\n\t\t\"a\": {\"command\": \"a\"},\n\t\t\"tasks\": {\n\t\t\t\"command\": \"tasks-server\",\n\t\t\t\"args\": [\n\t\t\t\t\"--db\",\n\t\t\t\t\"x.db\"\n\t\t\t],\n\t\t\t\"env\": {\n\t\t\t\t\"A\": \"1\",\n\t\t\t\t\"B\": \"2\"\n\t\t\t}\n\t\t}\n\t}\n}",
	}, {
		name:   "one line stays one line",
		before: `{"mcpServers": {"a": {"command": "a"}}, "model": "m:x"}`,
		after:  `{"mcpServers": {"a": {"command": "a"}, "tasks": {"command": "tasks-server", "args": ["--db", "x.db"], "env": {"A": "1", "B": "2"}}}, "model": "m:x"}`,
	}, {
		name:   "no mcpServers yet",
		before: "{\n  \"model\": \"m:x\"\n}\n",
		after:  "{\n  \"model\": \"m:x\",\n  \"mcpServers\": {\n    \"tasks\": {\n      \"command\": \"tasks-server\",\n      \"args\": [\n        \"--db\",\n        \"x.db\"\n      ],\n      \"env\": {\n        \"A\": \"1\",\n        \"B\": \"2\"\n      }\n    }\n  }\n}\n",
	}, {
		name:   "empty object",
		before: "{}\n",
		after:  "{\n  \"mcpServers\": {\n    \"tasks\": {\n      \"command\": \"tasks-server\",\n      \"args\": [\n        \"--db\",\n        \"x.db\"\n      ],\n      \"env\": {\n        \"A\": \"1\",\n        \"B\": \"2\"\n      }\n    }\n  }\n}\n",
	}, {
		name:   "empty mcpServers",
		before: "{\n  \"mcpServers\": {},\n  \"model\": \"m:x\"\n}\n",
		after:  "{\n  \"mcpServers\": {\n    \"tasks\": {\n      \"command\": \"tasks-server\",\n      \"args\": [\n        \"--db\",\n        \"x.db\"\n      ],\n      \"env\": {\n        \"A\": \"1\",\n        \"B\": \"2\"\n      }\n    }\n  },\n  \"model\": \"m:x\"\n}\n",
	}, {
		name:   "null mcpServers",
		before: "{\"mcpServers\": null}",
		after:  `{"mcpServers": {"tasks": {"command": "tasks-server", "args": ["--db", "x.db"], "env": {"A": "1", "B": "2"}}}}`,
	}, {
		name: "duplicate mcpServers: the last one, which the loader reads",
		before: `{"mcpServers": {"a": {"command": "a"}},
 "mcpServers": {"b": {"command": "b"}}}`,
		after: `{"mcpServers": {"a": {"command": "a"}},
 "mcpServers": {"b": {"command": "b"}, "tasks": {"command": "tasks-server", "args": ["--db", "x.db"], "env": {"A": "1", "B": "2"}}}}`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sub", "config.json")
			if tc.before != "" {
				writeTestFile(t, path, tc.before, 0o640)
			}
			w, err := AddServers(path, SourceUser, []NamedEntry{tasksEntry}, noEnv)
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.after, string(got)); diff != "" {
				t.Errorf("file after add (-want +got):\n%s", diff)
			}
			if w.Created != (tc.before == "") {
				t.Errorf("Created = %v, want %v", w.Created, tc.before == "")
			}
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			wantMode := os.FileMode(0o640)
			if tc.before == "" {
				wantMode = 0o600
			}
			if info.Mode().Perm() != wantMode {
				t.Errorf("mode %v, want %v", info.Mode().Perm(), wantMode)
			}
			assertNoTemps(t, filepath.Dir(path))
			cfg, _, err := Parse(path, got, SourceUser)
			if err != nil {
				t.Fatalf("the result does not load: %v", err)
			}
			if s, ok := cfg.Server("tasks"); !ok || s.Command != "tasks-server" || s.Env["B"] != "2" {
				t.Errorf("loaded tasks = %+v, %v", s, ok)
			}
		})
	}
}

// TestRemoveServerKeepsTheFile: the entry goes with its separator, and
// nothing else changes.
func TestRemoveServerKeepsTheFile(t *testing.T) {
	for _, tc := range []struct {
		name, before, after string
	}{
		{"first", "{\n  \"mcpServers\": {\n    \"x\": {\"command\": \"x\"},\n    \"a\": {\"command\": \"a\"}\n  }\n}\n", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"}\n  }\n}\n"},
		{"last", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"},\n    \"x\": {\"command\": \"x\"}\n  }\n}\n", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"}\n  }\n}\n"},
		{"middle", `{"mcpServers": {"a": {"command": "a"}, "x": {"url": "http://h/"}, "b": {"command": "b"}}}`, `{"mcpServers": {"a": {"command": "a"}, "b": {"command": "b"}}}`},
		{"only", "{\"model\": \"m:x\", \"mcpServers\": {\n  \"x\": {\"command\": \"x\"}\n}}", `{"model": "m:x", "mcpServers": {}}`},
		{"duplicates all go", `{"mcpServers": {"x": {"command": "x"}, "a": {"command": "a"}, "x": {"command": "y"}}}`, `{"mcpServers": {"a": {"command": "a"}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.json")
			writeTestFile(t, path, tc.before, 0o600)
			if _, err := RemoveServer(path, SourceUser, "x", noEnv); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(path)
			if diff := cmp.Diff(tc.after, string(got)); diff != "" {
				t.Errorf("file after remove (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEditRefusals: a file that does not load, a clash, a bad name and an
// entry that would not load are refused, and the file stays byte-identical.
func TestEditRefusals(t *testing.T) {
	const good = "{\n  \"mcpServers\": {\n    \"tasks\": {\"command\": \"t\"}\n  },\n  \"model\": \"m:x\"\n}\n"
	for _, tc := range []struct {
		name, before string
		entry        NamedEntry
		remove       string
		want         string // in the error
	}{
		{name: "syntax error", before: "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"},\n  }\n}\n", entry: tasksEntry, want: "config.json:3:26: trailing comma"},
		{name: "syntax error, remove", before: "{\"mcpServers\": {\"a\": {\"command\": \"a\"}}\n", remove: "a", want: "config.json:1:39: unexpected end of file"},
		{name: "invalid value elsewhere", before: "{\n  \"mcpServers\": {},\n  \"permissions\": {\"autoApprove\": \"all\"}\n}\n", entry: tasksEntry, want: `config.json:3:34: unknown "autoApprove" level "all"`},
		{name: "invalid server already there", before: "{\"mcpServers\": {\"a\": {\"args\": [\"x\"]}}}", entry: tasksEntry, want: `config.json:1:17: server "a" needs "command"`},
		{name: "clash", before: good, entry: NamedEntry{Name: "tasks", Entry: Entry{Command: "other"}}, want: `config.json:3:5: a server named "tasks" is already defined here; remove it first (mcphost mcp remove tasks)`},
		{name: "bad name", before: good, entry: NamedEntry{Name: "my server", Entry: Entry{Command: "x"}}, want: `invalid server name "my server"`},
		{name: "bad url", before: good, entry: NamedEntry{Name: "r", Entry: Entry{Type: "http", URL: "ftp://example.com/"}}, want: `config.json: the new entry would not load: invalid "url" "ftp://example.com/" in server "r": it must start with http:// or https://; the file was not changed`},
		{name: "bad header name", before: good, entry: NamedEntry{Name: "r", Entry: Entry{Type: "http", URL: "https://example.com/", Headers: map[string]string{"X Bad": "1"}}}, want: `invalid header name "X Bad"`},
		{name: "bad env name", before: good, entry: NamedEntry{Name: "r", Entry: Entry{Command: "x", Env: map[string]string{"A=B": "1"}}}, want: `invalid environment variable name "A=B"`},
		{name: "bad reference", before: good, entry: NamedEntry{Name: "r", Entry: Entry{Command: "x", Args: []string{"${oops"}}}, want: `unterminated "${"`},
		{name: "remove unknown", before: good, remove: "nope", want: `no server named "nope" is defined here`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.json")
			writeTestFile(t, path, tc.before, 0o644)
			var err error
			if tc.remove != "" {
				_, err = RemoveServer(path, SourceUser, tc.remove, noEnv)
			} else {
				_, err = AddServers(path, SourceUser, []NamedEntry{tc.entry}, noEnv)
				if cerr := CheckAdd(path, SourceUser, []NamedEntry{tc.entry}, noEnv); cerr == nil || cerr.Error() != err.Error() {
					t.Errorf("CheckAdd = %v, want the error AddServers gives: %v", cerr, err)
				}
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want one containing %q", err, tc.want)
			}
			if _, ok := err.(*Error); !ok {
				t.Errorf("error is %T, want *Error (exit code 2)", err)
			}
			got, _ := os.ReadFile(path)
			if string(got) != tc.before {
				t.Errorf("the file changed:\n%s", got)
			}
			assertNoTemps(t, filepath.Dir(path))
		})
	}
}

// TestAddServersProjectScope: a project file is checked as a project file:
// the entry it gets loads, as a project server.
func TestAddServersProjectScope(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ProjectFile)
	if _, err := AddServers(path, SourceProject, []NamedEntry{tasksEntry}, noEnv); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := Load(LoadOptions{WorkDir: dir, ConfigHome: t.TempDir(), Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := cfg.Server("tasks"); !ok || s.Source != SourceProject {
		t.Errorf("tasks = %+v, %v; want a project server", s, ok)
	}
}

// TestAddServersUnsetVariable: an entry may refer to a variable that is not
// set yet; the file is checked with a stand-in.
func TestAddServersUnsetVariable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	e := NamedEntry{Name: "r", Entry: Entry{Type: "http", URL: "${BASE}/mcp", Headers: map[string]string{"Authorization": "Bearer ${TOKEN}"}}}
	if _, err := AddServers(path, SourceUser, []NamedEntry{e}, noEnv); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if !strings.Contains(string(got), `"url": "${BASE}/mcp"`) {
		t.Errorf("the reference is not written as given:\n%s", got)
	}
}

// TestAddServersThroughSymlink: a config file that is a symbolic link (a
// dotfiles checkout) stays one; its target gets the edit.
func TestAddServersThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "config.json")
	writeTestFile(t, real, `{"mcpServers": {}}`, 0o600)
	link := filepath.Join(dir, "config.json")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	w, err := AddServers(link, SourceUser, []NamedEntry{tasksEntry}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v, %v", fi, err)
	}
	if w.Path != real {
		t.Errorf("written %s, want %s", w.Path, real)
	}
	if names, _, _ := ServerNames(link, SourceUser, noEnv); !cmp.Equal(names, []string{"tasks"}) {
		t.Errorf("names = %v", names)
	}
}

func TestServerNames(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	if names, exists, err := ServerNames(path, SourceUser, noEnv); names != nil || exists || err != nil {
		t.Errorf("missing file: %v %v %v", names, exists, err)
	}
	writeTestFile(t, path, `{"mcpServers": {"zed": {"command": "z"}, "alpha": {"url": "https://a/"}}}`, 0o600)
	names, exists, err := ServerNames(path, SourceUser, noEnv)
	if err != nil || !exists || !cmp.Equal(names, []string{"zed", "alpha"}) {
		t.Errorf("got %v %v %v, want [zed alpha] in file order", names, exists, err)
	}
	writeTestFile(t, path, `{"mcpServers": {"zed": }}`, 0o600)
	if _, _, err := ServerNames(path, SourceUser, noEnv); err == nil || !strings.Contains(err.Error(), "config.json:1:24:") {
		t.Errorf("broken file: %v", err)
	}
}

func writeTestFile(t *testing.T, path, data string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func assertNoTemps(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("a temporary file is left: %s", e.Name())
		}
	}
}

// A one-line entry gets a space after each ':' and ',' between values, and
// none inside a string, escaped quotes and backslashes included.
func TestSpaceOut(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":"x:\"y,z","b":[1,2]}`:               `{"a": "x:\"y,z", "b": [1, 2]}`,
		`{"p":"C:\\dir\\","q":{"r":"s,t"}}`:       `{"p": "C:\\dir\\", "q": {"r": "s,t"}}`,
		`["` + strings.Repeat(`\"`, 40) + `,",1]`: `["` + strings.Repeat(`\"`, 40) + `,", 1]`,
	} {
		if got := spaceOut(in); got != want {
			t.Errorf("spaceOut(%s) = %s, want %s", in, got, want)
		}
	}
}
