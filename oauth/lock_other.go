//go:build !unix || aix || (solaris && !illumos)

package oauth

import "os"

// lockFile only makes sure the lock file can exist: without flock, two
// processes may refresh one token at the same time, and the loser is asked
// to log in again.
func lockFile(name string) (func(), error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	return func() { f.Close() }, nil
}
