package decide

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"

	"github.com/mcphost/mcphost/decide/jsonscan"
)

// ErrInvalidJSON is returned by Canonical for text that is not one valid
// JSON value.
var ErrInvalidJSON = errors.New("decide: invalid JSON")

// Canonical returns the canonical form of one JSON value: object members
// sorted by key (byte order of the decoded UTF-8 key; members with equal
// keys keep their order), no insignificant whitespace, numbers exactly as
// written, and strings re-encoded so that equal strings have equal bytes
// (only '"', '\\' and control characters are escaped, invalid UTF-8
// becomes U+FFFD). Two texts that differ only in member order, whitespace
// or string escaping have the same canonical form. It is jsonscan.ArgsForm,
// which stored grants are bound to.
func Canonical(raw []byte) ([]byte, error) {
	if !jsonscan.Valid(raw) {
		return nil, ErrInvalidJSON
	}
	return jsonscan.AppendCanonicalArgs(nil, raw), nil
}

// ArgsHash returns the hex SHA-256 of the canonical form of a call's
// arguments, the value an Args or Once grant is bound to. Empty arguments
// hash like {}. It returns "" for text that is not valid JSON, and such a
// hash matches no grant.
func ArgsHash(args json.RawMessage) string {
	raw := []byte(args)
	if jsonscan.SkipSpace(raw, 0) == len(raw) {
		raw = []byte("{}")
	}
	c, err := Canonical(raw)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:])
}
