package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
)

// InstructionsFiles are the project instructions files mcphost reads from
// the working directory, in order of preference: AGENTS.md, the name
// several coding assistants read, and CLAUDE.md for a project that has only that.
// When both exist only AGENTS.md is read, so a project that keeps both
// (often one a copy of the other) is not sent the same text twice.
var InstructionsFiles = []string{"AGENTS.md", "CLAUDE.md"}

// maxInstructionsRead bounds what is read of an instructions file; the
// host cuts it further before a model sees it.
const maxInstructionsRead = 256 << 10

// Instructions is a project's instructions file. It is the project's text,
// like its .mcp.json: it reaches a model only after the person consents to
// it, and a consent holds for this file with this content (Key and Hash,
// recorded like a project server's consent).
type Instructions struct {
	// File is the file's absolute path, symbolic links resolved.
	File string
	// Text is its content, at most maxInstructionsRead bytes; Cut says
	// how many more the file holds.
	Text string
	Cut  int64
	// Key and Hash are what a consent to it is recorded under: the file
	// and a digest of its content, so that a changed file asks again.
	Key, Hash string
}

// FindInstructions reads the project instructions file of workDir (see
// InstructionsFiles). It returns nil, nil when there is none or workDir
// is "". A file that exists but cannot be read is an error naming it.
func FindInstructions(workDir string) (*Instructions, error) {
	if workDir == "" {
		return nil, nil
	}
	for _, name := range InstructionsFiles {
		path := filepath.Join(workDir, name)
		f, err := openRegular(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if errors.Is(err, errNotRegular) {
			return nil, fmt.Errorf("project instructions: %s is not a regular file; remove it or make it one", path)
		}
		if err != nil {
			return nil, fmt.Errorf("project instructions: %w", err)
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, maxInstructionsRead+1))
		if err != nil {
			return nil, fmt.Errorf("project instructions: read %s: %w", path, err)
		}
		in := &Instructions{File: realPath(path)}
		if len(b) > maxInstructionsRead {
			if fi, err := f.Stat(); err == nil {
				in.Cut = fi.Size() - maxInstructionsRead
			}
			b = b[:maxInstructionsRead]
		}
		in.Text = string(b)
		in.Key = in.File + "#" + InstructionsConsentName
		sum := sha256.Sum256(append([]byte("mcphost project instructions v1\n"), b...))
		in.Hash = hex.EncodeToString(sum[:])
		return in, nil
	}
	return nil, nil
}

// InstructionsConsentName is the name a consent to a project's
// instructions file is recorded under, after the file's path and '#', as
// a project server's is under its name. Server names cannot contain '#'
// but may be "instructions"; the file's path (AGENTS.md, not .mcp.json)
// keeps the two apart.
const InstructionsConsentName = "instructions"
