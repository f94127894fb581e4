//go:build unix

package config

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// managedPermWarnings warns when the managed file, or the directory that
// holds it, can be changed by someone other than root: whoever can write
// either can rewrite or remove the policy, so it binds no one.
func managedPermWarnings(path string) []Warning {
	var out []Warning
	for _, p := range []string{path, filepath.Dir(path)} {
		info, err := os.Stat(p)
		if err != nil {
			continue
		}
		what := "the managed policy"
		if p != path {
			what = "the directory of the managed policy"
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Uid != 0 {
			out = append(out, Warning{File: path, Message: fmt.Sprintf("%s (%s) is owned by user %d, not root, who can change it: it should be owned by root and writable only by root", what, p, st.Uid)})
		} else if perm := info.Mode().Perm(); perm&0o022 != 0 {
			out = append(out, Warning{File: path, Message: fmt.Sprintf("%s (%s) can be written by others (mode %#o): it should be writable only by root (chmod go-w)", what, p, perm)})
		}
	}
	return out
}
