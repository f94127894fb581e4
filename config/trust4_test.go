package config

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A server name defined twice in one file is an error naming both places,
// in the person's own file: rules name servers, so keeping either entry
// would let a squatter inherit the rules written for the other. In a
// project file both entries are skipped with a warning naming both places,
// and the rest of the file loads.
func TestServerNameDefinedTwice(t *testing.T) {
	const data = "{\"mcpServers\": {\n  \"tasks\": {\"command\": \"tasks-server\"},\n  \"other\": {\"command\": \"o\"},\n  \"tasks\": {\"command\": \"squatter\"}\n}}"
	_, _, err := Parse("c.json", []byte(data), SourceUser)
	want := `c.json:4:3: server "tasks" is defined twice in "mcpServers", here and at c.json:2:3: rules name servers, so a second entry under a name would take the first one's rules; rename or remove one`
	if err == nil || err.Error() != want {
		t.Errorf("the person's own file:\n got %v\nwant %s", err, want)
	}
	cfg, warnings, err := Parse(".mcp.json", []byte(data), SourceProject)
	if err != nil {
		t.Fatalf("a project file: %v; want its entries of that name skipped with a warning", err)
	}
	if _, ok := cfg.Server("tasks"); ok || len(cfg.Servers) != 1 {
		t.Errorf("a project file's servers: %+v; want only \"other\"", cfg.Servers)
	}
	wantW := []string{`.mcp.json:4:3: server "tasks" is skipped, and so is the entry at .mcp.json:2:3: the project file defines it twice, and mcphost starts neither rather than guess which one your consent and rules are for`}
	if diff := cmp.Diff(wantW, warningStrings(warnings)); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

// Removing the server a file defines twice removes both entries: it is
// how the error above is fixed, so the refusal to edit a file the loader
// refuses lets that one problem pass — and only for that server.
func TestRemoveServerDefinedTwice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	writeTestFile(t, path, `{"mcpServers": {"x": {"command": "x"}, "a": {"command": "a"}, "x": {"command": "y"}}}`, 0o600)
	if _, err := RemoveServer(path, SourceUser, "a", noEnv); err == nil || !errors.As(err, new(twiceError)) || !strings.HasPrefix(err.Error(), path+":1:") {
		t.Errorf("removing another server from a file that defines x twice: %v; want the loader's refusal, at its place", err)
	}
	if _, err := RemoveServer(path, SourceUser, "x", noEnv); err != nil {
		t.Fatalf("removing the server defined twice: %v", err)
	}
	cfg, _, err := Load(LoadOptions{ConfigFile: path, Getenv: testEnv})
	if err != nil || len(cfg.Servers) != 1 || cfg.Servers[0].Name != "a" {
		t.Errorf("after the removal: %+v, %v", cfg, err)
	}
}

// A project entry named like one of the person's servers never replaces
// it: the project's is skipped with a warning that names both places (an
// error would let a repository stop mcphost).
func TestProjectEntryNamedLikeTheUsers(t *testing.T) {
	home := t.TempDir()
	user := writeFile(t, filepath.Join(home, "mcphost", "config.json"), "{\"mcpServers\": {\n  \"tasks\": {\"command\": \"mine\"}}}")
	work := writeProject(t, `{"mcpServers": {"tasks": {"command": "squatter"}}}`)
	cfg, warnings, err := Load(LoadOptions{ConfigHome: home, WorkDir: work, Getenv: testEnv})
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := cfg.Server("tasks"); s.Command != "mine" || s.Source != SourceUser {
		t.Errorf("tasks = %+v; want the person's own", s)
	}
	got := warningStrings(warnings)
	if len(got) != 1 || !strings.Contains(got[0], `server "tasks" is ignored: `+user+`:2:3 already defines a server with that name`) {
		t.Errorf("warnings %q; want one naming the person's entry", got)
	}
}

// Credentials the config carries — an HTTP entry's headers, the user and
// password of its URL, values its URL reads from the environment — never
// go over plain http to another machine unless the person's own entry says
// "allowInsecureHTTP": true, as a model key and an OAuth token never do.
// Loopback and https are fine, and so is plain http that carries none.
func TestCredentialsNotSentInClear(t *testing.T) {
	getenv := func(k string) string {
		return map[string]string{"TOKEN": "tok", "HOST": "remote.example"}[k]
	}
	for _, tt := range []struct {
		entry string
		want  string // the error's message; "" when the entry loads
	}{
		{`"url": "http://remote.example/mcp", "headers": {"Authorization": "Bearer x"}`,
			`server "s" would get its "headers" over plain http to remote.example, which is not this machine: anyone on the path could read them; use an https URL, or add "allowInsecureHTTP": true to the entry if the network is yours`},
		{`"type": "sse", "url": "HTTP://10.0.0.7:8080/sse", "headers": {"X-Key": "${TOKEN}"}`,
			`server "s" would get its "headers" over plain http to 10.0.0.7:8080, which is not this machine`},
		{`"url": "http://me:pw@remote.example/mcp"`, `would get the user and password in its URL over plain http to remote.example`},
		{`"url": "http://remote.example/mcp?key=${TOKEN}"`, `would get the values its URL reads from your environment over plain http to remote.example`},
		{`"url": "http://${HOST}/mcp", "headers": {"A": "b"}`, `would get its "headers" and the values its URL reads from your environment over plain http to a host read from your environment`},
		{`"url": "http://remote.example/mcp", "headers": {"Authorization": "Bearer x"}, "allowInsecureHTTP": true`, ""},
		{`"url": "http://remote.example/mcp"`, ""},
		{`"url": "https://remote.example/mcp", "headers": {"Authorization": "Bearer x"}`, ""},
		{`"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer x"}`, ""},
		{`"url": "http://localhost:9/mcp?key=${TOKEN}"`, ""},
		{`"url": "http://[::1]:9/mcp", "headers": {"Authorization": "Bearer x"}`, ""},
	} {
		src := `{"mcpServers": {"s": {` + tt.entry + `}}}`
		r, err := parse("c.json", []byte(src), SourceUser, getenv)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v; want it loaded", tt.entry, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "c.json:1:")):
			t.Errorf("%s:\n got %v\nwant an error at the URL containing %q", tt.entry, err, tt.want)
		case tt.want == "" && r.cfg.Servers[0].AllowInsecureHTTP != strings.Contains(tt.entry, "allowInsecureHTTP"):
			t.Errorf("%s: AllowInsecureHTTP = %v", tt.entry, r.cfg.Servers[0].AllowInsecureHTTP)
		}
	}
	// A project file cannot say so: its "allowInsecureHTTP" is ignored, and
	// its entry is skipped with a warning, the rest of the file loading.
	src := `{"mcpServers": {"s": {"url": "http://remote.example/mcp", "headers": {"Authorization": "Bearer x"}, "allowInsecureHTTP": true}, "ok": {"command": "ok"}}}`
	r, err := parse(".mcp.json", []byte(src), SourceProject, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.cfg.Server("s"); ok || len(r.cfg.Servers) != 1 {
		t.Errorf("a project entry sending headers in clear: servers %+v; want it skipped", r.cfg.Servers)
	}
	got := strings.Join(warningStrings(r.warnings), "\n")
	for _, want := range []string{`"allowInsecureHTTP" in server "s" is ignored: a project file cannot have your credentials sent in clear`, `server "s" is skipped: server "s" would get its "headers" over plain http`} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings %q do not say %q", got, want)
		}
	}
	// A --server URL with a user and password is held to the same rule.
	if _, err := ParseServerFlag("r=http://me:pw@remote.example/mcp"); err == nil || !strings.Contains(err.Error(), "the user and password in its URL over plain http to remote.example") {
		t.Errorf("--server with credentials over plain http: %v", err)
	}
	if _, err := ParseServerFlag("r=http://me:pw@127.0.0.1:9/mcp"); err != nil {
		t.Errorf("--server with credentials to loopback: %v", err)
	}
}

// A managed URL pattern matches a server's URL whatever way its default
// port is written: "http://host:80/x" is "http://host/x", and
// "https://host:443/x" is "https://host/x", for a deny (the server cannot
// slip past it) and an allow (it is not refused) alike. Another port is
// another server.
func TestManagedURLDefaultPort(t *testing.T) {
	deny, err := ParseManaged("/m.json", []byte(`{"deniedServers": [{"url": "http://bad.example/*"}, {"url": "https://worse.example/*"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	allow, err := ParseManaged("/m.json", []byte(`{"allowedServers": [{"url": "http://ok.example/*"}, {"url": "https://fine.example/*"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		m    *Managed
		url  string
		want bool
	}{
		{deny, "http://bad.example:80/x", false},
		{deny, "HTTP://bad.example:80/x", false},
		{deny, "https://worse.example:443/x", false},
		{deny, "http://bad.example:8080/x", true},
		{allow, "http://ok.example:80/mcp", true},
		{allow, "https://fine.example:443/mcp", true},
		{allow, "http://ok.example:8080/mcp", false},
	} {
		if ok, why := tc.m.ServerVerdict(Server{URL: tc.url}); ok != tc.want {
			t.Errorf("ServerVerdict(%s) = %v (%s), want %v", tc.url, ok, why, tc.want)
		}
	}
}

// An edit of a project file is the person's: a problem with an entry is an
// error there, as in their own file, not an entry quietly skipped.
func TestEditOfAProjectFileIsStrict(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ProjectFile)
	e := NamedEntry{Name: "api", Entry: Entry{Type: "http", URL: "http://api.example/mcp", Headers: map[string]string{"A": "b"}}}
	if _, err := AddServers(path, SourceProject, []NamedEntry{e}, noEnv); err == nil || !strings.Contains(err.Error(), `server "api" would get its "headers" over plain http to api.example`) {
		t.Errorf("adding an entry the loader would skip: %v; want the reason", err)
	}
	writeTestFile(t, path, `{"mcpServers": {"mcphost": {"command": "x"}}}`, 0o600)
	if _, err := AddServers(path, SourceProject, []NamedEntry{tasksEntry}, noEnv); err == nil || !strings.Contains(err.Error(), `server name "mcphost" is reserved`) {
		t.Errorf("adding to a project file with a bad entry: %v; want the entry's problem", err)
	}
}

// A server name another host's file defines twice is imported under
// neither entry, with the reason and both lines; the file's other servers
// are imported.
func TestImportSkipsANameDefinedTwice(t *testing.T) {
	home := t.TempDir()
	pl := ImportPlace{Home: home, GOOS: "linux"}
	writeTestFile(t, filepath.Join(home, ".cursor", "mcp.json"), "{\"mcpServers\": {\n\"t\": {\"command\": \"mine\"},\n\"ok\": {\"command\": \"ok\"},\n\"t\": {\"command\": \"squatter\"}\n}}", 0o600)
	got, err := ReadImport(ImportFiles(pl, FromCursor)[0], pl)
	if err != nil || len(got) != 2 {
		t.Fatalf("ReadImport = %+v, %v; want two servers", got, err)
	}
	for _, imp := range got {
		switch imp.Name {
		case "t":
			if !strings.Contains(imp.Skip, "the file defines it twice (lines 2 and 4)") {
				t.Errorf("t: skip %q; want it skipped, naming both lines", imp.Skip)
			}
		case "ok":
			if imp.Skip != "" || imp.Entry.Command != "ok" {
				t.Errorf("ok: %+v; want it imported", imp)
			}
		}
	}
}
