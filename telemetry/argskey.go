package telemetry

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// ArgsKeyEnv names the variable that gives the key of the arguments' HMAC
// (ArgsHMAC): every replica of a team's serve sets the same one (from a
// secret), so that one call's hash is the same whichever replica exported
// it. Without it each installation keeps its own key in its state
// directory (ArgsKeyFile).
const ArgsKeyEnv = "MCPHOST_TELEMETRY_HMAC_KEY"

// ArgsKeyFile is the file, in the state directory, of an installation's own
// key, made on first use.
const ArgsKeyFile = "telemetry-hmac-key"

// MinArgsKeyLen is the shortest key accepted, in bytes: 32 (256 bits)
// makes guessing it hopeless.
const MinArgsKeyLen = 32

// LoadArgsKey returns the key of ArgsKeyEnv when it is set, else the one in
// stateDir's ArgsKeyFile, creating it (32 random bytes, hex, in a 0600
// file) when it does not exist. A key shorter than MinArgsKeyLen, or a
// file that other users may read or write, is refused with the fix.
func LoadArgsKey(getenv func(string) string, stateDir string) ([]byte, error) {
	if v := strings.TrimSpace(getenv(ArgsKeyEnv)); v != "" {
		if len(v) < MinArgsKeyLen {
			return nil, fmt.Errorf("%s is %d bytes, too short to key the arguments' HMAC (at least %d): set a longer random value, such as the output of `openssl rand -hex 32`", ArgsKeyEnv, len(v), MinArgsKeyLen)
		}
		return []byte(v), nil
	}
	path := filepath.Join(stateDir, ArgsKeyFile)
	for range 2 {
		key, err := readArgsKey(path)
		if !errors.Is(err, fs.ErrNotExist) {
			return key, err
		}
		if err := os.MkdirAll(stateDir, 0o700); err != nil {
			return nil, fmt.Errorf("create the state directory for %s: %w", ArgsKeyFile, err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue // another process made it first: read theirs
		}
		if err != nil {
			return nil, fmt.Errorf("create %s: %w", path, err)
		}
		b := make([]byte, 32)
		_, _ = rand.Read(b) // never fails (crypto/rand)
		key = []byte(hex.EncodeToString(b))
		_, werr := f.Write(append(key, '\n'))
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(path)
			return nil, fmt.Errorf("write %s: %w", path, werr)
		}
		return key, nil
	}
	return nil, fmt.Errorf("%s vanished while it was read: try again", path)
}

// readArgsKey reads the key in path, refusing a file others may read or
// write (where the system has such permissions) and a short key.
func readArgsKey(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s may be read or written by other users (mode %v): run chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	key := strings.TrimSpace(string(b))
	if len(key) < MinArgsKeyLen {
		return nil, fmt.Errorf("the key in %s is %d bytes, too short (at least %d): delete the file to have a new one made", path, len(key), MinArgsKeyLen)
	}
	return []byte(key), nil
}
