package jsonscan

import (
	"encoding/json"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The two forms differ exactly where the package comment says: HTML
// characters, U+2028 and U+2029 are escaped in DefinitionForm only.
func TestAppendStringForms(t *testing.T) {
	cases := []struct{ in, args, def string }{
		{`plain`, `"plain"`, `"plain"`},
		{`<a>&`, `"<a>&"`, `"\u003ca\u003e\u0026"`},
		{`\u003c`, `"<"`, `"\u003c"`},
		{"\u2028\u2029", "\"\u2028\u2029\"", `"\u2028\u2029"`},
		{`\u2028`, "\"\u2028\"", `"\u2028"`},
		{`\u0041\/\n\u0000`, `"A/\n\u0000"`, `"A/\n\u0000"`},
		{"x\xffy", "\"x\uFFFDy\"", "\"x\uFFFDy\""},
		{`\ud800x`, "\"\uFFFDx\"", "\"\uFFFDx\""},
	}
	for _, c := range cases {
		if got := string(AppendString(nil, []byte(c.in), ArgsForm)); got != c.args {
			t.Errorf("AppendString(%q, ArgsForm) = %s, want %s", c.in, got, c.args)
		}
		if got := string(AppendString(nil, []byte(c.in), DefinitionForm)); got != c.def {
			t.Errorf("AppendString(%q, DefinitionForm) = %s, want %s", c.in, got, c.def)
		}
		// DefinitionForm is json.Marshal's encoding of the decoded string.
		var s string
		if err := json.Unmarshal([]byte(`"`+c.in+`"`), &s); err != nil {
			t.Fatal(err)
		}
		if want, _ := json.Marshal(s); c.def != string(want) {
			t.Errorf("case %q: DefinitionForm %s, json.Marshal %s", c.in, c.def, want)
		}
	}
}

func TestAppendCanonicalArgs(t *testing.T) {
	cases := map[string]string{
		`{ "b":2, "a":1 }`:           `{"a":1,"b":2}`,
		`{"a":2,"a":1,"\u0061":0}`:   `{"a":2,"a":1,"a":0}`,
		`[1.0, -0, 1e2, "<"]`:        `[1.0,-0,1e2,"<"]`,
		`{"\u00e9":{"y":[],"x":{}}}`: `{"é":{"x":{},"y":[]}}`,
	}
	for in, want := range cases {
		if !Valid([]byte(in)) {
			t.Fatalf("Valid(%s) = false", in)
		}
		if got := string(AppendCanonicalArgs(nil, []byte(in))); got != want {
			t.Errorf("AppendCanonicalArgs(%s) = %s, want %s", in, got, want)
		}
	}
}

// The package is pure: it imports the standard library only, so that
// package decide, which imports it, stays free of the rest of the house.
func TestStandardLibraryOnly(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if first, _, _ := strings.Cut(p, "/"); strings.Contains(first, ".") {
				t.Errorf("%s imports %s; jsonscan must use the standard library only", f, p)
			}
		}
	}
}
