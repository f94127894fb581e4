//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package serve

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestLoadTokenRefusesAFileOthersCouldReadOrReplace(t *testing.T) {
	good := rand.Text()
	for _, tc := range []struct {
		name  string
		perm  os.FileMode
		token string
		link  bool
		want  string // in the error; "" accepts
	}{
		{"private", 0o600, good, false, ""},
		{"owner read-only", 0o400, good, false, ""},
		{"readable by the group", 0o640, good, false, "chmod 600"},
		{"readable by others", 0o604, good, false, "chmod 600"},
		{"writable by others", 0o602, good, false, "chmod 600"},
		{"a link to a private file", 0o600, good, true, ""},
		{"a link to a world-writable file", 0o666, good, true, "a link to"},
		{"too short to be a secret", 0o600, "x", false, "too short"},
		{"short through a link", 0o600, "xxxxxxxxxxxxxxx", true, "too short"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "token")
			if err := os.WriteFile(file, []byte(tc.token+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			// WriteFile's mode passes the umask; Chmod sets it exactly.
			if err := os.Chmod(file, tc.perm); err != nil {
				t.Fatal(err)
			}
			path := file
			if tc.link {
				path = filepath.Join(dir, "serve-token")
				if err := os.Symlink(file, path); err != nil {
					t.Fatal(err)
				}
			}
			tok, created, err := LoadToken(path)
			if tc.want == "" {
				if err != nil || created || tok != tc.token {
					t.Fatalf("LoadToken = %q, %v, %v; want %q, not created", tok, created, err, tc.token)
				}
				return
			}
			if err == nil {
				t.Fatalf("LoadToken accepted %q from a file of mode %04o", tok, tc.perm)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("error %q: want it to name %s and say %q", err, path, tc.want)
			}
			if tc.perm&0o077 != 0 && !strings.Contains(err.Error(), "chmod 600 "+file) {
				t.Fatalf("error %q: want the fix on the file itself, chmod 600 %s", err, file)
			}
		})
	}
}

func TestLoadTokenRefusesAnotherUsersFile(t *testing.T) {
	if os.Getuid() == 0 {
		// Root can make a file of another user; others cannot, and then a
		// file of another user is one of the system's (root's) own.
		dir := t.TempDir()
		file := filepath.Join(dir, "token")
		if err := os.WriteFile(file, []byte(rand.Text()), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(file, 4321, 4321); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(dir, "serve-token")
		if err := os.Symlink(file, link); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{file, link} {
			if _, _, err := LoadToken(p); err == nil || !strings.Contains(err.Error(), "belongs to uid 4321") {
				t.Fatalf("LoadToken(%s) = %v, want a refusal naming the owner", p, err)
			}
		}
		return
	}
	f := "/etc/hostname"
	if _, err := os.Stat(f); err != nil {
		f = "/etc/passwd"
	}
	if _, _, err := LoadToken(f); err == nil || !strings.Contains(err.Error(), "not to this user") {
		t.Fatalf("LoadToken(%s) = %v, want a refusal naming the owner", f, err)
	}
}

func TestLoadTokenRefusesWhatIsNotAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "serve-token")
	// A FIFO in its place: opening it must neither hang nor be read as
	// a token.
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadToken(path); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("LoadToken(a FIFO) = %v, want a refusal saying it is not a regular file", err)
	}
}
