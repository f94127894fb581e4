//go:build unix

package config

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// The directories mcp add creates for a config file that does not exist
// yet are readable by the person alone (0700), whatever the umask lets
// through: the file names the servers the person runs and may hold their
// headers. The umask is cleared for
// the test so that nothing narrows a wider mode by chance.
func TestAddServersCreatesPrivateDirectories(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	root := t.TempDir()
	path := filepath.Join(root, "home", "mcphost", "config.json")
	w, err := AddServers(path, SourceUser, []NamedEntry{tasksEntry}, noEnv)
	if err != nil || !w.Created {
		t.Fatalf("AddServers = %+v, %v", w, err)
	}
	for _, dir := range []string{filepath.Join(root, "home"), filepath.Join(root, "home", "mcphost")} {
		info, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode().Perm(); got != 0o700 {
			t.Errorf("%s: mode %v, want 0700", dir, got)
		}
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Mode().Perm(); got != 0o600 {
		t.Errorf("the config file: mode %v, want 0600", got)
	}
}
