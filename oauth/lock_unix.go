//go:build unix && !aix && (!solaris || illumos)

package oauth

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive flock(2) on name, creating it, and waits for it.
func lockFile(name string) (func(), error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	sc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	var ferr error
	err = sc.Control(func(fd uintptr) {
		for {
			// The runtime's preemption signals interrupt a waiting flock.
			if ferr = syscall.Flock(int(fd), syscall.LOCK_EX); !errors.Is(ferr, syscall.EINTR) {
				return
			}
		}
	})
	if err == nil {
		err = ferr
	}
	if err != nil {
		f.Close()
		return nil, &os.PathError{Op: "flock", Path: name, Err: err}
	}
	return func() { f.Close() }, nil // closing the file releases the lock
}
