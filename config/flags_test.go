package config

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var splitWordsTests = []struct {
	in      string
	want    []string
	wantErr string
}{
	{in: "", want: nil},
	{in: "  \t\n ", want: nil},
	{in: "a", want: []string{"a"}},
	{in: "  a   b\tc\nd  ", want: []string{"a", "b", "c", "d"}},
	{in: `'a b' "c d"`, want: []string{"a b", "c d"}},
	{in: `a'b c'd`, want: []string{"ab cd"}},
	{in: `""`, want: []string{""}},
	{in: `'' x ""`, want: []string{"", "x", ""}},
	{in: `a "" b`, want: []string{"a", "", "b"}},
	{in: `a""b`, want: []string{"ab"}},
	{in: `'it'\''s'`, want: []string{"it's"}},
	{in: `"say \"hi\""`, want: []string{`say "hi"`}},
	{in: `"a\\b" "a\b" "\$x" "\` + "`" + `"`, want: []string{`a\b`, `a\b`, `$x`, "`"}},
	{in: `'a\b' '\'`, want: []string{`a\b`, `\`}},
	{in: `a\ b c\"d \'e\'`, want: []string{"a b", `c"d`, "'e'"}},
	{in: `\\server\share`, want: []string{`\servershare`}},
	{in: "a\\\nb", want: []string{"ab"}},       // backslash-newline joins
	{in: "\"a\\\nb\"", want: []string{"ab"}},   // also inside double quotes
	{in: "'a\\\nb'", want: []string{"a\\\nb"}}, // but not inside single quotes
	{in: `\é`, want: []string{"é"}},
	{in: `$HOME ~ *.go $(rm -rf x) ` + "`id`" + ` a|b ; &`, want: []string{"$HOME", "~", "*.go", "$(rm", "-rf", "x)", "`id`", "a|b", ";", "&"}},
	{in: `"${TOKEN}"`, want: []string{"${TOKEN}"}},
	{in: `npx -y "@scope/server" --root '/tmp/my dir'`, want: []string{"npx", "-y", "@scope/server", "--root", "/tmp/my dir"}},
	{in: `'unterminated`, wantErr: "unterminated single quote at character 1"},
	{in: `ab "cd`, wantErr: "unterminated double quote at character 4"},
	{in: `é "x\"`, wantErr: "unterminated double quote at character 3"},
	{in: `a 'b'"c`, wantErr: "unterminated double quote at character 6"},
	{in: `a\`, wantErr: `trailing backslash; write \\ for a backslash`},
}

func TestSplitWords(t *testing.T) {
	for _, tt := range splitWordsTests {
		got, err := SplitWords(tt.in)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("SplitWords(%q) = %q, %v; want error %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("SplitWords(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("SplitWords(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestParseServerFlag(t *testing.T) {
	flag := func(name, transport string) Server {
		return Server{Name: name, Transport: transport, ProtocolVersion: DefaultProtocolVersion, Source: SourceFlag}
	}
	with := func(s Server, f func(*Server)) Server { f(&s); return s }
	tests := []struct {
		in      string
		want    Server
		wantErr string
	}{
		{in: "tasks=tasks-server", want: with(flag("tasks", "stdio"), func(s *Server) { s.Command = "tasks-server" })},
		{
			in: `fs=npx -y @modelcontextprotocol/server-filesystem "/tmp/a dir"`,
			want: with(flag("fs", "stdio"), func(s *Server) {
				s.Command, s.Args = "npx", []string{"-y", "@modelcontextprotocol/server-filesystem", "/tmp/a dir"}
			}),
		},
		{in: "a=x=y", want: with(flag("a", "stdio"), func(s *Server) { s.Command = "x=y" })},
		{in: "a= x ", want: with(flag("a", "stdio"), func(s *Server) { s.Command = "x" })},
		{in: "r=https://example.com/mcp", want: with(flag("r", "http"), func(s *Server) { s.URL = "https://example.com/mcp" })},
		{in: "r=HTTP://h:8080/mcp?q=1", want: with(flag("r", "http"), func(s *Server) { s.URL = "HTTP://h:8080/mcp?q=1" })},
		{in: "r=http://127.0.0.1:9000/sse", want: with(flag("r", "sse"), func(s *Server) { s.URL = "http://127.0.0.1:9000/sse" })},
		{in: "r=http://h/sse?x=1", want: with(flag("r", "sse"), func(s *Server) { s.URL = "http://h/sse?x=1" })},
		{in: "r=http://h/sse/", want: with(flag("r", "http"), func(s *Server) { s.URL = "http://h/sse/" })},
		{in: "r=http://h/ssex", want: with(flag("r", "http"), func(s *Server) { s.URL = "http://h/ssex" })},
		{in: "r=http://h/no-sse", want: with(flag("r", "http"), func(s *Server) { s.URL = "http://h/no-sse" })},
		{in: "r='https://h/mcp'", want: with(flag("r", "http"), func(s *Server) { s.URL = "https://h/mcp" })},
		{in: "tasks", wantErr: "expected NAME=COMMAND or NAME=URL"},
		{in: "=x", wantErr: `invalid server name "": use letters, digits, '-', '_' and '.', at most 64 characters`},
		{in: "a b=x", wantErr: `invalid server name "a b": use letters, digits, '-', '_' and '.', at most 64 characters`},
		{in: "a=", wantErr: `nothing after "a="; give a command or an http(s) URL`},
		{in: "a=  ", wantErr: `nothing after "a="; give a command or an http(s) URL`},
		{in: "a='x", wantErr: "unterminated single quote at character 1"},
		{in: "a=http://h/mcp extra", wantErr: "a URL server takes no arguments"},
		{in: "a=http://", wantErr: "invalid URL: it has no host"},
		{in: "a=https://a b", wantErr: "a URL server takes no arguments"},
		{in: "a='https://a b'", wantErr: `invalid URL: invalid character " " in host name`},
	}
	for _, tt := range tests {
		got, err := ParseServerFlag(tt.in)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("ParseServerFlag(%q) = %+v, %v; want error %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseServerFlag(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got, ignoreWritten); diff != "" {
			t.Errorf("ParseServerFlag(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestFlagRule(t *testing.T) {
	tests := []struct {
		flag, in string
		want     string // Raw
		wantErr  string
	}{
		{flag: "--allow", in: "fs/read_*", want: `"fs/read_*"`},
		{flag: "--deny", in: " tasks/delete_* ", want: `"tasks/delete_*"`},
		{flag: "--ask", in: `a&b<c>"d\`, want: `"a&b<c>\"d\\"`},
		{flag: "--deny", in: `{"tool": "fs/write_file",  "args": {"path": {"prefix": "/etc/"}}}`, want: `{"tool":"fs/write_file","args":{"path":{"prefix":"/etc/"}}}`},
		{flag: "--allow", in: `[1]`, want: `"[1]"`},
		{flag: "--deny", in: "", wantErr: `--deny "": empty rule`},
		{flag: "--deny", in: `{"tool": }`, wantErr: `--deny "{\"tool\": }": a rule that starts with '{' must be a JSON object: invalid character '}' looking for beginning of value`},
		{flag: "--allow", in: `{} {}`, wantErr: `--allow "{} {}": a rule that starts with '{' must be a JSON object: invalid character '{' after top-level value`},
	}
	for _, tt := range tests {
		got, err := flagRule(tt.flag, 3, tt.in)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("flagRule(%q, %q) error %v, want %q", tt.flag, tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("flagRule(%q, %q): %v", tt.flag, tt.in, err)
			continue
		}
		want := RuleSpec{Effect: tt.flag[2:], Source: tt.flag, Index: 3, Raw: json.RawMessage(tt.want)}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("flagRule(%q, %q) (-want +got):\n%s", tt.flag, tt.in, diff)
		}
	}
}
