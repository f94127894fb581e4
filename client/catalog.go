package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"unicode/utf8"

	"github.com/mcphost/mcphost/sanitize"
)

// Limits bound what one server can make the host hold or do. The zero value
// of a field selects the default.
type Limits struct {
	MaxPages       int // tools/list pages per listing (default 100)
	MaxTools       int // tools kept per server (default 1000)
	MaxDescription int // bytes of a description (default 16 KiB)
	MaxNameLen     int // bytes of a tool name (default 128)
}

func (l Limits) withDefaults() Limits {
	if l.MaxPages <= 0 {
		l.MaxPages = 100
	}
	if l.MaxTools <= 0 {
		l.MaxTools = 1000
	}
	if l.MaxDescription <= 0 {
		l.MaxDescription = 16 * 1024
	}
	if l.MaxNameLen <= 0 {
		l.MaxNameLen = 128
	}
	return l
}

// Severity of a finding.
const (
	SevError   = "error"
	SevWarning = "warning"
	SevInfo    = "info"
)

// Finding is something the client noticed about a server's catalog: a
// malformed entry it isolated, a bound it enforced. Lint reports them.
type Finding struct {
	Server   string `json:"server"`
	Tool     string `json:"tool,omitempty"` // raw name, "" when the entry had none
	Severity string `json:"severity"`
	Code     string `json:"code"`
	Message  string `json:"message"`
}

// Finding codes produced by the client.
const (
	FindMalformedEntry       = "malformed-entry"       // entry dropped: null, not an object, bad name
	FindInvalidSchema        = "invalid-schema"        // inputSchema not an object: dropped
	FindMissingSchema        = "missing-schema"        // no inputSchema: an empty object schema assumed
	FindMalformedAnnotations = "malformed-annotations" // kept, treated as unannotated
	FindMalformedField       = "malformed-field"       // title/description/outputSchema of the wrong type: ignored
	FindDescriptionCut       = "description-cut"
	FindDuplicateName        = "duplicate-name"
	FindRepeatedCursor       = "repeated-cursor"
	FindTooManyPages         = "too-many-pages"
	FindTooManyTools         = "too-many-tools"
	FindUnusualName          = "unusual-name" // outside [A-Za-z0-9_.-]: shown escaped
)

// listing is one complete tools/list of one server.
type listing struct {
	tools    []*Tool
	fields   map[string]*entryFields // by tool name
	findings []Finding
}

// listTools pages through tools/list within the limits. A page that is not a
// valid result fails the listing; a bad entry only drops or degrades itself.
func listTools(ctx context.Context, rc rawCaller, server string, lim Limits) (*listing, error) {
	lim = lim.withDefaults()
	out := &listing{fields: map[string]*entryFields{}}
	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		if page == lim.MaxPages {
			out.findings = append(out.findings, Finding{Server: server, Severity: SevError, Code: FindTooManyPages,
				Message: fmt.Sprintf("tools/list still had more pages after %d; the rest were not read", lim.MaxPages)})
			break
		}
		var params map[string]any
		if cursor != "" {
			params = map[string]any{"cursor": cursor}
		}
		raw, err := rc.call(ctx, "tools/list", params)
		if err != nil {
			return nil, fmt.Errorf("list tools: %w", err)
		}
		var res struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor json.RawMessage   `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("list tools: page %d is not a tools/list result: %w", page+1, err)
		}
		for _, e := range res.Tools {
			if len(out.tools) == lim.MaxTools {
				out.findings = append(out.findings, Finding{Server: server, Severity: SevError, Code: FindTooManyTools,
					Message: fmt.Sprintf("the server lists more than %d tools; the rest were dropped", lim.MaxTools)})
				return out, nil
			}
			t, f, finds := parseEntry(server, e, lim)
			out.findings = append(out.findings, finds...)
			if t == nil {
				continue
			}
			if _, dup := out.fields[t.Name]; dup {
				out.findings = append(out.findings, Finding{Server: server, Tool: t.Name, Severity: SevError, Code: FindDuplicateName,
					Message: "the name is listed more than once; only the first definition is kept"})
				continue
			}
			out.tools = append(out.tools, t)
			out.fields[t.Name] = f
		}
		var next string
		if len(res.NextCursor) > 0 && !bytes.Equal(res.NextCursor, []byte("null")) {
			if err := json.Unmarshal(res.NextCursor, &next); err != nil {
				out.findings = append(out.findings, Finding{Server: server, Severity: SevError, Code: FindMalformedField,
					Message: "nextCursor is not a string; listing stopped"})
				break
			}
		}
		if next == "" {
			break
		}
		if seen[next] {
			out.findings = append(out.findings, Finding{Server: server, Severity: SevError, Code: FindRepeatedCursor,
				Message: "tools/list returned a cursor it had already returned; listing stopped to avoid an endless loop"})
			break
		}
		seen[next] = true
		cursor = next
	}
	return out, nil
}

// parseEntry reads one element of a tools array. It returns nil when the
// entry cannot be used at all.
func parseEntry(server string, raw json.RawMessage, lim Limits) (*Tool, *entryFields, []Finding) {
	var finds []Finding
	find := func(tool, sev, code, msg string) {
		finds = append(finds, Finding{Server: server, Tool: tool, Severity: sev, Code: code, Message: msg})
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		find("", SevError, FindMalformedEntry, "a tools/list entry is not an object ("+jsonKind(raw)+"); it was dropped")
		return nil, nil, finds
	}
	if k := duplicateKey(raw); k != "" {
		var n string
		_ = json.Unmarshal(fields["name"], &n)
		find(n, SevError, FindMalformedEntry, fmt.Sprintf("the entry has the key %q twice, so its meaning depends on the parser; it was dropped", k))
		return nil, nil, finds
	}
	var name string
	if err := json.Unmarshal(fields["name"], &name); err != nil || name == "" {
		find("", SevError, FindMalformedEntry, "a tools/list entry has no string name; it was dropped")
		return nil, nil, finds
	}
	if len(name) > lim.MaxNameLen || !utf8.ValidString(name) {
		find(sanitize.Truncate(name, 64), SevError, FindMalformedEntry,
			fmt.Sprintf("the tool name is longer than %d bytes or not valid UTF-8; the tool was dropped", lim.MaxNameLen))
		return nil, nil, finds
	}
	if !plainName(name) {
		find(name, SevWarning, FindUnusualName, "the tool name has characters outside [A-Za-z0-9_.-]; it is shown escaped and models see a substitute name")
	}
	t := &Tool{Server: server, Name: name, Hash: definitionHash(fields)}

	switch schema := fields["inputSchema"]; jsonKind(schema) {
	case "object":
		if err := checkSchema(schema); err != nil {
			find(name, SevError, FindInvalidSchema, "inputSchema refused ("+err.Error()+"); the tool was dropped")
			return nil, nil, finds
		}
		t.InputSchema = schema
	case "absent", "null":
		find(name, SevWarning, FindMissingSchema, "the tool has no inputSchema; an empty object schema is assumed")
		t.InputSchema = json.RawMessage(`{"type":"object"}`)
	default:
		find(name, SevError, FindInvalidSchema, "inputSchema is "+jsonKind(schema)+", not an object; the tool was dropped")
		return nil, nil, finds
	}
	switch k := jsonKind(fields["outputSchema"]); k {
	case "object":
		if err := checkSchema(fields["outputSchema"]); err != nil {
			find(name, SevWarning, FindMalformedField, "outputSchema refused ("+err.Error()+"); it was ignored")
			break
		}
		t.OutputSchema = fields["outputSchema"]
	case "absent", "null":
	default:
		find(name, SevWarning, FindMalformedField, "outputSchema is "+k+", not an object; it was ignored")
	}
	if !stringField(fields, "title", &t.Title) {
		find(name, SevWarning, FindMalformedField, "title is not a string; it was ignored")
	}
	if !stringField(fields, "description", &t.Description) {
		find(name, SevWarning, FindMalformedField, "description is not a string; it was ignored")
	}
	if len(t.Description) > lim.MaxDescription {
		keep := lim.MaxDescription
		for keep > 0 && !utf8.RuneStart(t.Description[keep]) {
			keep--
		}
		t.DescriptionCut = len(t.Description) - keep
		t.Description = fmt.Sprintf("%s… [%d bytes cut]", t.Description[:keep], t.DescriptionCut)
		find(name, SevWarning, FindDescriptionCut, fmt.Sprintf("the description is longer than %d bytes and was cut", lim.MaxDescription))
	}
	var malformed string
	t.Annotations, malformed = parseAnnotations(fields["annotations"])
	if malformed != "" {
		find(name, SevError, FindMalformedAnnotations, malformed+"; the tool is treated as unannotated")
	}
	if t.Title == "" {
		t.Title = t.Annotations.Title
	}
	return t, &entryFields{raw: fields}, finds
}

func stringField(fields map[string]json.RawMessage, key string, dst *string) bool {
	raw, ok := fields[key]
	if !ok || bytes.Equal(raw, []byte("null")) {
		return true
	}
	return json.Unmarshal(raw, dst) == nil
}

// parseAnnotations reads an annotations value as sent. It returns a reason
// when the value is malformed; the annotations then have Present set and no
// hints, which counts as unannotated.
func parseAnnotations(raw json.RawMessage) (Annotations, string) {
	switch k := jsonKind(raw); k {
	case "absent", "null":
		return Annotations{}, ""
	case "object":
	default:
		why := "annotations is " + k + ", not an object"
		return Annotations{Present: true, Malformed: why}, why
	}
	if k := duplicateKey(raw); k != "" {
		why := fmt.Sprintf("the annotations have the key %q twice", k)
		return Annotations{Present: true, Malformed: why}, why
	}
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m) // an object by the check above
	a := Annotations{Present: true}
	for _, h := range []struct {
		key string
		dst **bool
	}{
		{"readOnlyHint", &a.ReadOnly},
		{"destructiveHint", &a.Destructive},
		{"idempotentHint", &a.Idempotent},
		{"openWorldHint", &a.OpenWorld},
	} {
		v, ok := m[h.key]
		if !ok || bytes.Equal(v, []byte("null")) {
			continue
		}
		var b bool
		if err := json.Unmarshal(v, &b); err != nil {
			why := fmt.Sprintf("%q is %s, not a boolean", h.key, jsonKind(v))
			return Annotations{Present: true, Malformed: why}, why
		}
		*h.dst = &b
	}
	if v, ok := m["title"]; ok {
		_ = json.Unmarshal(v, &a.Title) // a non-string title is just not shown
	}
	return a, ""
}

// jsonKind names the JSON type of raw: object, array, string, number,
// boolean, null, or absent.
func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "absent"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// sortTools orders tools by server then name, for deterministic output.
func sortTools(ts []*Tool) {
	sort.Slice(ts, func(i, j int) bool {
		if ts[i].Server != ts[j].Server {
			return ts[i].Server < ts[j].Server
		}
		return ts[i].Name < ts[j].Name
	})
}

// plainName reports whether a tool name keeps to [A-Za-z0-9_.-].
func plainName(s string) bool {
	for i := 0; i < len(s); i++ {
		if !safeByte(s[i]) && s[i] != '.' {
			return false
		}
	}
	return true
}
