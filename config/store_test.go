package config

import (
	"strings"
	"testing"
)

// TestStoreKey: the user's "store" is a postgres:// URL, checked where it
// stands and never shown with its password; a project file's is ignored
// with a warning.
func TestStoreKey(t *testing.T) {
	r, err := parse("c.json", []byte(`{"store": "postgres://mcphost@db.internal:5432/mcphost?sslmode=require"}`), SourceUser, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.cfg.Store != "postgres://mcphost@db.internal:5432/mcphost?sslmode=require" {
		t.Fatalf("store = %q", r.cfg.Store)
	}
	r, err = parse(".mcp.json", []byte(`{"store": "postgres://evil.example/x"}`), SourceProject, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.cfg.Store != "" || len(r.warnings) != 1 || !strings.Contains(r.warnings[0].Message, `"store" is ignored in a project file`) {
		t.Errorf("a project file's store: %q, warnings %v", r.cfg.Store, r.warnings)
	}
	for _, c := range []struct{ data, want string }{
		{`{"store": 5}`, `c.json:1:11: expected a string for "store"`},
		{`{"store": "mysql://u:pw-s3cret@db/x"}`, `c.json:1:11: invalid "store": the store mysql://u:xxxxx@db/x: want a postgres:// URL`},
		{`{"store": "postgres://u:pw-s3cret@db:port/x"}`, `invalid port`},
		{`{"store": "postgres://u:pw-s3cret@db/x?sslmode=maybe"}`, `sslmode`},
	} {
		_, err := parse("c.json", []byte(c.data), SourceUser, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.data, err, c.want)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: the error shows the password: %v", c.data, err)
		}
	}
}
