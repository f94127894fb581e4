package state

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/decide"
)

func statePath(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "mcphost", "state.json")
}

func mustUpdate(t *testing.T, path string, now func() time.Time, fn func(*State) error) {
	t.Helper()
	if err := Update(path, now, fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

func mustLoad(t *testing.T, path string) *State {
	t.Helper()
	s, err := Load(path)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return s
}

// fill records one of everything, as in the package documentation.
func fill(s *State) error {
	s.SetPin("3b7a", "set_status", "9e1d")
	s.SetTrust("3b7a", "tasks", true)
	if err := s.AddGrant(always("3b7a", "set_status", "9e1d"), "tasks"); err != nil {
		return err
	}
	s.SetConsent("db", "5f0c", ChoiceUntrusted)
	return nil
}

const filled = `{
  "version": 1,
  "consents": {
    "db": {
      "choice": "untrusted",
      "chosenAt": "2026-05-01T10:03:00Z",
      "hash": "5f0c"
    }
  },
  "grants": [
    {
      "definitionHash": "9e1d",
      "grantedAt": "2026-05-01T10:02:00Z",
      "name": "tasks",
      "scope": "always",
      "server": "3b7a",
      "tool": "set_status"
    }
  ],
  "pins": {
    "3b7a": {
      "set_status": {
        "hash": "9e1d",
        "pinnedAt": "2026-05-01T10:00:00Z"
      }
    }
  },
  "trust": {
    "3b7a": {
      "name": "tasks",
      "trustedAt": "2026-05-01T10:01:00Z"
    }
  }
}
`

func TestFormat(t *testing.T) {
	path := statePath(t)
	mustUpdate(t, path, clock(), fill)
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(filled, string(got)); diff != "" {
		t.Errorf("file (-want +got):\n%s", diff)
	}
}

func TestRoundTrip(t *testing.T) {
	path := statePath(t)
	var written *State
	mustUpdate(t, path, clock(), func(s *State) error {
		written = s
		if err := fill(s); err != nil {
			return err
		}
		s.PinNew("3b7a", map[string]string{"list": "l1", "<&>\"quoted\"\n": "x"})
		s.SetTrust("ünïcode", "naïve <name>", true)
		s.SetConsent("other", "h", ChoiceSkipped)
		return s.AddGrant(always("id2", "delete", "d2"), "")
	})
	got := mustLoad(t, path)
	if diff := cmp.Diff(written, got, equalState); diff != "" {
		t.Errorf("loaded state (-written +loaded):\n%s", diff)
	}
	// The grants decide sees are exactly the ones stored, field for field.
	want := []decide.Grant{always("3b7a", "set_status", "9e1d"), always("id2", "delete", "d2")}
	if diff := cmp.Diff(want, got.Grants()); diff != "" {
		t.Errorf("Grants after reload (-want +got):\n%s", diff)
	}
	if c, ok := got.Consent("db", "5f0c"); !ok || c.Choice != ChoiceUntrusted {
		t.Errorf("Consent(db) after reload = %+v, %v", c, ok)
	}
	if _, ok := got.Consent("db", "changed"); ok {
		t.Error("a consent for another hash applies after reload")
	}
}

func TestMissingFileIsEmpty(t *testing.T) {
	s := mustLoad(t, statePath(t))
	if len(s.Grants()) != 0 || len(s.TrustRecords()) != 0 {
		t.Errorf("Load of a missing file = %+v, want an empty state", s)
	}
}

func TestUnknownFields(t *testing.T) {
	path := statePath(t)
	in := `{"version": 1, "zeta": {"b": [1, 2], "a": "<kept>"}, "alpha": 7,
  "grants": [{"scope": "always", "server": "s", "tool": "t", "definitionHash": "d", "futureField": true}],
  "pins": {}, "trust": {}, "consents": {}}`
	writeRaw(t, path, in)
	mustUpdate(t, path, clock(), func(s *State) error {
		s.SetTrust("s", "name", true)
		return nil
	})
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "version": 1,
  "alpha": 7,
  "consents": {},
  "grants": [
    {
      "definitionHash": "d",
      "scope": "always",
      "server": "s",
      "tool": "t"
    }
  ],
  "pins": {},
  "trust": {
    "s": {
      "name": "name",
      "trustedAt": "2026-05-01T10:00:00Z"
    }
  },
  "zeta": {
    "b": [
      1,
      2
    ],
    "a": "<kept>"
  }
}
`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("file (-want +got):\n%s", diff)
	}
}

func writeRaw(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestCorrupt(t *testing.T) {
	for _, tc := range []struct {
		name      string
		data      string
		line, col int // 0: no position expected
		msg       string
	}{
		{"syntax", "{\n  \"version\": 1,\n  \"grants\": [,]\n}", 3, 14, "invalid character ','"},
		{"trailing comma", `{"version": 1,}`, 1, 15, "invalid character '}'"},
		{"truncated", "{\"version\": 1, \"grants\": [", 1, 26, "unexpected end of JSON input"},
		{"after the value", "{\"version\": 1}\n{}", 2, 1, "after top-level value"},
		{"column counts characters", "{\"version\": 1, \"trust\": {\"é\": x}}", 1, 31, "invalid character 'x'"},
		{"wrong type", "{\"version\": 1,\n \"grants\": [{\"tool\": 5}]}", 2, 22, "grants.tool: want a string, not number"},
		{"version as string", `{"version": "1"}`, 1, 15, "version: want an integer, not string"},
		{"pins not an object", `{"version": 1, "pins": []}`, 1, 24, "pins: want an object, not array"},
		{"array", `[]`, 1, 1, "must hold a JSON object, not array"},
		{"null", `null`, 0, 0, "null"},
		{"empty", "", 0, 0, "the file is empty"},
		{"blank", " \n", 0, 0, "the file is empty"},
		{"no version", `{}`, 0, 0, `"version" is missing`},
		{"version zero", `{"version": 0}`, 0, 0, `"version" is 0`},
		{"session grant", `{"version": 1, "grants": [{"scope": "session", "server": "s", "tool": "t", "definitionHash": "d"}]}`, 0, 0, "grants[0]: scope is session; only always grants are kept"},
		{"bad scope", `{"version": 1, "grants": [{"scope": "forever", "server": "s", "tool": "t", "definitionHash": "d"}]}`, 0, 0, `grants[0]: scope "forever"`},
		{"args hash", `{"version": 1, "grants": [{"scope": "always", "server": "s", "tool": "t", "definitionHash": "d", "argsHash": "a"}]}`, 0, 0, "argsHash"},
		{"no definition hash", `{"version": 1, "grants": [{"scope": "always", "server": "s", "tool": "t"}]}`, 0, 0, "definition hash is empty"},
		{"two grants", `{"version": 1, "grants": [{"scope": "always", "server": "s", "tool": "t", "definitionHash": "d"}, {"scope": "always", "server": "s", "tool": "t", "definitionHash": "e"}]}`, 0, 0, "two grants"},
		{"bad time", `{"version": 1, "trust": {"s": {"trustedAt": "yesterday"}}}`, 0, 0, `trust["s"].trustedAt: "yesterday" is not a time`},
		{"empty pin", `{"version": 1, "pins": {"s": {"t": {"hash": ""}}}}`, 0, 0, `pins["s"]["t"].hash is empty`},
		{"bad choice", `{"version": 1, "consents": {"db": {"hash": "h", "choice": "yes"}}}`, 0, 0, `consents["db"].choice: "yes" is not a choice`},
		{"no choice", `{"version": 1, "consents": {"db": {"hash": "h"}}}`, 0, 0, `consents["db"].choice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := statePath(t)
			writeRaw(t, path, tc.data)
			_, err := Load(path)
			var ce *CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("Load = %v, want a *CorruptError", err)
			}
			if ce.Path != path || ce.Line != tc.line || ce.Col != tc.col || !strings.Contains(ce.Msg, tc.msg) {
				t.Errorf("Load error = %+v; want line %d col %d and a message with %q", *ce, tc.line, tc.col, tc.msg)
			}
			if !strings.Contains(err.Error(), "fix or move the file; mcphost will not overwrite it") {
				t.Errorf("error %q does not say what to do", err)
			}
			assertUpdateRefuses(t, path, []byte(tc.data), &ce)
		})
	}
}

// assertUpdateRefuses checks that Update fails with an error of target's
// type, never calls fn, and leaves the file's bytes as they were.
func assertUpdateRefuses[E error](t *testing.T, path string, data []byte, target *E) {
	t.Helper()
	called := false
	err := Update(path, clock(), func(s *State) error {
		called = true
		s.SetTrust("x", "x", true)
		return nil
	})
	if !errors.As(err, target) {
		t.Errorf("Update = %v, want %T", err, *target)
	}
	if called {
		t.Error("Update called fn on a file it cannot read")
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Errorf("Update changed the file to %q", got)
	}
}

func TestTooLarge(t *testing.T) {
	path := statePath(t)
	data := append([]byte(`{"version": 1}`), bytes.Repeat([]byte(" "), MaxSize)...)
	writeRaw(t, path, string(data))
	_, err := Load(path)
	var ce *CorruptError
	if !errors.As(err, &ce) || !strings.Contains(ce.Msg, "larger than 16 MiB") {
		t.Fatalf("Load = %v, want a *CorruptError about the size", err)
	}
	assertUpdateRefuses(t, path, data, &ce)

	// Exactly MaxSize is still read.
	writeRaw(t, path, string(data[:MaxSize]))
	if _, err := Load(path); err != nil {
		t.Errorf("Load of a file of MaxSize bytes: %v", err)
	}
}

func TestNewerVersion(t *testing.T) {
	path := statePath(t)
	data := `{"version": 2, "grants": {"a new": "shape"}}`
	writeRaw(t, path, data)
	_, err := Load(path)
	var ve *VersionError
	if !errors.As(err, &ve) || ve.Version != 2 || ve.Path != path {
		t.Fatalf("Load = %v, want a *VersionError for version 2", err)
	}
	if !strings.Contains(err.Error(), "upgrade mcphost") {
		t.Errorf("error %q does not say what to do", err)
	}
	assertUpdateRefuses(t, path, []byte(data), &ve)
}

func TestNotARegularFile(t *testing.T) {
	path := statePath(t)
	if err := os.MkdirAll(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Load of a directory = %v, want an error saying it is not a regular file", err)
	}
	if err := Update(path, clock(), func(*State) error { t.Error("fn called"); return nil }); err == nil {
		t.Error("Update over a directory succeeded")
	}
}

func TestFnErrorWritesNothing(t *testing.T) {
	path := statePath(t)
	mustUpdate(t, path, clock(), fill)
	before, _ := os.ReadFile(path)
	errStop := errors.New("stop")
	err := Update(path, clock(), func(s *State) error {
		s.RevokeGrants("", "")
		return errStop
	})
	if err != errStop {
		t.Errorf("Update = %v, want fn's error unchanged", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Error("Update wrote although fn failed")
	}
}

// replaceRename swaps the rename used by writeFile for the rest of the test.
func replaceRename(t *testing.T, f func(oldpath, newpath string) error) {
	t.Helper()
	saved := rename
	rename = f
	t.Cleanup(func() { rename = saved })
}

func TestCrashBeforeRename(t *testing.T) {
	path := statePath(t)
	mustUpdate(t, path, clock(), fill)
	before, _ := os.ReadFile(path)

	errCrash := errors.New("crash")
	var tmp string
	replaceRename(t, func(oldpath, newpath string) error {
		tmp = oldpath
		// The temporary file is complete and beside the target when the rename would happen.
		if filepath.Dir(oldpath) != filepath.Dir(newpath) {
			t.Errorf("temporary file %s is not in the directory of %s", oldpath, newpath)
		}
		if b, err := os.ReadFile(oldpath); err != nil || !bytes.Contains(b, []byte(`"gone"`)) {
			t.Errorf("temporary file holds %q, %v; want the new state", b, err)
		}
		return errCrash
	})
	err := Update(path, clock(), func(s *State) error {
		s.SetTrust("gone", "gone", true)
		return nil
	})
	if !errors.Is(err, errCrash) {
		t.Fatalf("Update = %v, want the rename error", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Errorf("the old file changed after a failed rename:\n%s", after)
	}
	if _, err := os.Stat(tmp); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("temporary file %s left behind: %v", tmp, err)
	}
}

// A process that dies between writing its temporary file and renaming it
// leaves the file behind: Load ignores it and the next Update removes it.
func TestLeftoverTempFile(t *testing.T) {
	path := statePath(t)
	mustUpdate(t, path, clock(), fill)
	stale := path + tempInfix + "12345"
	writeRaw(t, stale, `{"version": 1, "trust": {"half": {}`)

	s := mustLoad(t, path)
	if s.Trusted("half") || !s.Trusted("3b7a") {
		t.Error("Load read the temporary file instead of the state file")
	}
	mustUpdate(t, path, clock(), func(s *State) error {
		s.SetTrust("new", "", true)
		return nil
	})
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stale temporary file survived an Update: %v", err)
	}
	if !mustLoad(t, path).Trusted("new") {
		t.Error("the update was lost")
	}
}

func TestUnchangedIsNotRewritten(t *testing.T) {
	path := statePath(t)
	mustUpdate(t, path, clock(), fill)
	replaceRename(t, func(string, string) error {
		t.Error("Update rewrote a file it did not change")
		return nil
	})
	mustUpdate(t, path, clock(), fill) // same content, later clock: times stay
	mustUpdate(t, path, clock(), func(s *State) error {
		s.PinNew("3b7a", map[string]string{"set_status": "changed"})
		return nil
	})
}

func TestModes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permissions")
	}
	path := statePath(t)
	writeRaw(t, path, `{"version": 1}`)
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, path, clock(), fill)

	fresh := filepath.Join(t.TempDir(), "a", "b", "state.json")
	mustUpdate(t, fresh, clock(), fill)

	for name, want := range map[string]fs.FileMode{
		path:                              0o600,
		fresh:                             0o600,
		fresh + lockSuffix:                0o600,
		filepath.Dir(fresh):               0o700 | fs.ModeDir,
		filepath.Dir(filepath.Dir(fresh)): 0o700 | fs.ModeDir,
	} {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode(); got != want {
			t.Errorf("mode of %s = %v, want %v", name, got, want)
		}
	}
}
