//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package serve

import (
	"fmt"
	"os"
)

// openToken opens the token file for reading. Its owner and mode are not
// checked here: on this system access is decided by ACLs, not by Unix mode
// bits, and the file in the user's state directory is the user's.
func openToken(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read the token file: %w", err)
	}
	return f, nil
}
