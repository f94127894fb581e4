package decide

import (
	"strings"
	"unicode/utf8"

	"github.com/mtibben/confusables"
	"golang.org/x/text/unicode/norm"
)

// Skeleton returns the confusable skeleton of a name: the name in NFKC
// (so fullwidth and other compatibility forms become their plain letters),
// then every character replaced by its prototype from Unicode's
// confusables table (UTS #39), so "dеlete" with a Cyrillic е and
// "ｄｅｌｅｔｅ" both have the skeleton of "delete". Two names that look
// alike have the same skeleton. A skeleton is for comparing, never for
// showing: it mixes scripts and changes some ASCII too ("m" becomes "rn",
// "I" and "1" become "l", "0" becomes "O"), always the same way on both
// sides of a comparison.
func Skeleton(s string) string {
	if plainSkeleton(s) {
		return s
	}
	return confusables.Skeleton(norm.NFKC.String(s))
}

// asciiConfusable marks the ASCII characters whose skeleton is not
// themselves: '"', '%', '0', '1', 'I', '`', 'm' and '|' in the table this
// package uses. TestASCIIConfusable checks the list against the table.
var asciiConfusable = func() (t [utf8.RuneSelf]bool) {
	for _, c := range "\"%01I`m|" {
		t[c] = true
	}
	return t
}()

// plainSkeleton reports whether s is its own skeleton without looking it
// up: ASCII with no confusable character. Most names are.
func plainSkeleton(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || asciiConfusable[c] {
			return false
		}
	}
	return true
}

// skeletonPattern is the pattern that matches the skeletons of the names
// p matches: each literal run between '*' and '?' replaced by its
// skeleton, the wildcards kept.
func skeletonPattern(p string) string {
	if plainSkeleton(p) {
		return p
	}
	var b strings.Builder
	for p != "" {
		i := strings.IndexAny(p, "*?")
		if i < 0 {
			b.WriteString(Skeleton(p))
			break
		}
		b.WriteString(Skeleton(p[:i]))
		b.WriteByte(p[i])
		p = p[i+1:]
	}
	return b.String()
}

// lookAlikeWord returns the skeleton of a name word in lower case: the
// form the verb lists are compared in when a name has characters outside
// plain ASCII. Lower case comes first, because the skeleton of "I" is
// "l" but that of "i" is "i".
func lookAlikeWord(w string) string { return Skeleton(strings.ToLower(norm.NFKC.String(w))) }

// ReadsAs returns the ASCII name a person would read in name, and true,
// when name has characters outside ASCII that all look like ASCII
// letters or digits: "dеlete_all" with a Cyrillic е reads as
// "delete_all", "ｄｅｌｅｔｅ" as "delete". Unlike Skeleton it leaves ASCII
// alone, so it is fit to show. It returns "", false for an ASCII name and
// for one with a character that looks like no ASCII character.
func ReadsAs(name string) (string, bool) {
	if plainASCII(name) {
		return "", false
	}
	var b strings.Builder
	for _, r := range name {
		if r < utf8.RuneSelf {
			b.WriteRune(r)
			continue
		}
		sk := Skeleton(string(r))
		if sk == "" || !plainASCII(sk) {
			return "", false
		}
		b.WriteString(sk)
	}
	return b.String(), true
}

func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
