package config

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestLineCol(t *testing.T) {
	tests := []struct {
		data      string
		off       int
		line, col int
	}{
		{"", 0, 1, 1},
		{"abc", 0, 1, 1},
		{"abc", 2, 1, 3},
		{"abc", 3, 1, 4},
		{"abc", 99, 1, 4}, // clamped
		{"abc", -1, 1, 1}, // clamped
		{"a\nbc", 2, 2, 1},
		{"a\nbc", 3, 2, 2},
		{"a\r\nbc", 3, 2, 1},
		{"a\r\nbc", 1, 1, 2},        // at the \r
		{"a\r\nbc", 2, 1, 2},        // at the \n: the \r is not a column
		{"a\rbc", 2, 2, 1},          // a lone \r ends a line
		{"\tx", 1, 1, 2},            // a tab is one column
		{"héllo", 3, 1, 3},          // é is two bytes, one column
		{"日本語x", 9, 1, 4},           // three 3-byte runes
		{"\xef\xbb\xbfab", 4, 1, 2}, // the byte order mark is not counted
		{"\xff\xfeab", 2, 1, 3},     // invalid bytes count one each
		{"a\n\n\nb", 4, 4, 1},
	}
	for _, tt := range tests {
		line, col := lineCol([]byte(tt.data), tt.off)
		if line != tt.line || col != tt.col {
			t.Errorf("lineCol(%q, %d) = %d:%d, want %d:%d", tt.data, tt.off, line, col, tt.line, tt.col)
		}
	}
}

// describe renders a tree with the line:col of every key and value, so a
// test can check the position index against a hand-written listing.
func describe(data []byte, n *node, path string, out *[]string) {
	at := func(off int) string {
		l, c := lineCol(data, off)
		return fmt.Sprintf("%d:%d", l, c)
	}
	*out = append(*out, fmt.Sprintf("%s %s %s %q", path, n.kind, at(n.start), data[n.start:n.end]))
	for _, m := range n.members {
		p := path + "." + m.key
		*out = append(*out, fmt.Sprintf("%s key %s", p, at(m.keyOff)))
		describe(data, m.val, p, out)
	}
	for i, e := range n.elems {
		describe(data, e, fmt.Sprintf("%s[%d]", path, i), out)
	}
}

func TestParseTreePositions(t *testing.T) {
	tests := []struct {
		name string
		data string
		want []string
	}{
		{
			name: "nested, multi-line",
			data: "{\n  \"a\": [1, \"x\", {\"b\": null}],\n  \"c\" :\ttrue\n}",
			want: []string{
				`$ object 1:1 "{\n  \"a\": [1, \"x\", {\"b\": null}],\n  \"c\" :\ttrue\n}"`,
				`$.a key 2:3`,
				`$.a array 2:8 "[1, \"x\", {\"b\": null}]"`,
				`$.a[0] number 2:9 "1"`,
				`$.a[1] string 2:12 "\"x\""`,
				`$.a[2] object 2:17 "{\"b\": null}"`,
				`$.a[2].b key 2:18`,
				`$.a[2].b null 2:23 "null"`,
				`$.c key 3:3`,
				`$.c boolean 3:9 "true"`,
			},
		},
		{
			name: "CRLF, unicode and escapes before values",
			data: "{\"é\\u00e9\": \"日本\",\r\n\"k\":-1.5e3}",
			want: []string{
				`$ object 1:1 "{\"é\\u00e9\": \"日本\",\r\n\"k\":-1.5e3}"`,
				`$.éé key 1:2`,
				`$.éé string 1:13 "\"日本\""`,
				`$.k key 2:1`,
				`$.k number 2:5 "-1.5e3"`,
			},
		},
		{
			name: "byte order mark",
			data: "\xef\xbb\xbf{\"a\": 1}",
			want: []string{
				`$ object 1:1 "{\"a\": 1}"`,
				`$.a key 1:2`,
				`$.a number 1:7 "1"`,
			},
		},
		{
			name: "duplicate keys are kept in order",
			data: `{"a":1,"a":2}`,
			want: []string{
				`$ object 1:1 "{\"a\":1,\"a\":2}"`,
				`$.a key 1:2`,
				`$.a number 1:6 "1"`,
				`$.a key 1:8`,
				`$.a number 1:12 "2"`,
			},
		},
		{
			name: "top-level scalar with blanks",
			data: "  \n \"s\"  ",
			want: []string{`$ string 2:2 "\"s\""`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, serr := parseTree([]byte(tt.data))
			if serr != nil {
				t.Fatalf("parseTree: %+v", serr)
			}
			var got []string
			describe([]byte(tt.data), n, "$", &got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("positions (-want +got):\n%s", diff)
			}
		})
	}
}

var syntaxErrorTests = []struct {
	name string
	data string
	want string // line:col: message
}{
	{"empty", "", `1:1: the file is empty; expected a JSON object such as {"mcpServers": {}}`},
	{"blank", " \n\t", `1:1: the file is empty; expected a JSON object such as {"mcpServers": {}}`},
	{"trailing comma in object", "{\n  \"a\": 1,\n}", "2:9: trailing comma before \"}\"; remove it"},
	{"trailing comma in array", `{"a": [1, 2, ]}`, "1:12: trailing comma before \"]\"; remove it"},
	{"missing comma", "{\"a\": 1\n \"b\": 2}", "2:2: expected ',' or '}' after a value, found \"\\\"\"; is a comma missing?"},
	{"missing comma in array", `[1 2]`, "1:4: expected ',' or ']' after an array element, found \"2\"; is a comma missing?"},
	{"missing colon", `{"a" 1}`, "1:6: expected ':' after the key, found \"1\""},
	{"single-quoted key", `{'a': 1}`, `1:2: keys need double quotes ("), not single quotes`},
	{"bare key", `{a: 1}`, "1:2: expected a key in double quotes, found \"a\""},
	{"single-quoted value", `{"a": 'x'}`, `1:7: strings need double quotes ("), not single quotes`},
	{"bare word", `{"a": True}`, "1:7: expected a value, found \"T\"; put strings in double quotes (true, false and null are lower case)"},
	{"bad literal", `{"a": tru}`, "1:10: invalid word, found \"}\"; expected true, false or null (or a string in double quotes)"},
	{"line comment", "{\n  // servers\n  \"a\": 1}", "2:3: comments are not allowed in JSON; remove them"},
	{"block comment", "{\"a\": 1 /* x */}", "1:9: comments are not allowed in JSON; remove them"},
	{"smart quotes", "{“a”: 1}", "1:2: \"“\" is a typographic quote; JSON needs plain double quotes (\")"},
	{"windows path", `{"cwd": "C:\Users\me"}`, `1:12: invalid escape \U in a string; write \\ for a backslash (a Windows path can also use forward slashes)`},
	{"bad unicode escape", `{"a": "\u12G4"}`, `1:12: invalid \u escape in a string; it needs exactly four hex digits`},
	{"newline in string", "{\"a\": \"x\ny\"}", `1:9: line break inside a string; close the string on the same line, or write \n`},
	{"tab in string", "{\"a\": \"x\ty\"}", `1:9: tab character inside a string; write \t instead`},
	{"control char in string", "{\"a\": \"\x01\"}", `1:8: control character U+0001 inside a string; write it as \u0001`},
	{"unterminated string", "{\n  \"a\": \"abc\n", "2:12: line break inside a string; close the string on the same line, or write \\n"},
	{"unterminated string at EOF", "{\"a\": \"abc", "1:7: unterminated string; it needs a closing \""},
	{"unclosed object", "{\n  \"a\": {\"b\": 1}\n\n", `2:16: unexpected end of file; the '{' at 1:1 needs a closing '}'`},
	{"unclosed array", "{\"a\": [1, 2", `1:12: unexpected end of file; the '[' at 1:7 needs a closing ']'`},
	{"text after object", "{}\n}", "2:1: unexpected \"}\" after the end of the top-level object; a config file holds one JSON object"},
	{"two objects", "{} {}", "1:4: unexpected \"{\" after the end of the top-level object; a config file holds one JSON object"},
	{"bad number", `{"a": 1.}`, "1:9: invalid number, found \"}\""},
	{"leading plus", `{"a": +1}`, "1:7: expected a value (a string, number, object, array, true, false or null), found \"+\""},
	{"unicode before error", "{\"日本語\": \"ü\" \"x\"}", "1:13: expected ',' or '}' after a value, found \"\\\"\"; is a comma missing?"},
	{"CRLF and tabs before error", "{\r\n\t\"a\": 1,\r\n\t}", "2:8: trailing comma before \"}\"; remove it"},
	{"byte order mark then error", "\xef\xbb\xbf{,}", "1:2: expected a key in double quotes, found \",\""},
	{"invalid UTF-8 outside string", "{\"a\": \xff}", "1:7: expected a value (a string, number, object, array, true, false or null), found byte 0xFF (not UTF-8)"},
}

func TestParseTreeSyntaxErrors(t *testing.T) {
	for _, tt := range syntaxErrorTests {
		t.Run(tt.name, func(t *testing.T) {
			_, serr := parseTree([]byte(tt.data))
			if serr == nil {
				t.Fatalf("parseTree(%q) succeeded, want error %q", tt.data, tt.want)
			}
			line, col := lineCol([]byte(tt.data), serr.off)
			got := fmt.Sprintf("%d:%d: %s", line, col, serr.msg)
			if got != tt.want {
				t.Errorf("parseTree(%q) error\n got %s\nwant %s", tt.data, got, tt.want)
			}
		})
	}
}

func TestParseTreeDeepNesting(t *testing.T) {
	data := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	if _, serr := parseTree([]byte(data)); serr == nil || !strings.Contains(serr.msg, "nested too deeply") {
		t.Errorf("got %+v, want a nesting error", serr)
	}
}

// refLineCol is the plain definition of lineCol, the oracle for positioner.
func refLineCol(data []byte, off int) (line, col int) {
	off = max(0, min(off, len(data)))
	line, start := 1, 0
	for i := 0; i < off; i++ {
		switch data[i] {
		case '\n':
			line, start = line+1, i+1
		case '\r':
			if i+1 < len(data) && data[i+1] == '\n' {
				continue
			}
			line, start = line+1, i+1
		}
	}
	seg := data[start:off]
	if start == 0 {
		if len(seg) < len(bom) && strings.HasPrefix(string(bom), string(seg)) && strings.HasPrefix(string(data), string(bom)) {
			return 1, 1 // inside the byte order mark
		}
		seg = []byte(strings.TrimPrefix(string(seg), string(bom)))
	}
	seg = []byte(strings.TrimSuffix(string(seg), "\r"))
	return line, 1 + utf8.RuneCount(seg)
}

func checkPositioner(t *testing.T, data []byte) {
	t.Helper()
	p := newPositioner(data)
	// In order, then backwards (each step a restart), then in order again.
	var offs []int
	for off := -1; off <= len(data)+1; off++ {
		offs = append(offs, off)
	}
	for i := len(data) + 1; i >= -1; i-- {
		offs = append(offs, i)
	}
	for off := 0; off <= len(data); off += 3 {
		offs = append(offs, off)
	}
	for _, off := range offs {
		line, col := p.pos(off)
		wantLine, wantCol := refLineCol(data, off)
		if line != wantLine || col != wantCol {
			t.Fatalf("positioner(%q).pos(%d) = %d:%d, want %d:%d", data, off, line, col, wantLine, wantCol)
		}
	}
}

func TestPositioner(t *testing.T) {
	for _, s := range []string{
		"", "a", "\n", "\r", "\r\n", "a\r\nb\rc\nd", "\xef\xbb\xbf", "\xef\xbb\xbfa\nb",
		"日本\n語x", "\xff\xfe\x80", "é\r\n\tü", "\xe6\x97", exampleConfig,
	} {
		checkPositioner(t, []byte(s))
	}
}

func FuzzPositioner(f *testing.F) {
	f.Add([]byte("a\r\nb\rc\nd"))
	f.Add([]byte("\xef\xbb\xbf日本\n語x\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 512 {
			return
		}
		checkPositioner(t, data)
	})
}
