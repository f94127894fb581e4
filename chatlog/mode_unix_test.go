//go:build unix

package chatlog

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A session holds tool output: its file is created 0600 and its folder
// 0700, whatever the umask lets through (it is set permissive here, so
// that a wider mode would show).
func TestSessionFileModes(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "sessions")
	l := newLog(t, dir, "s1")
	if err := l.Append(Record{Type: TypeNote, Note: NoteCleared}); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700, l.Path(): 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s has mode %o, want %o", path, got, want)
		}
	}
}
