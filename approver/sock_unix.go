//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package approver

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// maxSocketPath is the longest socket path every supported system binds
// (sun_path is 104 bytes on the BSDs and macOS, 108 on Linux, NUL included).
const maxSocketPath = 103

// listen creates the socket at path as Listen describes.
func listen(path string) (*net.UnixListener, func(), error) {
	if len(path) > maxSocketPath {
		return nil, nil, fmt.Errorf("approver socket %s: the path is longer than the %d bytes a Unix socket allows; set XDG_STATE_HOME to a shorter directory", path, maxSocketPath)
	}
	dir := filepath.Dir(path)
	if err := privateDir(dir); err != nil {
		return nil, nil, err
	}
	unlock, err := lockDir(path + ".lock")
	if err != nil {
		return nil, nil, err
	}
	if err := clearStale(path); err != nil {
		unlock()
		return nil, nil, err
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		unlock()
		return nil, nil, fmt.Errorf("approver socket: %w", err)
	}
	ln.SetUnlinkOnClose(true)
	// The directory is 0700 already, so nobody else could connect in the
	// moment before this; the mode is the second wall.
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		unlock()
		return nil, nil, fmt.Errorf("approver socket: %w", err)
	}
	sweep(dir, path)
	release := func() {
		// The socket is gone already (unlinked on close); its lock goes
		// too, so that the directory holds only what runs.
		_ = os.Remove(path + ".lock")
		unlock()
	}
	return ln, release, nil
}

// sweep removes the sockets (and their locks) that serves which died left
// in dir, so that approvers do not try them. A socket whose lock is held,
// or on which a process answers, is kept.
func sweep(dir, own string) {
	socks, err := filepath.Glob(filepath.Join(dir, socketGlob))
	if err != nil {
		return
	}
	for _, sock := range socks {
		if sock == own {
			continue
		}
		unlock, err := lockDir(sock + ".lock")
		if err != nil {
			continue // its serve lives, or the lock cannot be told
		}
		if clearStale(sock) == nil {
			_ = os.Remove(sock + ".lock")
		}
		unlock()
	}
}

// privateDir makes dir (and its parents) exist, be a directory of this
// user's, not a symbolic link, with mode 0700.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("approver socket directory: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("approver socket directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("approver socket directory %s is not a directory (a symbolic link?); remove it", dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("approver socket directory %s belongs to uid %d, not to this user (%d); remove it", dir, st.Uid, os.Getuid())
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("approver socket directory: %w", err)
		}
	}
	return nil
}

// lockDir takes the lock (a file beside the socket) that makes one serve
// the owner of the socket. It
// is held until unlock, and released by the system if the process dies,
// which is how a socket file left behind is known to be stale.
func lockDir(name string) (func(), error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("approver socket lock: %w", err)
	}
	fd := int(f.Fd())
	for {
		err = syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			break
		}
	}
	if errors.Is(err, syscall.EWOULDBLOCK) {
		f.Close()
		return nil, fmt.Errorf("%w (it holds %s); approvers connect to that one, or stop it first", ErrBusy, name)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("approver socket lock %s: %w", name, err)
	}
	return func() {
		_ = syscall.Flock(fd, syscall.LOCK_UN)
		f.Close()
	}, nil
}

// clearStale removes a socket file that no process answers on. With the
// lock held it can only be stale; a process that still answers (one that
// ignores the lock) keeps it, and so does anything that is not a socket.
func clearStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("approver socket: %w", err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("approver socket %s exists and is not a socket; remove it", path)
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return fmt.Errorf("%w: a process answers on %s; stop it first", ErrBusy, path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("approver socket: removing the stale %s: %w", path, err)
	}
	return nil
}
