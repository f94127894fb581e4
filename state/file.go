package state

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Version is the format version this package reads and writes.
const Version = 1

// MaxSize is the largest state file Load reads and Update writes, in bytes.
const MaxSize = 16 << 20

// lockSuffix is appended to the state file's path to name its lock file.
const lockSuffix = ".lock"

// tempInfix names temporary files: "state.json" + tempInfix + random.
const tempInfix = ".tmp-"

// rename is os.Rename; tests replace it to simulate a crash between writing
// the temporary file and renaming it.
var rename = os.Rename

// CorruptError reports a state file that mcphost cannot use. mcphost never
// overwrites such a file; the person fixes or moves it.
type CorruptError struct {
	Path string
	Line int // 1-based; 0 when the problem has no single position
	Col  int // 1-based, in characters
	Msg  string
}

func (e *CorruptError) Error() string {
	where := e.Path
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d:%d", e.Path, e.Line, e.Col)
	}
	return fmt.Sprintf("state file %s: %s; fix or move the file; mcphost will not overwrite it", where, e.Msg)
}

// VersionError reports a state file written by a newer mcphost, in a format
// version this one does not know. mcphost neither reads nor overwrites it.
type VersionError struct {
	Path    string
	Version int
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("state file %s has format version %d, but this mcphost knows only version %d; "+
		"upgrade mcphost or move the file; mcphost will not overwrite it", e.Path, e.Version, Version)
}

// Load reads the state file at path. A missing file is an empty state. A
// file that cannot be used yields a *CorruptError or a *VersionError; other
// failures (permissions, I/O) are returned wrapped. Load takes no lock: the
// file is replaced atomically, so it always sees one complete version.
func Load(path string) (*State, error) {
	s, _, err := load(path)
	return s, err
}

// load returns the state and the bytes it was read from.
func load(path string) (*State, []byte, error) {
	data, err := ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	if data == nil {
		return &State{}, nil, nil
	}
	s, err := decode(data)
	var ce *CorruptError
	var ve *VersionError
	switch {
	case errors.As(err, &ce):
		ce.Path = path
	case errors.As(err, &ve):
		ve.Path = path
	}
	if err != nil {
		return nil, nil, err
	}
	return s, data, nil
}

// Update changes the state file at path under an exclusive lock: it reads
// the file, calls fn with its content, and writes the result atomically.
// Updates from other goroutines and other processes wait for the lock, so
// none is lost. now stamps what fn records; nil means time.Now.
//
// If the file cannot be used (see Load), Update returns that error without
// calling fn and leaves the file as it is. If fn returns an error, nothing
// is written and Update returns that error unchanged. If fn changes
// nothing, the file is not rewritten. fn runs with the lock held, so it
// must be quick, must not wait for a person, and must not call Update. It
// may keep the *State it was given.
func Update(path string, now func() time.Time, fn func(*State) error) error {
	if path == "" {
		return errors.New("update state: no path given")
	}
	if now == nil {
		now = time.Now
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("update state: %w", err)
	}
	unlock, err := lock(path + lockSuffix)
	if err != nil {
		return fmt.Errorf("update state: lock %s: %w", path+lockSuffix, err)
	}
	defer unlock()

	s, old, err := load(path)
	if err != nil {
		return err
	}
	s.now = now
	if err := fn(s); err != nil {
		return err
	}
	data, err := s.encode()
	if err != nil {
		return fmt.Errorf("update state %s: %w", path, err)
	}
	if len(data) > MaxSize {
		return fmt.Errorf("update state %s: the new state would be %d bytes, more than the %d MiB mcphost reads; revoke grants or forget servers to make room",
			path, len(data), MaxSize>>20)
	}
	if bytes.Equal(data, old) {
		return nil
	}
	if err := writeFile(path, data); err != nil {
		return fmt.Errorf("update state %s: %w", path, err)
	}
	return nil
}

// writeFile replaces path with data atomically. The caller holds the lock.
func writeFile(path string, data []byte) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	removeStaleTemps(dir, base)

	f, err := os.CreateTemp(dir, base+tempInfix+"*") // mode 0600
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(dir)
}

// removeStaleTemps deletes temporary files left by a writer that crashed.
// Every writer holds the lock while its temporary file exists, so under the
// lock any such file is stale.
func removeStaleTemps(dir, base string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasPrefix(e.Name(), base+tempInfix) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil // directories cannot be synced there; the rename is durable enough
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
