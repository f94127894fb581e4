package client

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
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
	// Hash is the definition hash: hex SHA-256 over canonical JSON of name,
	// title, description, inputSchema, outputSchema and annotations, computed
	// from the entry as sent (before the description is bounded). Any change
	// of definition changes the hash.
	Hash string
}

// Ref names a tool for people: "server/tool".
func (t *Tool) Ref() string { return t.Server + "/" + t.Name }

// canonical re-encodes a JSON value with sorted object keys and no
// insignificant whitespace. Numbers keep their written form.
func canonical(raw json.RawMessage) ([]byte, error) {
	if len(raw) == 0 {
		return []byte("null"), nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(v) // maps marshal with sorted keys
}

// definitionHash hashes the fields of a tool entry that define it.
func definitionHash(fields map[string]json.RawMessage) string {
	h := sha256.New()
	for _, k := range []string{"name", "title", "description", "inputSchema", "outputSchema", "annotations"} {
		c, err := canonical(fields[k])
		if err != nil {
			c = fields[k] // unreadable JSON still changes the hash when it changes
		}
		fmt.Fprintf(h, "%s=%d:", k, len(c))
		h.Write(c)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// changedFields lists which defining fields differ between two entries.
func changedFields(a, b *entryFields) []string {
	var out []string
	for _, k := range []string{"title", "description", "inputSchema", "outputSchema", "annotations"} {
		ca, _ := canonical(a.raw[k])
		cb, _ := canonical(b.raw[k])
		if !bytes.Equal(ca, cb) {
			out = append(out, k)
		}
	}
	return out
}

// entryFields keeps the raw defining fields of a listed tool so that a later
// listing can say which of them changed.
type entryFields struct {
	raw map[string]json.RawMessage
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
