package decide

import (
	"encoding/json"
	"path"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mtibben/confusables"
	"pgregory.net/rapid"

	"github.com/mcphost/mcphost/decide/jsonscan"
)

var jsonSamples = []string{
	``, ` `, `{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e10`, `-1.0E-2`, `"x"`, `{"a":1}`,
	`{"a":[1,2,{"b":null}],"c":"\u00e9\n"}`, ` { "a" : 1 } `, `{"a":1,}`, `[1,]`, `{"a"}`, `{"a":}`,
	`01`, `1.`, `.5`, `-`, `1e`, `+1`, `"\x"`, `"\u12"`, `"a` + "\x01" + `"`, `tru`, `nul`, `{"a":1}{}`,
	`[[[[]]]]`, `"\ud800"`, "\"\xff\"", `{"a":"b"`, `[`, `]`, `"`, `\`, `{,}`, `[1 2]`, `{"a":1 "b":2}`,
	strings.Repeat("[", jsonscan.MaxDepth) + strings.Repeat("]", jsonscan.MaxDepth),
	strings.Repeat("[", jsonscan.MaxDepth+1) + strings.Repeat("]", jsonscan.MaxDepth+1),
}

// The scanner must accept exactly what encoding/json accepts, or argument
// conditions and protected paths could be read differently from the
// server's own parser.
func TestValidJSONMatchesStdlib(t *testing.T) {
	for _, s := range jsonSamples {
		if got, want := jsonscan.Valid([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("jsonscan.Valid(%.40q) = %v, json.Valid = %v", s, got, want)
		}
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, s := range jsonSamples[:len(jsonSamples)-2] {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := jsonscan.Valid(b), json.Valid(b); got != want {
			t.Fatalf("jsonscan.Valid(%q) = %v, json.Valid = %v", b, got, want)
		}
		if !json.Valid(b) {
			return
		}
		c, err := Canonical(b)
		if err != nil {
			t.Fatalf("Canonical(%q): %v", b, err)
		}
		if c2, _ := Canonical(c); string(c2) != string(c) {
			t.Fatalf("Canonical not idempotent: %q then %q", c, c2)
		}
		var x, y any
		if json.Unmarshal(b, &x) == nil && !hasDuplicateKeys(b) {
			if err := json.Unmarshal(c, &y); err != nil || !reflect.DeepEqual(x, y) {
				t.Fatalf("Canonical(%q) = %q decodes differently", b, c)
			}
		}
	})
}

// hasDuplicateKeys is conservative: any key text repeated anywhere counts.
func hasDuplicateKeys(b []byte) bool {
	seen := map[string]bool{}
	for i := 0; i < len(b); {
		if b[i] != '"' {
			i++
			continue
		}
		e := jsonscan.SkipString(b, i)
		k := string(b[i:e])
		if j := jsonscan.SkipSpace(b, e); j < len(b) && b[j] == ':' {
			if seen[k] {
				return true
			}
			seen[k] = true
		}
		i = e
	}
	return false
}

func TestCanonical(t *testing.T) {
	cases := map[string]string{
		`{ "b":2, "a":1 }`:                    `{"a":1,"b":2}`,
		`{"a":{"d":[3, 1.0],"c":"\u0041\/"}}`: `{"a":{"c":"A/","d":[3,1.0]}}`,
		`"tab\there"`:                         `"tab\there"`,
		`"\u001f<>&"`:                         `"\u001f<>&"`,
		`[ ]`:                                 `[]`,
		`{"é":1,"e":2,"z":3}`:                 `{"e":2,"z":3,"é":1}`,
		`1E+2`:                                `1E+2`,
	}
	for in, want := range cases {
		got, err := Canonical([]byte(in))
		if err != nil || string(got) != want {
			t.Errorf("Canonical(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
	if _, err := Canonical([]byte(`{"a":`)); err != ErrInvalidJSON {
		t.Errorf("Canonical(invalid) error = %v, want ErrInvalidJSON", err)
	}
	if ArgsHash(json.RawMessage(`{"a":1,"b":2}`)) != ArgsHash(json.RawMessage("{ \"b\":2,\n \"a\":1 }")) {
		t.Error("ArgsHash differs for reordered members")
	}
	if ArgsHash(json.RawMessage(`{"a":1}`)) == ArgsHash(json.RawMessage(`{"a":1.0}`)) {
		t.Error("ArgsHash equal for numbers written differently; numbers must stay as written")
	}
	if ArgsHash(nil) != ArgsHash(json.RawMessage(`{}`)) || ArgsHash(json.RawMessage(`{`)) != "" {
		t.Error("ArgsHash: empty must hash like {}, invalid must be empty")
	}
}

func TestIsCleanPath(t *testing.T) {
	samples := []string{"", "/", ".", "..", "a", "/a", "/a/", "a//b", "/a/./b", "/a/../b", "../a", "../../a", "a/..",
		"/..", "./a", "a/.", "/a/b", "a/b/..", "..a", "a..", "/a/.b", "//", "../..", "../a/.."}
	for _, s := range samples {
		if got, want := isCleanPath([]byte(s)), path.Clean(s) == s; got != want {
			t.Errorf("isCleanPath(%q) = %v, want %v", s, got, want)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.StringOfN(rapid.SampledFrom([]rune{'/', '.', 'a'}), 0, 12, -1).Draw(t, "path")
		if got, want := isCleanPath([]byte(s)), path.Clean(s) == s; got != want {
			t.Fatalf("isCleanPath(%q) = %v, want %v", s, got, want)
		}
	})
}

// globRef is a plain recursive reference for globMatch.
func globRef(pat, s []rune) bool {
	if len(pat) == 0 {
		return len(s) == 0
	}
	switch pat[0] {
	case '*':
		for i := 0; i <= len(s); i++ {
			if globRef(pat[1:], s[i:]) {
				return true
			}
		}
		return false
	case '?':
		return len(s) > 0 && globRef(pat[1:], s[1:])
	}
	return len(s) > 0 && s[0] == pat[0] && globRef(pat[1:], s[1:])
}

func TestGlob(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		alpha := []rune{'a', 'b', '/', 'é', '_'}
		pat := rapid.StringOfN(rapid.SampledFrom(append(alpha, '*', '?')), 0, 8, -1).Draw(t, "pat")
		s := rapid.StringOfN(rapid.SampledFrom(alpha), 0, 10, -1).Draw(t, "s")
		want := globRef([]rune(pat), []rune(s))
		if got := globMatch(pat, s); got != want {
			t.Fatalf("globMatch(%q, %q) = %v, want %v", pat, s, got, want)
		}
		if got := globMatch(pat, []byte(s)); got != want {
			t.Fatalf("globMatch(%q, []byte %q) = %v, want %v", pat, s, got, want)
		}
		cp := compilePattern(pat)
		if got := cp.match(s); got != want {
			t.Fatalf("compiled %q (kind %d) on %q = %v, want %v", pat, cp.kind, s, got, want)
		}
		if got := cp.matchBytes([]byte(s)); got != want {
			t.Fatalf("compiled %q (kind %d) on []byte %q = %v, want %v", pat, cp.kind, s, got, want)
		}
	})
}

func TestNameSuggestsWrite(t *testing.T) {
	cases := map[string]string{ // name: the word that says write, or "" for none
		"delete_file":       "delete",
		"file_delete":       "delete",
		"bulkDelete":        "Delete",
		"DropTable":         "Drop",
		"fs.write":          "write",
		"tasks-update":      "update",
		"HTTPPost":          "Post",
		"s3_put_object":     "put",
		"get_update_status": "",
		"list_posts":        "",
		"get_settings":      "",
		"read_file":         "",
		"directory_tree":    "",
		"searchAndReplace":  "Replace",
		"get_and_delete":    "delete",
		"list_deleted":      "",
		"get_reset_link":    "",
		"echo":              "",
		"":                  "",
		"__":                "",
		"open_nodes":        "",
		"getHTTPResponse":   "",
		"exec":              "exec",
		// The verb stands first or last; a noun that is also a verb is the
		// verb only when no other word can be.
		"run_query":           "", // "query" can be the verb, and it reads
		"run_tests":           "run",
		"run":                 "run",
		"agent_run_details":   "run",
		"run_eval":            "run",
		"github_create_issue": "create",
		"bulk_update_status":  "update",
		"usage_report":        "",
		"audit_log":           "",
		"get_last_update":     "",
		"purge_cache":         "purge",
		"send_email":          "send",
		"sendEmail":           "send",
		"set-flag":            "set",
		"drop_index":          "drop",
		"update_user":         "update",
		"delete_all_runs":     "delete",
		// Mnema's catalog: reads, then writes (the word that would make a
		// read-only claim unbelievable).
		"agent_run_show":     "",
		"run_diff":           "",
		"eval_report":        "",
		"pr_status":          "",
		"context_bootstrap":  "",
		"snapshot_generate":  "",
		"task_create":        "create",
		"note_add":           "add",
		"observation_record": "record",
		"task_claim":         "claim",
		"skill_use":          "", // a trap no name check can see: its annotations say it writes
		"task_start":         "start",
		"task_submit":        "submit",
		"task_approve":       "approve",
		"task_reopen":        "reopen",
		"task_cancel":        "cancel",
		// Done's catalog.
		"list_my_tasks":   "",
		"get_task":        "",
		"get_digest":      "",
		"fleet_status":    "",
		"search_context":  "",
		"read_context":    "",
		"delete_task":     "delete",
		"delete_project":  "delete",
		"update_task":     "update",
		"block_task":      "block",
		"set_step_status": "set",
		"comment_on_task": "comment",
		"start_run":       "start",
		"decompose_task":  "", // not a verb the check knows; its annotations say it writes
		"save_context":    "save",
	}
	for name, want := range cases {
		got, ok := nameSuggestsWrite(name)
		if got != want || ok != (want != "") {
			t.Errorf("nameSuggestsWrite(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
	if w, ok := nameLooksAdditive("createTask"); !ok || w != "create" {
		t.Errorf("nameLooksAdditive(createTask) = %q, %v", w, ok)
	}
	if _, ok := nameLooksAdditive("set_status"); ok {
		t.Error("nameLooksAdditive(set_status) = true")
	}
}

func TestFoldEqual(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{"path", "PATH", true}, {"path", "Path", true}, {"path", "pat", false}, {"", "", true},
		{"ſ", "s", true}, {"\u212a", "k", true}, {"é", "É", true}, {"a", "b", false}, {"path", "p@th", false},
	}
	for _, c := range cases {
		if got := foldEqual([]byte(c.a), c.b); got != c.want {
			t.Errorf("foldEqual(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := strings.EqualFold(c.a, c.b); got != c.want {
			t.Errorf("test case wrong: strings.EqualFold(%q, %q) = %v", c.a, c.b, got)
		}
	}
}

// replaceInvalid replaces each invalid UTF-8 byte with U+FFFD, as
// encoding/json does when it decodes a string.
func replaceInvalid(b []byte) string {
	var sb strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			sb.WriteRune(utf8.RuneError)
		} else {
			sb.Write(b[:n])
		}
		b = b[n:]
	}
	return sb.String()
}

func checkUnescape(t testing.TB, quoted []byte) {
	var want string
	if json.Unmarshal(quoted, &want) != nil {
		return
	}
	raw := quoted[1 : len(quoted)-1]
	if got := replaceInvalid(jsonscan.Unescape(nil, raw)); got != want {
		t.Fatalf("jsonscan.Unescape(%q) = %q, want %q", raw, got, want)
	}
}

func TestUnescape(t *testing.T) {
	for _, s := range []string{`"a\nb"`, `"\u00e9\/\\\""`, `"\ud83d\ude00"`, `"\ud800"`, `"\ud800\u0041"`,
		`"\udc00\ud800"`, `"\ud800\ud800\udc00"`, "\"\xff\xfe\"", `"\b\f\r\t"`, `"\u0000"`} {
		checkUnescape(t, []byte(s))
	}
}

func FuzzUnescape(f *testing.F) {
	f.Add([]byte(`\ud83d\ude00x\n`))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkUnescape(t, append(append([]byte{'"'}, b...), '"'))
	})
}

func TestArgCond(t *testing.T) {
	const (
		D = Deny
		L = Allow
	)
	cases := []struct {
		path, cond, args string
		eff              Verdict
		want             bool
	}{
		{"p", `{"equals":{"b":[1,2],"a":"x"}}`, `{"p":{"a":"x","b":[1,2]}}`, L, true},
		{"p", `{"equals":{"a":"x"}}`, `{"p":{"a":"y"}}`, D, false},
		{"p", `{"equals":[1,2]}`, `{"p":[1,2]}`, L, true},
		{"p", `{"equals":[1,2]}`, `{"p":[2,1]}`, D, false},
		{"p", `{"equals":2}`, `{"p":[1,2]}`, D, true},  // array elements, any
		{"p", `{"equals":2}`, `{"p":[1,2]}`, L, false}, // array elements, all
		{"p", `{"equals":2}`, `{"p":[2,2.0]}`, L, true},
		{"p", `{"equals":"[x"}`, `{"p":["[x","[x"]}`, L, true}, // a string is not an array
		{"p", `{"equals":{"a":1}}`, `{"p":[{"a":1}]}`, L, true},
		{"p", `{"equals":9007199254740993}`, `{"p":9007199254740992}`, D, false},
		{"p", `{"equals":0}`, `{"p":-0}`, L, true},
		{"p", `{"equals":null}`, `{"p":null}`, L, true},
		{"p", `{"equals":false}`, `{"p":"false"}`, D, false},
		{"p", `{"equals":"a"}`, `{"p":"\u0061"}`, L, true},
		{"p", `{"prefix":"/tmp/"}`, `{"p":7}`, D, false},
		{"p", `{"glob":"*.pem"}`, `{"p":{"x":"a.pem"}}`, D, false},
		{"path", `{"prefix":"/etc"}`, `{"p\u0061th":"/etc/x"}`, D, true}, // escaped key
		{"kind", `{"equals":1}`, `{"\u212aind":1}`, D, true},             // Kelvin sign folds to k
		{"path", `{"prefix":"/tmp/"}`, `{"path":"/tmp/a","Path":"/tmp/b"}`, L, true},
		{"path", `{"prefix":"/tmp/"}`, `{"path":"/tmp/a","Path":"/var/b"}`, L, false},
		{"path", `{"prefix":"/tmp/"}`, `{"path":"/tmp/a","Path":"/var/b"}`, D, true},
		{"path", `{"prefix":"/tmp/","glob":"*.txt"}`, `{"path":"/tmp/a.txt"}`, L, true},
		{"path", `{"prefix":"/tmp/","glob":"*.txt"}`, `{"path":"/tmp/a.md"}`, D, false},
		{"path", `{"equals":"/tmp/a"}`, `{"path":"/tmp//a"}`, D, true},  // cleaned form
		{"path", `{"equals":"/tmp/a"}`, `{"path":"/tmp//a"}`, L, false}, // raw form differs
		{"a.b", `{"equals":1}`, `{"a":[{"b":1},{"b":1}]}`, L, true},
		{"a.b", `{"equals":1}`, `{"a":[{"b":1},{"c":1}]}`, L, true},
		{"a.1.b", `{"equals":1}`, `{"a":[{"b":2},{"b":1}]}`, L, true},
		{"a.1", `{"equals":1}`, `{"a":{"1":1}}`, L, true},
		{"a", `{"equals":1}`, `{}`, D, false},
		{"a", `{"equals":1}`, ``, D, false},
		{"a", `{"equals":1}`, `{"a":`, D, true},   // unreadable: deny holds
		{"a", `{"equals":1}`, `{"a":1`, L, false}, // unreadable: allow fails
		{"a", `{"equals":1}`, `[{"a":1}]`, D, true},
	}
	for _, c := range cases {
		cond, err := parseArgCond(c.path, []byte(c.cond))
		if err != nil {
			t.Fatalf("parseArgCond(%s, %s): %v", c.path, c.cond, err)
		}
		a := viewArgs([]byte(c.args))
		if got := cond.eval(&a, c.eff); got != c.want {
			t.Errorf("%s %s %s on %s = %v, want %v", c.eff, c.path, c.cond, c.args, got, c.want)
		}
	}
}

// The protected-path scan reads strings undecoded when it can; it must
// agree with scanning the decoded string.
func TestProtectsRawMatchesDecoded(t *testing.T) {
	p, err := Compile(nil, Options{ProtectedPaths: []string{"/h/.cfg/app", "/var/log/app.log"}, Home: "/h"})
	if err != nil {
		t.Fatal(err)
	}
	frags := []string{"/h", "/.cfg", "/app", "/var/log/app.log", "x", " ", "=", ":", `\n`, `\"`, `\b`, `\t`, `\/`,
		`\\`, `\u002f`, "~", "$HOME", "%2F", "..", "/..", "file://", `C:`, "'", "rm -rf "}
	rapid.Check(t, func(t *rapid.T) {
		raw := strings.Join(rapid.SliceOfN(rapid.SampledFrom(frags), 0, 8).Draw(t, "frags"), "")
		doc := []byte(`{"k":"` + raw + `"}`)
		var m map[string]string
		if json.Unmarshal(doc, &m) != nil {
			t.Fatalf("bad test document %s", doc)
		}
		a := viewArgs(doc)
		got := p.protects(&a, &Input{}, false)
		want := (&protScan{p: p}).wordsTouch([]byte(m["k"]), false)
		if got != want {
			t.Fatalf("protects(%s) = %v, decoded scan of %q = %v", doc, got, m["k"], want)
		}
	})
}

// TestASCIIConfusable: the fast path's list of ASCII characters with
// look-alike skeletons is exactly what the confusables table says.
func TestASCIIConfusable(t *testing.T) {
	for c := range utf8.RuneSelf {
		s := string(rune(c))
		if want := confusables.Skeleton(s) != s; asciiConfusable[c] != want {
			t.Errorf("asciiConfusable[%q] = %v, the table says %v", rune(c), asciiConfusable[c], want)
		}
	}
}
