//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package state

import (
	"os"
	"syscall"
)

// lockAcrossProcesses says whether lock excludes other processes.
const lockAcrossProcesses = true

// lock takes an exclusive flock(2) on the file name, creating it (mode
// 0600) if needed, and blocks until it has it. flock locks belong to the
// open file, so two locks in one process exclude each other as well.
// (Not the "unix" build tag: Solaris and AIX have no flock.)
func lock(name string) (unlock func(), err error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	fd := int(f.Fd())
	for {
		err = syscall.Flock(fd, syscall.LOCK_EX)
		// The Go runtime's preemption signals interrupt a waiting flock.
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, &os.PathError{Op: "flock", Path: name, Err: err}
	}
	return func() {
		syscall.Flock(fd, syscall.LOCK_UN)
		f.Close()
	}, nil
}
