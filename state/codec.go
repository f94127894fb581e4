package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcphost/mcphost/decide"
)

// The wire types mirror the file. Scalars are plain strings so that a bad
// scope, choice or time is reported with its place in the file, by the
// conversion below, rather than as a bare error from a decoder. Fields are
// declared in the order of their JSON names, which keeps the file's keys
// sorted.

type wireFile struct {
	AuditHeads map[string]wireAuditHead      `json:"auditHeads"`
	Consents   map[string]wireConsent        `json:"consents"`
	Grants     []wireGrant                   `json:"grants"`
	Pins       map[string]map[string]wirePin `json:"pins"`
	Trust      map[string]wireTrust          `json:"trust"`
}

// knownKeys are the top-level keys this version understands. encoding/json
// matches keys without regard to case, and so does isKnown.
var knownKeys = []string{"auditHeads", "consents", "grants", "pins", "trust", "version"}

func isKnown(key string) bool {
	return slices.ContainsFunc(knownKeys, func(k string) bool { return strings.EqualFold(k, key) })
}

// wireGrant has the JSON fields of decide.Grant plus a name and a time.
type wireGrant struct {
	ArgsHash       string `json:"argsHash,omitempty"`
	DefinitionHash string `json:"definitionHash"`
	GrantedAt      string `json:"grantedAt,omitempty"`
	Name           string `json:"name,omitempty"`
	Scope          string `json:"scope"`
	Server         string `json:"server"`
	Tool           string `json:"tool"`
	Via            string `json:"via,omitempty"` // the channel the grant was given through
}

type wireTrust struct {
	Name      string `json:"name,omitempty"`
	TrustedAt string `json:"trustedAt,omitempty"`
}

type wirePin struct {
	Hash     string `json:"hash"`
	PinnedAt string `json:"pinnedAt,omitempty"`
}

type wireConsent struct {
	Choice   string `json:"choice"`
	ChosenAt string `json:"chosenAt,omitempty"`
	Hash     string `json:"hash"`
}

// decode parses a state file. Errors are *CorruptError or *VersionError
// without the path.
func decode(data []byte) (*State, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &CorruptError{Msg: "the file is empty"}
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, jsonError(data, err)
	}
	if top == nil {
		return nil, &CorruptError{Msg: "the file holds null, not a JSON object"}
	}
	// The version decides how to read the rest, so it is read first.
	var hdr struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal(data, &hdr); err != nil {
		return nil, jsonError(data, err)
	}
	switch v := hdr.Version; {
	case v == nil:
		return nil, &CorruptError{Msg: `"version" is missing`}
	case *v > Version:
		return nil, &VersionError{Version: *v}
	case *v < 1:
		return nil, &CorruptError{Msg: fmt.Sprintf(`"version" is %d; versions start at 1`, *v)}
	}
	var w wireFile
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, jsonError(data, err)
	}
	s, err := w.state()
	if err != nil {
		return nil, &CorruptError{Msg: err.Error()}
	}
	for k, raw := range top {
		if !isKnown(k) {
			if s.extra == nil {
				s.extra = make(map[string]json.RawMessage)
			}
			s.extra[k] = raw
		}
	}
	return s, nil
}

// jsonError turns an error from encoding/json into a *CorruptError with the
// line and column where the decoder stopped.
func jsonError(data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		line, col := position(data, se.Offset)
		return &CorruptError{Line: line, Col: col, Msg: "JSON syntax: " + se.Error()}
	case errors.As(err, &te):
		line, col := position(data, te.Offset)
		msg := fmt.Sprintf("the file must hold a JSON object, not %s", te.Value)
		if te.Field != "" {
			msg = fmt.Sprintf("%s: want %s, not %s", te.Field, jsonKind(te.Type), te.Value)
		}
		return &CorruptError{Line: line, Col: col, Msg: msg}
	}
	return &CorruptError{Msg: err.Error()}
}

// position converts the decoder's offset (bytes read when it stopped, so
// the offending byte is the one before) into a 1-based line and column in
// characters.
func position(data []byte, offset int64) (line, col int) {
	i := int(min(max(offset-1, 0), int64(len(data))))
	before := data[:i]
	start := bytes.LastIndexByte(before, '\n') + 1
	return bytes.Count(before, []byte{'\n'}) + 1, utf8.RuneCount(before[start:]) + 1
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Bool:
		return "true or false"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return t.String()
}

// state checks the records and converts them. Maps are visited in sorted
// order so that the same file always reports the same first problem.
func (w *wireFile) state() (*State, error) {
	s := &State{}
	for i, g := range w.Grants {
		r, err := g.record()
		if err != nil {
			return nil, fmt.Errorf("grants[%d]: %w", i, err)
		}
		s.grants = append(s.grants, r)
	}
	slices.SortStableFunc(s.grants, func(a, b GrantRecord) int {
		if c := strings.Compare(a.Server, b.Server); c != 0 {
			return c
		}
		return strings.Compare(a.Tool, b.Tool)
	})
	for i := 1; i < len(s.grants); i++ {
		if a, b := s.grants[i-1], s.grants[i]; a.Server == b.Server && a.Tool == b.Tool {
			return nil, fmt.Errorf("grants: two grants for server %q and tool %q; keep one", a.Server, a.Tool)
		}
	}

	for _, id := range sortedKeys(w.Trust) {
		t := w.Trust[id]
		if id == "" {
			return nil, errors.New("trust: a server identity is empty")
		}
		at, err := parseTime(t.TrustedAt)
		if err != nil {
			return nil, fmt.Errorf("trust[%q].trustedAt: %w", id, err)
		}
		if s.trust == nil {
			s.trust = make(map[string]TrustRecord)
		}
		s.trust[id] = TrustRecord{Identity: id, Name: t.Name, TrustedAt: at}
	}

	for _, id := range sortedKeys(w.Pins) {
		if id == "" {
			return nil, errors.New("pins: a server identity is empty")
		}
		for _, tool := range sortedKeys(w.Pins[id]) {
			p := w.Pins[id][tool]
			where := fmt.Sprintf("pins[%q][%q]", id, tool)
			if tool == "" {
				return nil, fmt.Errorf("pins[%q]: a tool name is empty", id)
			}
			if p.Hash == "" {
				return nil, fmt.Errorf("%s.hash is empty", where)
			}
			at, err := parseTime(p.PinnedAt)
			if err != nil {
				return nil, fmt.Errorf("%s.pinnedAt: %w", where, err)
			}
			if s.pins == nil {
				s.pins = make(map[string]map[string]pin)
			}
			if s.pins[id] == nil {
				s.pins[id] = make(map[string]pin)
			}
			s.pins[id][tool] = pin{hash: p.Hash, at: at}
		}
	}

	for _, name := range sortedKeys(w.Consents) {
		c := w.Consents[name]
		where := fmt.Sprintf("consents[%q]", name)
		if name == "" {
			return nil, errors.New("consents: a server name is empty")
		}
		if c.Hash == "" {
			return nil, fmt.Errorf("%s.hash is empty", where)
		}
		var choice Choice
		if err := choice.UnmarshalText([]byte(c.Choice)); err != nil {
			return nil, fmt.Errorf("%s.choice: %w", where, err)
		}
		at, err := parseTime(c.ChosenAt)
		if err != nil {
			return nil, fmt.Errorf("%s.chosenAt: %w", where, err)
		}
		if s.consents == nil {
			s.consents = make(map[string]Consent)
		}
		s.consents[name] = Consent{Name: name, Hash: c.Hash, Choice: choice, ChosenAt: at}
	}
	if err := w.auditHeads(s); err != nil {
		return nil, err
	}
	return s, nil
}

func (g wireGrant) record() (GrantRecord, error) {
	var scope decide.Scope
	if err := scope.UnmarshalText([]byte(g.Scope)); err != nil {
		return GrantRecord{}, fmt.Errorf("scope %q: want %q", g.Scope, decide.ScopeAlways.String())
	}
	r := GrantRecord{
		Grant: decide.Grant{Scope: scope, Server: g.Server, Tool: g.Tool, DefinitionHash: g.DefinitionHash, ArgsHash: g.ArgsHash, Via: g.Via},
		Name:  g.Name,
	}
	if err := CheckGrant(r.Grant); err != nil {
		return GrantRecord{}, err
	}
	var err error
	if r.GrantedAt, err = parseTime(g.GrantedAt); err != nil {
		return GrantRecord{}, fmt.Errorf("grantedAt: %w", err)
	}
	return r, nil
}

func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a time like 2026-01-02T15:04:05Z", s)
	}
	return t, nil
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// encode renders the state as the file holds it: "version" first, then
// every other top-level key, unknown ones included, in sorted order.
func (s *State) encode() ([]byte, error) {
	grants := make([]wireGrant, len(s.grants))
	for i, r := range s.grants {
		scope, err := r.Scope.MarshalText()
		if err != nil {
			return nil, err
		}
		grants[i] = wireGrant{
			ArgsHash: r.ArgsHash, DefinitionHash: r.DefinitionHash, GrantedAt: formatTime(r.GrantedAt),
			Name: r.Name, Scope: string(scope), Server: r.Server, Tool: r.Tool, Via: r.Via,
		}
	}
	trust := make(map[string]wireTrust, len(s.trust))
	for id, t := range s.trust {
		trust[id] = wireTrust{Name: t.Name, TrustedAt: formatTime(t.TrustedAt)}
	}
	pins := make(map[string]map[string]wirePin, len(s.pins))
	for id, tools := range s.pins {
		if len(tools) == 0 {
			continue
		}
		pins[id] = make(map[string]wirePin, len(tools))
		for tool, p := range tools {
			pins[id][tool] = wirePin{Hash: p.hash, PinnedAt: formatTime(p.at)}
		}
	}
	consents := make(map[string]wireConsent, len(s.consents))
	for name, c := range s.consents {
		choice, err := c.Choice.MarshalText()
		if err != nil {
			return nil, fmt.Errorf("consent for %q: %w", name, err)
		}
		consents[name] = wireConsent{Choice: string(choice), ChosenAt: formatTime(c.ChosenAt), Hash: c.Hash}
	}
	sections := map[string]any{"consents": consents, "grants": grants, "pins": pins, "trust": trust}
	if len(s.audit) > 0 {
		sections["auditHeads"] = s.wireAuditHeads()
	}

	keys := sortedKeys(sections)
	for k := range s.extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)

	var b bytes.Buffer
	fmt.Fprintf(&b, "{\n  \"version\": %d", Version)
	for _, k := range keys {
		b.WriteString(",\n  ")
		if err := writeJSON(&b, k); err != nil {
			return nil, err
		}
		b.WriteString(": ")
		var err error
		if v, ok := sections[k]; ok {
			err = writeJSON(&b, v)
		} else {
			err = json.Indent(&b, s.extra[k], "  ", "  ")
		}
		if err != nil {
			return nil, fmt.Errorf("encode %q: %w", k, err)
		}
	}
	b.WriteString("\n}\n")
	return b.Bytes(), nil
}

// writeJSON appends v indented for the second level of the file, without
// escaping <, > and & (the file is not HTML) and without a newline.
func writeJSON(b *bytes.Buffer, v any) error {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("  ", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1)
	return nil
}
