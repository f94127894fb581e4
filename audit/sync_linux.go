package audit

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// syncData makes the file's data durable with fdatasync(2): it writes the
// data and the metadata needed to read it back (the size of a file that
// grew), not its times, which is all a log that is only appended to needs.
func syncData(f *os.File) error {
	sc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := sc.Control(func(fd uintptr) {
		for {
			serr = unix.Fdatasync(int(fd))
			if !errors.Is(serr, unix.EINTR) {
				return
			}
		}
	}); err != nil {
		return err
	}
	if serr != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: serr}
	}
	return nil
}
