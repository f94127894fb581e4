package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// MaxLine is the longest line, newline included, that Append writes and
// Verify reads as a record. Append keeps records well below it by capping
// the fields that can grow (see Options.RecordData and Attempt.Detail).
const MaxLine = 4 << 20

const (
	hashPrefix = `,"hash":"`
	hashSuffix = `"}`
	hashHexLen = 2 * sha256.Size
	// trailerLen is the length of `,"hash":"<64 hex>"}`.
	trailerLen = len(hashPrefix) + hashHexLen + len(hashSuffix)
)

// recordStart is how every line Append writes begins; a line that begins
// like this but does not parse is a record cut short.
var recordStart = []byte(`{"v":`)

// appendLine appends r's line, newline included, to dst. r.Hash is set to
// the new hash; every other field must already be final.
func appendLine(dst []byte, r *Record) ([]byte, error) {
	r.Hash = ""
	start := len(dst)
	line, ok := appendRecord(dst, r)
	if !ok {
		body, err := json.Marshal(r)
		if err != nil {
			return dst, fmt.Errorf("audit: encode record: %w", err)
		}
		line = append(dst, body...)
	}
	body := line[start:]
	// encoding/json escapes control characters in strings and compacts raw
	// values, so this cannot happen; a line must never be split, though.
	if len(body) < 2 || body[len(body)-1] != '}' || bytes.IndexByte(body, '\n') >= 0 {
		return dst[:start], errors.New("audit: encode record: unexpected encoding")
	}
	sum := sha256.Sum256(body)
	r.Hash = hex.EncodeToString(sum[:])
	dst = line[:len(line)-1]
	dst = append(dst, hashPrefix...)
	dst = append(dst, r.Hash...)
	dst = append(dst, hashSuffix...)
	return append(dst, '\n'), nil
}

// errNoTrailer means a line does not end with a hash member: it was cut
// short, or is not a record at all.
var errNoTrailer = errors.New(`does not end with a "hash" member`)

// parseLine decodes one line (without its newline) and computes the hash
// of its content; r.Hash is the hash stored in the line. An error means the
// line is not a record.
func parseLine(line []byte) (r Record, computed string, err error) {
	if len(line) < trailerLen+2 || line[0] != '{' {
		return r, "", errNoTrailer
	}
	cut := len(line) - trailerLen
	trailer := line[cut:]
	if !bytes.HasPrefix(trailer, []byte(hashPrefix)) || !bytes.HasSuffix(trailer, []byte(hashSuffix)) {
		return r, "", errNoTrailer
	}
	stored := trailer[len(hashPrefix) : len(hashPrefix)+hashHexLen]
	if !isLowerHex(stored) {
		return r, "", errNoTrailer
	}
	body := make([]byte, cut+1)
	copy(body, line[:cut])
	body[cut] = '}'
	if err := json.Unmarshal(body, &r); err != nil {
		return Record{}, "", fmt.Errorf("not a valid record: %w", err)
	}
	switch {
	case r.Hash != "":
		return Record{}, "", errors.New(`has a second "hash" member`)
	case r.V < 1:
		return Record{}, "", fmt.Errorf("version %d: want 1 or more", r.V)
	case r.Seq < 1:
		return Record{}, "", errors.New("has no seq")
	case len(r.Prev) != hashHexLen || !isLowerHex([]byte(r.Prev)):
		return Record{}, "", errors.New(`"prev" is not a SHA-256 hex digest`)
	case r.V <= Version && r.Kind != Intent && r.Kind != Outcome && r.Kind != Approval:
		return Record{}, "", fmt.Errorf("kind %q: want intent, outcome or approval", r.Kind)
	}
	r.Hash = string(stored)
	sum := sha256.Sum256(body)
	computed = hex.EncodeToString(sum[:])
	return r, computed, nil
}

func isLowerHex(b []byte) bool {
	for _, c := range b {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
