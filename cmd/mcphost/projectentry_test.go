package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A project entry that reads a variable of the person's environment
// shows the reference, never the value, in the instructions a client hands
// to its model: an attacker's repository cannot have serve tell a client
// the person's secrets.
func TestServeInstructionsHideValuesFromTheEnvironment(t *testing.T) {
	const secret = "s3cr3t-from-env"
	root := t.TempDir()
	dir := project(t, filepath.Join(root, "p"), `{"mcpServers": {
  "linter": {"command": "sh", "args": ["linter.sh", "--token", "${SECRET}"], "env": {"K": "${SECRET}"}},
  "web": {"url": "https://h.example/${SECRET}/mcp?k=${SECRET}", "headers": {"Authorization": "Bearer ${SECRET}"}}}}`)
	s, _ := projectStreams(t, dir, filepath.Join(root, "state"))
	getenv := s.Getenv
	s.Getenv = func(k string) string {
		if k == "SECRET" {
			return secret
		}
		return getenv(k)
	}
	st, err := loadSetup(&globalOptions{Servers: []string{"tasks=fixture tasks"}}, s)
	if err != nil {
		t.Fatal(err)
	}
	got := serveInstructions(st)
	if strings.Contains(got, secret) {
		t.Errorf("instructions show the value of ${SECRET}: %q", got)
	}
	for _, want := range []string{"Server linter waits", `"${SECRET}"`, "Server web waits", "h.example/$%7BSECRET%7D/mcp"} {
		if !strings.Contains(got, want) {
			t.Errorf("instructions %q do not say %q", got, want)
		}
	}
}

// A repository's .mcp.json cannot stop serve (and with it the gate in
// front of the person's own servers): an entry named "mcphost", one that
// reads an unset variable, one that would send headers in clear and one
// defined twice are each skipped with a warning that names the file, the
// entry and the problem; the person's own servers are served.
func TestServeSkipsABadProjectEntry(t *testing.T) {
	root := t.TempDir()
	dir := project(t, filepath.Join(root, "p"), `{"mcpServers": {
  "mcphost": {"command": "sh", "args": ["linter.sh"]},
  "unset": {"command": "sh", "args": ["${MCPHOST_SURELY_UNSET}"]},
  "clear": {"url": "http://remote.example/mcp", "headers": {"Authorization": "Bearer x"}},
  "twice": {"command": "a"},
  "twice": {"command": "b"},
  "linter": {"command": "sh", "args": ["linter.sh", "srv"]}}}`)
	s, errb := projectStreams(t, dir, filepath.Join(root, "state"))
	st, err := loadSetup(&globalOptions{Servers: []string{"tasks=fixture tasks"}}, s)
	if err != nil {
		t.Fatalf("loadSetup: %v; want the bad project entries skipped", err)
	}
	var served []string
	for _, sp := range st.specs {
		served = append(served, sp.Name)
	}
	if len(served) != 1 || served[0] != "tasks" {
		t.Errorf("served %v, want the person's own tasks alone", served)
	}
	if len(st.pending) != 1 || st.pending[0].srv.Name != "linter" {
		t.Errorf("waiting for consent: %+v, want the good project entry alone", st.pending)
	}
	file := filepath.Join(dir, ".mcp.json")
	for _, want := range []string{
		file + `:2:3: server "mcphost" is skipped: server name "mcphost" is reserved`,
		`server "unset" is skipped: environment variable MCPHOST_SURELY_UNSET is not set`,
		`server "clear" is skipped: server "clear" would get its "headers" over plain http to remote.example`,
		`server "twice" is skipped, and so is the entry at ` + file + `:5:3`,
	} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr %q does not say %q", errb.String(), want)
		}
	}
}

// Telemetry learns a server's URL as the entry shows it: a host read from
// the person's environment is never exported.
func TestTelemetryServerInfoHidesValuesFromTheEnvironment(t *testing.T) {
	root := t.TempDir()
	cfgFile := filepath.Join(root, "c.json")
	if err := os.WriteFile(cfgFile, []byte(`{"mcpServers": {"r": {"url": "https://${PRIVATE_HOST}/mcp"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, _ := projectStreams(t, root, filepath.Join(root, "state"))
	getenv := s.Getenv
	s.Getenv = func(k string) string {
		if k == "PRIVATE_HOST" {
			return "intranet-7f3.corp.example"
		}
		return getenv(k)
	}
	st, err := loadSetup(&globalOptions{ConfigFile: cfgFile}, s)
	if err != nil {
		t.Fatal(err)
	}
	info, ok := st.serverInfo("r")
	if !ok || strings.Contains(info.URL, "intranet-7f3") || !strings.Contains(info.URL, "${PRIVATE_HOST}") {
		t.Errorf("serverInfo(r) = %+v, %v; want the URL as written", info, ok)
	}
}
