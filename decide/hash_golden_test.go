package decide

import (
	"encoding/json"
	"flag"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/internal/golden"
)

var updateGolden = flag.Bool("update-golden", false, "append rows for new corpus entries to testdata/args-hashes.golden (rows already there never change)")

// goldenArgs are call arguments whose argument hashes are pinned in
// testdata/args-hashes.golden, besides every jsonSamples text.
var goldenArgs = []string{
	`{"path":"/srv/notes.txt"}`, `{ "path" : "/srv/notes.txt" }`, "{\n\t\"path\": \"/srv/notes.txt\"\n}",
	`{"b":1,"a":2}`, `{"a":2,"b":1}`, `{"a":1,"a":2}`, `{"a":2,"a":1}`, `{"a":{"y":1,"x":2,"y":3}}`,
	`{"n":[1e2,1.0,-0,0.50,1E+2,-1.5e-3,123456789012345678901234567890]}`,
	`{"s":"<b>&amp;</b>"}`, `{"s":"\u003cb\u003e\u0026"}`, "{\"s\":\"a\u2028b\u2029c\"}", `{"s":"\u2028\u2029"}`,
	`{"s":"\u0041\u00e9\ud83d\ude00\/\b\f\n\r\t\u0000\u001f\u007f"}`, `{"s":"é 😀 日本語"}`,
	`{"s":"\ud83d \ude00 \udc00\ud800 \ud83dx"}`, "{\"s\":\"x\xffy\xc3z\"}", "{\"\xff\":1,\"\xfe\":2}",
	`{"\u0061":1,"a":2}`, `{"é":1,"\u00e9":2,"e":3}`, `{"B":1,"a":2,"A":3,"b":4,"":5,"10":6,"9":7}`,
	`{"cmd":["rm","-rf","/"],"opts":{"recursive":true,"force":null}}`, `[1,2,3]`, `"s"`, `42`,
	`{"deep":{"a":{"b":{"c":{"d":[{"e":{"f":"g"}}]}}}}}`, `{"text":"` + strings.Repeat("0123456789", 500) + `"}`,
}

// TestArgsHashGolden holds Canonical and ArgsHash of every text in the
// corpus to the bytes written in testdata/args-hashes.golden. Args and
// Once grants in users' state files are bound to these hashes: a change
// that moves one would silently void (or, worse, widen) stored grants, so
// a row of the file never changes.
func TestArgsHashGolden(t *testing.T) {
	var corpus []string
	corpus = append(corpus, jsonSamples[:len(jsonSamples)-2]...)
	corpus = append(corpus, goldenArgs...)
	golden.Check(t, "testdata/args-hashes.golden", corpus, *updateGolden, func(in string) []golden.Field {
		var out []golden.Field
		if c, err := Canonical([]byte(in)); err != nil {
			out = append(out, golden.Field{Name: "canonical", Value: "error: " + err.Error()})
		} else {
			out = append(out, golden.Field{Name: "canonical", Value: string(c)})
		}
		return append(out, golden.Field{Name: "hash", Value: ArgsHash(json.RawMessage(in))})
	})
}
