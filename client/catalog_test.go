package client

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// pages is a rawCaller that serves tools/list pages from a function of the
// cursor, the way a server would put them on the wire.
type pages func(cursor string) string

func (p pages) call(_ context.Context, method string, params any) (json.RawMessage, error) {
	if method != "tools/list" {
		return nil, fmt.Errorf("unexpected method %s", method)
	}
	cursor := ""
	if m, ok := params.(map[string]any); ok {
		cursor, _ = m["cursor"].(string)
	}
	return json.RawMessage(p(cursor)), nil
}

func onePage(tools ...string) pages {
	return func(string) string { return `{"tools":[` + strings.Join(tools, ",") + `]}` }
}

func ptr(b bool) *bool { return &b }

func TestParseAnnotations(t *testing.T) {
	cases := []struct {
		name      string
		raw       string
		want      Annotations
		malformed bool
	}{
		{"absent", ``, Annotations{}, false},
		{"null", `null`, Annotations{}, false},
		{"empty object", `{}`, Annotations{Present: true}, false},
		{"read-only only", `{"readOnlyHint":true}`, Annotations{Present: true, ReadOnly: ptr(true)}, false},
		{"explicit false kept", `{"readOnlyHint":false,"openWorldHint":false}`, Annotations{Present: true, ReadOnly: ptr(false), OpenWorld: ptr(false)}, false},
		{"all four", `{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":true,"openWorldHint":true,"title":"T"}`,
			Annotations{Present: true, ReadOnly: ptr(false), Destructive: ptr(true), Idempotent: ptr(true), OpenWorld: ptr(true), Title: "T"}, false},
		{"null hint is absent", `{"readOnlyHint":null}`, Annotations{Present: true}, false},
		{"string hint", `{"readOnlyHint":"yes"}`, Annotations{Present: true, Malformed: `"readOnlyHint" is a string, not a boolean`}, true},
		{"number hint", `{"readOnlyHint":true,"openWorldHint":0}`, Annotations{Present: true, Malformed: `"openWorldHint" is a number, not a boolean`}, true},
		{"not an object", `"read-only"`, Annotations{Present: true, Malformed: "annotations is a string, not an object"}, true},
		{"array", `[true]`, Annotations{Present: true, Malformed: "annotations is an array, not an object"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, why := parseAnnotations(json.RawMessage(c.raw))
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
			if (why != "") != c.malformed {
				t.Errorf("malformed = %q, want malformed %v", why, c.malformed)
			}
		})
	}
}

func TestListIsolatesMalformedEntries(t *testing.T) {
	rc := onePage(
		`{"name":"good","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`,
		`null`,
		`42`,
		`{"inputSchema":{"type":"object"}}`,
		`{"name":"bad_schema","inputSchema":"string"}`,
		`{"name":"yes_hint","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":"yes"}}`,
		`{"name":"no_schema"}`,
		`{"name":"good","inputSchema":{"type":"object"},"description":"second definition"}`,
		`{"name":"bad_title","title":7,"inputSchema":{"type":"object"}}`,
	)
	lst, err := listTools(context.Background(), rc, "h", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lst.tools {
		names = append(names, tl.Name)
	}
	if diff := cmp.Diff([]string{"good", "yes_hint", "no_schema", "bad_title"}, names); diff != "" {
		t.Errorf("kept tools (-want +got):\n%s", diff)
	}
	var codes []string
	for _, f := range lst.findings {
		codes = append(codes, f.Tool+":"+f.Code)
	}
	want := []string{
		":" + FindMalformedEntry, ":" + FindMalformedEntry, ":" + FindMalformedEntry,
		"bad_schema:" + FindInvalidSchema, "yes_hint:" + FindMalformedAnnotations,
		"no_schema:" + FindMissingSchema, "good:" + FindDuplicateName, "bad_title:" + FindMalformedField,
	}
	if diff := cmp.Diff(want, codes); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	if a := lst.tools[1].Annotations; !a.Present || a.Malformed == "" || a.ReadOnly != nil {
		t.Errorf("malformed annotations kept as %+v, want present, malformed and no hints", a)
	}
	if s := string(lst.tools[2].InputSchema); s != `{"type":"object"}` {
		t.Errorf("missing schema became %s", s)
	}
}

func TestListBounds(t *testing.T) {
	t.Run("repeated cursor", func(t *testing.T) {
		calls := 0
		rc := pages(func(cursor string) string {
			calls++
			return fmt.Sprintf(`{"tools":[{"name":"t%d","inputSchema":{}}],"nextCursor":"same"}`, calls)
		})
		lst, err := listTools(context.Background(), rc, "h", Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if calls != 2 || len(lst.tools) != 2 {
			t.Errorf("got %d calls and %d tools, want 2 and 2", calls, len(lst.tools))
		}
		if len(lst.findings) != 1 || lst.findings[0].Code != FindRepeatedCursor {
			t.Errorf("findings = %+v, want one %s", lst.findings, FindRepeatedCursor)
		}
	})
	t.Run("endless distinct cursors", func(t *testing.T) {
		calls := 0
		rc := pages(func(cursor string) string {
			calls++
			return fmt.Sprintf(`{"tools":[],"nextCursor":"c%d"}`, calls)
		})
		lst, err := listTools(context.Background(), rc, "h", Limits{MaxPages: 7})
		if err != nil {
			t.Fatal(err)
		}
		if calls != 7 {
			t.Errorf("read %d pages, want the limit of 7", calls)
		}
		if len(lst.findings) != 1 || lst.findings[0].Code != FindTooManyPages {
			t.Errorf("findings = %+v, want one %s", lst.findings, FindTooManyPages)
		}
	})
	t.Run("too many tools", func(t *testing.T) {
		var tools []string
		for i := range 12 {
			tools = append(tools, fmt.Sprintf(`{"name":"t%02d","inputSchema":{}}`, i))
		}
		lst, err := listTools(context.Background(), onePage(tools...), "h", Limits{MaxTools: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(lst.tools) != 10 || len(lst.findings) != 1 || lst.findings[0].Code != FindTooManyTools {
			t.Errorf("kept %d tools with findings %+v, want 10 and one %s", len(lst.tools), lst.findings, FindTooManyTools)
		}
	})
	t.Run("long description cut", func(t *testing.T) {
		long := strings.Repeat("x", 20000)
		lst, err := listTools(context.Background(), onePage(`{"name":"t","inputSchema":{},"description":"`+long+`"}`), "h", Limits{})
		if err != nil {
			t.Fatal(err)
		}
		tl := lst.tools[0]
		if len(tl.Description) > 16*1024+32 || !strings.Contains(tl.Description, "bytes cut]") || tl.DescriptionCut != 20000-16*1024 {
			t.Errorf("description of %d bytes (cut %d), want ≤16 KiB with a marker", len(tl.Description), tl.DescriptionCut)
		}
		full := definitionHash(map[string]json.RawMessage{"name": json.RawMessage(`"t"`), "inputSchema": json.RawMessage(`{}`), "description": json.RawMessage(`"` + long + `"`)})
		if tl.Hash != full {
			t.Error("hash must cover the description as sent, not the cut one")
		}
	})
	t.Run("page that is not a result", func(t *testing.T) {
		if _, err := listTools(context.Background(), pages(func(string) string { return `{"tools":{}}` }), "h", Limits{}); err == nil {
			t.Error("want an error for a tools value that is not an array")
		}
	})
}

func TestDefinitionHash(t *testing.T) {
	base := `{"name":"t","title":"T","description":"d","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}},"annotations":{"readOnlyHint":true}}`
	same := `{ "annotations":{"readOnlyHint":true}, "inputSchema":{"properties":{"a":{"type":"string"}},"type":"object"}, "description":"d","title":"T","name":"t","_meta":{"ignored":1}}`
	hash := func(s string) string {
		tl, _, _ := parseEntry("h", json.RawMessage(s), Limits{}.withDefaults())
		return tl.Hash
	}
	if hash(base) != hash(same) {
		t.Error("key order, whitespace and _meta must not change the hash")
	}
	for _, changed := range []string{
		strings.Replace(base, `"d"`, `"d2"`, 1),
		strings.Replace(base, `"T"`, `"T2"`, 1),
		strings.Replace(base, `"readOnlyHint":true`, `"readOnlyHint":false`, 1),
		strings.Replace(base, `"readOnlyHint":true`, `"readOnlyHint":true,"openWorldHint":false`, 1),
		strings.Replace(base, `"string"`, `"number"`, 1),
		strings.Replace(base, `}}`, `}},"outputSchema":{"type":"object"}`, 1),
	} {
		if hash(changed) == hash(base) {
			t.Errorf("hash did not change for %s", changed)
		}
	}
}

func TestDiffListings(t *testing.T) {
	list := func(entries ...string) *listing {
		lst, err := listTools(context.Background(), onePage(entries...), "h", Limits{})
		if err != nil {
			t.Fatal(err)
		}
		return lst
	}
	old := list(`{"name":"a","inputSchema":{}}`, `{"name":"b","inputSchema":{},"description":"x"}`, `{"name":"c","inputSchema":{}}`)
	cur := list(`{"name":"b","inputSchema":{},"description":"y","annotations":{"readOnlyHint":true}}`, `{"name":"c","inputSchema":{}}`, `{"name":"d","inputSchema":{}}`)
	d := diffListings(old, cur)
	if diff := cmp.Diff([]string{"d"}, d.Added); diff != "" {
		t.Error(diff)
	}
	if diff := cmp.Diff([]string{"a"}, d.Removed); diff != "" {
		t.Error(diff)
	}
	if len(d.Changed) != 1 || d.Changed[0].Tool != "b" {
		t.Fatalf("changed = %+v, want b", d.Changed)
	}
	if diff := cmp.Diff([]string{"description", "annotations"}, d.Changed[0].Fields); diff != "" {
		t.Errorf("changed fields (-want +got):\n%s", diff)
	}
}

func TestDuplicateKeysAreNotBelieved(t *testing.T) {
	lst, err := listTools(context.Background(), onePage(
		`{"name":"dup_hint","inputSchema":{},"annotations":{"readOnlyHint":false,"readOnlyHint":true}}`,
		`{"name":"dup_entry","inputSchema":{},"name":"other"}`,
		// A repeated empty key must not hide the duplicate after it.
		`{"":1,"":2,"name":"hidden","name":"other","inputSchema":{}}`,
		`{"name":"dup_empty_hint","inputSchema":{},"annotations":{"":1,"":2,"readOnlyHint":false,"readOnlyHint":true}}`,
	), "h", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(lst.tools) != 2 || lst.tools[0].Name != "dup_hint" || lst.tools[1].Name != "dup_empty_hint" {
		t.Fatalf("tools = %v, want dup_hint and dup_empty_hint (entries with a duplicate name are dropped)", lst.tools)
	}
	for _, tl := range lst.tools {
		if a := tl.Annotations; a.Malformed == "" || a.ReadOnly != nil {
			t.Errorf("%s: annotations with a duplicate key = %+v, want malformed with no hints", tl.Name, a)
		}
	}
}

func TestSchemaChecks(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 70) + `1` + strings.Repeat(`}`, 70)
	cases := []struct {
		schema string
		ok     bool
	}{
		{`{"type":"object","properties":{"p":{"$ref":"#/$defs/p"}},"$defs":{"p":{"type":"string"}}}`, true},
		{`{"type":"object","properties":{"p":{"$ref":"https://evil.example/schema.json"}}}`, false},
		{`{"type":"object","properties":{"$ref":{"type":"string"}}}`, true}, // a property named $ref is no reference
		{deep, false},
	}
	for _, c := range cases {
		err := checkSchema(json.RawMessage(c.schema))
		if (err == nil) != c.ok {
			t.Errorf("checkSchema(%.60s…) = %v, want ok=%v", c.schema, err, c.ok)
		}
	}
}

func TestUnusualNameIsFlaggedButKept(t *testing.T) {
	lst, err := listTools(context.Background(), onePage(`{"name":"list\u200bfiles","inputSchema":{}}`), "h", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(lst.tools) != 1 || len(lst.findings) != 1 || lst.findings[0].Code != FindUnusualName {
		t.Errorf("tools %d, findings %+v; want the tool kept with an %s finding", len(lst.tools), lst.findings, FindUnusualName)
	}
}

func TestCanonical(t *testing.T) {
	cases := []struct{ in, want string }{
		{``, `null`},
		{`{ "b" : [ 1 , 2.50 ] , "a" : null }`, `{"a":null,"b":[1,2.50]}`},
		{`{"\u0062":1,"a":{"d":true,"c":false}}`, `{"a":{"c":false,"d":true},"b":1}`},
		{`{"a":1,"a":2}`, `{"a":2}`}, // the last of duplicate keys, as decoding into a map reads it
		{`"\u0041\/"`, `"A/"`},
		{`"<&>"`, `"\u003c\u0026\u003e"`},
		{"\"\u2028\"", `"\u2028"`},
		{`"\ud83d\ude00 \ud800"`, "\"😀 \ufffd\""},
		{"\"\xff\"", "\"\ufffd\""},
		{`"\u0001\b\u000c"`, `"\u0001\b\f"`},
		{`1E+2`, `1E+2`}, // numbers as written
	}
	for _, c := range cases {
		got, err := canonical(json.RawMessage(c.in))
		if err != nil || string(got) != c.want {
			t.Errorf("canonical(%s) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
}

func TestDefinitionHashReadsMeaning(t *testing.T) {
	base := `{"name":"t","description":"a/b","inputSchema":{"type":"object","maximum":1}}`
	hash := func(s string) string {
		tl, _, finds := parseEntry("h", json.RawMessage(s), Limits{}.withDefaults())
		if tl == nil {
			t.Fatalf("%s dropped: %+v", s, finds)
		}
		return tl.Hash
	}
	for _, same := range []string{
		`{"n\u0061me":"\u0074","description":"a\/b","inputSchema":{ "maximum" : 1 , "type" : "object" },"_meta":{"x":1}}`,
		`{"name":"t","title":null,"description":"a/b","inputSchema":{"type":"object","maximum":1},"annotations":null}`,
	} {
		if hash(same) != hash(base) {
			t.Errorf("hash of %s differs from that of %s", same, base)
		}
	}
	for _, changed := range []string{
		`{"name":"t","description":"a/b ","inputSchema":{"type":"object","maximum":1}}`,
		`{"name":"t","description":"a/b","inputSchema":{"type":"object","maximum":1.0}}`, // numbers as written
		`{"name":"t","description":"a/b","inputSchema":{"type":"object","maximum":1,"minimum":0}}`,
		`{"name":"t","description":"a/b","inputSchema":{"type":"object","maximum":1},"annotations":{}}`,
		`{"name":"t","title":"","description":"a/b","inputSchema":{"type":"object","maximum":1}}`,
	} {
		if hash(changed) == hash(base) {
			t.Errorf("hash of %s is that of %s", changed, base)
		}
	}
}

func TestSchemaFaults(t *testing.T) {
	deep := strings.Repeat(`[`, 65) + strings.Repeat(`]`, 65)
	cases := []struct{ schema, err string }{
		{`{"properties":{"a":{"$ref":"#/$defs/a"},"b":{"$ref":"x.json"},"c":{"$ref":"y.json"}}}`, `$ref "x.json" points outside the schema`},
		{`{"\u0024ref":"\u0068ttp://x"}`, `$ref "http://x" points outside the schema`},
		{`{"$ref":"\u0023/a"}`, ``},
		// A $ref key is in force until the next scalar, as in the token
		// walk this replaced.
		{`{"$ref":["x"]}`, `$ref "x" points outside the schema`},
		{`{"$ref":[1,"x"]}`, ``},
		// The token walk decoded numbers into float64.
		{`{"maximum":1e400}`, `json: cannot unmarshal number 1e400 into Go value of type float64`},
		{`{"maximum":1e-400}`, ``},
		{deep, `schema too large: nested deeper than 64`},
		{`[` + strings.Repeat(`0,`, 19998) + `0]`, `schema too large: more than 20000 values`},
		{`[` + strings.Repeat(`0,`, 19997) + `0]`, ``},
	}
	for _, c := range cases {
		got := ""
		if err := checkSchema(json.RawMessage(c.schema)); err != nil {
			got = err.Error()
		}
		if got != c.err {
			t.Errorf("checkSchema(%.60s) = %q, want %q", c.schema, got, c.err)
		}
	}
}

func TestOddPagesReadAsDecoderWould(t *testing.T) {
	cases := []struct {
		page  string
		tools []string
	}{
		{`null`, nil},
		{`{"Tools":[{"name":"a","inputSchema":{}}]}`, []string{"a"}},
		{`{"tools":[{"name":"a","inputSchema":{}}],"tools":[{"name":"b","inputSchema":{}}]}`, []string{"b"}},
		{`{"t\u006fols":[{"name":"a","inputSchema":{}}],"nextCursor":null}`, []string{"a"}},
		{`{"meta":{"tools":[1]},"tools":[{"name":"a","inputSchema":{}}]}`, []string{"a"}},
	}
	for _, c := range cases {
		lst, err := listTools(context.Background(), pages(func(string) string { return c.page }), "h", Limits{})
		if err != nil {
			t.Errorf("%s: %v", c.page, err)
			continue
		}
		var names []string
		for _, tl := range lst.tools {
			names = append(names, tl.Name)
		}
		if diff := cmp.Diff(c.tools, names); diff != "" {
			t.Errorf("%s: tools (-want +got):\n%s", c.page, diff)
		}
	}
}
