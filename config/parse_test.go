package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// testEnv is the environment the parse tests see.
func testEnv(name string) string {
	return map[string]string{
		"TOKEN": "t0k",
		"HOST":  "example.com",
		"NL":    "a\nb",
		"EMPTY": "",
	}[name]
}

const exampleConfig = `{
  "mcpServers": {
    "tasks":  {"command": "tasks-server", "args": ["--db", "x.db"], "env": {"K": "v"}, "cwd": "/srv", "trust": true},
    "remote": {"type": "http", "url": "https://example.com/mcp", "headers": {"X-Team": "a"}},
    "legacy": {"type": "sse", "url": "http://127.0.0.1:9000/sse"}
  },
  "permissions": {"autoApprove": "additive", "allow": ["tasks/list_*"], "ask": [], "deny": ["*/delete_*", {"tool": "fs/write_file", "args": {"path": {"prefix": "/etc/"}}}]},
  "model": "anthropic:claude-sonnet-4-5"
}
`

func TestParseExample(t *testing.T) {
	cfg, warnings, err := Parse("config.json", []byte(exampleConfig), SourceUser)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings: %v", warnings)
	}
	want := &Config{
		Servers: []Server{
			{
				Name: "legacy", Transport: "sse", URL: "http://127.0.0.1:9000/sse",
				ProtocolVersion: "2025-11-25", Source: SourceUser, File: "config.json",
			},
			{
				Name: "remote", Transport: "http", URL: "https://example.com/mcp", Headers: map[string]string{"X-Team": "a"},
				ProtocolVersion: "2025-11-25", Source: SourceUser, File: "config.json",
			},
			{
				Name: "tasks", Transport: "stdio", Command: "tasks-server", Args: []string{"--db", "x.db"},
				Env: map[string]string{"K": "v"}, Cwd: "/srv", Trust: true,
				ProtocolVersion: "2025-11-25", Source: SourceUser, File: "config.json",
			},
		},
		Rules: []RuleSpec{
			{Effect: "allow", Source: "config.json", Index: 0, Line: 7, Col: 56, Raw: json.RawMessage(`"tasks/list_*"`)},
			{Effect: "deny", Source: "config.json", Index: 0, Line: 7, Col: 93, Raw: json.RawMessage(`"*/delete_*"`)},
			{Effect: "deny", Source: "config.json", Index: 1, Line: 7, Col: 107, Raw: json.RawMessage(`{"tool":"fs/write_file","args":{"path":{"prefix":"/etc/"}}}`)},
		},
		AutoApprove: "additive",
		Model:       "anthropic:claude-sonnet-4-5",
		Files:       []string{"config.json"},
	}
	if diff := cmp.Diff(want, cfg, ignoreWritten); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
}

func TestParseDetails(t *testing.T) {
	base := Server{ProtocolVersion: DefaultProtocolVersion, Source: SourceUser, File: "c.json"}
	with := func(f func(*Server)) Server {
		s := base
		f(&s)
		return s
	}
	tests := []struct {
		name string
		data string
		want []Server
	}{
		{
			name: "type aliases, timeouts, protocol version, disabled",
			data: `{"mcpServers": {
				"a": {"type": "streamable-http", "url": "https://h/mcp", "startTimeout": "1m", "callTimeout": "1.5s", "protocolVersion": "2025-06-18"},
				"b": {"type": "streamableHttp", "url": "http://h/mcp", "disabled": true},
				"c": {"type": "STDIO", "command": "c"},
				"d": {"url": "http://h/sse"}
			}}`,
			want: []Server{
				with(func(s *Server) {
					s.Name, s.Transport, s.URL = "a", "http", "https://h/mcp"
					s.StartTimeout, s.CallTimeout, s.ProtocolVersion = time.Minute, 1500*time.Millisecond, "2025-06-18"
				}),
				with(func(s *Server) { s.Name, s.Transport, s.URL, s.Disabled = "b", "http", "http://h/mcp", true }),
				with(func(s *Server) { s.Name, s.Transport, s.Command = "c", "stdio", "c" }),
				// Without "type" a URL means streamable HTTP, whatever its path.
				with(func(s *Server) { s.Name, s.Transport, s.URL = "d", "http", "http://h/sse" }),
			},
		},
		{
			name: "null is the same as absent; empty lists and maps are nil",
			data: `{"mcpServers": {"a": {"command": "x", "args": [], "env": {}, "headers": null, "type": null, "trust": null}}, "permissions": null, "model": null}`,
			want: []Server{with(func(s *Server) { s.Name, s.Transport, s.Command = "a", "stdio", "x" })},
		},
		{
			name: "servers come out sorted by name",
			data: `{"mcpServers": {"b": {"command": "b"}, "A": {"command": "A"}, "a.1": {"command": "a"}, "a-1": {"command": "a"}, "_": {"command": "_"}}}`,
			want: []Server{
				with(func(s *Server) { s.Name, s.Transport, s.Command = "A", "stdio", "A" }),
				with(func(s *Server) { s.Name, s.Transport, s.Command = "_", "stdio", "_" }),
				with(func(s *Server) { s.Name, s.Transport, s.Command = "a-1", "stdio", "a" }),
				with(func(s *Server) { s.Name, s.Transport, s.Command = "a.1", "stdio", "a" }),
				with(func(s *Server) { s.Name, s.Transport, s.Command = "b", "stdio", "b" }),
			},
		},
		{
			name: "expansion in args, env, url and headers",
			data: `{"mcpServers": {
				"r": {"url": "https://${HOST}/mcp?x=${MISSING:-1}", "headers": {"Authorization": "Bearer ${TOKEN}", "X-Literal": "$TOKEN $${TOKEN}"}},
				"s": {"command": "${TOKEN}", "args": ["--token=${TOKEN}", "${EMPTY:-dflt}", "${MISSING:-}", "$HOME", "$(id)"], "env": {"T": "${TOKEN}${TOKEN}"}, "cwd": "${HOST}"}
			}}`,
			want: []Server{
				with(func(s *Server) {
					s.Name, s.Transport, s.URL = "r", "http", "https://example.com/mcp?x=1"
					s.Headers = map[string]string{"Authorization": "Bearer t0k", "X-Literal": "$TOKEN ${TOKEN}"}
					s.Vars = []string{"HOST", "MISSING", "TOKEN"}
				}),
				with(func(s *Server) {
					s.Name, s.Transport, s.Command, s.Cwd = "s", "stdio", "${TOKEN}", "${HOST}"
					s.Args = []string{"--token=t0k", "dflt", "", "$HOME", "$(id)"}
					s.Env = map[string]string{"T": "t0kt0k"}
					s.Vars = []string{"EMPTY", "MISSING", "TOKEN"}
				}),
			},
		},
		{
			name: "a disabled server keeps unset references instead of failing",
			data: `{"mcpServers": {"off": {"url": "https://${NOPE}/mcp", "headers": {"A": "${TOKEN} ${NOPE}"}, "disabled": true}}}`,
			want: []Server{with(func(s *Server) {
				s.Name, s.Transport, s.URL, s.Disabled = "off", "http", "https://${NOPE}/mcp", true
				s.Headers = map[string]string{"A": "t0k ${NOPE}"}
				s.Vars = []string{"NOPE", "TOKEN"}
			})},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := parse("c.json", []byte(tt.data), SourceUser, testEnv)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, r.cfg.Servers, ignoreWritten); diff != "" {
				t.Errorf("servers (-want +got):\n%s", diff)
			}
		})
	}
}

// srv wraps a server body in a config; the body starts at column 22.
func srv(body string) string { return `{"mcpServers": {"a": ` + body + `}}` }

var parseErrorTests = []struct {
	name string
	data string
	want string
}{
	// Syntax errors carry the file name too.
	{"syntax", "{\n  \"mcpServers\": {},\n}", `c.json:2:19: trailing comma before "}"; remove it`},
	{"top-level array", "[]", "c.json:1:1: expected a JSON object at the top level, got array"},
	{"mcpServers array", `{"mcpServers": []}`, `c.json:1:16: expected an object for "mcpServers", got array; it maps names to servers: {"name": {"command": "..."}}`},
	{"server not an object", srv(`"x"`), `c.json:1:22: expected an object for server "a", got string`},
	{"server null", srv(`null`), `c.json:1:22: expected an object for server "a", got null`},
	{"invalid name", "{\"mcpServers\": {\n\t\"my server\": {\"command\": \"x\"}}}", `c.json:2:2: invalid server name "my server": use letters, digits, '-', '_' and '.', at most 64 characters`},
	{"slash in name", `{"mcpServers": {"a/b": {"command": "x"}}}`, `c.json:1:17: invalid server name "a/b": use letters, digits, '-', '_' and '.', at most 64 characters`},
	{"empty name", `{"mcpServers": {"": {"command": "x"}}}`, `c.json:1:17: invalid server name "": use letters, digits, '-', '_' and '.', at most 64 characters`},
	{"long name", `{"mcpServers": {"` + strings.Repeat("n", 65) + `": {"command": "x"}}}`, `c.json:1:17: invalid server name "` + strings.Repeat("n", 65) + `": use letters, digits, '-', '_' and '.', at most 64 characters`},
	{"neither command nor url", "{\"mcpServers\": {\r\n  \"a\": {\"args\": []}\r\n}}", `c.json:2:3: server "a" needs "command" (a program to start) or "url" (a remote server)`},
	{"both command and url", "{\"mcpServers\": {\"a\": {\"command\": \"x\",\n   \"url\": \"http://h\"}}}", `c.json:2:4: server "a" has both "command" and "url"; keep one`},
	{"unknown type", srv(`{"type": "websocket", "url": "http://h"}`), `c.json:1:31: unknown "type" "websocket" in server "a"; use "stdio", "http" or "sse"`},
	{"stdio without command", srv(`{"type": "stdio", "url": "http://h"}`), `c.json:1:31: server "a" has "type": "stdio" but no "command"`},
	{"http without url", srv(`{"type": "http", "command": "x"}`), `c.json:1:31: server "a" has "type": "http" but no "url"; a http server is reached by URL`},
	{"sse without url", srv(`{"command": "x", "type": "sse"}`), `c.json:1:47: server "a" has "type": "sse" but no "url"; a sse server is reached by URL`},
	{"ftp url", srv(`{"url": "ftp://h/x"}`), `c.json:1:30: invalid "url" "ftp://h/x" in server "a": it must start with http:// or https://`},
	{"relative url", srv(`{"url": "localhost:8080/mcp"}`), `c.json:1:30: invalid "url" "localhost:8080/mcp" in server "a": it must start with http:// or https://`},
	{"url without host", srv(`{"url": "http:///mcp"}`), `c.json:1:30: invalid "url" "http:///mcp" in server "a": it has no host`},
	{"unparsable url", srv(`{"url": "http://a b/"}`), `c.json:1:30: invalid "url" "http://a b/" in server "a": invalid character " " in host name`},
	{"expanded url checked", srv(`{"url": "${HOST}/mcp"}`), `c.json:1:30: invalid "url" "${HOST}/mcp" in server "a": it must start with http:// or https://`},
	{"command number", srv(`{"command": 42}`), `c.json:1:34: expected a string for "command" in server "a", got number; put it in quotes: "42"`},
	{"command empty", srv(`{"command": " "}`), `c.json:1:34: "command" in server "a" is empty`},
	{"command NUL", srv(`{"command": "a\u0000b"}`), `c.json:1:34: "command" in server "a" contains a NUL character`},
	{"args string", srv(`{"command": "x", "args": "--v"}`), `c.json:1:47: expected an array of strings for "args" in server "a", got string`},
	{"args element number", "{\"mcpServers\": {\"a\": {\"command\": \"x\",\n\t\"args\": [\"--port\", 8080]}}}", `c.json:2:21: expected a string for "args"[1] in server "a", got number; put it in quotes: "8080"`},
	{"env array", srv(`{"command": "x", "env": ["A=1"]}`), `c.json:1:46: expected an object of strings for "env" in server "a", got array`},
	{"env value bool", srv(`{"command": "x", "env": {"DEBUG": true}}`), `c.json:1:56: expected a string for "env"."DEBUG" in server "a", got boolean; put it in quotes: "true"`},
	{"env name with =", srv(`{"command": "x", "env": {"A=B": "1"}}`), `c.json:1:47: invalid environment variable name "A=B" in server "a"`},
	{"header name with space", srv(`{"url": "http://h", "headers": {"X Team": "a"}}`), `c.json:1:54: invalid header name "X Team" in server "a"`},
	{"header value with newline", srv(`{"url": "http://h", "headers": {"X": "a\nb"}}`), `c.json:1:59: header "X" in server "a" contains a line break or NUL character`},
	{"header value with newline from env", srv(`{"url": "http://h", "headers": {"X": "${NL}"}}`), `c.json:1:59: header "X" in server "a" contains a line break or NUL character`},
	{"trust string", srv(`{"command": "x", "trust": "yes"}`), `c.json:1:48: expected true or false for "trust" in server "a", got string`},
	{"disabled number", srv(`{"command": "x", "disabled": 1}`), `c.json:1:51: expected true or false for "disabled" in server "a", got number`},
	{"startTimeout number", srv(`{"command": "x", "startTimeout": 30}`), `c.json:1:55: expected a duration string for "startTimeout" in server "a", got number; write it with a unit, like "30s"`},
	{"startTimeout without unit", srv(`{"command": "x", "startTimeout": "30"}`), `c.json:1:55: invalid duration "30" for "startTimeout" in server "a"; write a number with a unit, like "30s" or "2m"`},
	{"callTimeout negative", srv(`{"command": "x", "callTimeout": "-1s"}`), `c.json:1:54: "callTimeout" in server "a" must be positive, got "-1s"`},
	{"protocolVersion", srv(`{"command": "x", "protocolVersion": "latest"}`), `c.json:1:58: invalid "protocolVersion" "latest" in server "a"; expected a date such as "2025-11-25", or "auto"`},
	{"tasks", srv(`{"command": "x", "tasks": "always"}`), `c.json:1:48: invalid "tasks" "always" in server "a"; expected one of required, auto, never`},
	{"unset variable in url", srv(`{"url": "https://h/${NOPE}"}`), `c.json:1:41: environment variable NOPE is not set (in "url" in server "a")`},
	{"empty variable counts as unset", srv(`{"command": "x", "args": ["${EMPTY}"]}`), `c.json:1:49: environment variable EMPTY is not set (in "args"[0] in server "a")`},
	{"unset variable in header, CRLF and unicode", "{\"mcpServers\": {\r\n  \"u\": {\"url\": \"http://ü/\",\r\n\t\"headers\": {\"Authorization\": \"Bearer ${API_KEY}\"}}}}", `c.json:3:39: environment variable API_KEY is not set (in "headers"."Authorization" in server "u")`},
	{"non-ASCII name", `{"mcpServers": {"ü": {"command": "x"}}}`, `c.json:1:17: invalid server name "ü": use letters, digits, '-', '_' and '.', at most 64 characters`},
	{"unterminated reference", srv(`{"command": "x", "env": {"A": "${TOKEN"}}`), `c.json:1:53: unterminated "${"; close it with "}" (write "$${" for a literal "${") (in "env"."A" in server "a")`},
	{"invalid reference", srv(`{"command": "x", "args": ["${1X}"]}`), `c.json:1:49: invalid reference "${1X}"; write ${NAME} or ${NAME:-default}, where NAME has letters, digits and '_' (in "args"[0] in server "a")`},
	{"shell-only reference form", srv(`{"command": "x", "args": ["${X:=1}"]}`), `c.json:1:49: invalid reference "${X:=1}"; write ${NAME} or ${NAME:-default}, where NAME has letters, digits and '_' (in "args"[0] in server "a")`},
	{"permissions array", `{"permissions": []}`, `c.json:1:17: expected an object for "permissions", got array`},
	{"autoApprove level", `{"permissions": {"autoApprove": "all"}}`, `c.json:1:33: unknown "autoApprove" level "all"; use "none", "reads" or "additive"`},
	{"autoApprove bool", `{"permissions": {"autoApprove": true}}`, `c.json:1:33: expected a string for "autoApprove" in "permissions", got boolean; put it in quotes: "true"`},
	{"allow string", `{"permissions": {"allow": "fs/*"}}`, `c.json:1:27: expected an array of rules for "allow" in "permissions", got string`},
	{"deny element number", "{\"permissions\": {\n\t\"deny\": [\"x\", 3]}}", `c.json:2:16: expected a rule (a string or an object) in "deny"[1] in "permissions", got number`},
	{"model number", `{"model": 4}`, `c.json:1:11: expected a string for "model" at the top level, got number; put it in quotes: "4"`},
}

func TestParseErrors(t *testing.T) {
	for _, tt := range parseErrorTests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := parse("c.json", []byte(tt.data), SourceUser, testEnv)
			if err == nil {
				t.Fatalf("no error, want %q (servers %+v)", tt.want, r.cfg.Servers)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is %T, want *Error", err, err)
			}
			if r.cfg != nil {
				t.Errorf("got a config with the error")
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

var parseWarningTests = []struct {
	name string
	src  Source
	data string
	want []string
}{
	{
		name: "typos get suggestions",
		data: "{\n  \"mcpServer\": {},\n  \"permisions\": {},\n  \"mcpServers\": {\"tasks\": {\"url\": \"http://h\", \"comand\": \"x\", \"Headers\": {}, \"startTimout\": \"1s\"}},\n  \"permissions\": {\"alow\": [], \"autoaprove\": \"none\"}\n}",
		want: []string{
			`c.json:2:3: unknown key "mcpServer" at the top level; did you mean "mcpServers"?`,
			`c.json:3:3: unknown key "permisions" at the top level; did you mean "permissions"?`,
			`c.json:4:47: unknown key "comand" in server "tasks"; did you mean "command"?`,
			`c.json:4:62: unknown key "Headers" in server "tasks"; did you mean "headers"?`,
			`c.json:4:77: unknown key "startTimout" in server "tasks"; did you mean "startTimeout"?`,
			`c.json:5:19: unknown key "alow" in "permissions"; did you mean "allow"?`,
			`c.json:5:31: unknown key "autoaprove" in "permissions"; did you mean "autoApprove"?`,
		},
	},
	{
		name: "no suggestion when nothing is close",
		data: `{"theme": "dark", "mcpServers": {"a": {"command": "x", "priority": 1}}}`,
		want: []string{
			`c.json:1:2: unknown key "theme" at the top level is ignored`,
			`c.json:1:56: unknown key "priority" in server "a" is ignored`,
		},
	},
	{
		name: "keys of other hosts are ignored politely",
		data: `{"$schema": "x", "globalShortcut": "Ctrl+Space", "servers": {}, "inputs": [], "mcpServers": {"a": {"command": "x", "autoApprove": ["t"], "alwaysAllow": [], "timeout": 60, "description": "d", "transportType": "stdio", "httpUrl": "u", "envFile": ".env", "includeTools": [], "excludeTools": []}}, "permissions": {"defaultMode": "x"}}`,
		want: []string{
			`c.json:1:18: "globalShortcut" at the top level is ignored: it is a Claude Desktop setting`,
			`c.json:1:50: "servers" at the top level is ignored: mcphost reads servers from "mcpServers"`,
			`c.json:1:65: "inputs" at the top level is ignored: input prompts are not supported; refer to environment variables with ${NAME}`,
			`c.json:1:116: "autoApprove" in server "a" is ignored: a server entry cannot approve tools; add rules to "permissions" in your own config`,
			`c.json:1:138: "alwaysAllow" in server "a" is ignored: a server entry cannot approve tools; add rules to "permissions" in your own config`,
			`c.json:1:157: "timeout" in server "a" is ignored: hosts disagree on its unit; use "callTimeout" with a unit, like "60s"`,
			`c.json:1:172: "description" in server "a" is ignored: mcphost does not use it`,
			`c.json:1:192: "transportType" in server "a" is ignored: use "type"`,
			`c.json:1:218: "httpUrl" in server "a" is ignored: use "url" with "type": "http"`,
			`c.json:1:234: "envFile" in server "a" is ignored: set variables in "env"`,
			`c.json:1:253: "includeTools" in server "a" is ignored: use "permissions" rules to limit tools`,
			`c.json:1:273: "excludeTools" in server "a" is ignored: use "permissions" rules to limit tools`,
			`c.json:1:311: "defaultMode" in "permissions" is ignored: use "autoApprove"`,
		},
	},
	{
		name: "duplicates",
		data: "{\n\"mcpServers\": {\n\"b\": {\"command\": \"z\"},\n\"a\": {\"command\": \"x\", \"command\": \"y\"}\n},\n\"model\": \"m\", \"model\": \"n\"\n}",
		want: []string{
			`c.json:4:7: duplicate key "command" in server "a"; this one is ignored, the one at 4:23 is used`,
			`c.json:6:1: duplicate key "model" at the top level; this one is ignored, the one at 6:15 is used`,
		},
	},
	{
		name: "settings that do not apply to the transport",
		data: `{"mcpServers": {"h": {"url": "http://h", "args": ["x"], "env": {"A": "1"}, "cwd": "/"}, "s": {"command": "x", "headers": {"A": "1"}}}}`,
		want: []string{
			`c.json:1:42: "args" in server "h" is ignored: it does not apply to a http server`,
			`c.json:1:57: "env" in server "h" is ignored: it does not apply to a http server`,
			`c.json:1:76: "cwd" in server "h" is ignored: it does not apply to a http server`,
			`c.json:1:111: "headers" in server "s" is ignored: it does not apply to a stdio server`,
		},
	},
	{
		name: "command is not expanded",
		data: `{"mcpServers": {"s": {"command": "${ROOT}/bin/s"}}}`,
		want: []string{
			`c.json:1:34: "command" in server "s" is not expanded: "${" is taken literally there (only "args", "env", "url" and "headers" are expanded)`,
		},
	},
	{
		name: "a project file cannot grant trust, add rules or pick the model",
		src:  SourceProject,
		data: "{\n  \"mcpServers\": {\"p\": {\"command\": \"p\", \"trust\": true}},\n  \"permissions\": {\"allow\": [\"*\"], \"autoApprove\": \"additive\"},\n  \"model\": \"x:y\"\n}",
		want: []string{
			`c.json:2:40: "trust" in server "p" is ignored: a project file cannot grant trust; project servers are trusted through consent, not by the file`,
			`c.json:3:3: "permissions" is ignored in a project file: a project file may add servers but cannot add rules or change auto-approval`,
			`c.json:4:3: "model" is ignored in a project file: only your own config or --model chooses the model`,
		},
	},
}

func TestParseWarnings(t *testing.T) {
	for _, tt := range parseWarningTests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := parse("c.json", []byte(tt.data), tt.src, testEnv)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range r.warnings {
				got = append(got, w.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseProjectFile(t *testing.T) {
	data := `{"mcpServers": {"p": {"command": "p", "trust": true}}, "permissions": {"deny": ["x"], "autoApprove": "additive"}, "model": "m:n"}`
	cfg, warnings, err := Parse(".mcp.json", []byte(data), SourceProject)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 3 {
		t.Errorf("got %d warnings, want 3: %v", len(warnings), warnings)
	}
	want := &Config{
		Servers: []Server{{
			Name: "p", Transport: "stdio", Command: "p", ProtocolVersion: DefaultProtocolVersion,
			Source: SourceProject, File: ".mcp.json",
		}},
		Files: []string{".mcp.json"},
	}
	if diff := cmp.Diff(want, cfg, ignoreWritten); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
}

// A project file's permissions are ignored without being looked at, so a
// malformed one is not an error either.
func TestParseProjectPermissionsNotValidated(t *testing.T) {
	_, _, err := Parse(".mcp.json", []byte(`{"permissions": {"autoApprove": 7}}`), SourceProject)
	if err != nil {
		t.Errorf("got %v, want no error", err)
	}
}

func TestParseWarningsReturnedWithError(t *testing.T) {
	_, warnings, err := Parse("c.json", []byte(`{"x": 1, "mcpServers": []}`), SourceUser)
	if err == nil {
		t.Fatal("no error")
	}
	if len(warnings) != 1 || warnings[0].Line != 1 || warnings[0].Col != 2 {
		t.Errorf("warnings = %v, want one at 1:2", warnings)
	}
}

func TestErrorAndWarningStrings(t *testing.T) {
	tests := []struct{ got, want string }{
		{(&Error{File: "f", Line: 2, Col: 3, Msg: "m"}).Error(), "f:2:3: m"},
		{(&Error{File: "f", Msg: "m"}).Error(), "f: m"},
		{(&Error{Msg: "m"}).Error(), "m"},
		{Warning{File: "f", Line: 1, Col: 1, Message: "m"}.String(), "f:1:1: m"},
		{Warning{File: "f", Message: "m"}.String(), "f: m"},
		{Warning{Message: "m"}.String(), "m"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
	inner := errors.New("inner")
	if err := error(&Error{Msg: "m", Err: inner}); !errors.Is(err, inner) {
		t.Errorf("Error does not unwrap to its cause")
	}
}

func TestSuggest(t *testing.T) {
	tests := []struct{ key, want string }{
		{"comand", "command"},
		{"COMMAND", "command"},
		{"arg", "args"},
		{"ur", "url"},
		{"urls", "url"},
		{"evn", "env"}, // a transposition is one edit
		{"x", ""},
		{"protocolversion", "protocolVersion"},
		{"callTimeOut", "callTimeout"},
		{"disable", "disabled"},
		{"trusted", "trust"},
		{"commandline", ""},
	}
	for _, tt := range tests {
		if got := suggest(tt.key, serverKeys); got != tt.want {
			t.Errorf("suggest(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
}

// hostileProject is a project file near the size limit, on one line, full
// of unknown and duplicate keys and servers.
func hostileProject() []byte {
	var b strings.Builder
	b.WriteString(`{"mcpServers": {`)
	for i := range 20000 {
		fmt.Fprintf(&b, `"s%d": {"command": "x", "zz%d": 1, "command": "y"}, `, i, i)
	}
	b.WriteString(`"last": {"command": "x"}}`)
	for i := range 20000 {
		fmt.Fprintf(&b, `, "unknown%d": 1, "model": "m"`, i)
	}
	b.WriteString("}")
	return []byte(b.String())
}

func TestParseManyWarningsAreCapped(t *testing.T) {
	data := hostileProject()
	r, err := parse(".mcp.json", data, SourceProject, testEnv)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(r.cfg.Servers); got != 20001 {
		t.Errorf("got %d servers, want 20001", got)
	}
	if len(r.warnings) != maxWarnings+1 {
		t.Fatalf("got %d warnings, want %d", len(r.warnings), maxWarnings+1)
	}
	last := r.warnings[maxWarnings]
	if want := "more warnings about this file are not shown"; !strings.HasSuffix(last.Message, want) || last.Line != 1 {
		t.Errorf("last warning = %v, want one ending %q", last, want)
	}
}

func TestLongKeysAreShortenedInMessages(t *testing.T) {
	key := strings.Repeat("k", 1000)
	r, err := parse("c.json", []byte(`{"`+key+`": 1}`), SourceUser, testEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := []Warning{{File: "c.json", Line: 1, Col: 2, Message: `unknown key "` + strings.Repeat("k", 80) + `…" at the top level is ignored`}}
	if diff := cmp.Diff(want, r.warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

func BenchmarkParseExample(b *testing.B) {
	for b.Loop() {
		if _, err := parse("config.json", []byte(exampleConfig), SourceUser, testEnv); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseHostileProject(b *testing.B) {
	data := hostileProject()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := parse(".mcp.json", data, SourceProject, testEnv); err != nil {
			b.Fatal(err)
		}
	}
}

func TestParseOAuthClient(t *testing.T) {
	data := []byte(`{"mcpServers": {"r": {"url": "https://example.com/mcp", "oauth": {"clientId": "mcphost", "clientSecret": "${SECRET}", "scopes": ["read"], "extra": 1}}}}`)
	t.Setenv("SECRET", "s3cret")
	cfg, warns, err := Parse("c.json", data, SourceUser)
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.Servers[0].OAuth
	if o == nil || o.ClientID != "mcphost" || o.ClientSecret != "s3cret" || len(o.Scopes) != 1 || o.Scopes[0] != "read" {
		t.Errorf("oauth = %+v", o)
	}
	if len(warns) != 1 || !strings.Contains(warns[0].Message, `unknown key "extra"`) {
		t.Errorf("warnings = %v, want one about \"extra\"", warns)
	}
	if _, _, err := Parse("c.json", []byte(`{"mcpServers": {"r": {"url": "https://example.com/mcp", "oauth": "yes"}}}`), SourceUser); err == nil {
		t.Error(`"oauth": "yes" must be an error`)
	}
}
