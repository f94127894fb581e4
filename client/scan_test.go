package client

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/mcphost/mcphost/sanitize"
)

// scanSeeds exercise every path of the scanner, of readPage and of
// readEntry; FuzzScanner and FuzzCanonical start from them.
var scanSeeds = []string{
	// values
	`null`, `true`, `false`, `0`, `-0`, `1.5e+3`, `-12.50E-2`, `1e400`, `1e-400`, `""`, `[]`, `{}`, ` [ 1 , [ ] , { } ] `,
	`"plain"`, `"\u0041\n\t\"\\\/\b\f\r"`, `"<a href='x'>&amp;</a>"`, "\"\u2028\u2029 \xe2\x80\xa8\"", `"\u00e9 é \u0000 \u001f \u007f"`,
	`"\ud83d\ude00 😀 \ud83d \ude00 \ud83dx \udc00\ud800"`, "\"\xff\xfe \xc3 \xed\xa0\x80\"", "\"\ufffd\xef\xbf\xbd\"",
	`{"b":1,"a":2,"a":3}`, `{"a":{"y":1,"x":2,"y":3}}`, `{"\u0061":1,"a":2}`, `{"é":1,"\u00e9":2,"e":3}`, "{\"\xff\":1,\"\xfe\":2}",
	`{"":1,"":2,"a":1,"a":2}`, `{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k3":3}`,
	// invalid
	``, ` `, `{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `01`, `1.`, `1e`, `-`, `tru`, `nul`, `"\x"`, `"\u12"`, "\"\x01\"", `{} {}`, `1 2`, `{"a":1}x`, `{1:2}`,
	// schemas
	`{"type":"object","properties":{"p":{"$ref":"#/$defs/p"}},"$defs":{"p":{"type":"string"}}}`,
	`{"type":"object","properties":{"p":{"$ref":"https://evil.example/schema.json"}}}`,
	`{"type":"object","properties":{"$ref":{"type":"string"}}}`,
	`{"\u0024ref":"\u0068ttp://x"}`, `{"$ref":"\u0023/x"}`, `{"$ref":""}`, `{"$ref":1,"x":"http://y"}`,
	`{"$ref":["http://x"]}`, `{"$ref":[1,"http://x"]}`, `[{"$ref":{}},"http://x"]`, `{"$ref":{"a":"b"}}`,
	`{"maximum":1e400}`, `{"minimum":-1E309,"$ref":"http://x"}`, `{"$ref":"http://x","maximum":1e400}`,
	strings.Repeat(`{"a":`, 70) + `1` + strings.Repeat(`}`, 70),
	// entries
	`{"name":"t","title":"T","description":"d","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}},"annotations":{"readOnlyHint":true}}`,
	`{ "annotations":{"readOnlyHint":true}, "inputSchema":{"properties":{"a":{"type":"string"}},"type":"object"}, "description":"d","title":"T","name":"t","_meta":{"ignored":1}}`,
	`{"n\u0061me":"t","inputSchema":{},"name":"u"}`, `{"name":"t","inputSchema":{},"name":"t"}`, `{"":1,"":2,"name":"a","name":"b","inputSchema":{}}`,
	`{"name":"t","inputSchema":null}`, `{"name":"t"}`, `{"name":"t","inputSchema":"s"}`, `{"name":7,"inputSchema":{}}`, `{"name":null}`, `{"name":""}`,
	`{"name":"list\u200bfiles","inputSchema":{}}`, "{\"name\":\"\xff\",\"inputSchema\":{}}", `{"name":"` + strings.Repeat("n", 200) + `","inputSchema":{}}`,
	`{"name":"t","inputSchema":{},"outputSchema":[],"title":7,"description":false}`, `{"name":"t","inputSchema":{},"outputSchema":{"$ref":"http://x"}}`,
	`{"name":"t","inputSchema":{},"title":null,"description":null,"outputSchema":null,"annotations":null}`,
	`{"name":"t","inputSchema":{},"description":"` + strings.Repeat("é", 40) + `"}`,
	`{"name":"t","inputSchema":{},"annotations":{"readOnlyHint":false,"readOnlyHint":true}}`,
	`{"name":"t","inputSchema":{},"annotations":{"readOnlyHint":"yes","openWorldHint":0}}`,
	`{"name":"t","inputSchema":{},"annotations":{"openWorldHint":0,"readOnlyHint":[]}}`,
	`{"name":"t","inputSchema":{},"annotations":{"readOnlyHint":null,"destructiveHint":true,"idempotentHint":false,"openWorldHint":true,"title":"A"}}`,
	`{"name":"t","inputSchema":{},"annotations":{"title":5}}`, `{"name":"t","inputSchema":{},"annotations":"x"}`, `{"name":"t","inputSchema":{},"annotations":{"t\u0069tle":"A"}}`,
	// pages
	`{"tools":[]}`, `{"tools":null,"nextCursor":"c"}`, `{"tools":[{"name":"a","inputSchema":{}},null,42],"nextCursor":null}`, `{"tools":{}}`, `[]`, `"x"`,
	`{"Tools":[{"name":"a"}]}`, `{"tools":[1],"tools":[2,3]}`, `{"tools":[1],"TOOLS":null}`, `{"nextcursor":"c","tools":[]}`, `{"NEXTCURSOR":1}`,
	`{"toolſ":[1]}`, `{"t\u006fols":[1]}`, `{"tools":[1],"nextCursor":"a","nextCursor":"b"}`, `{"other":{"tools":1},"tools":[{}]}`,
}

// bigSeeds are at the bounds; too slow to mutate, they are checked by
// TestScanSeedsAgree only.
var bigSeeds = []string{
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	`{"a":` + strings.Repeat(`{"a":`, 9998) + `1` + strings.Repeat(`}`, 9999),
	`[` + strings.Repeat(`1,`, 20001) + `1]`,
	`[` + strings.Repeat(`1,`, 19997) + `1]`,
	`{"name":"t","inputSchema":{"type":"object"},"description":` + strings.Repeat(`[`, 9000) + strings.Repeat(`]`, 9000) + `}`,
}

func addSeeds(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s))
	}
	for _, pages := range catalogPages(1, 3) {
		for _, p := range pages {
			f.Add([]byte(p))
			var res struct{ Tools []json.RawMessage }
			_ = json.Unmarshal([]byte(p), &res)
			for _, e := range res.Tools {
				f.Add([]byte(e))
			}
		}
	}
}

// FuzzScanner holds the scanner, and everything read with it, to the
// encoding/json implementation it replaced: validity to json.Valid; pages to
// json.Unmarshal; entries, duplicate keys, schema checks and annotations to
// the reference functions below.
func FuzzScanner(f *testing.F) {
	addSeeds(f)
	f.Fuzz(checkAll)
}

func checkAll(t *testing.T, data []byte) {
	var s scanner
	_, valid := s.scan(data)
	if want := json.Valid(data); valid != want {
		t.Fatalf("scan(%q) valid = %v, want %v", data, valid, want)
	}
	checkPage(t, data)
	checkEntry(t, data, Limits{}.withDefaults())
	checkEntry(t, data, Limits{MaxNameLen: 8, MaxDescription: 16}.withDefaults())
	if !valid {
		return
	}
	got, gotDup := duplicateKey(data)
	want, wantDup := refDuplicateKey(data)
	if got != want || gotDup != wantDup {
		t.Errorf("duplicateKey(%q) = %q %v, want %q %v", data, got, gotDup, want, wantDup)
	}
	if got, want := errString(checkSchema(data)), errString(refCheckSchema(data)); got != want {
		t.Errorf("checkSchema(%q) = %s, want %s", data, got, want)
	}
	gotA, gotWhy := parseAnnotations(data)
	wantA, wantWhy := refParseAnnotations(data)
	if diff := cmp.Diff(wantA, gotA); diff != "" || gotWhy != wantWhy {
		t.Errorf("parseAnnotations(%q) = %q (-want +got):\n%s", data, gotWhy, diff)
	}
	if want, err := refCanonical(data); err != nil {
		t.Fatalf("reference canonical(%q): %v", data, err)
	} else if got, err := canonical(data); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("canonical(%q) = %q, %v; want %q", data, got, err, want)
	}
}

// FuzzCanonical holds canonical to its definition, json.Marshal of what
// decoding with UseNumber into an any gives, on any valid JSON.
func FuzzCanonical(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		want, err := refCanonical(data)
		if err != nil {
			t.Fatalf("reference canonical(%q): %v", data, err)
		}
		got, err := canonical(data)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("canonical(%q) = %q, %v; want %q", data, got, err, want)
		}
		if again, _ := canonical(got); !bytes.Equal(again, got) {
			t.Fatalf("canonical is not idempotent: %q then %q", got, again)
		}
	})
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%q", err.Error())
}

// checkPage compares readPage with json.Unmarshal into the result struct.
func checkPage(t *testing.T, data []byte) {
	t.Helper()
	var s scanner
	entries, cursor, err := readPage(&s, data)
	var res struct {
		Tools      []json.RawMessage `json:"tools"`
		NextCursor json.RawMessage   `json:"nextCursor"`
	}
	werr := json.Unmarshal(data, &res)
	if errString(err) != errString(werr) {
		t.Fatalf("readPage(%q) error %s, want %s", data, errString(err), errString(werr))
	}
	if err != nil {
		return
	}
	if entries.n != len(res.Tools) {
		t.Fatalf("readPage(%q) has %d entries, want %d", data, entries.n, len(res.Tools))
	}
	for i, want := range res.Tools {
		got := []byte(nil)
		if entries.slow != nil {
			got = entries.slow[i]
		} else {
			got = s.raw(s.items[entries.first+i])
		}
		if !bytes.Equal(got, want) {
			t.Errorf("readPage(%q) entry %d = %q, want %q", data, i, got, want)
		}
	}
	if !bytes.Equal(cursor, res.NextCursor) {
		t.Errorf("readPage(%q) cursor = %q, want %q", data, cursor, res.NextCursor)
	}
}

// checkEntry compares parseEntry with the reference.
func checkEntry(t *testing.T, data []byte, lim Limits) {
	t.Helper()
	got, gotFields, gotFinds := parseEntry("s", data, lim)
	want, wantFields, wantFinds := refParseEntry("s", data, lim)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseEntry(%q) tool (-want +got):\n%s", data, diff)
	}
	if diff := cmp.Diff(wantFinds, gotFinds); diff != "" {
		t.Errorf("parseEntry(%q) findings (-want +got):\n%s", data, diff)
	}
	if (gotFields == nil) != (wantFields == nil) {
		t.Fatalf("parseEntry(%q) fields = %v, want %v", data, gotFields, wantFields)
	}
	if gotFields == nil {
		return
	}
	for i, k := range definingFields {
		if !bytes.Equal(gotFields.raw[i], wantFields[k]) {
			t.Errorf("parseEntry(%q) field %s = %q, want %q", data, k, gotFields.raw[i], wantFields[k])
		}
	}
}

func TestScanSeedsAgree(t *testing.T) {
	for _, seed := range append(scanSeeds, bigSeeds...) {
		checkAll(t, []byte(seed))
	}
}

func TestReadEntryAllocs(t *testing.T) {
	entry := catalogEntry(t)
	lim := Limits{}.withDefaults()
	var s scanner
	readEntryRaw(&s, "srv", entry, lim) // grow the buffers
	if n := testing.AllocsPerRun(100, func() { readEntryRaw(&s, "srv", entry, lim) }); n > 2 {
		t.Errorf("reading an entry allocates %v times, want 2: the tool and its strings", n)
	}
}

// The implementation the scanner replaced, kept as the reference that
// FuzzScanner and FuzzCanonical hold it to: encoding/json token walks, and a
// decode into map[string]any and a re-marshal per hashed field.

func refParseEntry(server string, raw json.RawMessage, lim Limits) (*Tool, map[string]json.RawMessage, []Finding) {
	var finds []Finding
	find := func(tool, sev, code, msg string) {
		finds = append(finds, Finding{Server: server, Tool: tool, Severity: sev, Code: code, Message: msg})
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		find("", SevError, FindMalformedEntry, "a tools/list entry is not an object ("+jsonKind(raw)+"); it was dropped")
		return nil, nil, finds
	}
	if k, dup := refDuplicateKey(raw); dup {
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
	t := &Tool{Server: server, Name: name, Hash: refDefinitionHash(fields)}

	switch schema := fields["inputSchema"]; jsonKind(schema) {
	case "object":
		if err := refCheckSchema(schema); err != nil {
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
		if err := refCheckSchema(fields["outputSchema"]); err != nil {
			find(name, SevWarning, FindMalformedField, "outputSchema refused ("+err.Error()+"); it was ignored")
			break
		}
		t.OutputSchema = fields["outputSchema"]
	case "absent", "null":
	default:
		find(name, SevWarning, FindMalformedField, "outputSchema is "+k+", not an object; it was ignored")
	}
	if !refStringField(fields, "title", &t.Title) {
		find(name, SevWarning, FindMalformedField, "title is not a string; it was ignored")
	}
	if !refStringField(fields, "description", &t.Description) {
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
	t.Annotations, malformed = refParseAnnotations(fields["annotations"])
	if malformed != "" {
		find(name, SevError, FindMalformedAnnotations, malformed+"; the tool is treated as unannotated")
	}
	if t.Title == "" {
		t.Title = t.Annotations.Title
	}
	return t, fields, finds
}

func refStringField(fields map[string]json.RawMessage, key string, dst *string) bool {
	raw, ok := fields[key]
	if !ok || bytes.Equal(raw, []byte("null")) {
		return true
	}
	return json.Unmarshal(raw, dst) == nil
}

// refParseAnnotations reads an annotations value as sent. It returns a reason
// when the value is malformed; the annotations then have Present set and no
// hints, which counts as unannotated.
func refParseAnnotations(raw json.RawMessage) (Annotations, string) {
	switch k := jsonKind(raw); k {
	case "absent", "null":
		return Annotations{}, ""
	case "object":
	default:
		why := "annotations is " + k + ", not an object"
		return Annotations{Present: true, Malformed: why}, why
	}
	if k, dup := refDuplicateKey(raw); dup {
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

func refDuplicateKey(raw json.RawMessage) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", false
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return "", false
		}
		k, _ := t.(string)
		if seen[k] {
			return k, true
		}
		seen[k] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "", false
		}
	}
	return "", false
}

func refCheckSchema(raw json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	depth, nodes := 0, 0
	var inObject []bool // per level: is it an object (so the next string may be a key)
	expectKey := false
	lastKey := ""
	for {
		t, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		nodes++
		if nodes > maxSchemaNodes {
			return fmt.Errorf("%w: more than %d values", errSchemaTooBig, maxSchemaNodes)
		}
		if d, ok := t.(json.Delim); ok {
			switch d {
			case '{', '[':
				depth++
				if depth > maxSchemaDepth {
					return fmt.Errorf("%w: nested deeper than %d", errSchemaTooBig, maxSchemaDepth)
				}
				inObject = append(inObject, d == '{')
				expectKey = d == '{'
			case '}', ']':
				depth--
				inObject = inObject[:len(inObject)-1]
				expectKey = len(inObject) > 0 && inObject[len(inObject)-1]
			}
			continue
		}
		if expectKey {
			lastKey, _ = t.(string)
			expectKey = false
			continue
		}
		if lastKey == "$ref" {
			if ref, ok := t.(string); ok && !strings.HasPrefix(ref, "#") {
				return fmt.Errorf("$ref %q points outside the schema", ref)
			}
		}
		lastKey = ""
		expectKey = len(inObject) > 0 && inObject[len(inObject)-1]
	}
}

func refCanonical(raw json.RawMessage) ([]byte, error) {
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

// refDefinitionHash hashes the fields of a tool entry that define it.
func refDefinitionHash(fields map[string]json.RawMessage) string {
	h := sha256.New()
	for _, k := range []string{"name", "title", "description", "inputSchema", "outputSchema", "annotations"} {
		c, err := refCanonical(fields[k])
		if err != nil {
			c = fields[k] // unreadable JSON still changes the hash when it changes
		}
		fmt.Fprintf(h, "%s=%d:", k, len(c))
		h.Write(c)
	}
	return hex.EncodeToString(h.Sum(nil))
}
