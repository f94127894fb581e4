//go:build unix && !aix && (!solaris || illumos)

package audit

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock on the whole file, waiting for
// other processes (or other open files in this process) to release theirs.
func lockFile(f *os.File) error { return flock(f, syscall.LOCK_EX) }

func unlockFile(f *os.File) error { return flock(f, syscall.LOCK_UN) }

func flock(f *os.File, how int) error {
	sc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := sc.Control(func(fd uintptr) {
		for {
			ferr = syscall.Flock(int(fd), how)
			if !errors.Is(ferr, syscall.EINTR) {
				return
			}
		}
	}); err != nil {
		return err
	}
	return ferr
}

// syncDir makes a new directory entry in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
