package client

import (
	"flag"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/internal/golden"
)

var updateGolden = flag.Bool("update-golden", false, "append rows for new corpus entries to testdata/definition-hashes.golden (rows already there never change)")

// goldenTools are tool entries whose definition hashes are pinned in
// testdata/definition-hashes.golden, besides every scanSeeds entry.
var goldenTools = []string{
	`{"name":"read_file","description":"Read a file.","inputSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]},"annotations":{"readOnlyHint":true}}`,
	`{"name":"read_file","inputSchema":{"required":["path"],"properties":{"path":{"type":"string"}},"type":"object"},"description":"Read a file.","annotations":{"readOnlyHint":true}}`,
	"{\n  \"name\": \"read_file\",\n  \"description\": \"Read a file.\",\n  \"inputSchema\": { \"type\": \"object\" }\n}",
	`{"name":"send","description":"<b>bold</b> & \u003cscript\u003e","inputSchema":{"type":"object"}}`,
	"{\"name\":\"line\",\"description\":\"a\u2028b\u2029c \\u2028 \\u2029\",\"inputSchema\":{}}",
	`{"name":"esc","description":"\u0041\u00e9\ud83d\ude00\/\b\f\n\r\t\u0000\u001f\u007f","inputSchema":{}}`,
	`{"name":"nums","inputSchema":{"type":"object","properties":{"n":{"type":"number","minimum":1e2,"maximum":1.0,"default":-0,"multipleOf":0.50,"exclusiveMaximum":1E+2,"const":-1.5e-3}}}}`,
	`{"name":"big","inputSchema":{"maximum":123456789012345678901234567890,"minimum":-9007199254740993}}`,
	`{"name":"nest","inputSchema":{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"array","items":{"type":"object","properties":{"z":{"type":"string"},"y":{"enum":["x",1,null,true,false,{"k":[]}]}}}}}}},"$defs":{"d":{"type":"integer"}}}}`,
	`{"name":"dupkeys","inputSchema":{"type":"object","type":"string","properties":{"a":1,"a":2}}}`,
	`{"name":"keys","inputSchema":{"b":1,"a":2,"B":3,"A":4,"é":5,"e":6,"\u00e9x":7,"":8,"10":9,"9":10}}`,
	`{"name":"unicode_名前","title":"Título ünïcödé","description":"日本語の説明 — emoji 🚀","inputSchema":{"properties":{"ключ":{"description":"значение"}}}}`,
	"{\"name\":\"bad_utf8\",\"description\":\"x\xffy\xc3z\",\"inputSchema\":{}}",
	`{"name":"surrogates","description":"\ud83d \ude00 \udc00\ud800 \ud83dx","inputSchema":{}}`,
	`{"name":"out","inputSchema":{},"outputSchema":{"type":"object","properties":{"r":{"type":"string"}}}}`,
	`{"name":"ann","inputSchema":{},"annotations":{"title":"T","readOnlyHint":false,"destructiveHint":true,"idempotentHint":true,"openWorldHint":false}}`,
	`{"name":"ann2","inputSchema":{},"annotations":{"openWorldHint":false,"idempotentHint":true,"destructiveHint":true,"readOnlyHint":false,"title":"T"}}`,
	`{"name":"meta","inputSchema":{},"_meta":{"x":1},"execution":{"taskSupport":"optional"},"icons":[]}`,
	`{"name":"t","title":"","description":"","inputSchema":{}}`,
	`{"name":"t","inputSchema":{"type":"object","additionalProperties":false,"properties":{}}}`,
	`{"name":"long","description":"` + strings.Repeat("0123456789", 2000) + `","inputSchema":{}}`,
}

// goldenValues are JSON texts whose definition-form canonical JSON is
// pinned, besides every scanSeeds value.
var goldenValues = []string{
	`{"b":1,"a":2}`, `[1e2,1.0,-0,0.5e-1,1E+2,-1.5e-3]`, `"\u2028\u2029"`, "\"\u2028\u2029\"", `"<>&"`, `"\u003c\u003e\u0026"`,
	`{"z":{"y":[{"x":1,"w":2}]},"a":null}`, `{"a":1,"a":2,"a":3}`, `"\/"`, `"\u00e9"`, `"é"`, `" \t\n\r "`, `{"é":1,"e":2,"f":3}`,
}

// TestDefinitionHashGolden holds the definition hash of every tool in the
// corpus, and the canonical JSON it is computed from, to the bytes written
// in testdata/definition-hashes.golden. Pins and grants in users' state
// files are bound to these hashes: a change that moves one would void
// every stored pin of such a tool, so a row of the file never changes.
func TestDefinitionHashGolden(t *testing.T) {
	var corpus []string
	corpus = append(corpus, scanSeeds...)
	corpus = append(corpus, goldenValues...)
	corpus = append(corpus, goldenTools...)
	golden.Check(t, "testdata/definition-hashes.golden", corpus, *updateGolden, func(in string) []golden.Field {
		var out []golden.Field
		if c, err := canonical([]byte(in)); err != nil {
			out = append(out, golden.Field{Name: "canonical", Value: "error: " + err.Error()})
		} else {
			out = append(out, golden.Field{Name: "canonical", Value: string(c)})
		}
		tool, _, _ := parseEntry("s", []byte(in), Limits{}.withDefaults())
		if tool == nil {
			out = append(out, golden.Field{Name: "hash", Value: "(no tool)"})
		} else {
			out = append(out, golden.Field{Name: "hash", Value: tool.Hash})
		}
		return out
	})
}
