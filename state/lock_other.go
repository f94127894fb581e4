//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package state

import (
	"os"
	"sync"
)

// lockAcrossProcesses says whether lock excludes other processes.
const lockAcrossProcesses = false

// processLock serializes updates within this process. Where flock is
// missing, updates from two processes at once may lose one of them; the
// file itself is still replaced atomically.
var processLock sync.Mutex

// lock creates the lock file (so that the layout is the same everywhere)
// and takes the process-wide lock.
func lock(name string) (unlock func(), err error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	f.Close()
	processLock.Lock()
	return processLock.Unlock, nil
}
