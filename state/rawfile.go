package state

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ReadFile reads a file kept in mcphost's state directory — the state file
// itself (Load reads it this way) or another one, such as the enrolled
// passkeys — with the same checks: a missing file is nil, a file that is
// not regular is an error, and a file larger than MaxSize is a
// *CorruptError. What the bytes mean is the caller's business, and so is
// reporting them as corrupt.
func ReadFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("read %s: not a regular file; move it so that mcphost can keep its state there", path)
	}
	tooLarge := &CorruptError{Path: path, Msg: fmt.Sprintf("the file is larger than %d MiB, the most mcphost reads", MaxSize>>20)}
	if fi.Size() > MaxSize {
		return nil, tooLarge
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > MaxSize {
		return nil, tooLarge
	}
	return data, nil
}

// UpdateFile changes another file kept in mcphost's state directory under
// the same rules as Update: an exclusive lock on path+".lock", the file read
// again under it (ReadFile), fn given its bytes (nil when it is missing), and
// the result written atomically (temporary file of mode 0600, synced,
// renamed, directory synced). If reading fails or fn returns an error,
// nothing is written and that error is returned unchanged; fn reports a
// file it cannot read with confidence that way, so such a file is never
// overwritten. If fn returns the bytes it was given, nothing is written.
func UpdateFile(path string, fn func(old []byte) ([]byte, error)) error {
	if path == "" {
		return errors.New("update state file: no path given")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("update %s: %w", path, err)
	}
	unlock, err := lock(path + lockSuffix)
	if err != nil {
		return fmt.Errorf("update %s: lock %s: %w", path, path+lockSuffix, err)
	}
	defer unlock()

	old, err := ReadFile(path)
	if err != nil {
		return err
	}
	data, err := fn(old)
	if err != nil {
		return err
	}
	if len(data) > MaxSize {
		return fmt.Errorf("update %s: the new content would be %d bytes, more than the %d MiB mcphost reads", path, len(data), MaxSize>>20)
	}
	if old != nil && bytes.Equal(data, old) {
		return nil
	}
	if err := writeFile(path, data); err != nil {
		return fmt.Errorf("update %s: %w", path, err)
	}
	return nil
}
