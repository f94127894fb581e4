package passkey

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/mcphost/mcphost/state"
)

// storeVersion is the format version of the credential file.
const storeVersion = 1

// Credential is one enrolled passkey or security key.
type Credential struct {
	ID             []byte    `json:"id"`        // the credential id the authenticator chose
	PublicKey      []byte    `json:"publicKey"` // COSE_Key
	SignCount      uint32    `json:"signCount"`
	AAGUID         string    `json:"aaguid"` // as reported, not verified
	Transports     []string  `json:"transports,omitempty"`
	EnrolledAt     time.Time `json:"enrolledAt"`
	Label          string    `json:"label"`
	UserHandle     []byte    `json:"userHandle"`
	BackupEligible bool      `json:"backupEligible,omitempty"`
}

type storeFile struct {
	Version  int          `json:"version"`
	Passkeys []Credential `json:"passkeys"`
}

// Load returns the credentials enrolled in the file at path, in the order
// they were enrolled. A missing file has none. A file that cannot be read
// with confidence is a *state.CorruptError (or *state.VersionError) and is
// never overwritten.
func Load(path string) ([]Credential, error) {
	data, err := state.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return decodeStore(path, data)
}

func decodeStore(path string, data []byte) ([]Credential, error) {
	if data == nil {
		return nil, nil
	}
	var f storeFile
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&f); err != nil {
		return nil, corrupt(path, data, err)
	}
	if dec.More() {
		return nil, &state.CorruptError{Path: path, Msg: "text after the JSON object"}
	}
	if f.Version > storeVersion {
		return nil, &state.VersionError{Path: path, Version: f.Version}
	}
	if f.Version < 1 {
		return nil, &state.CorruptError{Path: path, Msg: `"version" is missing or not a positive number`}
	}
	seen := map[string]bool{}
	for i, c := range f.Passkeys {
		switch {
		case len(c.ID) == 0:
			return nil, &state.CorruptError{Path: path, Msg: fmt.Sprintf("passkey %d has no id", i+1)}
		case len(c.PublicKey) == 0:
			return nil, &state.CorruptError{Path: path, Msg: fmt.Sprintf("passkey %d has no public key", i+1)}
		case len(c.UserHandle) == 0:
			return nil, &state.CorruptError{Path: path, Msg: fmt.Sprintf("passkey %d has no user handle", i+1)}
		case seen[string(c.ID)]:
			return nil, &state.CorruptError{Path: path, Msg: fmt.Sprintf("passkey %d has the id of an earlier one", i+1)}
		}
		seen[string(c.ID)] = true
	}
	return f.Passkeys, nil
}

// corrupt reports a JSON error with its line and column.
func corrupt(path string, data []byte, err error) error {
	ce := &state.CorruptError{Path: path, Msg: err.Error()}
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off >= 0 && off <= int64(len(data)) {
		before := data[:off]
		ce.Line = bytes.Count(before, []byte("\n")) + 1
		ce.Col = len([]rune(string(before[bytes.LastIndexByte(before, '\n')+1:]))) + 1
	}
	return ce
}

func encodeStore(cs []Credential) ([]byte, error) {
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].EnrolledAt.Before(cs[j].EnrolledAt) })
	data, err := json.MarshalIndent(storeFile{Version: storeVersion, Passkeys: cs}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// updateStore changes the credential file under its lock; fn gets the
// current credentials and returns the new ones.
func updateStore(path string, fn func([]Credential) ([]Credential, error)) error {
	return state.UpdateFile(path, func(old []byte) ([]byte, error) {
		cs, err := decodeStore(path, old)
		if err != nil {
			return nil, err
		}
		cs, err = fn(cs)
		if err != nil {
			return nil, err
		}
		return encodeStore(cs)
	})
}

func find(cs []Credential, id []byte) int {
	for i := range cs {
		if bytes.Equal(cs[i].ID, id) {
			return i
		}
	}
	return -1
}
