//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package serve

import (
	"fmt"
	"os"
	"syscall"
)

// openToken opens the token file for reading and checks, on the open file
// (so on what a symbolic link leads to, and with no moment for a swap
// between the check and the read), that it is a regular file of this user
// that no one else may read or write. A missing file is an error wrapping
// fs.ErrNotExist.
func openToken(path string) (*os.File, error) {
	// Non-blocking, so a FIFO put in its place cannot hang serve's start.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("read the token file: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("read the token file: %w", err)
	}
	file, name := tokenTarget(path)
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("the token file %s is not a regular file: point --token-file at a file, or delete it to have a new token made", name)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		f.Close()
		return nil, fmt.Errorf("the token file %s belongs to uid %d, not to this user (%d), who could read or replace the token: delete it to have a new one made, or use a file of your own", name, st.Uid, os.Getuid())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		f.Close()
		return nil, fmt.Errorf("the token file %s has mode %04o, so other users can read or change the token: run chmod 600 %s, or delete it to have a new one made", name, perm, file)
	}
	return f, nil
}
