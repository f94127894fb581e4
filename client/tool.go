package client

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Annotations are a tool's risk hints exactly as the server sent them. A nil
// hint was absent on the wire; a non-nil hint was declared with that value.
type Annotations struct {
	// Present reports whether the tool carried an "annotations" object at all.
	Present bool `json:"present"`
	// Malformed is non-empty when the annotations object could not be read
	// (a hint that is not a boolean, or annotations that are not an object).
	// A malformed object counts as no annotations: every hint is nil.
	Malformed string `json:"malformed,omitempty"`

	ReadOnly    *bool  `json:"readOnlyHint"`
	Destructive *bool  `json:"destructiveHint"`
	Idempotent  *bool  `json:"idempotentHint"`
	OpenWorld   *bool  `json:"openWorldHint"`
	Title       string `json:"title,omitempty"`
}

// Tool is one tool of one server, as declared. Strings are the server's
// words, unsanitized: render them through package sanitize.
type Tool struct {
	Server string // the server's config name
	Name   string // the tool name exactly as sent
	// Title is the display title the server gave (top-level title, else
	// annotations.title); it is never a substitute for Name.
	Title string
	// Description is bounded to MaxDescription bytes; DescriptionCut counts
	// the bytes removed.
	Description    string
	DescriptionCut int
	InputSchema    json.RawMessage
	OutputSchema   json.RawMessage // nil when absent
	Annotations    Annotations
	// TaskSupport is execution.taskSupport exactly as sent: "required",
	// "optional", "forbidden", or "" when absent or not a string (which the
	// protocol reads as forbidden). It is not part of the definition hash.
	TaskSupport string
	// Hash is the definition hash: hex SHA-256 over canonical JSON of name,
	// title, description, inputSchema, outputSchema and annotations, computed
	// from the entry as sent (before the description is bounded). Any change
	// of definition changes the hash.
	Hash string
}

// Ref names a tool for people: "server/tool".
func (t *Tool) Ref() string { return t.Server + "/" + t.Name }

// definingFields are the entry fields that define a tool, in the order the
// definition hash covers them.
var definingFields = [...]string{"name", "title", "description", "inputSchema", "outputSchema", "annotations"}

// Indexes into definingFields.
const (
	fieldName = iota
	fieldTitle
	fieldDescription
	fieldInputSchema
	fieldOutputSchema
	fieldAnnotations
	numFields
)

// canonical re-encodes a JSON value as json.Marshal encodes what decoding it
// with UseNumber into an any gives: sorted object keys, the last of
// duplicate keys, no insignificant whitespace, strings decoded and
// re-encoded ("\u0041" is "A"), numbers as written. Empty raw is null.
func canonical(raw json.RawMessage) ([]byte, error) {
	if len(raw) == 0 {
		return []byte("null"), nil
	}
	var s scanner
	root, ok := s.scan(raw)
	if !ok {
		return nil, errors.New("not valid JSON")
	}
	return s.appendCanonical(nil, root), nil
}

// definitionHash hashes the fields of a tool entry that define it: SHA-256
// over, for each of definingFields, "key=len:" and the canonical JSON of
// the value (null when absent). A value that is not valid JSON, which a
// listing never holds, is hashed as it is.
func definitionHash(fields map[string]json.RawMessage) string {
	var s scanner
	var canon [numFields][]byte
	for i, k := range definingFields {
		c, err := canonical(fields[k])
		if err != nil {
			c = fields[k]
		}
		canon[i] = c
	}
	sum := s.sumCanonical(canon[:])
	return hex.EncodeToString(sum[:])
}

// appendHash appends the definition hash of the scanned entry's defining
// fields, as the function definitionHash computes it.
func (s *scanner) appendHash(dst []byte, fields *[numFields]item) []byte {
	var canon [numFields][]byte
	s.canon = s.canon[:0]
	for i, it := range fields {
		start := len(s.canon)
		s.canon = s.appendCanonical(s.canon, it)
		canon[i] = s.canon[start:]
	}
	sum := s.sumCanonical(canon[:])
	return hex.AppendEncode(dst, sum[:])
}

func (s *scanner) sumCanonical(canon [][]byte) [sha256.Size]byte {
	b := s.hash[:0]
	for i, c := range canon {
		b = append(b, definingFields[i]...)
		b = append(b, '=')
		b = strconv.AppendInt(b, int64(len(c)), 10)
		b = append(b, ':')
		b = append(b, c...)
	}
	s.hash = b
	return sha256.Sum256(b)
}

// changedFields lists which defining fields differ between two entries.
func changedFields(a, b *entryFields) []string {
	var out []string
	for i := fieldTitle; i < numFields; i++ {
		ca, _ := canonical(a.raw[i])
		cb, _ := canonical(b.raw[i])
		if !bytes.Equal(ca, cb) {
			out = append(out, definingFields[i])
		}
	}
	return out
}

// entryFields keeps the raw defining fields of a listed tool so that a later
// listing can say which of them changed.
type entryFields struct {
	raw [numFields]json.RawMessage // nil when absent
}

func hintString(b *bool) string {
	switch {
	case b == nil:
		return "absent"
	case *b:
		return "true"
	default:
		return "false"
	}
}

// String renders the four hints compactly, absent shown distinctly from false:
// "ro=true destr=absent idem=absent open=false".
func (a Annotations) String() string {
	if !a.Present {
		return "no annotations"
	}
	if a.Malformed != "" {
		return "malformed annotations"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "readOnly=%s destructive=%s idempotent=%s openWorld=%s",
		hintString(a.ReadOnly), hintString(a.Destructive), hintString(a.Idempotent), hintString(a.OpenWorld))
	return b.String()
}
