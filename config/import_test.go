package config

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestImportFilesPerOS(t *testing.T) {
	env := func(vals map[string]string) func(string) string {
		return func(k string) string { return vals[k] }
	}
	for _, tc := range []struct {
		goos   string
		getenv func(string) string
		want   map[string]string // "from scope" → path
	}{
		{goos: "darwin", want: map[string]string{
			"claude-desktop user": "/h/Library/Application Support/Claude/claude_desktop_config.json",
			"claude-code user":    "/h/.claude.json",
			"claude-code local":   "/h/.claude.json",
			"claude-code project": "/p/.mcp.json",
			"cursor user":         "/h/.cursor/mcp.json",
			"cursor project":      "/p/.cursor/mcp.json",
			"vscode user":         "/h/Library/Application Support/Code/User/mcp.json",
			"vscode project":      "/p/.vscode/mcp.json",
			"codex user":          "/h/.codex/config.toml",
			"codex project":       "/p/.codex/config.toml",
		}},
		{goos: "windows", getenv: env(map[string]string{"APPDATA": "/h/AppData/Roaming", "CODEX_HOME": "/c"}), want: map[string]string{
			"claude-desktop user": "/h/AppData/Roaming/Claude/claude_desktop_config.json",
			"vscode user":         "/h/AppData/Roaming/Code/User/mcp.json",
			"codex user":          "/c/config.toml",
		}},
		{goos: "linux", want: map[string]string{
			"claude-desktop user": "/h/.config/Claude/claude_desktop_config.json",
			"vscode user":         "/h/.config/Code/User/mcp.json",
		}},
		{goos: "linux", getenv: env(map[string]string{"XDG_CONFIG_HOME": "/x"}), want: map[string]string{
			"claude-desktop user": "/x/Claude/claude_desktop_config.json",
			"vscode user":         "/x/Code/User/mcp.json",
		}},
	} {
		files := ImportFiles(ImportPlace{Home: "/h", GOOS: tc.goos, WorkDir: "/p", Getenv: tc.getenv}, "")
		got := map[string]string{}
		for _, f := range files {
			got[f.From+" "+f.Scope] = filepath.ToSlash(f.Path)
		}
		for k, want := range tc.want {
			if got[k] != want {
				t.Errorf("%s: %s = %q, want %q", tc.goos, k, got[k], want)
			}
		}
		if len(files) != 10 {
			t.Errorf("%s: %d files, want 10", tc.goos, len(files))
		}
	}
	only := ImportFiles(ImportPlace{Home: "/h", GOOS: "linux"}, FromCursor)
	if len(only) != 1 || only[0].From != FromCursor {
		t.Errorf("--from cursor without a project: %+v", only)
	}
}

// TestReadImport reads one real-shaped file of each host and checks every
// server it converts.
func TestReadImport(t *testing.T) {
	home := t.TempDir()
	work := t.TempDir()
	pl := ImportPlace{Home: home, GOOS: "linux", WorkDir: work}
	type want struct {
		name  string
		entry Entry
		notes []string
		skip  string
	}
	for _, tc := range []struct {
		from, scope, path, file string
		want                    []want
	}{{
		from: FromClaudeDesktop, scope: "user", path: ".config/Claude/claude_desktop_config.json",
		file: `{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"]
    },
    "github": {
      "command": "docker",
      "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_literal${x}"}
    }
  },
  "globalShortcut": "Ctrl+Space"
}`,
		want: []want{
			{name: "filesystem", entry: Entry{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"}}},
			{name: "github", entry: Entry{Command: "docker", Args: []string{"run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"},
				Env: map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_literal$${x}"}}},
		},
	}, {
		from: FromClaudeCode, scope: "user", path: ".claude.json",
		file: `{
  "numStartups": 12,
  "mcpServers": {
    "notion": {"type": "http", "url": "https://mcp.notion.com/mcp"},
    "asana": {"type": "sse", "url": "https://mcp.asana.com/sse", "headers": {"Authorization": "Bearer ${ASANA_TOKEN}"}},
    "context7": {"type": "stdio", "command": "npx", "args": ["-y", "@upstash/context7-mcp"], "env": {}}
  },
  "projects": {
    "` + filepath.ToSlash(work) + `": {
      "allowedTools": ["mcp__local__run"],
      "mcpServers": {"local": {"type": "stdio", "command": "./bin/server", "args": ["--db", "${DB:-dev.db}"], "env": {}}},
      "enabledMcpjsonServers": ["team"]
    },
    "/elsewhere": {"mcpServers": {"other": {"command": "other"}}}
  }
}`,
		want: []want{
			{name: "notion", entry: Entry{Type: "http", URL: "https://mcp.notion.com/mcp"}},
			{name: "asana", entry: Entry{Type: "sse", URL: "https://mcp.asana.com/sse", Headers: map[string]string{"Authorization": "Bearer ${ASANA_TOKEN}"}}},
			{name: "context7", entry: Entry{Command: "npx", Args: []string{"-y", "@upstash/context7-mcp"}}},
		},
	}, {
		from: FromClaudeCode, scope: "local", path: ".claude.json",
		want: []want{
			{name: "local", entry: Entry{Command: "./bin/server", Args: []string{"--db", "${DB:-dev.db}"}}},
		},
	}, {
		from: FromClaudeCode, scope: "project", path: "WORK/.mcp.json",
		file: `{"mcpServers": {"team": {"command": "${HOME}/bin/team-server"}}}`,
		want: []want{
			{name: "team", skip: `its "command" uses ${HOME}, which mcphost cannot resolve (line 1)`},
		},
	}, {
		from: FromCursor, scope: "user", path: ".cursor/mcp.json",
		file: `{
  // Cursor's own file
  "mcpServers": {
    "linear": {"url": "https://mcp.linear.app/sse", "headers": {"Authorization": "Bearer ${env:LINEAR_KEY}"}},
    "local": {"command": "node", "args": ["${userHome}/srv/index.js"], "env": {"ROOT": "${workspaceFolder}"}, "envFile": ".env"},
    "cline-style": {"command": "x", "autoApprove": ["read"], "disabled": true, "trust": true},
  }
}`,
		want: []want{
			{name: "linear", entry: Entry{Type: "http", URL: "https://mcp.linear.app/sse", Headers: map[string]string{"Authorization": "Bearer ${LINEAR_KEY:-}"}}},
			{name: "local", entry: Entry{Command: "node", Args: []string{home + "/srv/index.js"}},
				notes: []string{`"envFile" is not imported: mcphost does not read env files; put the variables in "env"`,
					`env "ROOT" is left out: its value uses ${workspaceFolder}, which mcphost cannot resolve; set it yourself`}},
			{name: "cline-style", entry: Entry{Command: "x", Disabled: true},
				notes: []string{`"autoApprove" is not imported: a server entry cannot approve tools in mcphost; write "permissions" rules if you want them`,
					`"trust" is not imported: trust the server in mcphost yourself (--trust NAME, or "trust": true in your config)`}},
		},
	}, {
		from: FromVSCode, scope: "user", path: ".config/Code/User/mcp.json",
		file: `{
  "inputs": [
    {"type": "promptString", "id": "perplexity-key", "description": "Perplexity API Key", "password": true}
  ],
  "servers": {
    "Perplexity": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "server-perplexity-ask"],
      "env": {"PERPLEXITY_API_KEY": "${input:perplexity-key}", "LEVEL": "${env:LOG_LEVEL}", "N": 3}
    },
    "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"},
    /* a server whose URL needs an input */
    "private": {"type": "http", "url": "https://${input:host}/mcp"},
    "bad name": {"command": "x"}
  }
}`,
		want: []want{
			{name: "Perplexity", entry: Entry{Command: "npx", Args: []string{"-y", "server-perplexity-ask"}, Env: map[string]string{"LEVEL": "${LOG_LEVEL:-}", "N": "3"}},
				notes: []string{`env "PERPLEXITY_API_KEY" is left out: its value uses ${input:perplexity-key}, which mcphost cannot resolve (it is an input VS Code asks for when the server starts); set it yourself`}},
			{name: "github", entry: Entry{Type: "http", URL: "https://api.githubcopilot.com/mcp/"}},
			{name: "private", skip: `its "url" uses ${input:host}, which mcphost cannot resolve (it is an input VS Code asks for when the server starts) (line 14)`},
			{name: "bad name", entry: Entry{Command: "x"}},
		},
	}, {
		from: FromVSCode, scope: "project", path: "WORK/.vscode/mcp.json",
		file: `{"servers": {"py": {"command": "uv", "args": ["run", "${workspaceFolder}/server.py"], "cwd": "${workspaceFolder}"}}}`,
		want: []want{
			{name: "py", entry: Entry{Command: "uv", Args: []string{"run", work + "/server.py"}, Cwd: work}},
		},
	}, {
		from: FromCodex, scope: "user", path: ".codex/config.toml",
		file: `model = "o4"

[mcp_servers.docs]
command = "npx"
args = ["-y", "mcp-server-docs", "--root=${literal}"]
env = { "API_KEY" = "value" }
startup_timeout_sec = 20
tool_timeout_sec = 60.5

[mcp_servers.figma]
url = "https://mcp.figma.com/mcp"
bearer_token_env_var = "FIGMA_OAUTH_TOKEN"
http_headers = { "X-Figma-Region" = "us-east-1" }
env_http_headers = { "X-Team" = "FIGMA_TEAM" }

[mcp_servers.off]
command = "off-server"
enabled = false
enabled_tools = ["a"]

[mcp_servers.broken]
command = 7
`,
		want: []want{
			{name: "docs", entry: Entry{Command: "npx", Args: []string{"-y", "mcp-server-docs", "--root=$${literal}"}, Env: map[string]string{"API_KEY": "value"}, StartTimeout: "20s", CallTimeout: "60.5s"}},
			{name: "figma", entry: Entry{Type: "http", URL: "https://mcp.figma.com/mcp", Headers: map[string]string{"Authorization": "Bearer ${FIGMA_OAUTH_TOKEN}", "X-Figma-Region": "us-east-1", "X-Team": "${FIGMA_TEAM}"}}},
			{name: "off", entry: Entry{Command: "off-server", Disabled: true},
				notes: []string{`enabled_tools and disabled_tools are not imported: write "permissions" rules (deny) if you want to keep tools from running`}},
			{name: "broken", skip: "its table does not read as a Codex server"},
		},
	}} {
		t.Run(tc.from+"/"+tc.scope, func(t *testing.T) {
			path := filepath.Join(home, tc.path)
			if rest, ok := strings.CutPrefix(tc.path, "WORK/"); ok {
				path = filepath.Join(work, rest)
			}
			if tc.file != "" {
				writeTestFile(t, path, tc.file, 0o600)
			}
			var f ImportFile
			for _, c := range ImportFiles(pl, tc.from) {
				if c.Scope == tc.scope {
					f = c
				}
			}
			if f.Path != path {
				t.Fatalf("ImportFiles gives %q for %s %s, want %q", f.Path, tc.from, tc.scope, path)
			}
			got, err := ReadImport(f, pl)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("%d servers, want %d: %+v", len(got), len(tc.want), got)
			}
			for i, w := range tc.want {
				g := got[i]
				if g.Name != w.name || g.From != tc.from || g.File != path || g.Scope != tc.scope {
					t.Errorf("server %d: %s from %s %s (%s), want %s", i, g.Name, g.From, g.Scope, g.File, w.name)
				}
				if w.skip != "" {
					if !strings.HasPrefix(g.Skip, w.skip) {
						t.Errorf("%s: skip %q, want %q", w.name, g.Skip, w.skip)
					}
					continue
				}
				if g.Skip != "" {
					t.Errorf("%s: skipped: %s", w.name, g.Skip)
				}
				if diff := cmp.Diff(w.entry, g.Entry); diff != "" {
					t.Errorf("%s: entry (-want +got):\n%s", w.name, diff)
				}
				if diff := cmp.Diff(w.notes, g.Notes); diff != "" {
					t.Errorf("%s: notes (-want +got):\n%s", w.name, diff)
				}
			}
		})
	}
}

// TestImportNeverTrusts: whatever a source says, an imported entry is not
// trusted, and what the source said is told, not written.
func TestImportNeverTrusts(t *testing.T) {
	home := t.TempDir()
	pl := ImportPlace{Home: home, GOOS: "linux"}
	writeTestFile(t, filepath.Join(home, ".cursor", "mcp.json"), `{"mcpServers": {"t": {"command": "t", "trust": true}}}`, 0o600)
	got, err := ReadImport(ImportFiles(pl, FromCursor)[0], pl)
	if err != nil || len(got) != 1 {
		t.Fatalf("%v %v", got, err)
	}
	if got[0].Entry.Trust {
		t.Fatal("trust was imported")
	}
	if len(got[0].Notes) != 1 || !strings.Contains(got[0].Notes[0], `"trust" is not imported`) {
		t.Errorf("notes = %q, want one saying trust is not imported", got[0].Notes)
	}
}

func TestReadImportErrors(t *testing.T) {
	home := t.TempDir()
	pl := ImportPlace{Home: home, GOOS: "linux"}
	f := ImportFiles(pl, FromClaudeDesktop)[0]
	if _, err := ReadImport(f, pl); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	writeTestFile(t, f.Path, "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"}\n  \n}\n", 0o600)
	if _, err := ReadImport(f, pl); err == nil || !strings.Contains(err.Error(), "claude_desktop_config.json:5:2: unexpected end of file") {
		t.Errorf("broken JSON: %v", err)
	}
	c := ImportFiles(pl, FromCodex)[0]
	writeTestFile(t, c.Path, "[mcp_servers.a]\ncommand = \"a\n", 0o600)
	if _, err := ReadImport(c, pl); err == nil || !strings.Contains(err.Error(), "config.toml:2:") {
		t.Errorf("broken TOML: %v", err)
	}
}

func TestStripJSONC(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a": 1, // x` + "\n" + `}`, `{"a": 1      ` + "\n" + `}`},
		{`{"a": "http://x/*y*/", /* c */ "b": [1, 2,],}`, `{"a": "http://x/*y*/",         "b": [1, 2 ] }`},
		{`{"a": "\"//"}`, `{"a": "\"//"}`},
	} {
		if got := string(stripJSONC([]byte(tc.in))); got != tc.want {
			t.Errorf("stripJSONC(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A JSON-with-comments file that is broken past a comment is reported where
// it breaks, not at the comment: the comments are blanked even in text that
// does not parse. (tailscale/hujson's Standardize returns such text as it
// is, which is why the stripper is mcphost's own.)
func TestImportJSONCErrorPastAComment(t *testing.T) {
	home := t.TempDir()
	pl := ImportPlace{Home: home, GOOS: "linux"}
	f := ImportFiles(pl, FromCursor)[0]
	writeTestFile(t, f.Path, "{\n  // servers\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"}, /* b */\n  \n}\n", 0o600)
	_, err := ReadImport(f, pl)
	if err == nil || !strings.Contains(err.Error(), "mcp.json:6:2: unexpected end of file") {
		t.Errorf("got %v, want mcp.json:6:2: unexpected end of file", err)
	}
}

// Strings past the scanner's short-string fast path keep their "//", "/*"
// and commas, escaped quotes and backslashes included.
func TestStripJSONCLongStrings(t *testing.T) {
	long := strings.Repeat("x", 40)
	for _, tc := range []struct{ in, want string }{
		{`{"a": "` + long + `\"// no, /* no */", // c` + "\n}", `{"a": "` + long + `\"// no, /* no */"      ` + "\n}"},
		{`{"a": "` + long + `\\", "b": "//",}`, `{"a": "` + long + `\\", "b": "//" }`},
		{`{"a": "` + long + `\\\"//,]"}`, `{"a": "` + long + `\\\"//,]"}`},
	} {
		if got := string(stripJSONC([]byte(tc.in))); got != tc.want {
			t.Errorf("stripJSONC(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
