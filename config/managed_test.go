package config

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestManagedPathIsFixedPerOS(t *testing.T) {
	// The released binary reads exactly one place; nothing may compute it.
	want := map[string]string{
		"/etc/mcphost/managed.json":                         "linux",
		"/Library/Application Support/mcphost/managed.json": "darwin",
		`C:\ProgramData\mcphost\managed.json`:               "windows",
	}
	if _, ok := want[ManagedPath]; !ok {
		t.Errorf("ManagedPath = %q, want one of the documented places", ManagedPath)
	}
}

func TestLoadManagedMissingIsNoPolicy(t *testing.T) {
	m, w, err := LoadManaged(filepath.Join(t.TempDir(), "managed.json"))
	if m != nil || w != nil || err != nil {
		t.Fatalf("LoadManaged(missing) = %v, %v, %v; want nil, nil, nil", m, w, err)
	}
	// A nil policy allows what the user says.
	var none *Managed
	if ok, _ := none.ServerVerdict(Server{Command: "x"}); !ok || !none.MayTrust("a") {
		t.Error("a nil *Managed restricts something")
	}
	if got, clamped := none.ClampAutoApprove("additive"); got != "additive" || clamped {
		t.Errorf("nil ClampAutoApprove = %q, %v", got, clamped)
	}
}

func TestParseManaged(t *testing.T) {
	const file = "/m/managed.json"
	data := `{
  "permissions": {
    "ask": ["*/send_*"],
    "deny": ["*/delete_*", {"tool": "fs/write_file"}],
    "autoApprove": "reads"
  },
  "allowedServers": [{"command": "tasks-server"}, {"command": "npx", "args": ["-y", "@scope/*"]}, {"url": "https://*.corp.example/*"}],
  "deniedServers": [{"command": "evil"}],
  "trust": ["tasks"],
  "serve": {"http": ["127.0.0.1:*"]},
  "telemetry": {"endpoint": "https://otel.corp.example:4318", "headers": {"X-Team": "a"}},
  "audit": "/var/log/mcphost/audit.jsonl"
}`
	m, err := ParseManaged(file, []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, r := range m.Rules {
		rules = append(rules, r.Effect+" "+string(r.Raw)+" "+r.Source+":"+strconv.Itoa(r.Line))
	}
	wantRules := []string{
		`deny "*/delete_*" /m/managed.json:4`,
		`deny {"tool":"fs/write_file"} /m/managed.json:4`,
		`ask "*/send_*" /m/managed.json:3`,
	}
	if diff := cmp.Diff(wantRules, rules); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	if m.AutoApprove != "reads" || m.Audit != "/var/log/mcphost/audit.jsonl" || !m.HasAllowed || len(m.AllowedServers) != 3 || len(m.DeniedServers) != 1 {
		t.Errorf("parsed %+v", m)
	}
	if !m.HasTrust || !cmp.Equal(m.Trust, []string{"tasks"}) {
		t.Errorf("trust = %v, %v", m.HasTrust, m.Trust)
	}
	if m.Telemetry == nil || m.Telemetry.Endpoint != "https://otel.corp.example:4318" || m.Telemetry.Headers["X-Team"] != "a" {
		t.Errorf("telemetry = %+v", m.Telemetry)
	}
	if !m.Serve.AllowsHTTP("127.0.0.1:8080") || m.Serve.AllowsHTTP("0.0.0.0:8080") {
		t.Errorf("serve = %+v", m.Serve)
	}
	if got := m.At["audit"]; got != "/m/managed.json:12:3" {
		t.Errorf(`At["audit"] = %q`, got)
	}
	if got := m.AllowedServers[1].At; got != "/m/managed.json:7:51" {
		t.Errorf("entry position = %q", got)
	}
}

// A managed file that cannot be read as written fails closed: the error
// names the file, the line and what is wrong.
func TestParseManagedErrors(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{`{"permissions": {"deny": ["a/b"],}}`, "f:1:33: trailing comma"},
		{`[]`, "f:1:1: expected a JSON object"},
		{"{\n  \"deniedServer\": []\n}", `f:2:3: unknown key "deniedServer" at the top level; did you mean "deniedServers"?`},
		{"{\n\"permissions\": {\"allow\": [\"*\"]}}", `f:2:17: "allow" rules are not accepted in a managed policy`},
		{`{"permissions": {"autoApprove": "all"}}`, `f:1:33: unknown "autoApprove" level "all"`},
		{`{"permissions": {"deny": "x"}}`, `f:1:26: expected an array of rules`},
		{`{"permissions": {"defaultMode": "x"}}`, `f:1:18: unknown key "defaultMode" in "permissions"`},
		{`{"allowedServers": {"command": "x"}}`, `f:1:20: expected an array for "allowedServers"`},
		{`{"allowedServers": [{"command": "x", "url": "y"}]}`, `f:1:21: "allowedServers"[0] has both "command" and "url"`},
		{`{"deniedServers": [{}]}`, `f:1:20: "deniedServers"[0] needs "command"`},
		{`{"deniedServers": [{"cmd": "x"}]}`, `f:1:21: unknown key "cmd" in "deniedServers"[0]`},
		{`{"deniedServers": [{"url": "https://x/*", "args": []}]}`, `f:1:20: "deniedServers"[0] has "args" with "url"`},
		{`{"trust": true}`, `f:1:11: "trust": true is not accepted`},
		{`{"trust": "tasks"}`, `f:1:11: expected a list of server names or false`},
		{`{"trust": ["a b"]}`, `f:1:12: invalid server name "a b"`},
		{`{"serve": {"http": "yes"}}`, `f:1:20: expected true, false or a list of addresses`},
		{`{"serve": {"stdio": false}}`, `f:1:12: unknown key "stdio" in "serve"`},
		{`{"telemetry": {"headers": {}}}`, `f:1:15: "telemetry" needs an "endpoint"`},
		{`{"telemetry": {"endpoint": "ftp://x"}}`, `f:1:28: invalid "endpoint" "ftp://x"`},
		{`{"allowedServers": [{"url": "mcp.example/*"}]}`, `f:1:21: "url" in "allowedServers"[0] must start with its scheme`},
		{`{"audit": "audit.jsonl"}`, `f:1:11: "audit" must be an absolute path`},
	} {
		_, err := ParseManaged("f", []byte(tc.data))
		if err == nil {
			t.Errorf("ParseManaged(%s) succeeded, want %q", tc.data, tc.want)
			continue
		}
		if _, ok := err.(*Error); !ok {
			t.Errorf("ParseManaged(%s) error is %T, want *Error", tc.data, err)
		}
		if !strings.HasPrefix(err.Error(), tc.want) && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseManaged(%s) = %q, want %q", tc.data, err, tc.want)
		}
		if !strings.Contains(err.Error(), "no call runs until an administrator fixes it") {
			t.Errorf("ParseManaged(%s) = %q, does not say it fails closed", tc.data, err)
		}
	}
}

func TestLoadManagedUnreadableFailsClosed(t *testing.T) {
	dir := t.TempDir()
	// A directory where the file should be cannot be read as a policy.
	path := filepath.Join(dir, "managed.json")
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadManaged(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("LoadManaged(directory) = %v, want an error naming %s", err, path)
	}
}

func TestLoadManagedWarnsWhenOthersCanWrite(t *testing.T) {
	if os.PathSeparator != '/' {
		t.Skip("Unix permissions")
	}
	dir := filepath.Join(t.TempDir(), "mcphost")
	path := writeFile(t, filepath.Join(dir, "managed.json"), `{}`)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	_, w, err := LoadManaged(path)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getuid() == 0 && len(w) != 0 {
		t.Errorf("a root-owned 0644 policy drew warnings: %v", w)
	}
	if os.Getuid() != 0 && (len(w) == 0 || !strings.Contains(w[0].Message, "not root")) {
		t.Errorf("a policy owned by user %d drew %v, want a warning", os.Getuid(), w)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	_, w, err = LoadManaged(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(w) == 0 || !strings.Contains(w[0].String(), path) {
		t.Errorf("a world-writable policy drew %v, want a warning naming it", w)
	}
}

func TestServerVerdict(t *testing.T) {
	m, err := ParseManaged("/m.json", []byte(`{
  "allowedServers": [
    {"command": "tasks-server"},
    {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-*"]},
    {"url": "https://*.corp.example/*"}
  ],
  "deniedServers": [{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]}, {"url": "https://bad.corp.example/*"}, {"command": "curl"}]
}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		srv  Server
		want bool
	}{
		{Server{Command: "tasks-server"}, true},
		{Server{Command: "tasks-server", Args: []string{"--db", "x"}}, true}, // no "args": any
		{Server{Command: "./tasks-server"}, false},                           // allow matches as written
		{Server{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory"}}, true},
		{Server{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory", "extra"}}, false},
		{Server{Command: "npx", Args: []string{"-y", "evil"}}, false},
		{Server{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything"}}, false}, // denied beats allowed
		{Server{Command: "/usr/bin/npx", Args: []string{"-y", "@modelcontextprotocol/server-everything"}}, false},
		{Server{URL: "https://mcp.corp.example/mcp"}, true},
		{Server{URL: "https://bad.corp.example/mcp"}, false},
		{Server{URL: "HTTPS://u:p@BAD.corp.example.:443/mcp"}, false}, // the same server written differently
		{Server{URL: "https://evil.example/https://x.corp.example/"}, false},
		{Server{URL: "https://mcp.corp.example.evil.example/mcp"}, false},
		{Server{URL: "https://x.corp.example"}, true}, // a pattern's path matches the root too
		{Server{URL: "https://x.corp.example:8443/mcp"}, false},
		{Server{Command: "curl"}, false},
		{Server{}, false}, // a built-in server matches no entry
	} {
		ok, why := m.ServerVerdict(tc.srv)
		if ok != tc.want {
			t.Errorf("ServerVerdict(%s%s %q) = %v (%s), want %v", tc.srv.Command, tc.srv.URL, tc.srv.Args, ok, why, tc.want)
		}
		if !ok && !strings.Contains(why, "managed") {
			t.Errorf("ServerVerdict(%s%s): reason %q does not name the managed policy", tc.srv.Command, tc.srv.URL, why)
		}
	}

	// Without an allow list only the denied servers are kept out; an
	// empty allow list allows none.
	deny, _ := ParseManaged("/m.json", []byte(`{"deniedServers": [{"command": "evil*"}]}`))
	if ok, _ := deny.ServerVerdict(Server{Command: "good"}); !ok {
		t.Error("a deny list alone kept out a server it does not name")
	}
	if ok, why := deny.ServerVerdict(Server{Command: `C:\tools\evil.exe`}); ok || !strings.Contains(why, "/m.json:1:20") {
		t.Errorf("deny by base name = %v, %q", ok, why)
	}
	// A denied URL written another way is still denied.
	denyURL, _ := ParseManaged("/m.json", []byte(`{"deniedServers": [{"url": "https://bad.example/*"}]}`))
	for _, u := range []string{"https://bad.example/mcp", "HTTPS://BAD.example/mcp", "https://u:p@bad.example/mcp", "https://bad.example:443/mcp", "https://bad.example./mcp", "http://bad.example:80/x"} {
		want := strings.HasPrefix(u, "http:") // another scheme is another server
		if ok, _ := denyURL.ServerVerdict(Server{URL: u}); ok != want {
			t.Errorf("ServerVerdict(%s) under a deny of https://bad.example/* = %v, want %v", u, ok, want)
		}
	}
	none, _ := ParseManaged("/m.json", []byte(`{"allowedServers": []}`))
	if ok, _ := none.ServerVerdict(Server{Command: "good"}); ok {
		t.Error(`"allowedServers": [] allowed a server`)
	}
}

func TestManagedTrustAndCeiling(t *testing.T) {
	off, _ := ParseManaged("f", []byte(`{"trust": false, "permissions": {"autoApprove": "reads"}}`))
	if off.MayTrust("tasks") {
		t.Error(`"trust": false lets a server be trusted`)
	}
	some, _ := ParseManaged("f", []byte(`{"trust": ["tasks"]}`))
	if !some.MayTrust("tasks") || some.MayTrust("other") {
		t.Error(`"trust": ["tasks"] does not limit trust to tasks`)
	}
	for _, tc := range []struct {
		user, want string
		clamped    bool
	}{{"", "reads", true}, {"additive", "reads", true}, {"reads", "reads", false}, {"none", "none", false}} {
		got, clamped := off.ClampAutoApprove(tc.user)
		if got != tc.want || clamped != tc.clamped {
			t.Errorf("ClampAutoApprove(%q) = %q, %v; want %q, %v", tc.user, got, clamped, tc.want, tc.clamped)
		}
	}
}

func TestStarMatch(t *testing.T) {
	for _, tc := range []struct {
		pat, s string
		want   bool
	}{
		{"", "", true}, {"*", "", true}, {"*", "a/b", true}, {"a*c", "abbc", true}, {"a*c", "abcd", false},
		{"*x*y*", "axbyc", true}, {"*x*y*", "ayxb", false}, {"ab", "abc", false}, {"abc", "ab", false},
		{strings.Repeat("*a", 30) + "b", strings.Repeat("a", 60), false},
	} {
		if got := starMatch(tc.pat, tc.s); got != tc.want {
			t.Errorf("starMatch(%q, %q) = %v, want %v", tc.pat, tc.s, got, tc.want)
		}
	}
}

// FuzzParseManaged: any input either parses or fails with a positioned
// *Error that says the policy fails closed; it never panics, and what
// parses keeps only deny and ask rules.
func FuzzParseManaged(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"trust": false}`, `{"permissions": {"deny": ["a/*"], "ask": [{"tool": "b/c"}], "autoApprove": "none"}}`,
		`{"allowedServers": [{"command": "x", "args": ["*"]}, {"url": "https://*.e/*"}], "deniedServers": []}`,
		`{"serve": {"http": ["127.0.0.1:*"]}, "telemetry": {"endpoint": "https://o:4318", "headers": {"A": "b"}}, "audit": "/a"}`,
		`{"permissions": {"allow": ["*"]}}`, "{\n\"deniedServer\": []}", `[`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManaged("f", data)
		if err != nil {
			e, ok := err.(*Error)
			if !ok || e.File != "f" || !strings.Contains(e.Msg, "no call runs") {
				t.Fatalf("error %T %v is not a fail-closed *Error about f", err, err)
			}
			return
		}
		for _, r := range m.Rules {
			if r.Effect != "deny" && r.Effect != "ask" {
				t.Fatalf("a managed rule with effect %q parsed", r.Effect)
			}
		}
		m.ServerVerdict(Server{Command: "x", Args: []string{"a"}, URL: "https://h/p"})
	})
}
