package client

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
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
	var s scanner
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
		entries, nextCursor, err := readPage(&s, raw)
		if err != nil {
			return nil, fmt.Errorf("list tools: page %d is not a tools/list result: %w", page+1, err)
		}
		for i := range entries.n {
			if len(out.tools) == lim.MaxTools {
				out.findings = append(out.findings, Finding{Server: server, Severity: SevError, Code: FindTooManyTools,
					Message: fmt.Sprintf("the server lists more than %d tools; the rest were dropped", lim.MaxTools)})
				return out, nil
			}
			t, f, finds := entries.read(&s, i, server, lim)
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
		if len(nextCursor) > 0 && !bytes.Equal(nextCursor, []byte("null")) {
			if err := json.Unmarshal(nextCursor, &next); err != nil {
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

// pageEntries are the elements of a page's tools array: nodes
// s.items[first : first+n] of the scanned page or, when the page needed
// json.Unmarshal, slow[:n].
type pageEntries struct {
	first, n int
	slow     []json.RawMessage
}

// read reads entry i with readEntry.
func (p pageEntries) read(s *scanner, i int, server string, lim Limits) (*Tool, *entryFields, []Finding) {
	if p.slow != nil {
		return readEntryRaw(s, server, p.slow[i], lim)
	}
	return readEntry(s, server, s.items[p.first+i], lim)
}

// readPage reads a tools/list result as json.Unmarshal into
//
//	struct {
//		Tools      []json.RawMessage `json:"tools"`
//		NextCursor json.RawMessage   `json:"nextCursor"`
//	}
//
// would. The scanner reads a plain page; a page that is not valid, not an
// object or null, or whose keys repeat or match only case-insensitively or
// after unescaping, is left to json.Unmarshal for its rules and its error
// messages. The page is copied first: callers do not promise to leave it be,
// and tools keep parts of it.
func readPage(s *scanner, raw json.RawMessage) (pageEntries, json.RawMessage, error) {
	raw = bytes.Clone(raw)
	if tools, cursor, ok := s.scanPage(raw); ok {
		if !tools.present() || raw[tools.val.start] == 'n' {
			return pageEntries{}, cursor, nil
		}
		nd := s.node(tools)
		return pageEntries{first: nd.first, n: nd.n}, cursor, nil
	}
	var res struct {
		Tools      []json.RawMessage `json:"tools"`
		NextCursor json.RawMessage   `json:"nextCursor"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return pageEntries{}, nil, err
	}
	return pageEntries{n: len(res.Tools), slow: res.Tools}, res.NextCursor, nil
}

// scanPage finds the tools and nextCursor members of a plain page; see
// readPage. ok is false when the page is not plain.
func (s *scanner) scanPage(raw []byte) (tools item, cursor []byte, ok bool) {
	root, ok := s.scan(raw)
	if !ok {
		return item{}, nil, false
	}
	switch raw[root.val.start] {
	case 'n':
		return item{}, nil, true
	case '{':
	default:
		return item{}, nil, false
	}
	nd := s.node(root)
	var haveCursor bool
	for _, m := range s.items[nd.first : nd.first+nd.n] {
		k := raw[m.key.start+1 : m.key.end-1]
		switch {
		case string(k) == "tools" && !tools.present():
			tools = m
		case string(k) == "nextCursor" && !haveCursor:
			cursor, haveCursor = s.raw(m), true
		case !asciiKey(k) || bytes.EqualFold(k, []byte("tools")) || bytes.EqualFold(k, []byte("nextCursor")):
			return item{}, nil, false
		}
	}
	if tools.present() && raw[tools.val.start] != '[' && raw[tools.val.start] != 'n' {
		return item{}, nil, false
	}
	return tools, cursor, true
}

// asciiKey reports whether the inside of a quoted key is ASCII without
// escapes, so that it decodes to itself and folds only as ASCII does.
func asciiKey(k []byte) bool {
	for _, c := range k {
		if c >= utf8.RuneSelf || c == '\\' {
			return false
		}
	}
	return true
}

// parseEntry reads one element of a tools array. It returns nil when the
// entry cannot be used at all.
func parseEntry(server string, raw json.RawMessage, lim Limits) (*Tool, *entryFields, []Finding) {
	var s scanner
	return readEntryRaw(&s, server, raw, lim)
}

// readEntryRaw scans raw and reads it with readEntry.
func readEntryRaw(s *scanner, server string, raw json.RawMessage, lim Limits) (*Tool, *entryFields, []Finding) {
	root, ok := s.scan(raw)
	if !ok {
		return nil, nil, []Finding{notAnObject(server, raw)}
	}
	return readEntry(s, server, root, lim)
}

func notAnObject(server string, raw []byte) Finding {
	return Finding{Server: server, Severity: SevError, Code: FindMalformedEntry,
		Message: "a tools/list entry is not an object (" + jsonKind(raw) + "); it was dropped"}
}

// readEntry reads the scanned entry it; see parseEntry. The tool and fields
// it returns share the scanned bytes, which must not change afterwards.
func readEntry(s *scanner, server string, it item, lim Limits) (*Tool, *entryFields, []Finding) {
	var finds []Finding
	find := func(tool, sev, code, msg string) {
		finds = append(finds, Finding{Server: server, Tool: tool, Severity: sev, Code: code, Message: msg})
	}
	if raw := s.raw(it); raw[0] != '{' {
		return nil, nil, []Finding{notAnObject(server, raw)}
	}
	var fields [numFields]item
	s.lookup(s.node(it), definingFields[:], fields[:])
	if k, dup := s.firstRepeat(s.node(it)); dup {
		var n string
		if s.kind(fields[fieldName]) == '"' {
			n = s.str(fields[fieldName])
		}
		find(n, SevError, FindMalformedEntry, fmt.Sprintf("the entry has the key %q twice, so its meaning depends on the parser; it was dropped", k))
		return nil, nil, finds
	}
	// The name, hash, title and description share one string.
	text := s.text[:0]
	if s.kind(fields[fieldName]) == '"' {
		text = s.appendString(text, fields[fieldName])
	}
	nameEnd := len(text)
	if nameEnd == 0 {
		find("", SevError, FindMalformedEntry, "a tools/list entry has no string name; it was dropped")
		return nil, nil, finds
	}
	if nameEnd > lim.MaxNameLen || !utf8.Valid(text) {
		find(sanitize.Truncate(string(text), 64), SevError, FindMalformedEntry,
			fmt.Sprintf("the tool name is longer than %d bytes or not valid UTF-8; the tool was dropped", lim.MaxNameLen))
		return nil, nil, finds
	}
	text = s.appendHash(text, &fields)
	hashEnd := len(text)
	text, titleOK := s.appendOptionalString(text, fields[fieldTitle])
	titleEnd := len(text)
	text, descriptionOK := s.appendOptionalString(text, fields[fieldDescription])
	s.text = text
	all := string(text)
	name := all[:nameEnd]
	block := &toolBlock{tool: Tool{Server: server, Name: name, Hash: all[nameEnd:hashEnd], Title: all[hashEnd:titleEnd], Description: all[titleEnd:]}}
	t := &block.tool

	if !plainName(name) {
		find(name, SevWarning, FindUnusualName, "the tool name has characters outside [A-Za-z0-9_.-]; it is shown escaped and models see a substitute name")
	}
	switch schema := s.raw(fields[fieldInputSchema]); jsonKind(schema) {
	case "object":
		if err := s.checkSchema(fields[fieldInputSchema]); err != nil {
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
	switch k := jsonKind(s.raw(fields[fieldOutputSchema])); k {
	case "object":
		if err := s.checkSchema(fields[fieldOutputSchema]); err != nil {
			find(name, SevWarning, FindMalformedField, "outputSchema refused ("+err.Error()+"); it was ignored")
			break
		}
		t.OutputSchema = s.raw(fields[fieldOutputSchema])
	case "absent", "null":
	default:
		find(name, SevWarning, FindMalformedField, "outputSchema is "+k+", not an object; it was ignored")
	}
	if !titleOK {
		find(name, SevWarning, FindMalformedField, "title is not a string; it was ignored")
	}
	if !descriptionOK {
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
	t.Annotations, malformed = s.annotations(s.raw(fields[fieldAnnotations]), fields[fieldAnnotations], &block.hints)
	if malformed != "" {
		find(name, SevError, FindMalformedAnnotations, malformed+"; the tool is treated as unannotated")
	}
	if t.Title == "" {
		t.Title = t.Annotations.Title
	}
	if msg := readTaskSupport(s, it, t); msg != "" {
		find(name, SevWarning, FindMalformedField, msg)
	}
	for i, it := range fields {
		block.fields.raw[i] = s.raw(it)
	}
	return t, &block.fields, finds
}

// toolBlock is what readEntry keeps of one tool, in one allocation.
type toolBlock struct {
	tool   Tool
	fields entryFields
	hints  [4]bool // the Annotations hints point here
}

var annotationKeys = []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint", "title"}

// parseAnnotations reads an annotations value as sent. It returns a reason
// when the value is malformed; the annotations then have Present set and no
// hints, which counts as unannotated.
func parseAnnotations(raw json.RawMessage) (Annotations, string) {
	var s scanner
	it, ok := s.scan(raw)
	if !ok && jsonKind(raw) == "object" {
		// Not valid JSON, which a listing never hands over: no hints.
		return Annotations{Present: true}, ""
	}
	return s.annotations(raw, it, new([4]bool))
}

// annotations reads an annotations value; raw is its bytes (nil when
// absent) and, when raw is an object, it is the scanned value. The hints
// point into hints.
func (s *scanner) annotations(raw []byte, it item, hints *[4]bool) (Annotations, string) {
	switch k := jsonKind(raw); k {
	case "absent", "null":
		return Annotations{}, ""
	case "object":
	default:
		why := "annotations is " + k + ", not an object"
		return Annotations{Present: true, Malformed: why}, why
	}
	nd := s.node(it)
	if k, dup := s.firstRepeat(nd); dup {
		why := fmt.Sprintf("the annotations have the key %q twice", k)
		return Annotations{Present: true, Malformed: why}, why
	}
	var m [5]item
	s.lookup(nd, annotationKeys, m[:])
	a := Annotations{Present: true}
	for i, dst := range []**bool{&a.ReadOnly, &a.Destructive, &a.Idempotent, &a.OpenWorld} {
		switch s.kind(m[i]) {
		case 0, 'n':
			continue
		case 't', 'f':
			hints[i] = s.kind(m[i]) == 't'
			*dst = &hints[i]
		default:
			why := fmt.Sprintf("%q is %s, not a boolean", annotationKeys[i], jsonKind(s.raw(m[i])))
			return Annotations{Present: true, Malformed: why}, why
		}
	}
	if s.kind(m[4]) == '"' {
		a.Title = s.str(m[4]) // a non-string title is just not shown
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
	slices.SortFunc(ts, func(a, b *Tool) int {
		return cmp.Or(strings.Compare(a.Server, b.Server), strings.Compare(a.Name, b.Name))
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
