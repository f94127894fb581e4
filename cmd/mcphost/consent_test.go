package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/client"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/state"
	"github.com/rogpeppe/go-internal/testscript"
)

// consentAsTheDialogDoes is the script command `consent SERVER CHOICE`: it
// records a person's choice about a project server of the working
// directory the way the interactive dialog does, under the key and hash
// that runTUI hands the dialog (setup.projectServers), so a story can
// consent without a terminal.
func consentAsTheDialogDoes(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: consent SERVER trusted|untrusted|skipped")
	}
	choice, ok := map[string]state.Choice{"trusted": state.ChoiceTrusted, "untrusted": state.ChoiceUntrusted, "skipped": state.ChoiceSkipped}[args[1]]
	if !ok {
		ts.Fatalf("consent: unknown choice %q", args[1])
	}
	s := &streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard, Getenv: ts.Getenv, WorkDir: ts.MkAbs(".")}
	st, err := loadSetup(&globalOptions{}, s)
	ts.Check(err)
	for _, ps := range st.projectServers() {
		if ps.Name == args[0] {
			ts.Check(state.Update(filepath.Join(st.stateDir, "state.json"), time.Now, func(s *state.State) error {
				s.SetConsent(ps.ConsentKey, ps.ConsentHash, choice)
				return nil
			}))
			return
		}
	}
	ts.Fatalf("consent: no project server %q waits for consent here", args[0])
}

// project writes a project directory holding .mcp.json and its own
// linter.sh, and returns it.
func project(t *testing.T, dir, mcpJSON string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, config.ProjectFile), []byte(mcpJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "linter.sh"), []byte("# the linter of "+dir+"\nexec fixture tasks\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func projectStreams(t *testing.T, dir, stateHome string) (*streams, *bytes.Buffer) {
	errb := &bytes.Buffer{}
	env := map[string]string{"XDG_STATE_HOME": stateHome, "XDG_CONFIG_HOME": filepath.Join(stateHome, "config")}
	return &streams{In: strings.NewReader(""), Out: io.Discard, Err: errb, Getenv: func(k string) string { return env[k] }, WorkDir: dir}, errb
}

// TestConsentHashCoversEveryField changes each field of config.Server in
// turn (the fields of its OAuth client too) and expects the consent hash
// to change. A field added to config.Server later is covered by the hash
// unless it hides from JSON; then this test fails until it is covered or
// named below with the reason it is not.
func TestConsentHashCoversEveryField(t *testing.T) {
	notCovered := map[string]string{
		"Consented":  "set by this run's --trust, not by the file; a consented server is not checked",
		"written":    "the values that read the environment as written, kept for showing the entry; the values they expand to, and Vars, are covered",
		"distrusted": `"trust": false in the person's own file; a project file's "trust" is ignored, so it is always false on a project server`,
	}
	base := config.Server{Name: "linter", Transport: config.TransportStdio, Command: "python3", Args: []string{"linter.py"},
		Source: config.SourceProject, File: "/repo/a/.mcp.json", Cwd: "/repo/a", OAuth: &config.OAuthClient{}}
	h0 := consentHash(base)
	var walk func(prefix string, typ reflect.Type, get func(*config.Server) reflect.Value)
	walk = func(prefix string, typ reflect.Type, get func(*config.Server) reflect.Value) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			name := prefix + f.Name
			if _, skip := notCovered[name]; skip {
				continue
			}
			if f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct {
				walk(name+".", f.Type.Elem(), func(s *config.Server) reflect.Value { return get(s).Field(i).Elem() })
			}
			s := base
			if base.OAuth != nil {
				o := *base.OAuth
				s.OAuth = &o
			}
			v := get(&s).Field(i)
			if !v.CanSet() {
				t.Errorf("config.Server field %s is unexported: the consent hash cannot see it", name)
				continue
			}
			perturb(t, name, v)
			if consentHash(s) == h0 {
				t.Errorf("changing config.Server field %s does not change the consent hash: a project file could change it without new consent", name)
			}
		}
	}
	walk("", reflect.TypeFor[config.Server](), func(s *config.Server) reflect.Value { return reflect.ValueOf(s).Elem() })
}

// perturb changes v to another value of its type.
func perturb(t *testing.T, name string, v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(v.Int() + 1)
	case reflect.Slice:
		v.Set(reflect.Append(v, reflect.New(v.Type().Elem()).Elem()))
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		m.SetMapIndex(reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem())
		v.Set(m)
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		} else {
			v.Set(reflect.Zero(v.Type()))
		}
	default:
		t.Fatalf("config.Server field %s has kind %s: teach perturb to change it", name, v.Kind())
	}
}

// TestConsentBoundToProject: the same server name and command in two
// projects are two consents. Consenting to A's linter does not start B's
// linter, and A's linter starts after its consent.
func TestConsentBoundToProject(t *testing.T) {
	root := t.TempDir()
	entry := `{"mcpServers": {"linter": {"command": "sh", "args": ["linter.sh", "srv"]}}}`
	a := project(t, filepath.Join(root, "a"), entry)
	b := project(t, filepath.Join(root, "b"), entry)
	stateHome := filepath.Join(root, "state")

	sa, _ := projectStreams(t, a, stateHome)
	st, err := loadSetup(&globalOptions{}, sa)
	if err != nil {
		t.Fatal(err)
	}
	ps := st.projectServers()
	if len(ps) != 1 || len(st.specs) != 0 {
		t.Fatalf("before consent: %d waiting, %d to start; want 1 and 0", len(ps), len(st.specs))
	}
	if err := state.Update(filepath.Join(stateHome, "mcphost", "state.json"), time.Now, func(s *state.State) error {
		s.SetConsent(ps[0].ConsentKey, ps[0].ConsentHash, state.ChoiceTrusted)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if st.stateDir != filepath.Join(stateHome, "mcphost") {
		t.Fatalf("state directory %s: the test writes the wrong file", st.stateDir)
	}

	st, err = loadSetup(&globalOptions{}, sa)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.specs) != 1 || !st.trusted["linter"] {
		t.Fatalf("A's linter after consent: %d to start, trusted %v; want it started and trusted", len(st.specs), st.trusted["linter"])
	}

	sb, _ := projectStreams(t, b, stateHome)
	st, err = loadSetup(&globalOptions{}, sb)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.specs) != 0 || st.trusted["linter"] || len(st.pending) != 1 {
		t.Fatalf("B's linter after consenting to A's: %d to start, trusted %v; want it held for consent", len(st.specs), st.trusted["linter"])
	}
	msg := st.held[0].LastError
	if want := "sh " + filepath.Join(b, "linter.sh") + " srv"; !strings.Contains(msg, want) {
		t.Errorf("B's needs-consent message does not show the resolved command %q:\n%s", want, msg)
	}
	if strings.Contains(msg, "changed") {
		t.Errorf("B's server was never consented to, yet the message says it changed:\n%s", msg)
	}
}

// TestConsentSymlinkedProjectFile: a project file that is a symbolic link
// to a consented one still asks, because its relative paths resolve in
// the linking project.
func TestConsentSymlinkedProjectFile(t *testing.T) {
	root := t.TempDir()
	a := project(t, filepath.Join(root, "a"), `{"mcpServers": {"linter": {"command": "sh", "args": ["linter.sh"]}}}`)
	c := filepath.Join(root, "c")
	if err := os.MkdirAll(c, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c, "linter.sh"), []byte("exec fixture hostile\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(a, config.ProjectFile), filepath.Join(c, config.ProjectFile)); err != nil {
		t.Fatal(err)
	}
	stateHome := filepath.Join(root, "state")
	sa, _ := projectStreams(t, a, stateHome)
	sc, _ := projectStreams(t, c, stateHome)
	sta, err := loadSetup(&globalOptions{}, sa)
	if err != nil {
		t.Fatal(err)
	}
	stc, err := loadSetup(&globalOptions{}, sc)
	if err != nil {
		t.Fatal(err)
	}
	pa, pc := sta.pending[0], stc.pending[0]
	if pa.key != pc.key {
		t.Errorf("the same file through a symbolic link has another key: %s and %s", pa.key, pc.key)
	}
	if pa.hash == pc.hash {
		t.Error("a symbolic link to a consented project file would start the linking project's own linter.sh unasked")
	}
	if want := "sh " + filepath.Join(c, "linter.sh"); !slices.Equal(resolvedCommandLine(pc.srv), []string{"sh", filepath.Join(c, "linter.sh")}) {
		t.Errorf("resolved command line %q, want %q", resolvedCommandLine(pc.srv), want)
	}
}

// TestConsentCoversTimeouts: a project file cannot change a consented
// server's callTimeout or startTimeout without asking again.
func TestConsentCoversTimeouts(t *testing.T) {
	for _, field := range []string{"callTimeout", "startTimeout"} {
		t.Run(field, func(t *testing.T) {
			root := t.TempDir()
			a := project(t, filepath.Join(root, "a"), `{"mcpServers": {"linter": {"command": "sh", "args": ["linter.sh"], "`+field+`": "30s"}}}`)
			stateHome := filepath.Join(root, "state")
			sa, _ := projectStreams(t, a, stateHome)
			st, err := loadSetup(&globalOptions{}, sa)
			if err != nil {
				t.Fatal(err)
			}
			ps := st.projectServers()[0]
			if err := state.Update(filepath.Join(st.stateDir, "state.json"), time.Now, func(s *state.State) error {
				s.SetConsent(ps.ConsentKey, ps.ConsentHash, state.ChoiceTrusted)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			project(t, a, `{"mcpServers": {"linter": {"command": "sh", "args": ["linter.sh"], "`+field+`": "9m"}}}`)
			st, err = loadSetup(&globalOptions{}, sa)
			if err != nil {
				t.Fatal(err)
			}
			if len(st.specs) != 0 || len(st.pending) != 1 {
				t.Fatalf("after %s changed: %d to start; want it held for new consent", field, len(st.specs))
			}
			if !strings.Contains(st.held[0].LastError, "changed since you consented") {
				t.Errorf("the message does not say the entry changed:\n%s", st.held[0].LastError)
			}
		})
	}
}

// TestProjectCallTimeoutClamped: a project file cannot raise the call
// ceiling through its callTimeout (the client extends the ceiling to a
// longer call timeout), whether it waits for consent (the interactive
// path starts pending servers) or was consented with --trust.
func TestProjectCallTimeoutClamped(t *testing.T) {
	root := t.TempDir()
	a := project(t, filepath.Join(root, "a"), `{"mcpServers": {"linter": {"command": "sh", "args": ["linter.sh"], "callTimeout": "2h"}}}`)
	sa, errb := projectStreams(t, a, filepath.Join(root, "state"))
	st, err := loadSetup(&globalOptions{}, sa)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.pending[0].spec.CallTimeout; got != callCeiling {
		t.Errorf("pending project server's call timeout = %s, want the %s ceiling", got, callCeiling)
	}
	if st.clientOpts.CallCeiling != callCeiling {
		t.Errorf("the client's ceiling = %s, want %s, the value project servers are clamped to", st.clientOpts.CallCeiling, callCeiling)
	}
	if !strings.Contains(errb.String(), `"callTimeout" 2h0m0s is above the 10m0s call ceiling`) {
		t.Errorf("no warning about the clamped timeout:\n%s", errb)
	}
	st, err = loadSetup(&globalOptions{Trust: []string{"linter"}}, sa)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.specs) != 1 || st.specs[0].CallTimeout != callCeiling {
		t.Errorf("--trust project server: specs %+v, want one with a %s call timeout", st.specs, callCeiling)
	}
}

// TestConsentSameForDialogAndHeadless: the key and hash the interactive
// dialog records (setup.projectServers) are the ones the headless check
// reads, for entries of every kind; a consent recorded from the dialog's
// values starts every server headless.
func TestConsentSameForDialogAndHeadless(t *testing.T) {
	root := t.TempDir()
	a := project(t, filepath.Join(root, "a"), `{"mcpServers": {
  "linter": {"command": "sh", "args": ["linter.sh", "srv"], "env": {"K": "v"}, "cwd": "tools", "callTimeout": "30s", "startTimeout": "5s", "protocolVersion": "2025-06-18"},
  "remote": {"url": "https://mcp.example.com/v1", "headers": {"X-Team": "a"}, "oauth": {"clientId": "id", "scopes": ["read"]}},
  "events": {"type": "sse", "url": "https://mcp.example.com/sse"}
}}`)
	stateHome := filepath.Join(root, "state")
	sa, _ := projectStreams(t, a, stateHome)
	st, err := loadSetup(&globalOptions{}, sa)
	if err != nil {
		t.Fatal(err)
	}
	ps := st.projectServers()
	if len(ps) != 3 {
		t.Fatalf("%d servers wait for consent, want 3", len(ps))
	}
	for i, p := range ps {
		srv, _ := st.cfg.Server(p.Name)
		if p.ConsentKey != consentKey(srv) || p.ConsentHash != consentHash(srv) || p.ConsentKey != st.pending[i].key || p.ConsentHash != st.pending[i].hash {
			t.Errorf("%s: the dialog records %s %s, the headless check reads %s %s", p.Name, p.ConsentKey, p.ConsentHash, st.pending[i].key, st.pending[i].hash)
		}
		if want := filepath.Join(a, config.ProjectFile) + "#" + p.Name; p.ConsentKey != want {
			t.Errorf("%s: key %q, want %q", p.Name, p.ConsentKey, want)
		}
	}
	if err := state.Update(filepath.Join(st.stateDir, "state.json"), time.Now, func(s *state.State) error {
		for _, p := range ps {
			s.SetConsent(p.ConsentKey, p.ConsentHash, state.ChoiceUntrusted)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	st, err = loadSetup(&globalOptions{}, sa)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.specs) != 3 || len(st.pending) != 0 {
		t.Errorf("after consenting through the dialog's values: %d start, %d wait; want 3 and 0", len(st.specs), len(st.pending))
	}
	if want := filepath.Join(a, "tools"); st.specs[slices.IndexFunc(st.specs, func(s client.Spec) bool { return s.Name == "linter" })].Cwd != want {
		t.Errorf("linter's cwd is not %s, resolved against the project", want)
	}
}

// TestNameOnlyConsentNoLongerApplies: a consent recorded under the bare
// server name, as earlier versions did, starts nothing: the person is
// asked again.
func TestNameOnlyConsentNoLongerApplies(t *testing.T) {
	root := t.TempDir()
	a := project(t, filepath.Join(root, "a"), `{"mcpServers": {"linter": {"command": "sh", "args": ["linter.sh"]}}}`)
	sa, _ := projectStreams(t, a, filepath.Join(root, "state"))
	st, err := loadSetup(&globalOptions{}, sa)
	if err != nil {
		t.Fatal(err)
	}
	hash := st.pending[0].hash
	if err := state.Update(filepath.Join(st.stateDir, "state.json"), time.Now, func(s *state.State) error {
		s.SetConsent("linter", hash, state.ChoiceTrusted)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	st, err = loadSetup(&globalOptions{}, sa)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.specs) != 0 || len(st.pending) != 1 {
		t.Error("a consent recorded under the bare name still starts the server")
	}
}
