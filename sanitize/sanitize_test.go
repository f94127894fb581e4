package sanitize

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	cases := []struct{ in, text, line string }{
		{"plain", "plain", "plain"},
		{"two\nlines\tand tab", "two\nlines\tand tab", `two\nlines\tand tab`},
		{"\x1b[2Jclear", `\x1b[2Jclear`, `\x1b[2Jclear`},
		{"\x1b]52;c;aGk=\x07", `\x1b]52;c;aGk=\x07`, `\x1b]52;c;aGk=\x07`},
		{"cr\rover", `cr\rover`, `cr\rover`},
		{"del\x7f", `del\x7f`, `del\x7f`},
		{"c1\u009b31m", `c1\x9b31m`, `c1\x9b31m`},
		{"evil\u202eexe.txt", `evil\u202eexe.txt`, `evil\u202eexe.txt`},
		{"zero\u200bwidth", `zero\u200bwidth`, `zero\u200bwidth`},
		{"isolate\u2066x\u2069", `isolate\u2066x\u2069`, `isolate\u2066x\u2069`},
		{"bom\ufeff", `bom\ufeff`, `bom\ufeff`},
		{"tag\U000e0041", `tag\U000e0041`, `tag\U000e0041`},
		{"bad\xffbyte", `bad\xffbyte`, `bad\xffbyte`},
		{"line\u2028sep\u2029", `line\u2028sep\u2029`, `line\u2028sep\u2029`},
		{"soft\u00adhyphen", `soft\xadhyphen`, `soft\xadhyphen`},
		{"fill\u3164er\u115f\u1160\uffa0", `fill\u3164er\u115f\u1160\uffa0`, `fill\u3164er\u115f\u1160\uffa0`},
		{"ünïcödé 日本 😀", "ünïcödé 日本 😀", "ünïcödé 日本 😀"},
	}
	for _, c := range cases {
		if got := Text(c.in); got != c.text {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.text)
		}
		if got := Line(c.in); got != c.line {
			t.Errorf("Line(%q) = %q, want %q", c.in, got, c.line)
		}
	}
}

func TestTruncate(t *testing.T) {
	if got := Truncate("short", 10); got != "short" {
		t.Errorf("got %q, want unchanged", got)
	}
	got := Truncate("日本語", 4) // 3 bytes per rune: cut falls inside the second rune
	if got != "日… [6 bytes cut]" {
		t.Errorf("got %q", got)
	}
}

func TestSafeTextDoesNotAllocate(t *testing.T) {
	s := strings.Repeat("a safe line of text, ünïcödé\n", 20)
	if n := testing.AllocsPerRun(100, func() { _ = Text(s) }); n != 0 {
		t.Errorf("Text on safe input allocated %v times, want 0", n)
	}
}

func FuzzText(f *testing.F) {
	for _, s := range []string{"", "a\x1b[31mb", "\u202e", "\xff\xfe", "x\u200by", "\u009b", "ok\n\tok"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, out := range map[string]string{"Text": Text(s), "Line": Line(s)} {
			if !utf8.ValidString(out) {
				t.Fatalf("%s(%q) is not valid UTF-8: %q", name, s, out)
			}
			for _, r := range out {
				if name == "Text" && (r == '\n' || r == '\t') {
					continue
				}
				if Unsafe(r) {
					t.Fatalf("%s(%q) let %U through: %q", name, s, r, out)
				}
			}
		}
		if Text(Text(s)) != Text(s) {
			t.Fatalf("Text is not idempotent on %q", s)
		}
	})
}

// TestName: a name with look-alike letters never prints as the ASCII name
// it imitates, and an escape cannot be faked with a literal backslash.
func TestName(t *testing.T) {
	cases := []struct{ in, want string }{
		{"delete_all", "delete_all"},
		{"tasks/get-task.v2", "tasks/get-task.v2"},
		{"d\u0435lete_all", `d\u0435lete_all`},             // Cyrillic е
		{"ｄｅｌｅｔｅ", `\uff44\uff45\uff4c\uff45\uff54\uff45`}, // fullwidth
		{"caf\u00e9", `caf\xe9`},
		{"\x1b[2Jsafe", `\x1b[2Jsafe`},
		{"list\u200b_files", `list\u200b_files`},
		{`d\u0435lete`, `d\\u0435lete`}, // a literal backslash is doubled
		{"bad\xffbyte", `bad\xffbyte`},
		{"emoji\U0001F600", `emoji\U0001f600`},
		{"two\nlines", `two\x0alines`},
	}
	for _, c := range cases {
		got := Name(c.in)
		if got != c.want {
			t.Errorf("Name(%q) = %q, want %q", c.in, got, c.want)
		}
		for i := 0; i < len(got); i++ {
			if got[i] < 0x20 || got[i] >= 0x7f {
				t.Errorf("Name(%q) = %q has byte %#x outside printable ASCII", c.in, got, got[i])
			}
		}
	}
	if Name("d\u0435lete") == Name("delete") {
		t.Error("a look-alike name prints like the name it imitates")
	}
}

// TestStrip: what Strip leaves can be pasted into a terminal: no control
// character but newline and tab, no invalid byte; everything else stays.
func TestStrip(t *testing.T) {
	cases := []struct {
		in, out string
		n       int
	}{
		{"plain\ttext\nkept ünïcödé 😀", "plain\ttext\nkept ünïcödé 😀", 0},
		{"\x1b]52;c;aGk=\x07after", "]52;c;aGk=after", 2},
		{"\x1b[2J\rcr\u009b31m", "[2Jcr31m", 3},
		{"evil\u202eexe\u200b", "evilexe", 2},
		{"bad\xffbyte\x7f", "badbyte", 2},
	}
	for _, c := range cases {
		got, n := Strip(c.in)
		if got != c.out || n != c.n {
			t.Errorf("Strip(%q) = %q, %d; want %q, %d", c.in, got, n, c.out, c.n)
		}
	}
}
