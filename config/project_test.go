package config

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLoadProjectPlace: a project server's File is the project file's
// real path (symbolic links resolved) and a stdio project server's Cwd is
// absolute, in the directory mcphost found the file in, so that a consent
// bound to both tells a linked project file from the one it links to.
func TestLoadProjectPlace(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := writeFile(t, filepath.Join(root, "a", ProjectFile), `{"mcpServers": {
  "here": {"command": "sh", "args": ["x.sh"]},
  "sub":  {"command": "sh", "cwd": "tools"},
  "abs":  {"command": "sh", "cwd": "/"},
  "web":  {"url": "https://mcp.example.com"}
}}`)
	work := filepath.Join(root, "b")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(work, ProjectFile)); err != nil {
		t.Fatal(err)
	}
	// mcphost is in b through a link to it: the directory is resolved too.
	link := filepath.Join(root, "link-to-b")
	if err := os.Symlink(work, link); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := Load(LoadOptions{ConfigHome: t.TempDir(), WorkDir: link})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"here": work, "sub": filepath.Join(work, "tools"), "abs": "/", "web": ""}
	for _, s := range cfg.Servers {
		if s.File != real {
			t.Errorf("%s: File = %s, want the real path %s", s.Name, s.File, real)
		}
		if s.Cwd != want[s.Name] {
			t.Errorf("%s: Cwd = %q, want %q", s.Name, s.Cwd, want[s.Name])
		}
	}
	if len(cfg.Servers) != len(want) {
		t.Errorf("%d servers, want %d", len(cfg.Servers), len(want))
	}
}
